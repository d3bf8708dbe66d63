/**
 * list_scopes {}: the grant-wide listing of the MCP channel (architecture.md §5.2 step 3): the
 * grant's scopes, each with its rule counts (or available: false when it cannot be opened), the
 * grant's rights and the entity types of the graph. Logged as list_scopes in every scope it
 * could open.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { Effect } from "effect"
import * as z from "zod"
import { CHANNEL_RIGHTS, spec } from "../../auth/scope-check.js"
import { AppConfig } from "../../config/config.js"
import { scopeCounts } from "../../http/routes/status.js"
import { toolResult } from "../result.js"
import { callTool, type ToolContext } from "./context.js"

export const LIST_SCOPES_DESCRIPTION =
  "List the scopes you may use with their rule counts, your rights (read, propose) and the entity types of the " +
  "graph. Call it first when you do not know which scope to name; every other tool needs the scope."

export const listScopesSpec = spec({
  operation: "list_scopes",
  parse: () => Effect.succeed(null),
  scopes: () => "grant" as const,
  run: (_, ctx) =>
    Effect.gen(function*() {
      const config = yield* AppConfig
      const scopes = yield* scopeCounts(ctx.scopes)
      return {
        status: 200,
        body: { scopes, rights: ctx.grant.rights.filter((r) => CHANNEL_RIGHTS.mcp.includes(r)), entity_types: config.file.graph.entity_types },
        refs: []
      }
    })
})

export const registerListScopes = (server: McpServer, ctx: ToolContext): void => {
  server.registerTool("list_scopes", {
    title: "List scopes",
    description: LIST_SCOPES_DESCRIPTION,
    inputSchema: z.strictObject({}),
    annotations: { readOnlyHint: true, openWorldHint: false }
  }, (args) => callTool(ctx, "core", listScopesSpec, args, {}, (outcome) => toolResult(outcome.body as object)))
}
