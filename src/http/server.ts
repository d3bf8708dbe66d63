/**
 * The public listener: the routes of app.ts served on host:port (port 0: a free port; read it from
 * HttpServer.address), behind the listener's admission gate (src/transport/admission.ts): at most
 * maxActive requests served at once, a bounded queue fair per grant behind them, and beyond it
 * 503 `overloaded` with Retry-After and the JSON ErrorBody at once. GET /healthz and the
 * protected-resource document never wait at the gate. Each request's steps run from macrotasks
 * (transport/interleave.ts), so the event loop reads its sockets between them; a request waiting
 * at the gate waits there too. main.ts (through listeners.ts) runs it
 * with the configured host and port over ServicesLive; tests run it on a free loopback port with
 * their own layers.
 */
import { createServer } from "node:http"
import { HttpLayerRouter, HttpServerRequest, type HttpServerResponse } from "@effect/platform"
import { NodeHttpServer, NodeHttpServerRequest } from "@effect/platform-node"
import { Effect, Layer, Option } from "effect"
import { InFlight, type InFlightShape } from "../read-pool/in-flight.js"
import { Admission, admissionKey, type Gate, makeGate } from "../transport/admission.js"
import { interleaved } from "../transport/interleave.js"
import { errorResponse } from "../transport/responses.js"
import { mcpOverloaded } from "../mcp/overloaded.js"
import { AppRoutes } from "./app.js"

/** Paths served at once, never queued: the liveness probe and the static protected-resource document. */
const UNGATED: ReadonlySet<string> = new Set(["/healthz", "/.well-known/oauth-protected-resource"])

const pathOf = (url: string): string => {
  const q = url.indexOf("?")
  return q < 0 ? url : url.slice(0, q)
}

const overloadedMessage = (retryAfterSeconds: number) =>
  `the service is serving as many requests as it can; try again in ${retryAfterSeconds} s`

/** 503 overloaded: the ErrorBody and Retry-After in whole seconds. */
export const overloadedResponse = (retryAfterSeconds: number): HttpServerResponse.HttpServerResponse =>
  errorResponse("overloaded", { message: overloadedMessage(retryAfterSeconds) }, { "retry-after": String(retryAfterSeconds) })

/**
 * The answer to a request the gate turns away: 503 overloaded, except a POST /mcp, which is
 * answered in the protocol (src/mcp/overloaded.ts: an isError result per tool call).
 */
const refusedAnswer = (request: HttpServerRequest.HttpServerRequest, retryAfterSeconds: number) =>
  Effect.suspend(() => {
    const plain = overloadedResponse(retryAfterSeconds)
    return request.method === "POST" && pathOf(request.url) === "/mcp"
      ? mcpOverloaded(retryAfterSeconds, overloadedMessage(retryAfterSeconds), plain)
      : Effect.succeed(plain)
  })

/**
 * What runs around every request, in this order: counted (read-pool/in-flight.ts: the read pool's
 * lone searches) from its start to its response; its steps scheduled by the request scheduler
 * (transport/interleave.ts: macrotasks, the sockets polled between them); inside that, the
 * admission gate (null: none), except for the UNGATED paths. The gate's wait is inside the
 * interleaved region, so a request woken at the gate resumes from a slice of the request
 * scheduler. Outside it (three middlewares, built at once, in no fixed order) the wake-up ran on
 * Effect's default scheduler, in the microtask queue of the request that left, and each request
 * woken there ran step 1 before the event loop polled again.
 */
const aroundRequest = (gate: Gate | null, retryAfterSeconds: number, inFlight: InFlightShape) =>
<E, R>(effect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest>) => {
  const gated = gate === null
    ? effect
    : Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
      UNGATED.has(pathOf(request.url))
        ? effect
        // the connection is the flow whose served count decides turns within a grant
        : gate.admit(admissionKey(request.headers, Option.getOrUndefined(request.remoteAddress)), NodeHttpServerRequest.toIncomingMessage(request).socket, effect, refusedAnswer(request, retryAfterSeconds)))
  return Effect.ensuring(Effect.zipRight(Effect.sync(inFlight.enter), interleaved(gated)), Effect.sync(inFlight.leave))
}

/** The listener's one global middleware: aroundRequest with this listener's gate (one per listener). */
const AroundRequest = HttpLayerRouter.middleware(
  Effect.map(Effect.all([Admission, InFlight]), ([{ options, observe }, inFlight]) => {
    const gate = options === null ? null : makeGate(options)
    if (gate !== null) observe?.(gate)
    return aroundRequest(gate, options?.retryAfterSeconds ?? 1, inFlight)
  }),
  { global: true }
)

/**
 * The routes behind AroundRequest on host:port. Only the request's steps inside AroundRequest run
 * from the request scheduler: one started on it (Layer.locally on this layer) would have the
 * router built from macrotasks too, and a connection accepted between the listen and the
 * handler's attachment waited for ever (seen once: a first /healthz never answered).
 */
export const publicListener = (host: string, port: number) =>
  HttpLayerRouter.serve(Layer.merge(AppRoutes, AroundRequest), { disableLogger: true, disableListenLog: true }).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createServer, { host, port }))
  )
