/** Decision schemas (architecture.md §6.4). */
import { Schema } from "effect"
import { MAX_BULK_ITEMS } from "../contracts/bulk.js"
import { RuleId } from "../contracts/ids.js"
import { Day, Instant, Keywords, Relation, RuleKind } from "../contracts/schemas.js"

const Reason = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(1000))
const Version = Schema.Number.pipe(Schema.int(), Schema.positive())

export const Change = Schema.partial(Schema.Struct({
  statement: Schema.String.pipe(Schema.minLength(10), Schema.maxLength(500)),
  kind: RuleKind,
  keywords: Keywords,
  relations: Schema.Array(Relation).pipe(Schema.maxItems(20)),
  valid_from: Day,
  said_at: Instant,
  speaker: Schema.NullOr(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))),
  supersedes: Schema.NullOr(RuleId)
}))
export type Change = typeof Change.Type

export const ConfirmRequest = Schema.Struct({
  decision: Schema.Literal("confirm"), version: Version, change: Schema.optional(Change), reason: Schema.optional(Reason)
})
export const RejectRequest = Schema.Struct({
  decision: Schema.Literal("reject"), version: Version, reason: Reason
})
export const RevokeRequest = Schema.Struct({
  decision: Schema.Literal("revoke"), version: Version, reason: Reason, valid_until: Day
})
export const ReviewRequest = Schema.Struct({
  decision: Schema.Literal("review"), version: Version,
  change: Schema.optional(Schema.Struct({ keywords: Keywords })), reason: Schema.optional(Reason)
})
export const DecisionRequest = Schema.Union(ConfirmRequest, RejectRequest, RevokeRequest, ReviewRequest)
export type DecisionRequest = typeof DecisionRequest.Type

export const DecisionKind = Schema.Literal("confirm", "reject", "revoke", "review")

export const DecisionOut = Schema.Struct({
  kind: DecisionKind,
  version: Schema.Number,
  /** slice A: grant for a grant's decision, auto for the policy's (decided_by policy@<ruleset>) */
  origin: Schema.Literal("grant", "auto"),
  /** the mode of the policy's decision, null for a grant's */
  mode: Schema.NullOr(Schema.Literal("autonomous", "classified", "manual")),
  decided_by: Schema.String,
  decided_at: Instant,
  reason: Schema.NullOr(Schema.String),
  new_version: Schema.NullOr(Schema.Number)
})
export type DecisionOut = typeof DecisionOut.Type

/** The answer of a decision: the decision row and the rule's current version afterwards. */
export const DecisionResult = Schema.Struct({ decision: DecisionOut, current: Schema.String })
export type DecisionResult = typeof DecisionResult.Type

/** Fields of `change` that name the evidence: the quote and its source never change. */
export const IMMUTABLE_CHANGE_FIELDS = ["source", "quote", "timestamp_s", "source_link", "link"] as const

const WithRule = Schema.Struct({ rule_id: RuleId })

/** One item of POST /v1/decisions: a decision as POST /v1/rules/:id/decision takes it, with the rule's id. */
export const BulkDecisionItem = Schema.Union(
  Schema.extend(ConfirmRequest, WithRule), Schema.extend(RejectRequest, WithRule), Schema.extend(RevokeRequest, WithRule), Schema.extend(ReviewRequest, WithRule)
)

/** POST /v1/decisions: 1 to MAX_BULK_ITEMS decisions on rules of one scope, all or nothing. */
export const BulkDecisionRequest = Schema.Struct({ items: Schema.Array(BulkDecisionItem).pipe(Schema.minItems(1), Schema.maxItems(MAX_BULK_ITEMS)) })

/** The answer of POST /v1/decisions: how many were decided and each rule's current version afterwards, in the items' order. */
export const BulkDecisionResult = Schema.Struct({ decided: Schema.Number, current: Schema.Array(Schema.String) })
