/**
 * entity_tree {scope, id?, depth?, page?} (graph.md §9.2, §6 "Tree"): the same entityTree() and
 * pipeline as GET /v1/entities (treeSpec). depth accepts any value ≥ 1, so a depth over 3 is
 * answered with its remedy (depth-limit) instead of the SDK's validation error.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import * as z from "zod"
import { treeSpec } from "../../http/routes/entities.js"
import { toolResult } from "../result.js"
import { callTool, type ToolContext } from "./context.js"
import { entityId, scopeName } from "./schemas.js"

export const ENTITY_TREE_DESCRIPTION =
  "Show the entities below one entity (or the top level of a scope): direct children by default, at most depth 3, " +
  "50 per page. Every node says how many children it has and how many are hidden; expand a node by calling again " +
  "with its id. Use it step by step to get an overview or to find a parent; never page through a whole tree unasked."

export const registerEntityTree = (server: McpServer, ctx: ToolContext): void => {
  server.registerTool("entity_tree", {
    title: "Entity tree",
    description: ENTITY_TREE_DESCRIPTION,
    inputSchema: z.strictObject({
      scope: scopeName,
      id: entityId.optional(),
      depth: z.number().int().min(1).max(1_000_000).optional(),
      page: z.number().int().min(1).max(1_000_000).optional()
    }),
    annotations: { readOnlyHint: true, openWorldHint: false }
  }, (args) =>
    callTool(ctx, "graph", treeSpec, args, {
      query: {
        scope: args.scope,
        ...(args.id === undefined ? {} : { parent: args.id }),
        ...(args.depth === undefined ? {} : { depth: String(args.depth) }),
        ...(args.page === undefined ? {} : { page: String(args.page) })
      }
    }, (outcome) => toolResult(outcome.body as object)))
}
