/**
 * The public listener's door for every route of /v1 and the approval pages: the body limit,
 * step 1 (checkCaller, provided to the rest as CurrentCaller), reading the query and the body,
 * steps 2–6 (runCall) and the response. Every failure is its ErrorBody with the contract's code;
 * an unexpected one is 500 internal with nothing but the code (the cause goes to the log).
 */
import { HttpServerResponse, type HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"
import { type Caller, checkCaller, CurrentCaller } from "../auth/caller.js"
import type { ChannelName } from "../auth/identity.js"
import { type Call, type FileBody, isJsonBytes, type Operation, type OperationName } from "../auth/operation.js"
import { type CallResult, decodeInput, graphEnvelope, logDenied, runCall } from "../auth/scope-check.js"
import { AppConfig } from "../config/config.js"
import { type DomainError, isDomainError, ValidationFailed } from "../contracts/errors.js"
import { type Body, contentLengthTooLarge, DEFAULT_BODY_LIMIT, readBody, readQuery } from "../transport/body.js"
import type { LimitKind } from "../transport/rate-limit.js"
import { errorResponse, internal } from "../transport/responses.js"
import { queryInput } from "./query-input.js"

/** What a route reads of its request. */
export interface RequestParts {
  readonly request: HttpServerRequest.HttpServerRequest
  readonly params: Readonly<Record<string, string>>
  readonly query: Readonly<Record<string, string>>
  readonly body: Body
}

export type Params = Readonly<Record<string, string | undefined>>

/**
 * The bucket of each operation: decisions, reviews, archives and redactions count as decisions, exports per
 * hour; every other route of /v1 (GET /v1/rejected of the approval channel too) counts as a
 * request. The approval pages are not limited (§3: requests "on /mcp and /v1").
 */
const LIMIT_OF: Partial<Record<OperationName, LimitKind>> = {
  decide: "decisions", review_structure: "decisions", archive_entity: "decisions", export: "exports", redact: "decisions"
}

const isV1 = (request: HttpServerRequest.HttpServerRequest): boolean => /^\/v1(\/|$|\?)/.test(request.url)

export interface Route<I, R, RP> {
  readonly channel: ChannelName
  readonly call: Call<I, R>
  /** step 2's reading of the request (with CurrentCaller: the caller is known) */
  readonly parse: (parts: RequestParts) => Effect.Effect<I, DomainError, RP | CurrentCaller>
  readonly bodyLimit?: number
  /** true: the route reads a JSON body only; any other content type is 415 before the body is read */
  readonly jsonBody?: boolean
}

/** The media type of a request body (without parameters), lowercased; "" without a Content-Type. */
const mediaType = (request: HttpServerRequest.HttpServerRequest): string =>
  (request.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase() ?? ""

export const JSON_ONLY_MESSAGE = "this route reads a JSON body: send it with Content-Type: application/json"

const isFile = (body: unknown): body is FileBody =>
  typeof body === "object" && body !== null && (body as { _tag?: unknown })._tag === "File"

/** The HTTP response of a call's result. */
export const callResponse = (name: OperationName, result: CallResult) => {
  if (result._tag === "Internal") return internal(name, result.cause)
  if (result._tag === "Refused") return Effect.succeed(errorResponse(result.code, result.body))
  const out = result.outcome
  if (out.response !== undefined) return Effect.succeed(out.response)
  if (isFile(out.body)) {
    return Effect.succeed(HttpServerResponse.uint8Array(out.body.bytes, {
      status: out.status,
      contentType: out.body.contentType,
      headers: { "content-disposition": `attachment; filename="${out.body.filename}"` }
    }))
  }
  if (isJsonBytes(out.body)) return Effect.succeed(HttpServerResponse.uint8Array(out.body.bytes, { status: out.status, contentType: "application/json" }))
  return Effect.succeed(HttpServerResponse.unsafeJson(out.body, { status: out.status }))
}

/** The response of a refusal of step 1 (in the graph envelope for graph operations). */
const callerRefused = (request: HttpServerRequest.HttpServerRequest, name: OperationName, e: DomainError, publicUrl: string) => {
  const headers: Record<string, string> = {}
  // on /mcp and /v1/* a 401 says where the protected-resource document is
  if (e.code === "unauthorized" && /^\/(v1|mcp)(\/|$)/.test(new URL(request.url, "http://localhost").pathname)) {
    headers["www-authenticate"] = `Bearer resource_metadata="${publicUrl}/.well-known/oauth-protected-resource"`
  }
  if (e.code === "rate-limited") headers["retry-after"] = String("retryAfter" in e && e.retryAfter !== undefined ? e.retryAfter : 1)
  return errorResponse(e.code, graphEnvelope(name, e.code, { message: e.message }), headers)
}

/** One route through the whole pipeline; every failure becomes its ErrorBody response. */
export const serveRoute = <I, R, RP>(route: Route<I, R, RP>) =>
(request: HttpServerRequest.HttpServerRequest, params: Params = {}) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const { channel, call } = route
    const bodyLimit = route.bodyLimit ?? DEFAULT_BODY_LIMIT
    // 1. credential → identity → active grant; identity kind of the channel; limits (before the
    // body's size: a call without a credential is 401 whatever it sends; no body is read here)
    const limit = LIMIT_OF[call.name] ?? (isV1(request) ? "requests" : null)
    const caller = yield* Effect.either(checkCaller(request, { channel, limit }))
    if (caller._tag === "Left") {
      const e = caller.left
      if (e._tag === "JwksUnavailable") return yield* internal("jwks", e)
      return yield* Effect.as(logDenied(channel, call.name, e, e.grantId ?? null), callerRefused(request, call.name, e, config.file.public_url))
    }
    if (contentLengthTooLarge(request, bodyLimit)) {
      return errorResponse("payload-too-large", graphEnvelope(call.name, "payload-too-large", { message: `the body is larger than ${bodyLimit} bytes` }))
    }
    // a form or any other type is refused whole, never read half (a form's fields would decode as strings)
    if (route.jsonBody === true && mediaType(request) !== "" && mediaType(request) !== "application/json") {
      return errorResponse("unsupported-media-type", graphEnvelope(call.name, "unsupported-media-type", { message: JSON_ONLY_MESSAGE }))
    }
    // 2.–6. read the input, then the shared steps
    const clean: Record<string, string> = {}
    for (const [k, v] of Object.entries(params)) if (v !== undefined) clean[k] = v
    const input = yield* Effect.either(Effect.all({ query: readQuery(request), body: readBody(request, bodyLimit) }))
    if (input._tag === "Left") {
      const e = input.left
      if (e._tag === "PayloadTooLarge") return errorResponse("payload-too-large", graphEnvelope(call.name, "payload-too-large", { message: e.message }))
      yield* logDenied(channel, call.name, e, caller.right.grant.id)
      const { error, ...rest } = { error: e.code, message: e.message, issues: e.issues ?? [] }
      return errorResponse(error, graphEnvelope(call.name, error, rest))
    }
    const parts: RequestParts = { request, params: clean, ...input.right }
    const result = yield* runCall(call, route.parse(parts), input.right.body.text).pipe(Effect.provideService(CurrentCaller, caller.right))
    return yield* callResponse(call.name, result)
  }).pipe(
    Effect.catchAllDefect((defect) => internal(route.call.name, defect)),
    Effect.catchAll((e: unknown) => (isDomainError(e) ? Effect.succeed(errorResponse(e.code, { message: e.message })) : internal(route.call.name, e)))
  )

// ---------------------------------------------------------------------------------------------
// Operations as routes: how a request becomes an operation's raw input

/** A body key that a path parameter also names is refused like any unknown key. */
const clash = (body: unknown, params: Readonly<Record<string, string>>): string | null => {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return null
  return Object.keys(params).find((k) => Object.hasOwn(body, k)) ?? null
}

/** Where an operation's raw input comes from besides the path parameters: the JSON body, the query, or nothing. */
export type InputFrom = "body" | "query" | "path"

/**
 * An operation served as a route of `channel`: its raw input is the JSON body (or the query, read
 * as the input's types) with the path parameters as fields (`rename` maps a parameter to its field).
 */
export const operationRoute = <I, R>(
  channel: ChannelName,
  op: Operation<I, R>,
  from: InputFrom,
  options: { readonly bodyLimit?: number; readonly params?: Readonly<Record<string, string>> } = {}
) =>
  serveRoute({
    channel,
    call: op,
    jsonBody: from === "body",
    ...(options.bodyLimit === undefined ? {} : { bodyLimit: options.bodyLimit }),
    parse: (parts) =>
      Effect.suspend(() => {
        const named: Record<string, string> = {}
        for (const [k, v] of Object.entries(parts.params)) named[options.params?.[k] ?? k] = v
        // a route whose input is its path and body takes no query parameter: one is refused like an
        // unknown key, not ignored (a ?scope= there would otherwise pass unseen, §5.2 step 2)
        const stray = from === "query" ? undefined : Object.keys(parts.query)[0]
        if (stray !== undefined) {
          return Effect.fail(new ValidationFailed({ message: `${op.label} is invalid: ${stray}: unknown query parameter (remove it)`, issues: [{ path: stray, message: "unknown query parameter (remove it)" }] }))
        }
        if (from === "path") return decodeInput(op, named)
        if (from === "query") return decodeInput(op, { ...queryInput(op.input, parts.query), ...named })
        const body = parts.body.value
        const taken = clash(body, named)
        if (taken !== null) {
          return Effect.fail(new ValidationFailed({ message: `${op.label} is invalid: ${taken}: unknown key (remove it)`, issues: [{ path: taken, message: "unknown key (remove it)" }] }))
        }
        return decodeInput(op, Object.keys(named).length === 0 || typeof body !== "object" || body === null || Array.isArray(body) ? body : { ...body, ...named })
      })
  })

/** The caller of the current request (for page calls). */
export const currentCaller: Effect.Effect<Caller, never, CurrentCaller> = CurrentCaller
