/** Search request and response (architecture.md §6.5, graph.md §11). */
import { Schema } from "effect"
import { ENTITY_ID_RE, RuleId, RuleRef, ScopeName, scopeOfGraphId } from "../contracts/ids.js"
import { Adoption, Day, Instant, RedactedFlag, Relation, RelationKind } from "../contracts/schemas.js"

const SearchRequestFields = {
  scopes: Schema.Array(ScopeName).pipe(Schema.minItems(1), Schema.maxItems(20)),
  cross_scope: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  text: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(20_000))),
  terms: Schema.optional(Schema.Array(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(100))).pipe(Schema.maxItems(20))),
  relation: Schema.optional(Schema.Struct({ kind: RelationKind, name: Schema.String.pipe(Schema.minLength(1)) })),
  as_of: Schema.optionalWith(Schema.NullOr(Day), { default: () => null }),
  include_proposals: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  limit: Schema.optionalWith(Schema.Number.pipe(Schema.int(), Schema.between(1, 50)), { default: () => 10 }),
  entity: Schema.optional(Schema.String.pipe(Schema.pattern(ENTITY_ID_RE, { message: () => "must be an entity id <scope>-e<nnnn>" })))
}
type SearchFields = Schema.Struct.Type<typeof SearchRequestFields>

const someQuery = (r: Pick<SearchFields, "text" | "terms">) =>
  r.text !== undefined || (r.terms?.length ?? 0) > 0 || { path: ["text"], message: "give text or at least one term" }
const entityOfItsScope = (r: Pick<SearchFields, "entity" | "scopes">) =>
  r.entity === undefined || (r.scopes.length === 1 && scopeOfGraphId(r.entity) === r.scopes[0]) ||
  { path: ["entity"], message: "entity needs exactly one scope, the entity's own" }

export const SearchRequest = Schema.Struct(SearchRequestFields).pipe(Schema.filter(someQuery), Schema.filter(entityOfItsScope))
export type SearchRequest = typeof SearchRequest.Type

/** The compact form or the full SearchResponse (the MCP tool search_rules only, §6.5). */
export const Detail = Schema.Literal("compact", "full")
/** search_rules: SearchRequest plus detail (default compact). */
export const SearchRulesRequest = Schema.Struct({ ...SearchRequestFields, detail: Schema.optional(Detail) }).pipe(
  Schema.filter(someQuery),
  Schema.filter(entityOfItsScope)
)

export const StageState = Schema.Struct({
  state: Schema.Literal("ran", "off", "failed", "budget", "not-allowed"),
  duration_ms: Schema.NullOr(Schema.Number),
  reason: Schema.NullOr(Schema.String)
})
export type StageState = typeof StageState.Type

export const EntryKind = Schema.Literal("rule", "note", "meeting", "mail", "attachment", "entity")
export const Origin = Schema.Literal("deterministic", "proposed", "human")

const EntryBaseFields = {
  ref: Schema.String, kind: EntryKind, date: Instant, title: Schema.String,
  excerpt: Schema.NullOr(Schema.String), link: Schema.NullOr(Schema.String),
  /** a redaction touched the record's text (its rule version, source, attachment or entity) */
  redacted: RedactedFlag
}
export const Entry = Schema.Struct({ ...EntryBaseFields, origin: Origin, proposed: Schema.Boolean })
export type Entry = typeof Entry.Type

export const PathItem = Schema.Struct({ ref: Schema.String, name: Schema.String, type: Schema.String })
export const HeadEntity = Schema.Struct({ ...PathItem.fields, path: Schema.Array(PathItem), proposed: Schema.Boolean, redacted: RedactedFlag })

export const Head = Schema.Struct({
  ...EntryBaseFields,
  kind: Schema.Literal("rule", "note"),
  scope: ScopeName,
  status: Schema.Literal("confirmed", "proposed", "superseded"),
  unconfirmed: Schema.Boolean,
  valid_from: Day,
  valid_until: Schema.NullOr(Day),
  superseded_by: Schema.NullOr(RuleId),
  last_reviewed_at: Instant,
  /** who adopted the rule: the approval policy (auto, retractable) or a person (slice A) */
  adoption: Adoption,
  age_days: Schema.Number,
  recheck: Schema.NullOr(Schema.Literal("still valid?")),
  source: Schema.Struct({
    kind: Schema.Literal("jamie", "mail", "manual"), id: Schema.String, quote: Schema.String,
    timestamp: Schema.NullOr(Schema.String), link: Schema.NullOr(Schema.String)
  }),
  speaker: Schema.NullOr(Schema.String),
  relations: Schema.Array(Relation),
  rank: Schema.Struct({
    a: Schema.NullOr(Schema.Number), b: Schema.NullOr(Schema.Number),
    rrf: Schema.NullOr(Schema.Number), reranker: Schema.NullOr(Schema.Number)
  }),
  found_via: Schema.Array(Schema.String),
  coverage: Schema.NullOr(Schema.Number),
  matched_terms: Schema.NullOr(Schema.Number),
  entities: Schema.Array(HeadEntity).pipe(Schema.maxItems(10))
})
export type Head = typeof Head.Type

export const GroupKind = Schema.Literal("source", "thread", "attachment", "entity", "predecessor", "successor", "contradicts", "same-relation")
export type GroupKind = typeof GroupKind.Type
export const Group = Schema.Struct({ kind: GroupKind, count: Schema.Number, entries: Schema.Array(Entry).pipe(Schema.maxItems(5)), more: Schema.Number })
export type Group = typeof Group.Type
export const Bundle = Schema.Struct({ head: Head, groups: Schema.Array(Group), line: Schema.String })
export type Bundle = typeof Bundle.Type

export const Abstained = Schema.Struct({
  reason: Schema.Literal("below-min-coverage", "below-reranker-threshold", "no-candidate"),
  best_coverage: Schema.NullOr(Schema.Number),
  min_coverage: Schema.Number
})

export const SearchResponse = Schema.Struct({
  search_id: Schema.String,
  scopes: Schema.Array(ScopeName),
  stages: Schema.Struct({ a: StageState, b: StageState, c: StageState }),
  query: Schema.Struct({ terms: Schema.Array(Schema.String), variants: Schema.Record({ key: Schema.String, value: Schema.Array(Schema.String) }) }),
  bundles: Schema.Array(Bundle),
  abstained: Schema.NullOr(Abstained)
})
export type SearchResponse = typeof SearchResponse.Type

const FeedbackFields = {
  bundles: Schema.Array(Schema.Struct({ ref: RuleRef, verdict: Schema.Literal("relevant", "irrelevant") })).pipe(Schema.maxItems(50)),
  missing: Schema.Array(RuleRef).pipe(Schema.maxItems(50))
}
const someFeedback = (f: { readonly bundles: ReadonlyArray<unknown>; readonly missing: ReadonlyArray<unknown> }) =>
  f.bundles.length + f.missing.length > 0 || { path: ["bundles"], message: "give at least one verdict or missing ref" }

export const FeedbackRequest = Schema.Struct(FeedbackFields).pipe(Schema.filter(someFeedback))
export type FeedbackRequest = typeof FeedbackRequest.Type

/** The feedback of one search: its search_id (the path of POST /v1/search/:search_id/feedback) and the verdicts. */
export const FeedbackInput = Schema.Struct({ search_id: Schema.String, ...FeedbackFields }).pipe(Schema.filter(someFeedback))
export type FeedbackInput = typeof FeedbackInput.Type
