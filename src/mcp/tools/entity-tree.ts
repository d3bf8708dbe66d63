/**
 * entity_tree {scope, id?, depth?, page?} (graph.md §9.2, §6 "Tree"): the same entityTree() and
 * pipeline as GET /v1/entities (treeSpec). depth accepts any value ≥ 1, so a depth over 3 is
 * answered with its remedy (depth-limit) instead of the SDK's validation error.
 */
import { Schema } from "effect"
import { TreeQuery } from "../../graph/schemas.js"
import { entityTree as tree } from "../../operations/entities.js"
import type { Services } from "../../services.js"
import type { ToolSpec } from "../tool.js"

export const ENTITY_TREE_DESCRIPTION =
  "Show the entities below one entity (or the top level of a scope): direct children by default, at most depth 3, " +
  "50 per page. Every node says how many children it has and how many are hidden; expand a node by calling again " +
  "with its id. Use it step by step to get an overview or to find a parent; never page through a whole tree unasked."

/** The tool names the parent `id`. */
const { parent, ...treeFields } = TreeQuery.fields
const TreeArgs = Schema.Struct({ ...treeFields, id: parent })

export const entityTree: ToolSpec<typeof TreeArgs.Encoded, typeof tree.input.Type, Services> = {
  name: "entity_tree",
  title: "Entity tree",
  description: ENTITY_TREE_DESCRIPTION,
  kind: "graph",
  annotations: { readOnlyHint: true, openWorldHint: false },
  op: tree,
  args: TreeArgs,
  toInput: ({ id, ...rest }) => ({ ...rest, ...(id === undefined ? {} : { parent: id }) })
}
