/**
 * entity_create (graph.md §9.2, gaps.md §3 {scope, type, name, parent_id, aliases?, evidence?,
 * force?, reason?}): the same createEntity() and pipeline as POST /v1/entities (createSpec), channel
 * mcp: the entity takes effect at once as unconfirmed, created_by agent.
 */
import type { AppConfigShape } from "../../config/config.js"
import { createEntity } from "../../operations/entities.js"
import type { Services } from "../../services.js"
import type { ToolSpec } from "../tool.js"
import { withEntityTypes } from "../../graph/entity-types.js"

export const ENTITY_CREATE_DESCRIPTION =
  "Create one entity under a parent found with entity_resolve (parent_id null only for a new top level). Use it " +
  "only when entity_resolve found nothing that fits. It is usable at once, with status unconfirmed, until a person " +
  "confirms it on the approval page. It checks for duplicates itself: if a similar entity exists it creates nothing " +
  "and answers duplicate-candidate with the candidates; use force: true with a reason only when the person says the " +
  "new one is different."

export const entityCreate = (config: AppConfigShape): ToolSpec<ReturnType<typeof withEntityTypes>["create"]["Encoded"], typeof createEntity.input.Type, Services> => ({
  name: "entity_create",
  title: "Create an entity",
  description: ENTITY_CREATE_DESCRIPTION,
  kind: "graph",
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  op: createEntity,
  args: withEntityTypes(config.file.graph.entity_types).create
})
