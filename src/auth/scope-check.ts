/**
 * The scope-check pipeline (architecture.md §5.2), one piece every route and every MCP tool
 * uses: 1 credential → active grant (401) and identity kind (403 channel-not-allowed); 2 parse
 * (400 validation-failed) and requested scopes ⊆ grant.scopes (403 scope-not-allowed, the same
 * answer whether the scope exists or not); 3 more than one scope only with cross_scope (400);
 * 4 the operation's right in the channel's and the grant's rights (403); 5 open every touched
 * scope (503 scope-locked); execute; 6 one search_log row per touched scope with one id,
 * outcomes 404/409/422 included. Denials of steps 1–4 go to the process log only.
 */
import { randomUUID } from "node:crypto"
import { HttpServerResponse, type HttpServerRequest } from "@effect/platform"
import type { SqlError } from "@effect/sql/SqlError"
import { type Either, Effect, Option } from "effect"
import { AppConfig } from "../config/config.js"
import { OpsStore } from "../db/ops-store.js"
import { ScopeStore } from "../db/scope-store.js"
import { type LogOperation, writeSearchLog } from "../db/search-log.js"
import { type DomainError, ERROR_STATUS, type ErrorBodyOut, type ErrorCode, toErrorBody, ValidationFailed } from "../contracts/errors.js"
import type { Grant, Right } from "../contracts/grants.js"
import { nowInstant } from "../contracts/time.js"
import { errorResponse, internal } from "../http/errors.js"
import { type Body, contentLengthTooLarge, DEFAULT_BODY_LIMIT, PayloadTooLarge, readBody, readQuery, sha256Text } from "../http/input.js"
import { type LimitKind, RateLimiter } from "../http/rate-limit.js"
import { authenticate } from "./credentials.js"
import type { ChannelName, Identity } from "./identity.js"

/** Operations with their right (gaps.md §3, graph.md §3.1). read_source is logged to the process log only. */
export const OPERATION_RIGHT = {
  search: "read", read_rule: "read", list_rules: "read", provenance: "read", list_proposals: "read",
  feedback: "read", list_scopes: "read", status: "read",
  propose: "propose", store_source: "propose", read_source: "propose",
  decide: "decide", list_rejected: "decide", export: "decide",
  resolve_entity: "read", read_entity: "read", list_links: "read", list_structure: "read",
  create_entity: "propose", move_entity: "propose", update_entity: "propose", propose_link: "propose",
  review_structure: "decide", archive_entity: "decide"
} as const satisfies Record<LogOperation | "read_source", Right>
export type Operation = keyof typeof OPERATION_RIGHT

/** What each channel may ever do, and who may use it (gaps.md §2). */
export const CHANNEL_RIGHTS: Record<ChannelName, ReadonlyArray<Right>> = {
  mcp: ["read", "propose"], api: ["read", "propose"], approval: ["read", "decide"]
}
export const CHANNEL_KINDS: Record<ChannelName, ReadonlyArray<Identity["kind"]>> = {
  mcp: ["person"], api: ["person", "service"], approval: ["person"]
}

export const SCOPE_NOT_ALLOWED_MESSAGE = "this grant does not cover the requested scope"

/** Graph operations: every refusal carries the envelope {error, message, remedy, next} (graph.md §8). */
export const GRAPH_OPERATIONS: ReadonlySet<Operation> = new Set<Operation>([
  "resolve_entity", "read_entity", "create_entity", "move_entity", "update_entity", "propose_link", "list_links",
  "list_structure", "review_structure", "archive_entity"
])

const GRAPH_GUIDANCE: Partial<Record<ErrorCode, { remedy: string; next: ReadonlyArray<{ tool: string; why: string }> }>> = {
  "unauthorized": { remedy: "sign in again; ask an operator for an active grant if it keeps failing", next: [] },
  "channel-not-allowed": { remedy: "this grant or channel cannot do this: ask the person to do it on the approval page or an operator for the right", next: [] },
  "scope-not-allowed": { remedy: "name a scope this grant covers", next: [{ tool: "list_scopes", why: "see the scopes this grant covers" }] },
  "multiple-scopes-without-flag": { remedy: "name one scope: entities and links never span scopes", next: [] },
  "validation-failed": { remedy: "correct the fields named in issues and call again", next: [] },
  "payload-too-large": { remedy: "send a smaller request", next: [] },
  "rate-limited": { remedy: "wait the seconds of Retry-After, then call again", next: [] },
  "scope-locked": { remedy: "the scope is not available now: tell the person and try again later", next: [] }
}

/** A refusal body of a graph operation: remedy and next added where the refusal has none (the same body for every scope). */
export const graphEnvelope = <B extends object>(operation: Operation, code: ErrorCode, body: B): B => {
  if (!GRAPH_OPERATIONS.has(operation) || "remedy" in body) return body
  const g = GRAPH_GUIDANCE[code] ?? { remedy: "follow the message and call again", next: [] }
  return { ...body, remedy: g.remedy, next: g.next }
}

export interface RequestInput {
  readonly request: HttpServerRequest.HttpServerRequest
  /** step 1 has run: the caller is known */
  readonly identity: Identity
  readonly grant: Grant
  readonly params: Readonly<Record<string, string>>
  readonly query: Readonly<Record<string, string>>
  readonly body: Body
}

export interface CallContext {
  readonly grant: Grant
  readonly identity: Identity
  readonly channel: ChannelName
  /** the touched scopes, opened */
  readonly scopes: ReadonlyArray<string>
  readonly requestId: string
}

export interface Outcome {
  readonly status: number
  readonly body?: unknown
  /** a ready response (a redirect, a file) instead of JSON */
  readonly response?: HttpServerResponse.HttpServerResponse
  readonly refs: ReadonlyArray<string>
  /** search only */
  readonly log?: { readonly terms: unknown; readonly variants: unknown; readonly stages: unknown }
  /** rows that differ per scope (search: each scope's head refs and terms) */
  readonly perScope?: ReadonlyArray<{ readonly scope: string; readonly refs: ReadonlyArray<string>; readonly log?: Outcome["log"] }>
}

export interface Call<P, RP, R> {
  readonly channel: ChannelName
  readonly operation: Operation
  readonly bodyLimit?: number
  readonly parse: (input: RequestInput) => Effect.Effect<P, DomainError, RP>
  /** the requested scopes, from parameters and from the id of every ref; "grant" = grant-wide */
  readonly scopes: (p: P) => ReadonlyArray<string> | "grant"
  readonly crossScope?: (p: P) => boolean
  /** refs named by the request, logged with a failed outcome */
  readonly refs?: (p: P) => ReadonlyArray<string>
  /** a failure of our own storage (SqlError) is 500 internal */
  readonly run: (p: P, ctx: CallContext) => Effect.Effect<Outcome, DomainError | SqlError, R>
}

const LIMIT_OF: Partial<Record<Operation, LimitKind>> = { decide: "decisions", review_structure: "decisions", archive_entity: "decisions", export: "exports" }

const domainError = (e: DomainError, operation?: Operation) => {
  const body = toErrorBody(e)
  const { error: _code, ...rest } = body
  return errorResponse(body.error, operation === undefined ? rest : graphEnvelope(operation, body.error, rest))
}

const isDomainError = (e: unknown): e is DomainError =>
  typeof e === "object" && e !== null && "code" in e && typeof (e as { code: unknown }).code === "string" &&
  (e as { code: string }).code in ERROR_STATUS

/** Who calls, on which channel: step 1 has run (authenticated, active grant, identity kind, limit). */
export interface Caller {
  readonly identity: Identity
  readonly grant: Grant
  readonly channel: ChannelName
}

/** The input of one call: the HTTP request it came with, path parameters, query and body. */
export interface CallInput {
  readonly request: HttpServerRequest.HttpServerRequest
  readonly params: Readonly<Record<string, string>>
  readonly query: Readonly<Record<string, string>>
  readonly body: Body
}

/** A call without its channel: the caller's channel applies (MCP tools reuse the /v1 calls). */
export type CallSpec<P, RP, R> = Omit<Call<P, RP, R>, "channel">

/** Types a call without its channel, so a route and an MCP tool can share parse, scopes and run. */
export const spec = <P, RP, R>(s: CallSpec<P, RP, R>): CallSpec<P, RP, R> => s

/** The result of steps 2–6: an outcome, a refusal with its ErrorBody, or an internal failure. */
export type CallResult =
  | { readonly _tag: "Done"; readonly outcome: Outcome; readonly requestId: string }
  | {
    readonly _tag: "Refused"
    readonly code: ErrorCode
    readonly body: Omit<ErrorBodyOut, "error">
    /** set when the call ran (its search_log rows carry this id) */
    readonly requestId: string | null
  }
  | { readonly _tag: "Internal"; readonly cause: unknown }

const refusedOf = (e: DomainError, requestId: string | null): CallResult => {
  const { error: _code, ...rest } = toErrorBody(e)
  return { _tag: "Refused", code: e.code, body: rest, requestId }
}

/**
 * Steps 2–6 of the pipeline for an authenticated caller (architecture.md §5.2): parse, scopes
 * within the grant, one scope unless cross_scope, the operation's right for the caller's
 * channel, open the scopes, run, one search_log row per touched scope. handle() runs it for
 * every /v1 route; the MCP server runs it for every tool call with channel mcp.
 */
export const runCall = <P, RP, R>(call: CallSpec<P, RP, R>, caller: Caller, input: CallInput) =>
  Effect.gen(function*() {
    const store = yield* ScopeStore
    const { channel, grant, identity } = caller
    const refuse = (code: ErrorCode, reason: string, message: string): Effect.Effect<CallResult> =>
      Effect.as(
        Effect.logWarning("denied").pipe(Effect.annotateLogs({ channel, operation: call.operation, code, grant: grant.id, reason })),
        { _tag: "Refused", code, body: { message }, requestId: null } satisfies CallResult
      )

    // 2. parse; requested scopes within the grant
    const parsed = yield* Effect.either(call.parse({ request: input.request, identity, grant, params: input.params, query: input.query, body: input.body }))
    if (parsed._tag === "Left") {
      return yield* Effect.as(
        Effect.logWarning("denied").pipe(Effect.annotateLogs({ channel, operation: call.operation, code: parsed.left.code, grant: grant.id })),
        refusedOf(parsed.left, null)
      )
    }
    const p = parsed.right
    const requested = call.scopes(p)
    const grantWide = requested === "grant"
    const scopes = grantWide ? [...grant.scopes] : [...new Set(requested)]
    if (!grantWide && scopes.some((s) => !grant.scopes.includes(s))) {
      return yield* refuse("scope-not-allowed", "scope outside grant", SCOPE_NOT_ALLOWED_MESSAGE)
    }
    // 3. one scope unless cross_scope
    if (!grantWide && scopes.length === 0) {
      return refusedOf(new ValidationFailed({ message: "no scope given: name the scope", issues: [{ path: "scope", message: "required" }] }), null)
    }
    if (!grantWide && scopes.length > 1 && !(call.crossScope?.(p) ?? false)) {
      return yield* refuse("multiple-scopes-without-flag", "several scopes", "more than one scope needs cross_scope: true")
    }
    // 4. the operation's right
    const right = OPERATION_RIGHT[call.operation]
    if (!CHANNEL_RIGHTS[channel].includes(right) || !grant.rights.includes(right)) {
      return yield* refuse("channel-not-allowed", `right ${right} missing`, `this grant or channel does not allow ${right}`)
    }
    // 5. open every touched scope (grant-wide calls open and report their scopes themselves)
    if (!grantWide) {
      for (const scope of scopes) {
        const opened = yield* Effect.either(store.use(scope))
        if (opened._tag === "Left") return refusedOf(opened.left, null)
      }
    }
    const requestId = randomUUID()
    const ran = yield* Effect.either(call.run(p, { grant, identity, channel, scopes, requestId }))
    if (ran._tag === "Left" && !isDomainError(ran.left)) return { _tag: "Internal", cause: ran.left } satisfies CallResult
    const result = ran as Either.Either<Outcome, DomainError>

    // 6. one search_log row per touched scope
    const status = result._tag === "Right" ? result.right.status : ERROR_STATUS[result.left.code]
    if (call.operation === "read_source") {
      yield* Effect.logInfo("source-read").pipe(Effect.annotateLogs({ grant: grant.id, scope: scopes.join(","), outcome: status }))
    } else {
      const at = yield* nowInstant
      const refs = result._tag === "Right" ? result.right.refs : (call.refs?.(p) ?? [])
      const logged = grantWide ? (yield* Effect.forEach(scopes, (s) => Effect.option(store.use(s)))).flatMap((o) => Option.toArray(o).map((h) => h.scope)) : scopes
      for (const scope of logged) {
        const own = result._tag === "Right" ? result.right.perScope?.find((x) => x.scope === scope) : undefined
        const log = own?.log ?? (result._tag === "Right" ? result.right.log : undefined)
        yield* store.write(scope, ({ sql }) => writeSearchLog(sql, {
          id: requestId, at, grantId: grant.id, channel, operation: call.operation as LogOperation, outcome: status,
          crossScope: logged.length > 1, refs: own?.refs ?? refs,
          ...(log ?? {}),
          inputSha256: input.body.text === null ? null : sha256Text(input.body.text)
        })).pipe(Effect.catchAll((e) => Effect.logError("search_log write failed").pipe(Effect.annotateLogs({ scope, cause: String(e) }))))
      }
    }
    if (result._tag === "Left") return refusedOf(result.left, requestId)
    return { _tag: "Done", outcome: result.right, requestId } satisfies CallResult
  }).pipe(
    Effect.catchAllDefect((defect) => Effect.succeed<CallResult>({ _tag: "Internal", cause: defect })),
    Effect.catchAll((e: unknown) => Effect.succeed<CallResult>(isDomainError(e) ? refusedOf(e, null) : { _tag: "Internal", cause: e })),
    Effect.map((r): CallResult => (r._tag === "Refused" ? { ...r, body: graphEnvelope(call.operation, r.code, r.body) } : r))
  )

/** Runs one call through the pipeline; every failure becomes its ErrorBody response. */
export const handle = <P, RP, R>(call: Call<P, RP, R>) => (request: HttpServerRequest.HttpServerRequest, params: Readonly<Record<string, string>> = {}) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const ops = yield* OpsStore
    const limiter = yield* RateLimiter
    const channel = call.channel
    const deny = (code: ErrorCode, grantId: string | null, reason: string, headers: Record<string, string> = {}, message?: string) =>
      Effect.as(
        Effect.logWarning("denied").pipe(Effect.annotateLogs({ channel, operation: call.operation, code, grant: grantId, reason })),
        errorResponse(code, graphEnvelope(call.operation, code, message === undefined ? {} : { message }), headers)
      )
    // On /mcp and /v1/* a 401 says where the protected-resource document is.
    const wwwAuthenticate: Record<string, string> = /^\/(v1|mcp)(\/|$)/.test(new URL(request.url, "http://localhost").pathname)
      ? { "www-authenticate": `Bearer resource_metadata="${config.file.public_url}/.well-known/oauth-protected-resource"` }
      : {}

    const bodyLimit = call.bodyLimit ?? DEFAULT_BODY_LIMIT
    if (contentLengthTooLarge(request, bodyLimit)) return errorResponse("payload-too-large", graphEnvelope(call.operation, "payload-too-large", { message: `the body is larger than ${bodyLimit} bytes` }))

    // 1. credential → identity → active grant; identity kind of the channel; limits
    const identity = yield* Effect.either(authenticate(request, channel, config))
    if (identity._tag === "Left") {
      if (identity.left._tag === "JwksUnavailable") return yield* internal("jwks", identity.left)
      // a logged-out session's cookie on a state-changing request (§5.3): its form and token are void
      if (identity.left._tag === "SessionEnded") return yield* deny("csrf-failed", null, identity.left.reason, {}, identity.left.message)
      return yield* deny("unauthorized", null, identity.left.reason, wwwAuthenticate, identity.left.message)
    }
    const found = yield* ops.findActiveGrant(identity.right.auth, identity.right.identity).pipe(Effect.orDie)
    if (Option.isNone(found)) return yield* deny("unauthorized", null, "no active grant", wwwAuthenticate, "a valid credential is required")
    const grant = found.value
    if (!CHANNEL_KINDS[channel].includes(identity.right.kind)) {
      return yield* deny("channel-not-allowed", grant.id, `${identity.right.kind} on ${channel}`, {}, `a ${identity.right.kind} cannot use the ${channel} channel`)
    }
    const limitKind: LimitKind | null = LIMIT_OF[call.operation] ?? (channel === "approval" ? null : "requests")
    if (limitKind !== null) {
      const limited = yield* Effect.either(limiter.take(limitKind, grant.id))
      if (limited._tag === "Left") {
        return yield* deny("rate-limited", grant.id, limitKind, { "retry-after": String(limited.left.retryAfter) }, limited.left.message)
      }
    }

    // 2.–6. read the input, then the shared steps
    const input = yield* Effect.either(Effect.all({ query: readQuery(request), body: readBody(request, bodyLimit) }))
    if (input._tag === "Left") {
      if (input.left instanceof PayloadTooLarge) return errorResponse("payload-too-large", graphEnvelope(call.operation, "payload-too-large", { message: input.left.message }))
      return yield* Effect.as(Effect.logWarning("denied").pipe(Effect.annotateLogs({ channel, operation: call.operation, code: "validation-failed", grant: grant.id })), domainError(input.left, call.operation))
    }
    const result = yield* runCall(call, { identity: identity.right, grant, channel }, { request, params, query: input.right.query, body: input.right.body })
    if (result._tag === "Internal") return yield* internal(call.operation, result.cause)
    if (result._tag === "Refused") return errorResponse(result.code, result.body)
    const out = result.outcome
    return out.response ?? HttpServerResponse.unsafeJson(out.body, { status: out.status })
  }).pipe(
    Effect.catchAllDefect((defect) => internal(call.operation, defect)),
    Effect.catchAll((e: unknown) => (isDomainError(e) ? Effect.succeed(domainError(e, call.operation)) : internal(call.operation, e)))
  )
