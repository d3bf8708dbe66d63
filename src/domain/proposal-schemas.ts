/** Proposal schemas (architecture.md §6.3). */
import { Schema } from "effect"
import { JamieId, MailId, RuleId, RuleRef, ScopeName } from "../contracts/ids.js"
import { After, Day, Instant, Keywords, Link, PageLimit, Relation, RuleKind } from "../contracts/schemas.js"

/**
 * Text stored in rule_version: SQLite's length() stops at a NUL character, so a NUL would slip
 * past the length checks of the schema and fail the table's CHECK (decisions.md: "NUL in rule text").
 */
const RuleText = (min: number, max: number) =>
  Schema.String.pipe(
    Schema.minLength(min),
    Schema.maxLength(max),
    Schema.filter((s) => !s.includes("\u0000") || "must not contain a NUL character (U+0000)")
  )

export const JamieQuote = Schema.Struct({
  kind: Schema.Literal("jamie"),
  id: JamieId,
  quote: RuleText(20, 2000),
  timestamp_s: Schema.Number.pipe(Schema.int(), Schema.nonNegative()),
  link: Link
})
export const MailQuote = Schema.Struct({
  kind: Schema.Literal("mail"),
  id: MailId,
  quote: RuleText(20, 2000),
  link: Schema.NullOr(Link)
})
export const ManualQuote = Schema.Struct({
  kind: Schema.Literal("manual"),
  quote: RuleText(1, 2000),
  link: Schema.NullOr(Link)
})
export const ProposalSource = Schema.Union(JamieQuote, MailQuote, ManualQuote)
export type ProposalSource = typeof ProposalSource.Type

export const ProposalRequest = Schema.Struct({
  scope: ScopeName,
  kind: RuleKind,
  statement: RuleText(10, 500),
  source: ProposalSource,
  said_at: Instant,
  speaker: Schema.NullOr(RuleText(1, 200)),
  relations: Schema.Array(Relation).pipe(Schema.maxItems(20)),
  keywords: Keywords,
  valid_from: Day,
  supersedes: Schema.NullOr(RuleId)
})
export type ProposalRequest = typeof ProposalRequest.Type

export const ProposalCreated = Schema.Struct({
  ref: RuleRef,
  status: Schema.Literal("proposed"),
  quote_check: Schema.Struct({ checked: Schema.Boolean }),
  possible_duplicates: Schema.Array(RuleRef).pipe(Schema.maxItems(3)),
  approval_url: Schema.String
})
export type ProposalCreated = typeof ProposalCreated.Type

export const ProposalSummary = Schema.Struct({
  ref: RuleRef,
  kind: RuleKind,
  statement: Schema.String,
  said_at: Instant,
  source: Schema.Struct({ kind: Schema.String, id: Schema.String }),
  supersedes: Schema.NullOr(RuleId),
  created_at: Instant,
  approval_url: Schema.String
})
export type ProposalSummary = typeof ProposalSummary.Type

/** GET /v1/proposals: the open proposals of a scope, in pages ordered by seq. */
export const ListProposalsInput = Schema.Struct({ scope: ScopeName, limit: PageLimit, after: After })
export type ListProposalsInput = typeof ListProposalsInput.Type
