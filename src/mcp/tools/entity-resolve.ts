/**
 * entity_resolve {scope, q, type?} (graph.md §9.2): the same resolve() and pipeline as
 * GET /v1/entities/resolve (resolveSpec), channel mcp. Entity types are an enum from config.
 */
import type { AppConfigShape } from "../../config/config.js"
import { resolveEntity } from "../../operations/entities.js"
import type { Services } from "../../services.js"
import type { ToolSpec } from "../tool.js"
import { withEntityTypes } from "../../graph/entity-types.js"

export const ENTITY_RESOLVE_DESCRIPTION =
  "Find existing entities by name, alias or misspelling in one scope. Call it before every entity_create and " +
  "whenever a name from a mail, document or conversation should be matched to an entity. Returns at most five " +
  "candidates with score, how they matched and their full path. An exact or alias match means: use it. Several " +
  "close candidates: show their paths and ask the person."

export const entityResolve = (config: AppConfigShape): ToolSpec<ReturnType<typeof withEntityTypes>["resolve"]["Encoded"], typeof resolveEntity.input.Type, Services> => ({
  name: "entity_resolve",
  title: "Resolve an entity",
  description: ENTITY_RESOLVE_DESCRIPTION,
  kind: "graph",
  annotations: { readOnlyHint: true, openWorldHint: false },
  op: resolveEntity,
  args: withEntityTypes(config.file.graph.entity_types).resolve
})
