/**
 * Composition root of the service: config and start refusals first, then ServicesLive (the stores
 * and every layer of the design card), the ops listener on <data dir>/ops.sock and the public
 * listener on GROUNDNOTE_HOST:GROUNDNOTE_PORT (/v1, /mcp, the approval pages, /healthz,
 * /openapi.json). The server's modules are loaded when serve runs, so the CLI, which reaches this
 * module through its one dynamic import (AT6) for cliHost, does not load them.
 *
 * A refusal to start is one stderr line `groundnote: <code>: <message>` (printed by the CLI, with
 * real line breaks) and one JSON log line "start refused" on stdout; a taken port names the
 * address, the port and GROUNDNOTE_PORT. Once listening, serve warns (one log line each) about a
 * backup.directory that backup run would refuse and about a service nobody can use yet (no
 * scope file, no active grant), naming the commands that fix it. SIGTERM or SIGINT closes the
 * listeners and stores, then logs "stopped".
 */
import type { HttpServerError } from "@effect/platform"
import { Console, Effect, Layer, Redacted } from "effect"
import { checkBackupDirectory } from "./config/cross-checks.js"
import { checkDataDirPermissions, checkOpsSocketPath } from "./config/data-dir.js"
import { loadConfig } from "./config/load.js"
import { StartRefusal } from "./config/refusal.js"
import { JsonLoggerLive } from "./logging.js"
import { VERSION } from "./version.js"

export { cliHost } from "./operations/ops-cli-host.js"

export interface ServeOptions {
  readonly demo: boolean
}

const errnoOf = (cause: unknown): { readonly code: string; readonly port: unknown; readonly address: unknown } => {
  const c = typeof cause === "object" && cause !== null ? (cause as { code?: unknown; port?: unknown; address?: unknown }) : {}
  return { code: typeof c.code === "string" ? c.code : "", port: c.port, address: c.address }
}

/** A listener that could not listen, in words that name the address, the port and the variable to change. */
export const listenRefusal = (e: HttpServerError.ServeError, host: string, port: number): StartRefusal => {
  const { address, code, port: errPort } = errnoOf(e.cause)
  if (errPort === undefined && typeof address === "string") {
    return new StartRefusal({
      code: "ops-socket-unavailable",
      message: `cannot listen on the ops socket ${address} (${code || "error"}): check who owns GROUNDNOTE_DATA_DIR and that no other service uses it`
    })
  }
  const where = `${host}:${port}`
  switch (code) {
    case "EADDRINUSE":
      return new StartRefusal({
        code: "port-in-use",
        message: `${where} is already in use by another process: stop that process, or set GROUNDNOTE_PORT to a free port (GROUNDNOTE_HOST is ${host}, GROUNDNOTE_PORT is ${port})`
      })
    case "EACCES":
      return new StartRefusal({
        code: "listen-failed",
        message: `cannot listen on ${where} (EACCES: ports below 1024 need privileges): set GROUNDNOTE_PORT to a port from 1024 to 65535`
      })
    case "EADDRNOTAVAIL":
      return new StartRefusal({
        code: "listen-failed",
        message: `cannot listen on ${where} (EADDRNOTAVAIL): GROUNDNOTE_HOST is not an address of this host; set it to one (default 127.0.0.1)`
      })
    default:
      return new StartRefusal({
        code: "listen-failed",
        message: `cannot listen on ${where} (${code || "error"}): check GROUNDNOTE_HOST and GROUNDNOTE_PORT`
      })
  }
}

const isServeError = (e: unknown): e is HttpServerError.ServeError =>
  typeof e === "object" && e !== null && (e as { _tag?: unknown })._tag === "ServeError"

export const serve = (options: ServeOptions) =>
  Effect.gen(function*() {
    const env = process.env
    const demoModule = options.demo ? yield* Effect.promise(() => import("./demo.js")) : null
    const demo = demoModule === null ? null : { ...demoModule.prepareDemoDir(env, process.cwd()), module: demoModule }
    const config = yield* loadConfig(env, process.cwd())
    yield* checkDataDirPermissions(config.env.dataDir)
    yield* checkOpsSocketPath(config.env.dataDir)
    const backupWarnings = yield* checkBackupDirectory(config.file, config.env)
    // the server's modules only after the checks: a refusal is said without loading them
    const [{ serviceListeners }, { ServicesLive }, { warnWhenNotReady }] = yield* Effect.promise(() =>
      Promise.all([import("./http/listeners.js"), import("./services.js"), import("./start-warnings.js")]))
    const { host, port } = config.env
    // the ops listener first: a socket served by another process refuses start before any port opens
    const app = serviceListeners(host, port).pipe(Layer.provideMerge(ServicesLive(config)))
    yield* Effect.gen(function*() {
      if (demo !== null) {
        const { confirmDemoRule, DEMO_EMAIL, DEMO_SCOPE, keepFeederToken, seedDemo } = demo.module
        const seeded = yield* seedDemo
        const url = config.file.public_url
        const token = seeded?.feederToken ?? null
        if (token !== null) keepFeederToken(demo.dataDir, url, token)
        // the first start: the demo person confirms one rule through the approval channel
        const confirmed = seeded === null || config.env.devApprovalToken === null || config.env.devEmail === null
          ? null
          : yield* confirmDemoRule({
            publicUrl: url, ruleId: seeded.confirmRuleId, approvalToken: Redacted.value(config.env.devApprovalToken),
            sessionSecret: Redacted.value(config.env.sessionSecret), email: config.env.devEmail
          }).pipe(Effect.tapError((e) =>
            Effect.logWarning("demo rule not confirmed").pipe(Effect.annotateLogs({ reason: e.cause instanceof Error ? e.cause.message : "unknown" }))
          ), Effect.orElseSucceed(() => null))
        const secrets = demo.fresh
          ? [
            "  dev tokens (shown once; kept in demo.env, mode 0600):",
            `    approval login token  ${env.GROUNDNOTE_DEV_APPROVAL_TOKEN ?? ""}`,
            `    MCP bearer            ${env.GROUNDNOTE_DEV_MCP_TOKEN ?? ""}`,
            `    API bearer (person)   ${env.GROUNDNOTE_DEV_API_TOKEN ?? ""}`,
            `    ops token (CLI)       ${env.GROUNDNOTE_OPS_TOKEN ?? ""}`,
            ...(token !== null ? [`    feeder bearer         ${token}  (kept in demo.env as GROUNDNOTE_API_TOKEN)`] : [])
          ]
          : [`  dev tokens: ${demo.dataDir}/demo.env (mode 0600)`]
        yield* Console.error([
          `Groundnote ${VERSION} demo on ${url} (data dir ${demo.dataDir})`,
          `  dev person        ${DEMO_EMAIL}, scope ${DEMO_SCOPE}`,
          `  approval login    ${url}/approval/login`,
          `  API               ${url}/v1/status  (Authorization: Bearer <API bearer>)  ·  ${url}/openapi.json`,
          `  MCP (agents)      ${url}/mcp  (Streamable HTTP, Authorization: Bearer <MCP bearer>; see docs/agents.md)`,
          `  ops (CLI)         set -a; . ${demo.dataDir}/demo.env; set +a; npx groundnote status  (demo.env sets GROUNDNOTE_DATA_DIR, GROUNDNOTE_CONFIG and GROUNDNOTE_OPS_TOKEN)`,
          `  search (CLI)      set -a; . ${demo.dataDir}/demo.env; set +a; npx groundnote search --scope ${DEMO_SCOPE} --text "offer"`,
          ...(confirmed === null ? [] : [`  confirmed rule    ${url}/approval/rules/${confirmed} (confirmed by ${DEMO_EMAIL} on the approval channel)`]),
          ...secrets
        ].join("\n"))
      }
      yield* Effect.logInfo("listening").pipe(Effect.annotateLogs({ host, port, version: VERSION }))
      for (const w of backupWarnings) yield* Effect.logWarning(w)
      yield* warnWhenNotReady(config)
      return yield* Effect.never
    }).pipe(
      Effect.provide(app),
      Effect.mapError((e) => (isServeError(e) ? listenRefusal(e, host, port) : e)),
      // SIGTERM/SIGINT interrupt serve: one line once the listeners and stores are closed
      Effect.onInterrupt(() => Effect.logInfo("stopped").pipe(Effect.annotateLogs({ host, port, version: VERSION })))
    )
  }).pipe(
    Effect.tapError((e) =>
      e instanceof StartRefusal
        ? Effect.logError("start refused").pipe(Effect.annotateLogs({ code: e.code, refusal: e.message }))
        : Effect.void),
    Effect.scoped,
    Effect.provide(JsonLoggerLive)
  )
