/**
 * The public listener and the services behind it, as layers: main.ts runs them with the
 * configured host and port; tests run them on a free loopback port with their own key set.
 */
import { createServer } from "node:http"
import { HttpLayerRouter } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Layer } from "effect"
import { AppConfig, type AppConfigShape } from "../config/config.js"
import { type JwtVerifier, JwtVerifierLive } from "../auth/jwt.js"
import { OpsStore } from "../db/ops-store.js"
import { ScopeStore } from "../db/scope-store.js"
import { LexicalIndexLive } from "../search/lexical/index.js"
import { AppRoutes } from "./app.js"
import { RateLimiterLive } from "./rate-limit.js"

/** Config, stores, lexical index, rate limiter and JWT verifier (a test may pass a verifier of its own). */
export const servicesLayer = (config: AppConfigShape, jwt?: Layer.Layer<JwtVerifier, never, AppConfig>) =>
  Layer.mergeAll(
    ScopeStore.Default.pipe(Layer.provideMerge(OpsStore.Default)), LexicalIndexLive, RateLimiterLive, jwt ?? JwtVerifierLive
  ).pipe(
    Layer.provideMerge(Layer.succeed(AppConfig, config))
  )

/** The public listener on host:port (port 0: a free port; read it from HttpServer.address). */
export const publicListener = (host: string, port: number) =>
  HttpLayerRouter.serve(AppRoutes, { disableLogger: true, disableListenLog: true }).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createServer, { host, port }))
  )
