/**
 * Request shapes of a person's structure corrections (gaps.md §13, graph.md §15 Q2/Q3): create an
 * entity or a link directly, close a confirmed link, unarchive an entity. Each needs a reason.
 * They live outside src/structure/ so the HttpApi can name them without importing it (AT2b).
 */
import { Schema } from "effect"
import { LinkRequest } from "./link-types.js"
import { CreateEntityRequest } from "./schemas.js"

/** A person's reason: required, not blank, ≤ 1000 characters. */
export const PersonReason = Schema.String.pipe(
  Schema.maxLength(1000),
  Schema.filter((s) => s.trim().length > 0 || "is empty: a reason is needed")
)

/** POST /v1/structure/entities: as an agent's create, the reason required. */
export const PersonEntityRequest = Schema.Struct({ ...CreateEntityRequest.fields, reason: PersonReason })
export type PersonEntityRequest = typeof PersonEntityRequest.Type

const LINK = LinkRequest.from.fields

/** POST /v1/structure/links: the ends and type of a link, no confidence (a person's link is certain), the reason required. */
export const PersonLinkRequest = Schema.Struct({
  scope: LINK.scope, from_ref: LINK.from_ref, to_ref: LINK.to_ref, type: LINK.type, reason: PersonReason, evidence: LINK.evidence
}).pipe(Schema.filter((r) => r.from_ref !== r.to_ref || { path: ["to_ref"], message: "a link needs two different ends" }))
export type PersonLinkRequest = typeof PersonLinkRequest.Type

/** POST /v1/links/:id/close: why the link no longer holds. */
export const CloseLinkRequest = Schema.Struct({ reason: PersonReason })
export type CloseLinkRequest = typeof CloseLinkRequest.Type

/** POST /v1/entities/:id/unarchive: the archived version the person saw, and why it is back. */
export const UnarchiveRequest = Schema.Struct({
  version: Schema.Number.pipe(Schema.int(), Schema.positive()),
  reason: PersonReason
})
export type UnarchiveRequest = typeof UnarchiveRequest.Type
