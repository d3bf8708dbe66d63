/**
 * Typed, coded errors (gaps.md §4). Each expected failure is its own tagged error that carries
 * the contract's error code; HTTP maps `code` to its status with ERROR_STATUS. Messages never
 * contain SQL, paths of the data dir or source text.
 */
import { ParseResult, Schema } from "effect"
import { type GraphRefusal, graphErrorBody } from "../graph/errors.js"

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
  "payload-too-large": 413,
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
  "scope-locked": 503
} as const
export type ErrorCode = keyof typeof ERROR_STATUS

export interface Issue {
  readonly path: string
  readonly message: string
}

export class ValidationFailed extends Schema.TaggedError<ValidationFailed>()("ValidationFailed", {
  message: Schema.String,
  issues: Schema.Array(Schema.Struct({ path: Schema.String, message: Schema.String }))
}) {
  get code(): "validation-failed" {
    return "validation-failed"
  }
}

export class SourceImmutable extends Schema.TaggedError<SourceImmutable>()("SourceImmutable", {
  message: Schema.String
}) {
  get code(): "source-immutable" {
    return "source-immutable"
  }
}

export class ReasonMissing extends Schema.TaggedError<ReasonMissing>()("ReasonMissing", {
  message: Schema.String
}) {
  get code(): "reason-missing" {
    return "reason-missing"
  }
}

export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  message: Schema.String
}) {
  get code(): "not-found" {
    return "not-found"
  }
}

export class AlreadyDecided extends Schema.TaggedError<AlreadyDecided>()("AlreadyDecided", {
  message: Schema.String,
  current: Schema.String
}) {
  get code(): "already-decided" {
    return "already-decided"
  }
}

export class VersionOutdated extends Schema.TaggedError<VersionOutdated>()("VersionOutdated", {
  message: Schema.String,
  current: Schema.String
}) {
  get code(): "version-outdated" {
    return "version-outdated"
  }
}

/** One generic message whatever the reason (architecture.md §6.2); the reason goes to the log. */
export const SOURCE_CONFLICT_MESSAGE = "a source with this id is already stored in this scope and differs from this request"

export class SourceConflict extends Schema.TaggedError<SourceConflict>()("SourceConflict", {
  message: Schema.String
}) {
  get code(): "source-conflict" {
    return "source-conflict"
  }
}

export class QuoteNotFound extends Schema.TaggedError<QuoteNotFound>()("QuoteNotFound", {
  message: Schema.String
}) {
  get code(): "quote-not-found" {
    return "quote-not-found"
  }
}

export class SourceUnknown extends Schema.TaggedError<SourceUnknown>()("SourceUnknown", {
  message: Schema.String
}) {
  get code(): "source-unknown" {
    return "source-unknown"
  }
}

export class ReferenceUnknown extends Schema.TaggedError<ReferenceUnknown>()("ReferenceUnknown", {
  message: Schema.String
}) {
  get code(): "reference-unknown" {
    return "reference-unknown"
  }
}

export class ScopeLocked extends Schema.TaggedError<ScopeLocked>()("ScopeLocked", {
  message: Schema.String,
  scope: Schema.String
}) {
  get code(): "scope-locked" {
    return "scope-locked"
  }
}

export class ScopeExists extends Schema.TaggedError<ScopeExists>()("ScopeExists", {
  message: Schema.String
}) {
  get code(): "scope-exists" {
    return "scope-exists"
  }
}

export class CsrfFailed extends Schema.TaggedError<CsrfFailed>()("CsrfFailed", {
  message: Schema.String
}) {
  get code(): "csrf-failed" {
    return "csrf-failed"
  }
}

export class GrantExists extends Schema.TaggedError<GrantExists>()("GrantExists", {
  message: Schema.String
}) {
  get code(): "grant-exists" {
    return "grant-exists"
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
  | ScopeLocked
  | ScopeExists
  | GrantExists
  | CsrfFailed
  | GraphRefusal

export interface ErrorBodyOut {
  error: ErrorCode
  message: string
  current?: string
  issues?: ReadonlyArray<Issue>
  /** graph refusals only (graph.md §8) */
  remedy?: string
  next?: ReadonlyArray<{ tool: string; why: string }>
  candidates?: ReadonlyArray<unknown>
  paths?: unknown
  limit?: number
}

/** The ErrorBody of §6.6 for a domain error; a graph refusal gives its GraphErrorBody (graph.md §8). */
export const toErrorBody = (e: DomainError): ErrorBodyOut => {
  if (e._tag === "GraphRefusal") return graphErrorBody(e) as ErrorBodyOut
  const body: ErrorBodyOut = {
    error: e.code,
    message: e.message
  }
  if ("current" in e && typeof e.current === "string") body.current = e.current
  if (e._tag === "ValidationFailed") body.issues = e.issues
  return body
}

const pathText = (path: ReadonlyArray<PropertyKey>): string =>
  path.length === 0 ? "(root)" : path.map((p) => (typeof p === "number" ? `[${p}]` : String(p))).join(".").replace(/\.\[/g, "[")

/** Turns a schema parse error into issues that name the path of every problem. */
export const issuesOf = (error: ParseResult.ParseError): Array<Issue> =>
  ParseResult.ArrayFormatter.formatErrorSync(error).map((i) => ({
    path: pathText(i.path),
    message: i._tag === "Unexpected" ? "unknown key (remove it)" : i.message
  }))

export const validationFailed = (error: ParseResult.ParseError, what: string): ValidationFailed => {
  const issues = issuesOf(error)
  const first = issues[0]
  return new ValidationFailed({
    message: first === undefined ? `${what} is invalid` : `${what} is invalid: ${first.path}: ${first.message}`,
    issues
  })
}
