/**
 * entity_create (graph.md §9.2, gaps.md §3 {scope, type, name, parent_id, aliases?, evidence?,
 * force?, reason?}): the same createEntity() and pipeline as POST /v1/entities (createSpec), channel
 * mcp: the entity takes effect at once as unconfirmed, created_by agent.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import * as z from "zod"
import { createSpec } from "../../http/routes/entities.js"
import { toolResult } from "../result.js"
import { callTool, type ToolContext } from "./context.js"
import { entityId, entityName, entityTypeOf, evidence, graphReason, scopeName } from "./schemas.js"

export const ENTITY_CREATE_DESCRIPTION =
  "Create one entity under a parent found with entity_resolve (parent_id null only for a new top level). Use it " +
  "only when entity_resolve found nothing that fits. It is usable at once, with status unconfirmed, until a person " +
  "confirms it on the approval page. It checks for duplicates itself: if a similar entity exists it creates nothing " +
  "and answers duplicate-candidate with the candidates; use force: true with a reason only when the person says the " +
  "new one is different."

export const registerEntityCreate = (server: McpServer, ctx: ToolContext): void => {
  server.registerTool("entity_create", {
    title: "Create an entity",
    description: ENTITY_CREATE_DESCRIPTION,
    inputSchema: z.strictObject({
      scope: scopeName,
      type: entityTypeOf(ctx.config.file.graph.entity_types),
      name: entityName,
      parent_id: entityId.nullable(),
      aliases: z.array(entityName).max(20).optional(),
      evidence: evidence.optional(),
      force: z.boolean().optional(),
      reason: graphReason.optional()
    }),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false }
  }, (args) => callTool(ctx, "graph", createSpec, args, { value: args }, (outcome) => toolResult(outcome.body as object)))
}
