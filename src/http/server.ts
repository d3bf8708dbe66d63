/**
 * The public listener: the routes of app.ts served on host:port (port 0: a free port; read it from
 * HttpServer.address), behind the listener's admission gate (src/transport/admission.ts): at most
 * maxActive requests served at once, a bounded queue fair per grant behind them, and beyond it
 * 503 `overloaded` with Retry-After and the JSON ErrorBody at once. GET /healthz and the
 * protected-resource document never wait at the gate. Each request's steps run from macrotasks
 * (transport/interleave.ts), so the event loop reads its sockets between them. main.ts runs it
 * with the configured host and port over ServicesLive; tests run it on a free loopback port with
 * their own layers.
 */
import { createServer } from "node:http"
import { HttpLayerRouter, HttpServerRequest, type HttpServerResponse } from "@effect/platform"
import { NodeHttpServer, NodeHttpServerRequest } from "@effect/platform-node"
import { Effect, Layer, Option } from "effect"
import { InFlight } from "../read-pool/in-flight.js"
import { Admission, admissionKey, makeGate } from "../transport/admission.js"
import { interleaved } from "../transport/interleave.js"
import { errorResponse } from "../transport/responses.js"
import { AppRoutes } from "./app.js"

/** Paths served at once, never queued: the liveness probe and the static protected-resource document. */
const UNGATED: ReadonlySet<string> = new Set(["/healthz", "/.well-known/oauth-protected-resource"])

const pathOf = (url: string): string => {
  const q = url.indexOf("?")
  return q < 0 ? url : url.slice(0, q)
}

/** 503 overloaded: the ErrorBody and Retry-After in whole seconds. */
export const overloadedResponse = (retryAfterSeconds: number): HttpServerResponse.HttpServerResponse =>
  errorResponse("overloaded", {
    message: `the service is serving as many requests as it can; try again in ${retryAfterSeconds} s`
  }, { "retry-after": String(retryAfterSeconds) })

/** The admission gate of this listener, around every route (a global middleware: it answers the 503 itself). */
const AdmissionGate = HttpLayerRouter.middleware(
  Effect.map(Admission, ({ options, observe }) => {
    if (options === null) return (effect: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>) => effect
    const gate = makeGate(options)
    observe?.(gate)
    const refused = Effect.sync(() => overloadedResponse(options.retryAfterSeconds))
    return (effect: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>) =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
        UNGATED.has(pathOf(request.url))
          ? effect
          // the connection is the flow whose served count decides turns within a grant
          : gate.admit(admissionKey(request.headers, Option.getOrUndefined(request.remoteAddress)), NodeHttpServerRequest.toIncomingMessage(request).socket, effect, refused))
  }),
  { global: true }
)

/** Every request's steps run from macrotasks, so sockets are polled between them (transport/interleave.ts). */
const Interleave = HttpLayerRouter.middleware((effect) => interleaved(effect), { global: true })

/** Every request is counted from its start to its response (read-pool/in-flight.ts: the read pool's lone searches). */
const Counted = HttpLayerRouter.middleware(
  Effect.map(InFlight, (inFlight) => (effect: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>) =>
    Effect.ensuring(Effect.zipRight(Effect.sync(inFlight.enter), effect), Effect.sync(inFlight.leave))),
  { global: true }
)

export const publicListener = (host: string, port: number) =>
  HttpLayerRouter.serve(Layer.mergeAll(AppRoutes, AdmissionGate, Interleave, Counted), { disableLogger: true, disableListenLog: true }).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createServer, { host, port }))
  )
