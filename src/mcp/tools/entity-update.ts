/**
 * entity_update {scope, id, name?, aliases_add?, aliases_remove?, force?, reason?} (graph.md §9.2,
 * §4 "Update"): the same updateEntity() and pipeline as POST /v1/entities/:id/update (updateSpec).
 */
import { Schema } from "effect"
import { EntityId, UpdateEntityInput } from "../../graph/schemas.js"
import { updateEntity } from "../../operations/entities.js"
import type { Services } from "../../services.js"
import type { ToolSpec } from "../tool.js"

export const ENTITY_UPDATE_DESCRIPTION =
  "Rename an entity or add and remove its aliases, for example a short name or a spelling used in mails. Takes " +
  "effect at once as a new version; the old version stays in the history, and the change is unconfirmed until a " +
  "person confirms or reverts it on the approval page. The new name and added aliases are checked for duplicates " +
  "like entity_create: on duplicate-candidate use force: true with a reason only when the person says the entity " +
  "is different."

const UpdateArgs = Schema.Struct({ ...UpdateEntityInput.fields, id: EntityId })

export const entityUpdate: ToolSpec<typeof UpdateArgs.Encoded, typeof updateEntity.input.Type, Services> = {
  name: "entity_update",
  title: "Rename an entity or change its aliases",
  description: ENTITY_UPDATE_DESCRIPTION,
  kind: "graph",
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  op: updateEntity,
  args: UpdateArgs
}
