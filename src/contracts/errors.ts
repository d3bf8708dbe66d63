/**
 * The one error vocabulary (architecture.md §6.6, gaps.md §4, graph.md §8): the contract's codes
 * with their HTTP status, one way to make a coded error (CodedError), and the body every refusal
 * answers with (ErrorBody; a graph refusal's GraphErrorBody is its extension). Every channel (the
 * public listener, /mcp, the approval pages, the ops socket) renders refusals from here.
 * Messages never contain SQL, paths of the data dir or source text.
 */
import { ParseResult, Schema } from "effect"

export const ERROR_STATUS = {
  "validation-failed": 400,
  "multiple-scopes-without-flag": 400,
  "source-immutable": 400,
  "reason-missing": 400,
  "unauthorized": 401,
  "channel-not-allowed": 403,
  "scope-not-allowed": 403,
  "csrf-failed": 403,
  "not-found": 404,
  "already-decided": 409,
  "version-outdated": 409,
  "source-conflict": 409,
  "duplicate-candidate": 409,
  "cycle": 409,
  "has-children": 409,
  "backup-running": 409,
  "backup-directory-invalid": 409,
  "export-directory-invalid": 409,
  "backup-state-missing": 409,
  "scope-exists": 409,
  "grant-exists": 409,
  /** a redaction's confirmation whose preview no longer matches the scope's places (gaps.md §12) */
  "preview-stale": 409,
  /** an encrypted copy cannot be read: no identity for its scope under GROUNDNOTE_KEY_DIR (gaps.md §12) */
  "identity-missing": 409,
  "payload-too-large": 413,
  /** a /v1 route that reads a JSON body got another content type (a form, text) */
  "unsupported-media-type": 415,
  "quote-not-found": 422,
  "source-unknown": 422,
  "reference-unknown": 422,
  "secret-detected": 422,
  "scope-mismatch": 422,
  "parent-archived": 422,
  "depth-limit": 422,
  "entity-archived": 422,
  "rate-limited": 429,
  "internal": 500,
  "scope-locked": 503,
  /** the public listener's admission queue is full: try again after Retry-After seconds */
  "overloaded": 503
} as const
export type ErrorCode = keyof typeof ERROR_STATUS

export const isErrorCode = (s: string): s is ErrorCode => Object.hasOwn(ERROR_STATUS, s)

export interface Issue {
  readonly path: string
  readonly message: string
}
const IssueSchema = Schema.Struct({ path: Schema.String, message: Schema.String })

// ---------------------------------------------------------------------------------------------
// The bodies

/** secret-detected: a field and the kind of secret found in it (never the secret). */
export const SecretFindingOut = Schema.Struct({ field: Schema.String, kind: Schema.String })
export type SecretFindingOut = typeof SecretFindingOut.Type

/**
 * quote-not-found: the passage of the stored source (normalized as the quote check compares,
 * so it passes the check when sent as the quote) that comes closest to the quote, and where the
 * normalized quote first differs from it. Foreign text: framed on MCP.
 */
export const ClosestPassage = Schema.Struct({
  passage: Schema.String,
  /** index in the normalized quote of its first character that differs from the passage */
  differs_at: Schema.Number,
  /** the normalized quote from there (≤ 60 characters) */
  quote_from: Schema.String,
  /** the passage from there (≤ 60 characters) */
  source_from: Schema.String
})
export type ClosestPassage = typeof ClosestPassage.Type

/** ErrorBody (architecture.md §6.1). */
export const ErrorBody = Schema.Struct({
  error: Schema.String,
  message: Schema.optional(Schema.String),
  current: Schema.optional(Schema.String),
  issues: Schema.optional(Schema.Array(Schema.Unknown)),
  remedy: Schema.optional(Schema.String),
  findings: Schema.optional(Schema.Array(SecretFindingOut)),
  closest: Schema.optional(Schema.NullOr(ClosestPassage))
})
export type ErrorBody = typeof ErrorBody.Type

export const PathItem = Schema.Struct({ id: Schema.String, name: Schema.String, type: Schema.String })
export type PathItem = typeof PathItem.Type

/** A tool or prompt name the agent may call next, and why (≤ 3 per answer). */
export const Next = Schema.Struct({ tool: Schema.String, why: Schema.String })
export type Next = typeof Next.Type

export const CandidateMatch = Schema.Literal("exact", "alias", "tokens", "typo", "initials", "similar")
export type CandidateMatch = typeof CandidateMatch.Type

export const Candidate = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  type: Schema.String,
  status: Schema.Literal("active", "unconfirmed", "archived"),
  aliases: Schema.Array(Schema.String),
  path: Schema.Array(Schema.String),
  score: Schema.Number,
  match: CandidateMatch,
  /** a redaction touched the entity's current name or aliases */
  redacted: Schema.optional(Schema.Literal(true))
})
export type Candidate = typeof Candidate.Type

const CyclePaths = Schema.Struct({ entity: Schema.Array(PathItem), target: Schema.Array(PathItem) })


/** GraphErrorBody (graph.md §8): ErrorBody with remedy required, next, and per code candidates, paths or limit. */
export const GraphErrorBody = Schema.Struct({
  ...ErrorBody.fields,
  remedy: Schema.String,
  next: Schema.Array(Next).pipe(Schema.maxItems(3)),
  candidates: Schema.optional(Schema.Array(Candidate).pipe(Schema.maxItems(5))),
  paths: Schema.optional(CyclePaths),
  limit: Schema.optional(Schema.Number)
})
export type GraphErrorBody = typeof GraphErrorBody.Type

/** The body of any refusal as it is written: ErrorBody, or GraphErrorBody for a graph refusal. */
export interface ErrorBodyOut {
  error: ErrorCode
  message?: string
  current?: string
  issues?: ReadonlyArray<Issue>
  remedy?: string
  next?: ReadonlyArray<Next>
  candidates?: ReadonlyArray<Candidate>
  paths?: { readonly entity: ReadonlyArray<PathItem>; readonly target: ReadonlyArray<PathItem> }
  limit?: number
  findings?: ReadonlyArray<SecretFindingOut>
  closest?: ClosestPassage | null
}

// ---------------------------------------------------------------------------------------------
// Coded errors

/** What every coded error carries; the optional parts are those of ErrorBodyOut. */
const CodedFields = {
  message: Schema.String,
  current: Schema.optional(Schema.String),
  issues: Schema.optional(Schema.Array(IssueSchema)),
  remedy: Schema.optional(Schema.String),
  next: Schema.optional(Schema.Array(Next)),
  candidates: Schema.optional(Schema.Array(Candidate)),
  paths: Schema.optional(CyclePaths),
  limit: Schema.optional(Schema.Number),
  /** secret-detected: field and kind of every secret found */
  findings: Schema.optional(Schema.Array(SecretFindingOut)),
  /** quote-not-found: the closest passage of the stored source, null when none resembles the quote */
  closest: Schema.optional(Schema.NullOr(ClosestPassage)),
  /** 429: whole seconds until the next try (the Retry-After header, not the body) */
  retryAfter: Schema.optional(Schema.Number),
  /** the scope a refusal is about, for the process log (not the body) */
  scope: Schema.optional(Schema.String),
  /** why, for the process log only (never the body) */
  reason: Schema.optional(Schema.String),
  /** the grant a refusal of step 1 is about, for the process log (not the body) */
  grantId: Schema.optional(Schema.String)
}
type CodedInit = Schema.Struct.Constructor<typeof CodedFields>

/**
 * The one way to make a coded error: a tagged error class with the contract's code, e.g.
 * `class NotFound extends CodedError("NotFound", "not-found") {}`; `new NotFound({ message })`.
 */
export const CodedError = <const Tag extends string, const Code extends ErrorCode>(tag: Tag, code: Code) => {
  class Coded extends Schema.TaggedError<Coded>()(tag, CodedFields) {
    static readonly code: Code = code
    get code(): Code {
      return code
    }
  }
  return Coded
}

export class ValidationFailed extends CodedError("ValidationFailed", "validation-failed") {}
export class SourceImmutable extends CodedError("SourceImmutable", "source-immutable") {}
export class ReasonMissing extends CodedError("ReasonMissing", "reason-missing") {}
export class NotFound extends CodedError("NotFound", "not-found") {}
export class AlreadyDecided extends CodedError("AlreadyDecided", "already-decided") {}
export class VersionOutdated extends CodedError("VersionOutdated", "version-outdated") {}
export class SourceConflict extends CodedError("SourceConflict", "source-conflict") {}
export class QuoteNotFound extends CodedError("QuoteNotFound", "quote-not-found") {}
export class SourceUnknown extends CodedError("SourceUnknown", "source-unknown") {}
export class ReferenceUnknown extends CodedError("ReferenceUnknown", "reference-unknown") {}
/** A secret in a proposal or a source (invariant 12): 422; the body names fields and kinds, never the secret. */
export class SecretDetected extends CodedError("SecretDetected", "secret-detected") {}
export class ScopeExists extends CodedError("ScopeExists", "scope-exists") {}
export class GrantExists extends CodedError("GrantExists", "grant-exists") {}
export class PreviewStale extends CodedError("PreviewStale", "preview-stale") {}
export class IdentityMissing extends CodedError("IdentityMissing", "identity-missing") {}
export class CsrfFailed extends CodedError("CsrfFailed", "csrf-failed") {}
export class ChannelNotAllowed extends CodedError("ChannelNotAllowed", "channel-not-allowed") {}
export class ScopeNotAllowed extends CodedError("ScopeNotAllowed", "scope-not-allowed") {}
export class MultipleScopes extends CodedError("MultipleScopes", "multiple-scopes-without-flag") {}
export class PayloadTooLarge extends CodedError("PayloadTooLarge", "payload-too-large") {}

/** A scope that cannot be opened (architecture.md §4.3): 503; `scope` names it for the log. */
export class ScopeLocked extends CodedError("ScopeLocked", "scope-locked") {}
/** No valid credential or no active grant (401); `reason` is for the process log. */
export class Unauthorized extends CodedError("Unauthorized", "unauthorized") {}
/** A state-changing request with the cookie of a session that logout ended (§5.3): 403 csrf-failed. */
export class SessionEnded extends CodedError("SessionEnded", "csrf-failed") {}
/** Over a limit (429); `retryAfter` is the Retry-After header in whole seconds. */
export class RateLimited extends CodedError("RateLimited", "rate-limited") {}

/** Any refusal of a graph operation, with the contract's code and the guidance envelope (graph.md §8). */
export class GraphRefusal extends Schema.TaggedError<GraphRefusal>()("GraphRefusal", {
  ...CodedFields,
  errorCode: Schema.String,
  remedy: Schema.String,
  next: Schema.Array(Next)
}) {
  get code(): ErrorCode {
    return this.errorCode as ErrorCode
  }
}

export type DomainError =
  | ValidationFailed
  | SourceImmutable
  | ReasonMissing
  | NotFound
  | AlreadyDecided
  | VersionOutdated
  | SourceConflict
  | QuoteNotFound
  | SourceUnknown
  | ReferenceUnknown
  | SecretDetected
  | ScopeLocked
  | Unauthorized
  | SessionEnded
  | RateLimited
  | ScopeExists
  | GrantExists
  | PreviewStale
  | IdentityMissing
  | CsrfFailed
  | ChannelNotAllowed
  | ScopeNotAllowed
  | MultipleScopes
  | PayloadTooLarge
  | GraphRefusal

/** True for any coded error (a tagged error whose code is one of the contract's). */
export const isDomainError = (e: unknown): e is DomainError =>
  typeof e === "object" && e !== null && "_tag" in e && "code" in e &&
  typeof (e as { code: unknown }).code === "string" && isErrorCode((e as { code: string }).code)

export interface RefusalInit extends Omit<CodedInit, "next"> {
  readonly remedy: string
  readonly next?: ReadonlyArray<Next>
}

/** A graph refusal: the code, its message and remedy, at most 3 next steps and 5 candidates. */
export const refuse = (code: ErrorCode, init: RefusalInit): GraphRefusal =>
  new GraphRefusal({
    ...init,
    errorCode: code,
    next: (init.next ?? []).slice(0, 3),
    ...(init.candidates === undefined ? {} : { candidates: init.candidates.slice(0, 5) })
  })

/** The body of a coded error: ErrorBody, extended to GraphErrorBody where the error carries guidance. */
export const toErrorBody = (e: DomainError): ErrorBodyOut => {
  const body: ErrorBodyOut = { error: e.code, message: e.message }
  if ("current" in e && e.current !== undefined) body.current = e.current
  if ("issues" in e && e.issues !== undefined) body.issues = e.issues
  if ("remedy" in e && e.remedy !== undefined) body.remedy = e.remedy
  if ("next" in e && e.next !== undefined) body.next = e.next
  if ("candidates" in e && e.candidates !== undefined) body.candidates = e.candidates
  if ("paths" in e && e.paths !== undefined) body.paths = e.paths
  if ("limit" in e && e.limit !== undefined) body.limit = e.limit
  if ("findings" in e && e.findings !== undefined) body.findings = e.findings
  if ("closest" in e && e.closest !== undefined) body.closest = e.closest
  return body
}

/** The GraphErrorBody of a graph refusal (its remedy and next are always there). */
export const graphErrorBody = (e: GraphRefusal): GraphErrorBody => toErrorBody(e) as GraphErrorBody

// ---------------------------------------------------------------------------------------------
// Validation issues

/** A key is named with at most QUOTED_VALUE_CHARS characters (a key is foreign text of any length). */
export const keyText = (p: PropertyKey): string => {
  const k = String(p)
  return k.length > QUOTED_VALUE_CHARS ? `${k.slice(0, QUOTED_VALUE_CHARS)}…` : k
}

const pathText = (path: ReadonlyArray<PropertyKey>): string =>
  path.length === 0 ? "(root)" : path.map((p) => (typeof p === "number" ? `[${p}]` : keyText(p))).join(".").replace(/\.\[/g, "[")

const ACTUAL = /, actual ([\s\S]*)$/

/**
 * The message of one schema issue, with the value it quotes (", actual …") cut to `quote`
 * characters, or left out with 0: an error never echoes a large or foreign value.
 */
export const issueMessage = (issue: ParseResult.ArrayFormatterIssue, quote: number): string => {
  if (issue._tag === "Unexpected") return "unknown key (remove it)"
  const m = ACTUAL.exec(issue.message)
  if (m === null) return issue.message.length > 3 * QUOTED_VALUE_CHARS ? `${issue.message.slice(0, 3 * QUOTED_VALUE_CHARS)}…` : issue.message
  const head = issue.message.slice(0, m.index)
  if (quote === 0) return head
  const actual = m[1] ?? ""
  return actual.length <= quote ? issue.message : `${head}, actual ${actual.slice(0, quote)}…`
}

/** How many characters of an invalid value an error message quotes. */
export const QUOTED_VALUE_CHARS = 100

/** An error body names at most this many issues (and how many more there were): it stays a few KB. */
export const MAX_ISSUES = 20

const isUndefinedEcho = (i: ParseResult.ArrayFormatterIssue) => i.message.startsWith("Expected undefined")
const within = (parent: ReadonlyArray<PropertyKey>, child: ReadonlyArray<PropertyKey>) =>
  parent.length <= child.length && parent.every((p, k) => p === child[k])

/**
 * The issues of a parse error, one per problem: without the "Expected undefined" echo of an
 * optional key (the other member of its union; JSON has no undefined) when a real issue names
 * that key or a path below it.
 */
export const schemaIssues = (error: ParseResult.ParseError): Array<ParseResult.ArrayFormatterIssue> => {
  const all = ParseResult.ArrayFormatter.formatErrorSync(error)
  return all.filter((issue) => !isUndefinedEcho(issue) || !all.some((other) => !isUndefinedEcho(other) && within(issue.path, other.path)))
}

/** Turns a schema parse error into issues that name the path of every problem (the first MAX_ISSUES of them). */
export const issuesOf = (error: ParseResult.ParseError): Array<Issue> => {
  const all = schemaIssues(error)
  const issues = all.slice(0, MAX_ISSUES).map((i) => ({ path: pathText(i.path), message: issueMessage(i, QUOTED_VALUE_CHARS) }))
  if (all.length > MAX_ISSUES) issues.push({ path: "(more)", message: `${all.length - MAX_ISSUES} more issues not listed` })
  return issues
}

export const validationFailed = (error: ParseResult.ParseError, what: string): ValidationFailed => {
  const issues = issuesOf(error)
  const first = issues[0]
  return new ValidationFailed({
    message: first === undefined ? `${what} is invalid` : `${what} is invalid: ${first.path}: ${first.message}`,
    issues
  })
}
