/**
 * Shared schemas (architecture.md §6.1). Effect Schema stands in for the contract's Zod
 * (gaps.md §1): same shapes, same constraints, same field names.
 */
import { Schema } from "effect"
import { RuleId } from "./ids.js"

const DAY_RE = /^\d{4}-\d{2}-\d{2}$/
const INSTANT_RE = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?Z$/

export const isCalendarDay = (s: string): boolean => {
  if (!DAY_RE.test(s)) return false
  const [y, m, d] = s.split("-").map(Number) as [number, number, number]
  if (y < 1 || m < 1 || m > 12 || d < 1) return false
  const days = new Date(Date.UTC(y, m, 0)).getUTCDate()
  return d <= days
}

export const isInstant = (s: string): boolean => {
  const m = INSTANT_RE.exec(s)
  if (m === null) return false
  const [hh, mm, ss] = [Number(m[4]), Number(m[5]), Number(m[6])]
  return isCalendarDay(s.slice(0, 10)) && hh <= 23 && mm <= 59 && ss <= 59
}

/** Calendar day YYYY-MM-DD that exists. */
export const Day = Schema.String.pipe(
  Schema.filter((s) => isCalendarDay(s) || "must be a calendar day YYYY-MM-DD")
)
/** UTC instant, seconds required, ending in Z, no offset (docs/decisions.md, §6 HTTP API). */
export const Instant = Schema.String.pipe(
  Schema.filter((s) => isInstant(s) || "must be a UTC instant YYYY-MM-DDTHH:MM:SS[.fff]Z")
)

export const LINK_MAX = 2000
/** A link: http: or https: only (architecture.md §6.2a). */
export const Link = Schema.String.pipe(
  Schema.maxLength(LINK_MAX),
  Schema.filter((s) => {
    try {
      const u = new URL(s)
      return u.protocol === "http:" || u.protocol === "https:" || "must be an http: or https: URL"
    } catch {
      return "must be an http: or https: URL"
    }
  })
)

export const RelationKind = Schema.Literal("customer", "product", "supplier")
export const Relation = Schema.Struct({
  kind: RelationKind,
  name: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
  ref: Schema.NullOr(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)))
})
export type Relation = typeof Relation.Type

export const Keywords = Schema.Array(Schema.String.pipe(Schema.minLength(2), Schema.maxLength(100))).pipe(
  Schema.maxItems(30)
)

export const Status = Schema.Literal("proposed", "confirmed", "superseded", "rejected")
export type Status = typeof Status.Type
export const RuleKind = Schema.Literal("rule", "note")
export type RuleKind = typeof RuleKind.Type

/**
 * Who adopted a rule (slice A, gaps.md §10): the policy (auto, with its ruleset) while the newest
 * confirm/review decision of the rule is the policy's, else a person (also: a proposal waits for
 * a person). Every answer about a rule carries it.
 */
export const Adoption = Schema.Union(
  Schema.Struct({ kind: Schema.Literal("auto"), ruleset: Schema.String }),
  Schema.Struct({ kind: Schema.Literal("person") })
)
export type Adoption = typeof Adoption.Type

/**
 * The mandatory exceptions of the approval policy (gaps.md §10): always a person, in every mode.
 * Their names are the codes every answer about a proposal or rule lists them by (`exceptions`).
 */
export const MANDATORY_EXCEPTIONS = [
  "payment", "secret", "contradiction", "external-sensitive", "injection", "unchecked-quote", "doubt", "large-subtree"
] as const
export const ExceptionCode = Schema.Literal(...MANDATORY_EXCEPTIONS)
export type ExceptionCode = typeof ExceptionCode.Type
/** The codes of the mandatory exceptions that held a rule for a person when it was proposed, in MANDATORY_EXCEPTIONS order. */
export const Exceptions = Schema.Array(ExceptionCode)

export const Channel = Schema.Literal("mcp", "api", "approval")
export type Channel = typeof Channel.Type

/** Strict parse options: `.strict()` of the contract = excess properties are errors. */
export const STRICT = { onExcessProperty: "error", errors: "all" } as const

/** A page of a list (architecture.md §6): limit 1–200 (default 100), after = the last rule id of the previous page. */
export const PageLimit = Schema.optionalWith(Schema.Number.pipe(Schema.int(), Schema.between(1, 200)), { default: () => 100 })
export const After = Schema.optional(RuleId)

/** The seq of the rule named by `after` (0 without): pages are ordered by seq. */
export const afterSeq = (after: string | undefined): number =>
  after === undefined ? 0 : Number(/-(\d{4,})$/.exec(after)?.[1] ?? 0)

/**
 * `redacted: true` on a record of an answer whose shown text a redaction replaced in part with
 * "[redacted]" (gaps.md §12 "Answers after a redaction"); left out when nothing of it was touched.
 */
export const RedactedFlag = Schema.optional(Schema.Literal(true))
