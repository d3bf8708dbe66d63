/**
 * link_list {scope, ref, grouped?, page?} (graph.md §9.2, §6 "Everything about X"): the same
 * listLinks() and pipeline as GET /v1/links (listLinksSpec), channel mcp.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import * as z from "zod"
import { listLinksSpec } from "../../http/routes/links.js"
import { toolResult } from "../result.js"
import { callTool, type ToolContext } from "./context.js"
import { endpoint, scopeName } from "./schemas.js"

export const LINK_LIST_DESCRIPTION =
  "List the links of one item: stored and derived ones, proposed ones with their confidence. With grouped: true on " +
  "an entity it returns everything about the entity and its descendants, grouped by kind with dates. 50 per page."

export const registerLinkList = (server: McpServer, ctx: ToolContext): void => {
  server.registerTool("link_list", {
    title: "List links",
    description: LINK_LIST_DESCRIPTION,
    inputSchema: z.strictObject({
      scope: scopeName,
      ref: endpoint,
      grouped: z.boolean().optional(),
      page: z.number().int().min(1).max(100_000).optional()
    }),
    annotations: { readOnlyHint: true, openWorldHint: false }
  }, (args) =>
    callTool(ctx, "graph", listLinksSpec, args, {
      query: {
        scope: args.scope,
        ref: args.ref,
        ...(args.grouped === undefined ? {} : { grouped: String(args.grouped) }),
        ...(args.page === undefined ? {} : { page: String(args.page) })
      }
    }, (outcome) => toolResult(outcome.body as object)))
}
