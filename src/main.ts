/**
 * Composition root of the service: one MainLive. Config and start refusals first, then the
 * stores, then the public listener on GROUNDNOTE_HOST:GROUNDNOTE_PORT (/v1, /approval session
 * routes, /healthz, /openapi.json); the approval pages and /mcp are mounted by their issues.
 */
import { Console, Effect, Layer } from "effect"
import { checkDataDirPermissions, checkOpsSocketPath } from "./config/data-dir.js"
import { loadConfig } from "./config/load.js"
import { publicListener, servicesLayer } from "./http/server.js"
import { OpsListenerLive } from "./ops/listener.js"
import { DEMO_EMAIL, DEMO_SCOPE, prepareDemoDir, seedDemo } from "./demo.js"
import { JsonLoggerLive } from "./logging.js"
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
      Layer.provideMerge(servicesLayer(config))
    )
    yield* Effect.gen(function*() {
      if (demo !== null) {
        const token = yield* seedDemo
        const url = config.file.public_url
        yield* Console.error([
          `Groundnote ${VERSION} demo on ${url} (data dir ${demo.dataDir})`,
          `  health:           ${url}/healthz`,
          `  dev person:       ${DEMO_EMAIL} (scope ${DEMO_SCOPE}); dev tokens are in ${demo.dataDir}/demo.env (mode 0600)`,
          ...(token !== null ? [`  feeder token (shown once): ${token}`] : [])
        ].join("\n"))
      }
      yield* Effect.logInfo("listening").pipe(Effect.annotateLogs({ host: config.env.host, port: config.env.port, version: VERSION }))
      return yield* Effect.never
    }).pipe(Effect.provide(app))
  }).pipe(Effect.scoped, Effect.provide(JsonLoggerLive))
