/**
 * Entity answers and requests (graph.md §8, gaps.md §3). Names and aliases are bounded before
 * and after normalization (graph.md §5.3, BoundedName); aliases_remove keeps only the raw bound.
 */
import { Schema } from "effect"
import { ENTITY_ID_RE, ScopeName } from "../contracts/ids.js"
import { Adoption, Day, RedactedFlag } from "../contracts/schemas.js"
import { EntityType } from "../config/graph.js"
import { Next, PathItem } from "../contracts/errors.js"
import { BoundedName, BoundedQuery, normalize } from "./normalize.js"

export const EntityId = Schema.String.pipe(Schema.pattern(ENTITY_ID_RE, { message: () => "must be an entity id <scope>-e<nnnn>" }))
export const EntityStatus = Schema.Literal("active", "unconfirmed", "archived")
export type EntityStatus = typeof EntityStatus.Type

export const MAX_ALIASES = 20

/** A name or alias: trimmed, non-empty, with a letter or digit, ≤ 200 characters as given and normalized. */
export const EntityName = Schema.compose(Schema.Trim, BoundedName).pipe(
  Schema.filter((s) => (s.length > 0 && normalize(s).length > 0) || "must contain a letter or a digit")
)
const Reason = Schema.String.pipe(
  Schema.maxLength(1000),
  Schema.filter((s) => s.trim().length > 0 || "must not be empty")
)
const Evidence = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(1000))
const Aliases = Schema.Array(EntityName).pipe(Schema.maxItems(MAX_ALIASES))

export const CreateEntityRequest = Schema.Struct({
  scope: ScopeName,
  type: EntityType,
  name: EntityName,
  parent_id: Schema.NullOr(EntityId),
  aliases: Schema.optional(Aliases),
  evidence: Schema.optional(Evidence),
  force: Schema.optional(Schema.Boolean),
  reason: Schema.optional(Reason)
})
export type CreateEntityRequest = typeof CreateEntityRequest.Type

export const MoveEntityRequest = Schema.Struct({
  scope: ScopeName,
  parent_id: Schema.NullOr(EntityId),
  reason: Schema.optional(Reason)
})
export type MoveEntityRequest = typeof MoveEntityRequest.Type

export const UpdateEntityRequest = Schema.Struct({
  scope: ScopeName,
  name: Schema.optional(EntityName),
  aliases_add: Schema.optional(Aliases),
  aliases_remove: Schema.optional(Schema.Array(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))).pipe(Schema.maxItems(MAX_ALIASES))),
  force: Schema.optional(Schema.Boolean),
  reason: Schema.optional(Reason)
})
export type UpdateEntityRequest = typeof UpdateEntityRequest.Type

const PositiveInt = Schema.Number.pipe(Schema.int(), Schema.greaterThanOrEqualTo(1))

/** POST /v1/entities/:id/move and …/update: the entity id of the path with the request. */
export const MoveEntityInput = Schema.Struct({ id: Schema.String, ...MoveEntityRequest.fields })
export type MoveEntityInput = typeof MoveEntityInput.Type
export const UpdateEntityInput = Schema.Struct({ id: Schema.String, ...UpdateEntityRequest.fields })
export type UpdateEntityInput = typeof UpdateEntityInput.Type

/** GET /v1/entities: depth accepts any value ≥ 1 so that above 3 the answer carries the remedy. */
export const TreeQuery = Schema.Struct({
  scope: ScopeName,
  parent: Schema.optional(EntityId),
  depth: Schema.optional(PositiveInt),
  page: Schema.optional(PositiveInt)
})
export type TreeQuery = typeof TreeQuery.Type

export const ResolveQuery = Schema.Struct({
  scope: ScopeName,
  q: BoundedQuery,
  type: Schema.optional(EntityType)
})
export type ResolveQuery = typeof ResolveQuery.Type

/** GET /v1/entities/:id: the scope defaults to the id's own. */
export const ReadEntityInput = Schema.Struct({ id: Schema.String, scope: Schema.optional(ScopeName) })
export type ReadEntityInput = typeof ReadEntityInput.Type

/** graph.md §8; `version` (the current version number) is ours, for review targets. */
export const EntityOut = Schema.Struct({
  ref: Schema.String,
  id: Schema.String,
  scope: Schema.String,
  type: Schema.String,
  name: Schema.String,
  aliases: Schema.Array(Schema.String),
  status: EntityStatus,
  parent_id: Schema.NullOr(Schema.String),
  valid_from: Day,
  valid_to: Schema.NullOr(Day),
  children: Schema.Number,
  pending: Schema.Boolean,
  approval_url: Schema.NullOr(Schema.String),
  version: Schema.Number,
  /** a redaction touched the current version's name, aliases or evidence */
  redacted: RedactedFlag,
  /** who adopted it: the policy (auto-adopted, with its ruleset) or a person (also: pending, a person decides) */
  adoption: Schema.optional(Adoption)
})
export type EntityOut = typeof EntityOut.Type

export const Guidance = Schema.Struct({ path: Schema.Array(PathItem), next: Schema.Array(Next).pipe(Schema.maxItems(3)) })

export const EntityVersionOut = Schema.Struct({
  version: Schema.Number,
  change: Schema.Literal("create", "move", "update", "confirm", "revert", "archive"),
  type: Schema.String,
  name: Schema.String,
  aliases: Schema.Array(Schema.String),
  parent_id: Schema.NullOr(Schema.String),
  parent_path: Schema.Array(PathItem),
  status: EntityStatus,
  valid_from: Day,
  valid_to: Schema.NullOr(Day),
  evidence: Schema.NullOr(Schema.String),
  channel: Schema.Literal("mcp", "api", "approval"),
  changed_by: Schema.String,
  changed_at: Schema.String,
  reason: Schema.String,
  /** a redaction touched this version's name, aliases, evidence or reason */
  redacted: RedactedFlag
})
export type EntityVersionOut = typeof EntityVersionOut.Type

export const TreeNode = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  type: Schema.String,
  status: EntityStatus,
  parent_id: Schema.NullOr(Schema.String),
  level: Schema.Number,
  children: Schema.Number,
  hidden_children: Schema.Number,
  /** a redaction touched the current version's name */
  redacted: RedactedFlag,
  /** who adopted it: the policy (auto-adopted, with its ruleset) or a person (also: pending, a person decides) */
  adoption: Schema.optional(Adoption)
})
export type TreeNode = typeof TreeNode.Type
