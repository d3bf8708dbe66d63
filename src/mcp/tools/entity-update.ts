/**
 * entity_update {scope, id, name?, aliases_add?, aliases_remove?, force?, reason?} (graph.md §9.2,
 * §4 "Update"): the same updateEntity() and pipeline as POST /v1/entities/:id/update (updateSpec).
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import * as z from "zod"
import { updateSpec } from "../../http/routes/entities.js"
import { toolResult } from "../result.js"
import { callTool, type ToolContext } from "./context.js"
import { entityId, entityName, graphReason, NAME_MAX, scopeName } from "./schemas.js"

export const ENTITY_UPDATE_DESCRIPTION =
  "Rename an entity or add and remove its aliases, for example a short name or a spelling used in mails. Takes " +
  "effect at once as a new version; the old version stays in the history, and the change is unconfirmed until a " +
  "person confirms or reverts it on the approval page. The new name and added aliases are checked for duplicates " +
  "like entity_create: on duplicate-candidate use force: true with a reason only when the person says the entity " +
  "is different."

export const registerEntityUpdate = (server: McpServer, ctx: ToolContext): void => {
  server.registerTool("entity_update", {
    title: "Rename an entity or change its aliases",
    description: ENTITY_UPDATE_DESCRIPTION,
    inputSchema: z.strictObject({
      scope: scopeName,
      id: entityId,
      name: entityName.optional(),
      aliases_add: z.array(entityName).max(20).optional(),
      aliases_remove: z.array(z.string().min(1).max(NAME_MAX)).max(20).optional(),
      force: z.boolean().optional(),
      reason: graphReason.optional()
    }),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false }
  }, (args) => {
    const { id, ...body } = args
    return callTool(ctx, "graph", updateSpec, args, { params: { id }, value: body }, (outcome) => toolResult(outcome.body as object))
  })
}
