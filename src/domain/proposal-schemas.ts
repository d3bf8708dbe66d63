/** Proposal schemas (architecture.md §6.3). */
import { Schema } from "effect"
import { JamieId, MailId, RuleId, RuleRef, ScopeName } from "./ids.js"
import { Day, Instant, Keywords, Link, Relation, RuleKind } from "./schemas.js"

export const JamieQuote = Schema.Struct({
  kind: Schema.Literal("jamie"),
  id: JamieId,
  quote: Schema.String.pipe(Schema.minLength(20), Schema.maxLength(2000)),
  timestamp_s: Schema.Number.pipe(Schema.int(), Schema.nonNegative()),
  link: Link
})
export const MailQuote = Schema.Struct({
  kind: Schema.Literal("mail"),
  id: MailId,
  quote: Schema.String.pipe(Schema.minLength(20), Schema.maxLength(2000)),
  link: Schema.NullOr(Link)
})
export const ManualQuote = Schema.Struct({
  kind: Schema.Literal("manual"),
  quote: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(2000)),
  link: Schema.NullOr(Link)
})
export const ProposalSource = Schema.Union(JamieQuote, MailQuote, ManualQuote)
export type ProposalSource = typeof ProposalSource.Type

export const ProposalRequest = Schema.Struct({
  scope: ScopeName,
  kind: RuleKind,
  statement: Schema.String.pipe(Schema.minLength(10), Schema.maxLength(500)),
  source: ProposalSource,
  said_at: Instant,
  speaker: Schema.NullOr(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))),
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
