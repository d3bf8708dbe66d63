/**
 * entity_move {scope, id, parent_id, reason?} (graph.md §9.2): the same moveEntity() and pipeline
 * as POST /v1/entities/:id/move (moveSpec), channel mcp.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import * as z from "zod"
import { moveSpec } from "../../http/routes/entities.js"
import { toolResult } from "../result.js"
import { callTool, type ToolContext } from "./context.js"
import { entityId, graphReason, scopeName } from "./schemas.js"

export const ENTITY_MOVE_DESCRIPTION =
  "Move an entity with its whole subtree under another parent (parent_id null: top level), for example a " +
  "department into another division. Takes effect at once as a new version; the old version stays in the history, " +
  "and the move is unconfirmed until a person confirms or reverts it on the approval page. Show the person the old " +
  "and the new path first. Refused with cycle if the new parent lies inside the moved subtree."

export const registerEntityMove = (server: McpServer, ctx: ToolContext): void => {
  server.registerTool("entity_move", {
    title: "Move an entity",
    description: ENTITY_MOVE_DESCRIPTION,
    inputSchema: z.strictObject({ scope: scopeName, id: entityId, parent_id: entityId.nullable(), reason: graphReason.optional() }),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false }
  }, (args) => {
    const { id, ...body } = args
    return callTool(ctx, "graph", moveSpec, args, { params: { id }, value: body }, (outcome) => toolResult(outcome.body as object))
  })
}
