/**
 * The ops listener (architecture.md §11, gaps.md §3): an HTTP server on the Unix socket
 * `<data dir>/ops.sock`, mode 0600, bearer $GROUNDNOTE_OPS_TOKEN compared in constant time.
 * There is no TCP listener for ops. Routes: GET /ops/status, GET /ops/digest?since=, GET /ops/grants, POST /ops/grants,
 * POST /ops/grants/:id/disable, POST /ops/grants/:id/rename, POST /ops/scopes, GET /ops/keys,
 * POST /ops/keys and POST /ops/keys/rotate (recipients only: an identity never reaches the
 * service), and
 * POST /ops/backup/run, /ops/backup/probe and /ops/backup/verify (optional {scope}), which share
 * the BackupLock (409 backup-running) and do their long reads in the backup worker thread. Bodies
 * are read and refusals answered exactly as on the public listener (src/transport/).
 */
import { createHash, timingSafeEqual } from "node:crypto"
import { chmodSync, lstatSync, unlinkSync } from "node:fs"
import { createServer } from "node:http"
import { join } from "node:path"
import { HttpRouter, HttpServer, type HttpServerError, HttpServerRequest, type HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Cause, Clock, Effect, Layer, Option, Redacted, type Schema } from "effect"
import type { BackupLock } from "../backup/lock.js"
import { probeBackup } from "../backup/probe.js"
import { runBackup } from "../backup/run.js"
import { verifyBackup } from "../backup/verify.js"
import { AppConfig, type AppConfigShape } from "../config/config.js"
import { OPS_SOCKET_NAME, prepareOpsSocket } from "../config/data-dir.js"
import { StartRefusal } from "../config/refusal.js"
import { decodeStrict } from "../contracts/decode.js"
import { isDomainError, toErrorBody, ValidationFailed } from "../contracts/errors.js"
import { GrantCreate } from "../contracts/grants.js"
import { KeyAdd, KeyRotate } from "../contracts/keys.js"
import { BackupRunRequest, BackupScopeRequest, GrantRename, OPS_BODY_LIMIT, ScopeCreate } from "../contracts/ops.js"
import { nowInstant } from "../contracts/time.js"
import { OpsStore } from "../db/ops-store.js"
import { ScopeStore } from "../db/scope-store.js"
import { structureWaiting } from "../approval/structure-view.js"
import { opsDigest } from "../operations/digest.js"
import { opsStatus } from "../operations/ops-status.js"
import { contentLengthTooLarge, readBody, readBytes } from "../transport/body.js"
import { errorResponse, internalResponse, jsonResponse } from "../transport/responses.js"

const sha256 = (s: string): Buffer => createHash("sha256").update(s, "utf8").digest()

/** The JSON body decoded strictly with `schema` (unknown keys fail) → 400 validation-failed with issues. */
const decodeBody = <A, I>(schema: Schema.Schema<A, I>, what: string) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const notJson = new ValidationFailed({ message: `${what} is invalid: (root): the body must be one JSON object`, issues: [{ path: "(root)", message: "the body must be one JSON object" }] })
    const body = yield* readBody(request, OPS_BODY_LIMIT).pipe(Effect.catchTag("ValidationFailed", () => Effect.fail(notJson)))
    if (body.form || body.value === undefined) return yield* notJson
    return yield* decodeStrict(schema, body.value, what)
  })

/** Like decodeBody, but no body at all counts as `{}` (the backup routes take an optional scope). */
const decodeOptionalBody = <A, I>(schema: Schema.Schema<A, I>, what: string) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const notJson = new ValidationFailed({ message: `${what} is invalid: (root): the body must be one JSON object or empty`, issues: [{ path: "(root)", message: "the body must be one JSON object or empty" }] })
    const body = yield* readBody(request, OPS_BODY_LIMIT).pipe(Effect.catchTag("ValidationFailed", () => Effect.fail(notJson)))
    if (body.form) return yield* notJson
    return yield* decodeStrict(schema, body.value === undefined ? {} : body.value, what)
  })

/** The query string of the request, one value a name (the last one given). */
const queryOf = Effect.map(HttpServerRequest.HttpServerRequest, (r) => Object.fromEntries(new URL(r.url, "http://ops.invalid").searchParams))

const scopeOption = (body: BackupScopeRequest) => (body.scope === undefined ? {} : { scope: body.scope })

/** The routes; the stores come from the services. */
const makeRouter = (startedAt: string) => {
  const grantId = Effect.map(HttpRouter.params, (p) => p.id ?? "")
  const ops = Effect.flatMap(OpsStore, (o) => Effect.succeed(o))
  return HttpRouter.empty.pipe(
    HttpRouter.get("/ops/status", Effect.map(opsStatus(startedAt), jsonResponse(200))),
    HttpRouter.get("/ops/digest", Effect.map(Effect.flatMap(queryOf, (q) => opsDigest(q, structureWaiting)), jsonResponse(200))),
    HttpRouter.get("/ops/grants", Effect.map(Effect.flatMap(ops, (o) => o.listGrants()), jsonResponse(200))),
    HttpRouter.post("/ops/grants", Effect.map(Effect.flatMap(decodeBody(GrantCreate, "grant"), (body) => Effect.flatMap(ops, (o) => o.createGrant(body))), jsonResponse(201))),
    HttpRouter.post("/ops/grants/:id/disable", Effect.map(Effect.flatMap(grantId, (id) => Effect.flatMap(ops, (o) => o.disableGrant(id))), jsonResponse(200))),
    HttpRouter.post("/ops/grants/:id/rename", Effect.map(
      Effect.flatMap(Effect.all([grantId, decodeBody(GrantRename, "rename")]), ([id, body]) => Effect.flatMap(ops, (o) => o.renameGrant(id, body.label))),
      jsonResponse(200)
    )),
    HttpRouter.post("/ops/scopes", Effect.map(Effect.flatMap(decodeBody(ScopeCreate, "scope"), (body) => Effect.flatMap(ScopeStore, (s) => s.create(body.name))), jsonResponse(201))),
    HttpRouter.get("/ops/keys", Effect.map(Effect.flatMap(ops, (o) => o.listRecipients()), jsonResponse(200))),
    HttpRouter.post("/ops/keys", Effect.map(Effect.flatMap(decodeBody(KeyAdd, "key"), (b) => Effect.flatMap(ops, (o) => o.addRecipient(b))), jsonResponse(201))),
    HttpRouter.post("/ops/keys/rotate", Effect.map(
      Effect.flatMap(decodeBody(KeyRotate, "key rotate"), (b) => Effect.flatMap(ops, (o) => o.rotateRecipient(b.scope, b.recipient, b.label))),
      jsonResponse(200)
    )),
    HttpRouter.post("/ops/backup/run", Effect.map(Effect.zipRight(decodeOptionalBody(BackupRunRequest, "backup run"), runBackup()), jsonResponse(200))),
    HttpRouter.post("/ops/backup/probe", Effect.map(Effect.flatMap(decodeOptionalBody(BackupScopeRequest, "backup probe"), (b) => probeBackup(scopeOption(b))), jsonResponse(200))),
    HttpRouter.post("/ops/backup/verify", Effect.map(Effect.flatMap(decodeOptionalBody(BackupScopeRequest, "backup verify"), (b) => verifyBackup(scopeOption(b))), jsonResponse(200)))
  )
}

/**
 * The whole ops app: bearer check, the routes, error bodies, one log line per request.
 * Never fails: an unexpected failure is 500 {error: "internal"} and its cause goes to the log.
 */
export const makeOpsApp = (deps: { readonly config: AppConfigShape; readonly startedAt: string }) => {
  const router = makeRouter(deps.startedAt)
  const expected = sha256(Redacted.value(deps.config.env.opsToken))
  const authorized = (header: string | undefined): boolean => {
    const m = header === undefined ? null : /^Bearer ([^\s]+)$/i.exec(header.trim())
    // Compare digests of equal length, so neither length nor content leaks through timing.
    const given = sha256(m?.[1] ?? "")
    return timingSafeEqual(given, expected) && m !== null
  }

  return Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const start = yield* Clock.currentTimeMillis
    const path = (() => {
      try {
        return new URL(request.url, "http://ops.invalid").pathname
      } catch {
        return "(invalid)"
      }
    })()
    const handled: Effect.Effect<HttpServerResponse.HttpServerResponse, never, OpsStore | ScopeStore | AppConfig | BackupLock> = !authorized(request.headers.authorization)
      ? Effect.succeed(errorResponse("unauthorized", { message: "missing or wrong ops token: send Authorization: Bearer $GROUNDNOTE_OPS_TOKEN" }))
      // a declared body over the limit is refused on every route, also one that reads no body (drained, so the client reads the answer)
      : contentLengthTooLarge(request, OPS_BODY_LIMIT)
      ? Effect.as(Effect.ignore(readBytes(request, OPS_BODY_LIMIT)), errorResponse("payload-too-large", { message: `the body is larger than ${OPS_BODY_LIMIT} bytes` }))
      : router.pipe(
        Effect.catchAllCause((cause) => {
          const failure = Cause.failureOption(cause)
          if (Option.isSome(failure)) {
            const e: unknown = failure.value
            if ((e as HttpServerError.RouteNotFound)._tag === "RouteNotFound") {
              return Effect.succeed(errorResponse("not-found", { message: `no ops route ${request.method} ${path}` }))
            }
            if (isDomainError(e)) {
              const { error, ...body } = toErrorBody(e)
              return Effect.succeed(errorResponse(error, body))
            }
          }
          return Effect.as(
            Effect.logError("ops request failed").pipe(Effect.annotateLogs({ method: request.method, path, cause: Cause.pretty(cause) })),
            internalResponse()
          )
        }),
        Effect.provideService(HttpServerRequest.HttpServerRequest, request)
      )
    const response = yield* handled
    const end = yield* Clock.currentTimeMillis
    yield* Effect.logInfo("ops request").pipe(
      Effect.annotateLogs({ listener: "ops", method: request.method, path, status: response.status, ms: end - start })
    )
    return response
  })
}

/**
 * The ops listener: prepares <data dir>/ops.sock (a stale socket is removed, one served by
 * another process refuses start), serves the ops app on it, sets mode 0600 after listening and
 * removes the socket when the layer closes.
 */
export const OpsListenerLive: Layer.Layer<never, StartRefusal | HttpServerError.ServeError, AppConfig | OpsStore | ScopeStore | BackupLock> =
  Layer.unwrapScoped(Effect.gen(function*() {
    const config = yield* AppConfig
    const startedAt = yield* nowInstant
    const dataDir = config.env.dataDir
    const socketPath = join(dataDir, OPS_SOCKET_NAME)
    yield* prepareOpsSocket(dataDir)

    /** inode of the socket this listener created; removed on close only while it is still ours */
    const ours: { ino: number | null } = { ino: null }
    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        if (ours.ino === null) return
        try {
          const st = lstatSync(socketPath)
          if (st.isSocket() && st.ino === ours.ino) unlinkSync(socketPath)
        } catch {
          // gone already (Node removes a Unix socket when its server closes)
        }
      })
    )

    const secure = Layer.scopedDiscard(Effect.gen(function*() {
      const server = yield* HttpServer.HttpServer
      yield* Effect.try({
        try: () => {
          chmodSync(socketPath, 0o600)
          ours.ino = lstatSync(socketPath).ino
        },
        catch: (e) => new StartRefusal({
          code: "ops-socket-unavailable",
          message: `cannot set mode 0600 on ${socketPath} (${e instanceof Error ? e.message : String(e)}): check who owns GROUNDNOTE_DATA_DIR`
        })
      })
      yield* Effect.logInfo("ops listening").pipe(Effect.annotateLogs({
        listener: "ops",
        socket: server.address._tag === "UnixAddress" ? server.address.path : socketPath
      }))
    }))

    const app = makeOpsApp({ config, startedAt })
    return HttpServer.serve(app).pipe(
      Layer.provide(secure),
      Layer.provide(NodeHttpServer.layer(createServer, { path: socketPath }))
    )
  }))

