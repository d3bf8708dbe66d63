/**
 * Composition root of the service: config and start refusals first, then ServicesLive (the stores
 * and every layer of the design card), the ops listener on <data dir>/ops.sock and the public
 * listener on GROUNDNOTE_HOST:GROUNDNOTE_PORT (/v1, /mcp, the approval pages, /healthz,
 * /openapi.json).
 */
import { Console, Effect, Layer } from "effect"
import { checkDataDirPermissions, checkOpsSocketPath } from "./config/data-dir.js"
import { loadConfig } from "./config/load.js"
import { publicListener } from "./http/server.js"
import { OpsListenerLive } from "./http/ops-listener.js"
import { DEMO_EMAIL, DEMO_SCOPE, prepareDemoDir, seedDemo } from "./demo.js"
import { JsonLoggerLive } from "./logging.js"
import { ServicesLive } from "./services.js"
import { VERSION } from "./version.js"

export interface ServeOptions {
  readonly demo: boolean
}

export const serve = (options: ServeOptions) =>
  Effect.gen(function*() {
    const env = process.env
    const demo = options.demo ? prepareDemoDir(env, process.cwd()) : null
    const config = yield* loadConfig(env, process.cwd())
    yield* checkDataDirPermissions(config.env.dataDir)
    yield* checkOpsSocketPath(config.env.dataDir)
    // The ops listener first: a socket served by another process refuses start before any port opens.
    const app = Layer.merge(OpsListenerLive, publicListener(config.env.host, config.env.port)).pipe(
      Layer.provideMerge(ServicesLive(config))
    )
    yield* Effect.gen(function*() {
      if (demo !== null) {
        const token = yield* seedDemo
        const url = config.file.public_url
        const secrets = demo.fresh
          ? [
            "  dev tokens (shown once; kept in demo.env, mode 0600):",
            `    approval login token  ${env.GROUNDNOTE_DEV_APPROVAL_TOKEN ?? ""}`,
            `    MCP bearer            ${env.GROUNDNOTE_DEV_MCP_TOKEN ?? ""}`,
            `    API bearer (person)   ${env.GROUNDNOTE_DEV_API_TOKEN ?? ""}`,
            `    ops token (CLI)       ${env.GROUNDNOTE_OPS_TOKEN ?? ""}`,
            ...(token !== null ? [`    feeder bearer         ${token}`] : [])
          ]
          : [`  dev tokens: ${demo.dataDir}/demo.env (mode 0600)`]
        yield* Console.error([
          `Groundnote ${VERSION} demo on ${url} (data dir ${demo.dataDir})`,
          `  dev person        ${DEMO_EMAIL}, scope ${DEMO_SCOPE}`,
          `  approval login    ${url}/approval/login`,
          `  API               ${url}/v1/status  (Authorization: Bearer <API bearer>)  ·  ${url}/openapi.json`,
          `  MCP (agents)      ${url}/mcp  (Streamable HTTP, Authorization: Bearer <MCP bearer>; see docs/agents.md)`,
          `  ops (CLI)         GROUNDNOTE_DATA_DIR=${demo.dataDir} GROUNDNOTE_OPS_TOKEN=<ops token> groundnote status`,
          ...secrets
        ].join("\n"))
      }
      yield* Effect.logInfo("listening").pipe(Effect.annotateLogs({ host: config.env.host, port: config.env.port, version: VERSION }))
      return yield* Effect.never
    }).pipe(Effect.provide(app))
  }).pipe(Effect.scoped, Effect.provide(JsonLoggerLive))
