/**
 * A real service on a free loopback port over a temp data dir: the public listener and the
 * services in one runtime, so tests seed through the same stores the server uses.
 */
import { HttpServer } from "@effect/platform"
import { type Effect, Layer, ManagedRuntime } from "effect"
import type { JWTVerifyGetKey } from "jose"
import type { AppConfigShape } from "../../src/config/config.js"
import { jwtVerifierLayer } from "../../src/auth/jwt.js"
import { publicListener } from "../../src/http/server.js"
import { type ServiceOverrides, ServicesLive } from "../../src/services.js"
import type { Stores } from "./run.js"
import type { captureLogs } from "./logs.js"

export interface TestServer {
  readonly url: string
  readonly run: <A, E>(effect: Effect.Effect<A, E, Stores>) => Promise<A>
  readonly close: () => Promise<void>
}

export const startServer = async (
  config: AppConfigShape,
  options: { keys?: JWTVerifyGetKey; logs?: ReturnType<typeof captureLogs>; services?: ServiceOverrides } = {}
): Promise<TestServer> => {
  const services = ServicesLive(config, { ...options.services, ...(options.keys === undefined ? {} : { jwt: jwtVerifierLayer(options.keys) }) })
  const layer = publicListener("127.0.0.1", 0).pipe(Layer.provideMerge(services))
  const runtime = ManagedRuntime.make(options.logs === undefined ? layer : Layer.provide(layer, options.logs.layer))
  const address = await runtime.runPromise(HttpServer.HttpServer.pipe((e) => e)).then((s) => s.address)
  if (address._tag !== "TcpAddress") throw new Error("no tcp address")
  return {
    url: `http://127.0.0.1:${address.port}`,
    run: (effect) => runtime.runPromise(effect as Effect.Effect<never, never, never>),
    close: () => runtime.dispose()
  }
}
