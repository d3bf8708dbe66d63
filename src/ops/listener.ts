/**
 * The ops listener (architecture.md §11, gaps.md §3): an HTTP server on the Unix socket
 * `<data dir>/ops.sock`, mode 0600, bearer $GROUNDNOTE_OPS_TOKEN compared in constant time.
 * There is no TCP listener for ops. Routes: GET /ops/status, GET /ops/grants, POST /ops/grants,
 * POST /ops/grants/:id/disable, POST /ops/grants/:id/rename, POST /ops/scopes.
 */
import { createHash, timingSafeEqual } from "node:crypto"
import { chmodSync, lstatSync, realpathSync, unlinkSync } from "node:fs"
import { createServer, type IncomingMessage } from "node:http"
import { join, resolve } from "node:path"
import {
  HttpRouter,
  HttpServer,
  type HttpServerError,
  HttpServerRequest,
  HttpServerResponse
} from "@effect/platform"
import { NodeHttpServer, NodeHttpServerRequest } from "@effect/platform-node"
import { Cause, Clock, Data, Effect, Either, Layer, Option, Redacted, Schema } from "effect"
import { AppConfig, type AppConfigShape } from "../config/config.js"
import { OPS_SOCKET_NAME, prepareOpsSocket } from "../config/data-dir.js"
import { StartRefusal } from "../config/load.js"
import { type BackupStateFullRow, OpsStore } from "../db/ops-store.js"
import { ScopeStore } from "../db/scope-store.js"
import { type DomainError, ERROR_STATUS, type ErrorCode, toErrorBody, ValidationFailed, validationFailed } from "../contracts/errors.js"
import { GrantCreate } from "../contracts/grants.js"
import { ScopeName } from "../contracts/ids.js"
import { nowInstant } from "../contracts/time.js"
import { VERSION } from "../version.js"

/** Largest request body the ops listener reads (256 KiB); more → 413 payload-too-large. */
export const OPS_BODY_LIMIT = 256 * 1024

/** POST /ops/grants/:id/rename */
export const GrantRename = Schema.Struct({
  label: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))
})

/** POST /ops/scopes */
export const ScopeCreate = Schema.Struct({ name: ScopeName })

/** An answer that is not a domain error: its code, status and message (401, 404, 413, bad JSON). */
class OpsHttpError extends Data.TaggedError("OpsHttpError")<{
  readonly code: ErrorCode
  readonly message: string
}> {}

type Expected = DomainError | OpsHttpError

const errorResponse = (e: Expected): HttpServerResponse.HttpServerResponse =>
  e._tag === "OpsHttpError"
    ? HttpServerResponse.unsafeJson({ error: e.code, message: e.message }, { status: ERROR_STATUS[e.code] })
    : HttpServerResponse.unsafeJson(toErrorBody(e), { status: ERROR_STATUS[e.code] })

const isExpected = (e: unknown): e is Expected =>
  typeof e === "object" && e !== null && "_tag" in e && "code" in e && typeof (e as { code: unknown }).code === "string" &&
  Object.hasOwn(ERROR_STATUS, (e as { code: string }).code) && (e as { code: string }).code !== "internal"

const declaredLength = (request: HttpServerRequest.HttpServerRequest): number => {
  const n = Number(request.headers["content-length"] ?? "0")
  return Number.isFinite(n) ? n : 0
}

const INTERNAL = HttpServerResponse.unsafeJson({ error: "internal" }, { status: 500 })

const sha256 = (s: string): Buffer => createHash("sha256").update(s, "utf8").digest()

/** Reads at most `limit` bytes of the request body; a larger body is drained and refused (413). */
const readBody = (req: IncomingMessage, limit: number): Effect.Effect<Buffer, OpsHttpError> =>
  Effect.async<Buffer, OpsHttpError>((resume) => {
    const tooLarge = () =>
      new OpsHttpError({ code: "payload-too-large", message: `the request body is larger than ${limit} bytes` })
    const declared = Number(req.headers["content-length"] ?? "0")
    if (Number.isFinite(declared) && declared > limit) {
      req.resume() // discard: the client can finish sending and read the answer
      resume(Effect.fail(tooLarge()))
      return
    }
    const chunks: Array<Buffer> = []
    let bytes = 0
    let done = false
    const finish = (result: Effect.Effect<Buffer, OpsHttpError>) => {
      if (done) return
      done = true
      resume(result)
    }
    req.on("data", (chunk: Buffer) => {
      if (done) return // over the limit: keep discarding
      bytes += chunk.length
      if (bytes > limit) {
        chunks.length = 0
        finish(Effect.fail(tooLarge()))
        return
      }
      chunks.push(chunk)
    })
    req.once("end", () => finish(Effect.succeed(Buffer.concat(chunks))))
    req.once("error", () =>
      finish(Effect.fail(new OpsHttpError({ code: "validation-failed", message: "the request body could not be read" })))
    )
  })

/** The JSON body decoded strictly with `schema` (unknown keys fail) → 400 validation-failed with issues. */
const decodeBody = <A, I>(schema: Schema.Schema<A, I>, what: string) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const raw = yield* readBody(NodeHttpServerRequest.toIncomingMessage(request), OPS_BODY_LIMIT)
    let json: unknown
    try {
      json = JSON.parse(raw.toString("utf8"))
    } catch {
      return yield* Effect.fail(validationFailedText(what, "(root)", "the body must be one JSON object"))
    }
    const decoded = Schema.decodeUnknownEither(schema)(json, { onExcessProperty: "error", errors: "all" })
    if (Either.isLeft(decoded)) return yield* Effect.fail(validationFailed(decoded.left, what))
    return decoded.right
  })

const validationFailedText = (what: string, path: string, message: string) =>
  new ValidationFailed({ message: `${what} is invalid: ${path}: ${message}`, issues: [{ path, message }] })

/** Real path when it exists, else the absolute path as given (resolved against the service's cwd). */
const realOrAbsolute = (path: string): string => {
  const abs = resolve(process.cwd(), path)
  try {
    return realpathSync(abs)
  } catch {
    return abs
  }
}

const boolOrNull = (n: number | null | undefined): boolean | null => (n === null || n === undefined ? null : n === 1)

/** The request handlers; the stores and config are closed over. */
const makeRouter = (deps: {
  readonly config: AppConfigShape
  readonly ops: OpsStore
  readonly scopes: ScopeStore
  readonly startedAt: string
}) => {
  const { config, ops, scopes, startedAt } = deps

  const status = Effect.fn("Ops.status")(function*() {
    const now = yield* nowInstant
    const states = yield* scopes.states
    // Open every created scope so the open check runs and a lock shows here.
    for (const s of states) if (s.created) yield* Effect.ignore(scopes.use(s.scope))
    const after = yield* scopes.states
    const rows = yield* ops.listBackupStates()
    const byScope = new Map<string, BackupStateFullRow>(rows.map((r) => [r.scope, r]))
    const runs = yield* ops.backupRunStatus()
    const backup = config.file.backup
    return {
      service: "groundnote" as const,
      instance: config.file.instance,
      version: VERSION,
      started_at: startedAt,
      now,
      data_dir: realOrAbsolute(config.env.dataDir),
      backup: {
        kind: backup.kind,
        directory: backup.kind === "copy" ? realOrAbsolute(backup.directory) : null,
        export_directory: backup.export_directory === undefined ? null : realOrAbsolute(backup.export_directory),
        running: null,
        ops_backup_at: runs.ops_backup_at,
        last_run: runs.last_run,
        last_probe: runs.last_probe
      },
      scopes: after.map((s) => {
        const row = byScope.get(s.scope)
        return {
          scope: s.scope,
          created: s.created,
          locked: s.locked,
          lock_reason: s.lock_reason,
          version_count: row?.version_count ?? null,
          last_backup_at: row?.last_backup_at ?? null,
          verified_at: row?.verified_at ?? null,
          verify_ok: boolOrNull(row?.verify_ok),
          probed_at: row?.probed_at ?? null,
          probe_ok: boolOrNull(row?.probe_ok),
          exported_at: row?.exported_at ?? null,
          export_sha256: row?.export_sha256 ?? null
        }
      })
    }
  })

  const grantId = Effect.map(HttpRouter.params, (p) => p.id ?? "")

  const createGrant = Effect.fn("Ops.createGrant")(function*() {
    const body = yield* decodeBody(GrantCreate, "grant")
    return yield* ops.createGrant(body)
  })

  const disableGrant = Effect.fn("Ops.disableGrant")(function*() {
    return yield* ops.disableGrant(yield* grantId)
  })

  const renameGrant = Effect.fn("Ops.renameGrant")(function*() {
    const id = yield* grantId
    const body = yield* decodeBody(GrantRename, "rename")
    return yield* ops.renameGrant(id, body.label)
  })

  const createScope = Effect.fn("Ops.createScope")(function*() {
    const body = yield* decodeBody(ScopeCreate, "scope")
    return yield* scopes.create(body.name)
  })

  const json = (status: number) => (body: unknown) => HttpServerResponse.unsafeJson(body, { status })

  return HttpRouter.empty.pipe(
    HttpRouter.get("/ops/status", Effect.map(status(), json(200))),
    HttpRouter.get("/ops/grants", Effect.map(ops.listGrants(), json(200))),
    HttpRouter.post("/ops/grants", Effect.map(createGrant(), json(201))),
    HttpRouter.post("/ops/grants/:id/disable", Effect.map(disableGrant(), json(200))),
    HttpRouter.post("/ops/grants/:id/rename", Effect.map(renameGrant(), json(200))),
    HttpRouter.post("/ops/scopes", Effect.map(createScope(), json(201)))
  )
}

/**
 * The whole ops app: bearer check, the routes, error bodies, one log line per request.
 * Never fails: an unexpected failure is 500 {error: "internal"} and its cause goes to the log.
 */
export const makeOpsApp = (deps: {
  readonly config: AppConfigShape
  readonly ops: OpsStore
  readonly scopes: ScopeStore
  readonly startedAt: string
}): Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest> => {
  const router = makeRouter(deps)
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
    const handled: Effect.Effect<HttpServerResponse.HttpServerResponse, never> = !authorized(request.headers.authorization)
      ? Effect.succeed(errorResponse(new OpsHttpError({
          code: "unauthorized",
          message: "missing or wrong ops token: send Authorization: Bearer $GROUNDNOTE_OPS_TOKEN"
        })))
      : declaredLength(request) > OPS_BODY_LIMIT
      ? Effect.sync(() => {
          NodeHttpServerRequest.toIncomingMessage(request).resume() // discard, so the client can read the answer
          return errorResponse(new OpsHttpError({
            code: "payload-too-large",
            message: `the request body is larger than ${OPS_BODY_LIMIT} bytes`
          }))
        })
      : router.pipe(
          Effect.catchAllCause((cause) => {
            const failure = Cause.failureOption(cause)
            if (Option.isSome(failure)) {
              const e: unknown = failure.value
              if ((e as HttpServerError.RouteNotFound)._tag === "RouteNotFound") {
                return Effect.succeed(errorResponse(new OpsHttpError({
                  code: "not-found",
                  message: `no ops route ${request.method} ${path}`
                })))
              }
              if (isExpected(e)) return Effect.succeed(errorResponse(e))
            }
            return Effect.as(
              Effect.logError("ops request failed").pipe(
                Effect.annotateLogs({ method: request.method, path, cause: Cause.pretty(cause) })
              ),
              INTERNAL
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
export const OpsListenerLive: Layer.Layer<never, StartRefusal | HttpServerError.ServeError, AppConfig | OpsStore | ScopeStore> =
  Layer.unwrapScoped(Effect.gen(function*() {
    const config = yield* AppConfig
    const ops = yield* OpsStore
    const scopes = yield* ScopeStore
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

    const app = makeOpsApp({ config, ops, scopes, startedAt })
    return HttpServer.serve(app).pipe(
      Layer.provide(secure),
      Layer.provide(NodeHttpServer.layer(createServer, { path: socketPath }))
    )
  }))

