/**
 * The scope-check pipeline (architecture.md §5.2), steps 2–6, one piece every channel runs after
 * step 1 (checkCaller, ./caller.ts): 2 parse (400 validation-failed) and requested scopes ⊆
 * grant.scopes (403 scope-not-allowed, the same answer whether the scope exists or not); 3 more
 * than one scope only with cross_scope (400); 4 the operation's right in the channel's and the
 * grant's rights (403); 5 open every touched scope (503 scope-locked); execute; 6 one search_log
 * row per touched scope with one id, outcomes 404/409/422 included. Denials of steps 1–4 go to
 * the process log only. The caller is read from CurrentCaller; the result is transport-neutral
 * (CallResult), rendered by each door (src/http/handle.ts, src/mcp/tool.ts).
 */
import { randomBytes } from "node:crypto"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, type Either, Effect, Option } from "effect"
import { decodeStrict } from "../contracts/decode.js"
import { requestIdAt } from "../contracts/ids.js"
import {
  ChannelNotAllowed,
  type DomainError,
  ERROR_STATUS,
  type ErrorBodyOut,
  type ErrorCode,
  isDomainError,
  MultipleScopes,
  ScopeNotAllowed,
  toErrorBody,
  ValidationFailed
} from "../contracts/errors.js"
import type { Right } from "../contracts/grants.js"
import { nowInstant } from "../contracts/time.js"
import { isWriting } from "../db/connection.js"
import { ScopeStore } from "../db/scope-store.js"
import { writeSearchLog } from "../db/search-log.js"
import { redactLoggedTerms } from "../redaction/search-log.js"
import { sha256Text } from "../transport/body.js"
import { CurrentCaller } from "./caller.js"
import type { ChannelName } from "./identity.js"
import { type Call, isLogged, type Operation, type OperationName, type Outcome } from "./operation.js"

/** What each channel may ever do (gaps.md §2). */
export const CHANNEL_RIGHTS: Readonly<Record<ChannelName, ReadonlyArray<Right>>> = {
  mcp: ["read", "propose"], api: ["read", "propose"], approval: ["read", "decide", "redact"]
}

export const SCOPE_NOT_ALLOWED_MESSAGE = "this grant does not cover the requested scope"

/** Graph operations: every refusal carries the envelope {error, message, remedy, next} (graph.md §8). */
export const GRAPH_OPERATIONS: ReadonlySet<OperationName> = new Set<OperationName>([
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
  "unsupported-media-type": { remedy: "send the body as JSON with Content-Type: application/json", next: [] },
  "rate-limited": { remedy: "wait the seconds of Retry-After, then call again", next: [] },
  "scope-locked": { remedy: "the scope is not available now: tell the person and try again later", next: [] }
}

/** A refusal body of a graph operation: remedy and next added where the refusal has none (the same body for every scope). */
export const graphEnvelope = <B extends object>(operation: OperationName, code: ErrorCode, body: B): B => {
  if (!GRAPH_OPERATIONS.has(operation) || "remedy" in body) return body
  const g = GRAPH_GUIDANCE[code] ?? { remedy: "follow the message and call again", next: [] }
  return { ...body, remedy: g.remedy, next: g.next }
}

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

/** A refusal of any step as its CallResult: the body of the coded error, in the graph envelope where it applies. */
export const refusal = (operation: OperationName, e: DomainError, requestId: string | null): CallResult => {
  const { error: _code, ...rest } = toErrorBody(e)
  return { _tag: "Refused", code: e.code, body: graphEnvelope(operation, e.code, rest), requestId }
}

/** A denial of steps 1–4: the process log only (grant, channel, operation, code, reason). */
export const logDenied = (channel: ChannelName, operation: string, e: DomainError, grantId: string | null) =>
  Effect.logWarning("denied").pipe(Effect.annotateLogs({
    channel, operation, code: e.code, grant: grantId, ...("reason" in e && e.reason !== undefined ? { reason: e.reason } : {})
  }))

/** Step 2 for an operation: its input decoded strictly, then its own checks. */
export const decodeInput = <I, R>(op: Operation<I, R>, raw: unknown): Effect.Effect<I, DomainError> =>
  Effect.tap(decodeStrict(op.input, raw, op.label), (input) => op.check?.(input) ?? Effect.void)

/**
 * Steps 2–6 of the pipeline for the current caller: `parse` is step 2's reading of the input
 * (an operation's decodeInput, or the parse of a page); `requestText` is the request's text for
 * input_sha256 (never stored).
 */
export const runCall = <I, RP, R>(call: Call<I, R>, parse: Effect.Effect<I, DomainError, RP>, requestText: string | null) =>
  Effect.gen(function*() {
    const store = yield* ScopeStore
    const caller = yield* CurrentCaller
    const { channel, grant } = caller
    const deny = (e: DomainError): Effect.Effect<CallResult> => Effect.as(logDenied(channel, call.name, e, grant.id), refusal(call.name, e, null))

    // 2. parse; requested scopes within the grant
    const parsed = yield* Effect.either(parse)
    if (parsed._tag === "Left") return yield* deny(parsed.left)
    const input = parsed.right
    const requested = call.scopes(input, caller)
    const grantWide = requested === "grant"
    const scopes = grantWide ? [...grant.scopes] : [...new Set(requested)]
    if (!grantWide && scopes.some((s) => !grant.scopes.includes(s))) {
      return yield* deny(new ScopeNotAllowed({ message: SCOPE_NOT_ALLOWED_MESSAGE, reason: "scope outside grant" }))
    }
    // 3. one scope unless cross_scope
    if (!grantWide && scopes.length === 0) {
      return refusal(call.name, new ValidationFailed({ message: "no scope given: name the scope", issues: [{ path: "scope", message: "required" }] }), null)
    }
    if (!grantWide && scopes.length > 1 && !(call.crossScope?.(input) ?? false)) {
      return yield* deny(new MultipleScopes({ message: "more than one scope needs cross_scope: true", reason: "several scopes" }))
    }
    // 4. the operation's right
    if (!CHANNEL_RIGHTS[channel].includes(call.right) || !grant.rights.includes(call.right)) {
      return yield* deny(new ChannelNotAllowed({ message: `this grant or channel does not allow ${call.right}`, reason: `right ${call.right} missing` }))
    }
    // 5. open every touched scope (grant-wide calls open and report their scopes themselves)
    if (!grantWide) {
      for (const scope of scopes) {
        const opened = yield* Effect.either(store.use(scope))
        if (opened._tag === "Left") return refusal(call.name, opened.left, null)
      }
    }
    // in time order: search_log's primary key takes each new row at its end (ids.ts)
    const requestId = requestIdAt(yield* Clock.currentTimeMillis, randomBytes(10))
    const ran = yield* Effect.either(call.run(input, { scopes, requestId }))
    if (ran._tag === "Left" && !isDomainError(ran.left)) return { _tag: "Internal", cause: ran.left } satisfies CallResult
    const result = ran as Either.Either<Outcome, DomainError>

    // 6. one search_log row per touched scope (a redaction: the process log only, never its input)
    const status = result._tag === "Right" ? result.right.status : ERROR_STATUS[result.left.code]
    const operation = call.name
    if (!isLogged(operation)) {
      yield* Effect.logInfo("redaction access").pipe(Effect.annotateLogs({ channel, operation, grant: grant.id, scopes, outcome: status, request: requestId }))
      if (result._tag === "Left") return refusal(call.name, result.left, requestId)
      return { _tag: "Done", outcome: result.right, requestId } satisfies CallResult
    }
    const at = yield* nowInstant
    const refs = result._tag === "Right" ? result.right.refs : (call.refs?.(input) ?? [])
    const logged = grantWide ? (yield* Effect.forEach(scopes, (s) => Effect.option(store.use(s)))).flatMap((o) => Option.toArray(o).map((h) => h.scope)) : scopes
    const rows = logged.map((scope) => {
      const own = result._tag === "Right" ? result.right.perScope?.find((x) => x.scope === scope) : undefined
      const log = own?.log ?? (result._tag === "Right" ? result.right.log : undefined)
      // a redacted term is logged as the marker, never collected again (gaps.md §12)
      return store.append(scope, ({ sql }) => Effect.flatMap(redactLoggedTerms(sql, {
        id: requestId, at, grantId: grant.id, channel, operation, outcome: status,
        crossScope: logged.length > 1, refs: own?.refs ?? refs,
        ...(log ?? {}),
        inputSha256: requestText === null ? null : sha256Text(requestText)
      }), (entry) => writeSearchLog(sql, entry))).pipe(Effect.catchAll((e) => Effect.logError("search_log write failed").pipe(Effect.annotateLogs({ scope, cause: String(e) }))))
    })
    const busy = (yield* Effect.forEach(logged, (s) => Effect.option(store.use(s)))).some((h) => Option.isSome(h) && isWriting(h.value.sql))
    yield* writeLogRows(store, rows, busy)
    if (result._tag === "Left") return refusal(call.name, result.left, requestId)
    return { _tag: "Done", outcome: result.right, requestId } satisfies CallResult
  }).pipe(
    Effect.catchAllDefect((defect) => Effect.succeed<CallResult>({ _tag: "Internal", cause: defect })),
    Effect.catchAll((e: unknown) => Effect.succeed<CallResult>(isDomainError(e) ? refusal(call.name, e, null) : { _tag: "Internal", cause: e }))
  )

/**
 * The search_log rows of an answer, written before it goes out, unless a write holds (or waits
 * for) one of the scopes' writer connection: a long write (a redaction's apply, seconds) must not
 * hold every search answered meanwhile (gaps.md §12). Then the answer goes out and the rows are
 * written when the writer is free (the store closes only after them); each reads the redactions at
 * its own write, so a term redacted meanwhile is logged as the marker.
 */
const writeLogRows = (store: ScopeStore, rows: ReadonlyArray<Effect.Effect<void>>, busy: boolean) =>
  busy ? store.inBackground(Effect.all(rows, { discard: true })) : Effect.all(rows, { discard: true })

/** Steps 2–6 for an operation with its raw input (the value a door assembled from its request). */
export const runOperation = <I, R>(op: Operation<I, R>, raw: unknown, requestText: string | null) =>
  runCall(op, decodeInput(op, raw), requestText)

/** The type of a failure of our own storage, which the pipeline turns into 500 internal. */
export type StorageFailure = SqlError
