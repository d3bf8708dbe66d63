/**
 * The inputs of the rule reads (gaps.md §3): list_rules, read_rule (a bundle, its versions, its
 * provenance), list_rejected and export. An id is a plain string here: a malformed id is the same
 * 404 as an unknown one (the operation checks it), never a 400.
 */
import { Schema } from "effect"
import { ScopeName } from "../contracts/ids.js"
import { After, Day, PageLimit } from "../contracts/schemas.js"

export const RELATION_RE = /^(customer|product|supplier):(.+)$/s

export const ListRulesInput = Schema.Struct({
  scope: ScopeName,
  status: Schema.optional(Schema.Literal("proposed", "confirmed", "superseded")),
  relation: Schema.optional(Schema.String.pipe(Schema.pattern(RELATION_RE, { message: () => "must be <customer|product|supplier>:<name>" }))),
  limit: PageLimit,
  after: After
})
export type ListRulesInput = typeof ListRulesInput.Type

/** GET /v1/rules/:id (a full bundle): as_of for the version in force on that day, include_proposals to read a proposal. */
export const ReadRuleInput = Schema.Struct({
  id: Schema.String,
  as_of: Schema.optional(Day),
  include_proposals: Schema.optional(Schema.Boolean)
})
export type ReadRuleInput = typeof ReadRuleInput.Type

/** One rule by its id (versions, provenance). */
export const RuleIdInput = Schema.Struct({ id: Schema.String })
export type RuleIdInput = typeof RuleIdInput.Type

/** One scope (list_rejected, export, list_structure). */
export const ScopeInput = Schema.Struct({ scope: ScopeName })
export type ScopeInput = typeof ScopeInput.Type
