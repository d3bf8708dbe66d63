/**
 * entity_move {scope, id, parent_id, reason?} (graph.md §9.2): the same moveEntity() and pipeline
 * as POST /v1/entities/:id/move (moveSpec), channel mcp.
 */
import { Schema } from "effect"
import { EntityId, MoveEntityInput } from "../../graph/schemas.js"
import { moveEntity } from "../../operations/entities.js"
import type { Services } from "../../services.js"
import type { ToolSpec } from "../tool.js"

export const ENTITY_MOVE_DESCRIPTION =
  "Move an entity with its whole subtree under another parent (parent_id null: top level), for example a " +
  "department into another division. Takes effect at once as a new version; the old version stays in the history, " +
  "and the move is unconfirmed until a person confirms or reverts it on the approval page. Show the person the old " +
  "and the new path first. Refused with cycle if the new parent lies inside the moved subtree."

const MoveArgs = Schema.Struct({ ...MoveEntityInput.fields, id: EntityId })

export const entityMove: ToolSpec<typeof MoveArgs.Encoded, typeof moveEntity.input.Type, Services> = {
  name: "entity_move",
  title: "Move an entity",
  description: ENTITY_MOVE_DESCRIPTION,
  kind: "graph",
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  op: moveEntity,
  args: MoveArgs
}
