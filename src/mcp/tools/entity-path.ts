/**
 * entity_path {scope, id} (graph.md §9.2): the same readEntity() and pipeline as
 * GET /v1/entities/:id (readSpec): EntityOut, the full path and every version including moves.
 * An id of another scope than the one named is the same not-found as an unknown one.
 */
import { Schema } from "effect"
import { EntityId, ReadEntityInput } from "../../graph/schemas.js"
import { ScopeName } from "../../contracts/ids.js"
import { readEntity } from "../../operations/entities.js"
import type { Services } from "../../services.js"
import type { ToolSpec } from "../tool.js"

export const ENTITY_PATH_DESCRIPTION =
  "Return the full path of one entity from the top level down, its status and its versions including moves. Use " +
  "it when only the place of an entity is asked, and to check a candidate before filing something under it."

/** The scope is required here (the route defaults it to the id's own). */
const PathArgs = Schema.Struct({ ...ReadEntityInput.fields, scope: ScopeName, id: EntityId })

export const entityPath: ToolSpec<typeof PathArgs.Encoded, typeof readEntity.input.Type, Services> = {
  name: "entity_path",
  title: "Path of an entity",
  description: ENTITY_PATH_DESCRIPTION,
  kind: "graph",
  annotations: { readOnlyHint: true, openWorldHint: false },
  op: readEntity,
  args: PathArgs
}
