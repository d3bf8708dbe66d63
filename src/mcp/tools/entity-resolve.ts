/**
 * entity_resolve {scope, q, type?} (graph.md §9.2): the same resolve() and pipeline as
 * GET /v1/entities/resolve (resolveSpec), channel mcp. Entity types are an enum from config.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import * as z from "zod"
import { resolveSpec } from "../../http/routes/entities.js"
import { toolResult } from "../result.js"
import { callTool, type ToolContext } from "./context.js"
import { entityName, entityTypeOf, scopeName } from "./schemas.js"

export const ENTITY_RESOLVE_DESCRIPTION =
  "Find existing entities by name, alias or misspelling in one scope. Call it before every entity_create and " +
  "whenever a name from a mail, document or conversation should be matched to an entity. Returns at most five " +
  "candidates with score, how they matched and their full path. An exact or alias match means: use it. Several " +
  "close candidates: show their paths and ask the person."

export const registerEntityResolve = (server: McpServer, ctx: ToolContext): void => {
  server.registerTool("entity_resolve", {
    title: "Resolve an entity",
    description: ENTITY_RESOLVE_DESCRIPTION,
    inputSchema: z.strictObject({ scope: scopeName, q: entityName, type: entityTypeOf(ctx.config.file.graph.entity_types).optional() }),
    annotations: { readOnlyHint: true, openWorldHint: false }
  }, (args) =>
    callTool(ctx, "graph", resolveSpec, args, { query: { scope: args.scope, q: args.q, ...(args.type === undefined ? {} : { type: args.type }) } },
      (outcome) => toolResult(outcome.body as object)))
}
