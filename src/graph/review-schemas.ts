/**
 * Request and answer shapes of the structure review (graph.md §10, §12): POST /v1/reviews,
 * POST /v1/entities/:id/archive and GET /v1/structure. They live outside src/structure/ so the
 * HttpApi can name them without importing src/structure/** (AT2b).
 */
import { Schema } from "effect"
import { MAX_BULK_ITEMS } from "../contracts/bulk.js"
import { ENTITY_ID_RE } from "../contracts/ids.js"
import { Instant, RedactedFlag } from "../contracts/schemas.js"
import { PathItem } from "../contracts/errors.js"
import { LINK_REF_RE, LinkStatus } from "./link-types.js"

/** entity/<id>@<n>: an entity version (the version is required). */
export const ENTITY_VERSION_REF_RE = /^entity\/([a-z][a-z0-9-]{1,39}-e\d{4,})@([1-9]\d*)$/

const Reason = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(1000))

export const ReviewRequest = Schema.Struct({
  target: Schema.Union(
    Schema.String.pipe(Schema.pattern(ENTITY_VERSION_REF_RE, { message: () => "must be entity/<id>@<version> or link/<id>" })),
    Schema.String.pipe(Schema.pattern(LINK_REF_RE, { message: () => "must be entity/<id>@<version> or link/<id>" }))
  ),
  verdict: Schema.Literal("confirm", "reject", "revert"),
  reason: Schema.optional(Reason)
}).pipe(
  Schema.filter((r) =>
    (r.verdict !== "reject" || r.target.startsWith("link/")) || { path: ["verdict"], message: "reject is for links; revert an entity version" }),
  Schema.filter((r) =>
    (r.verdict !== "revert" || r.target.startsWith("entity/")) || { path: ["verdict"], message: "revert is for entity versions; reject a link" })
)
export type ReviewRequest = typeof ReviewRequest.Type

export const ArchiveRequest = Schema.Struct({
  /** the current version of the entity (version-outdated otherwise) */
  version: Schema.Number.pipe(Schema.int(), Schema.positive()),
  reason: Schema.optional(Reason)
})
export type ArchiveRequest = typeof ArchiveRequest.Type

/** One review row as answered: `by` = decided_by (grant id), `at` = decided_at; the e-mail only on the approval pages. */
export const ReviewOut = Schema.Struct({
  id: Schema.String,
  target: Schema.String,
  verdict: Schema.Literal("confirm", "reject", "revert"),
  by: Schema.String,
  at: Instant,
  reason: Schema.NullOr(Schema.String),
  new_version: Schema.NullOr(Schema.Number)
})
export type ReviewOut = typeof ReviewOut.Type

const Next = Schema.Struct({ tool: Schema.String, why: Schema.String })

export const ReviewResult = Schema.Struct({
  review: ReviewOut,
  /** entity/<id>@<n> after the review, or link/<id> */
  current: Schema.String,
  /** the entity's status or the link's status after the review */
  status: Schema.Union(Schema.Literal("active", "unconfirmed", "archived"), LinkStatus),
  path: Schema.Array(PathItem),
  next: Schema.Array(Next)
})
export type ReviewResult = typeof ReviewResult.Type

export const ArchiveResult = Schema.Struct({
  archived: Schema.Literal(true),
  id: Schema.String,
  version: Schema.Number,
  current: Schema.String,
  valid_to: Schema.String,
  path: Schema.Array(PathItem),
  next: Schema.Array(Next)
})
export type ArchiveResult = typeof ArchiveResult.Type

/** One end of a pending link, described for a person (graph.md §12). */
export const PendingEnd = Schema.Struct({
  ref: Schema.String,
  kind: Schema.Literal("rule", "source", "attachment", "entity"),
  /** rule statement, source title, attachment file name; null for an entity (see path) or an end not shown */
  title: Schema.NullOr(Schema.String),
  /** an entity end's path, root first; else null */
  path: Schema.NullOr(Schema.Array(PathItem))
})

export const PendingEntityVersion = Schema.Struct({
  kind: Schema.Literal("entity"),
  /** entity/<id>@<n>: the pending version */
  ref: Schema.String,
  id: Schema.String,
  version: Schema.Number,
  change: Schema.Literal("create", "move", "update"),
  /** the form target: entity/<id>@<current version> (a review of any other version is version-outdated) */
  target: Schema.String,
  current: Schema.Boolean,
  /** path of the version before (the parent's current path plus the name then); null for a create */
  before: Schema.NullOr(Schema.Array(PathItem)),
  /** path of this version (the parent's current path plus the name of this version) */
  after: Schema.Array(PathItem),
  /** entities below the entity now, not archived */
  subtree: Schema.Number,
  status: Schema.Literal("active", "unconfirmed", "archived"),
  aliases_before: Schema.NullOr(Schema.Array(Schema.String)),
  aliases_after: Schema.Array(Schema.String),
  by: Schema.String,
  channel: Schema.Literal("mcp", "api"),
  at: Instant,
  reason: Schema.String,
  evidence: Schema.NullOr(Schema.String),
  approval_url: Schema.String,
  /** a redaction touched a text the item shows (its reason, evidence, names, an end's title) */
  redacted: RedactedFlag
})
export type PendingEntityVersion = typeof PendingEntityVersion.Type

export const PendingLink = Schema.Struct({
  kind: Schema.Literal("link"),
  ref: Schema.String,
  id: Schema.String,
  target: Schema.String,
  type: Schema.String,
  from: PendingEnd,
  to: PendingEnd,
  confidence: Schema.Number,
  by: Schema.String,
  at: Instant,
  reason: Schema.String,
  evidence: Schema.NullOr(Schema.String),
  approval_url: Schema.String,
  /** a redaction touched a text the item shows (its reason, evidence, names, an end's title) */
  redacted: RedactedFlag
})
export type PendingLink = typeof PendingLink.Type

export const PendingItem = Schema.Union(PendingEntityVersion, PendingLink)
export type PendingItem = typeof PendingItem.Type

export const StructureOut = Schema.Struct({
  scope: Schema.String,
  counts: Schema.Struct({ entities: Schema.Number, versions: Schema.Number, links: Schema.Number }),
  pending: Schema.Array(PendingItem),
  approval_url: Schema.String,
  /** the guidance of every graph answer (graph.md §8): no single entity here, so path is empty */
  path: Schema.Array(PathItem),
  next: Schema.Array(Next).pipe(Schema.maxItems(3))
})
export type StructureOut = typeof StructureOut.Type

export const entityIdOfVersionRef = (ref: string): { id: string; version: number } | null => {
  const m = ENTITY_VERSION_REF_RE.exec(ref)
  return m === null ? null : { id: m[1] ?? "", version: Number(m[2]) }
}

export const isEntityId = (id: string): boolean => ENTITY_ID_RE.test(id)

/** The bulk body of POST /v1/reviews: 1 to MAX_BULK_ITEMS reviews of one scope's structure, all or nothing. */
export const BulkReviewRequest = Schema.Struct({ items: Schema.Array(ReviewRequest).pipe(Schema.minItems(1), Schema.maxItems(MAX_BULK_ITEMS)) })

/** The answer of a bulk review: how many were reviewed and each target's current ref afterwards, in the items' order. */
export const BulkReviewResult = Schema.Struct({ reviewed: Schema.Number, current: Schema.Array(Schema.String) })

/** The arguments of the MCP tool structure_retract: an entity id or a link id (entity/… and link/… accepted), and the reason. */
export const StructureRetractArgs = Schema.Struct({
  id: Schema.String.pipe(Schema.maxLength(80)).annotations({ description: "the entity id (…-e0001) or the link id (…-l0001)" }),
  reason: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(1000)).annotations({ description: "why, in the person's words" })
})
