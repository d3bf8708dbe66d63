/**
 * entity_path {scope, id} (graph.md §9.2): the same readEntity() and pipeline as
 * GET /v1/entities/:id (readSpec): EntityOut, the full path and every version including moves.
 * An id of another scope than the one named is the same not-found as an unknown one.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import * as z from "zod"
import { readSpec } from "../../http/routes/entities.js"
import { toolResult } from "../result.js"
import { callTool, type ToolContext } from "./context.js"
import { entityId, scopeName } from "./schemas.js"

export const ENTITY_PATH_DESCRIPTION =
  "Return the full path of one entity from the top level down, its status and its versions including moves. Use " +
  "it when only the place of an entity is asked, and to check a candidate before filing something under it."

export const registerEntityPath = (server: McpServer, ctx: ToolContext): void => {
  server.registerTool("entity_path", {
    title: "Path of an entity",
    description: ENTITY_PATH_DESCRIPTION,
    inputSchema: z.strictObject({ scope: scopeName, id: entityId }),
    annotations: { readOnlyHint: true, openWorldHint: false }
  }, (args) =>
    callTool(ctx, "graph", readSpec, args, { params: { id: args.id }, query: { scope: args.scope } }, (outcome) => toolResult(outcome.body as object)))
}
