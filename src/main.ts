/**
 * Composition root of the service: one MainLive. Config and start refusals first, then the
 * stores, then the listener on GROUNDNOTE_HOST:GROUNDNOTE_PORT. The HTTP API of /v1, the
 * approval pages and /mcp are mounted here by their issues; today the listener answers /healthz.
 */
import { createServer } from "node:http"
import { HttpRouter, HttpServer, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Console, Effect, Layer } from "effect"
import { AppConfig } from "./config/config.js"
import { checkDataDirPermissions, checkOpsSocketPath } from "./config/data-dir.js"
import { loadConfig } from "./config/load.js"
import { OpsStore } from "./db/ops-store.js"
import { ScopeStore } from "./db/scope-store.js"
import { DEMO_EMAIL, DEMO_SCOPE, prepareDemoDir, seedDemo } from "./demo.js"
import { JsonLoggerLive } from "./logging.js"
import { VERSION } from "./version.js"

const router = HttpRouter.empty.pipe(
  HttpRouter.get("/healthz", HttpServerResponse.json({ ok: true }))
)

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
    const stores = ScopeStore.Default.pipe(
      Layer.provideMerge(OpsStore.Default),
      Layer.provideMerge(Layer.succeed(AppConfig, config))
    )
    const http = HttpServer.serve(router).pipe(
      Layer.provide(NodeHttpServer.layer(createServer, { host: config.env.host, port: config.env.port }))
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
    }).pipe(Effect.provide(Layer.merge(stores, http)))
  }).pipe(Effect.scoped, Effect.provide(JsonLoggerLive))
