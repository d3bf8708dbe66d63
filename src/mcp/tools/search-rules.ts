/**
 * search_rules: SearchRequest plus detail compact|full (architecture.md §6.5). The same search()
 * and pipeline as POST /v1/search (searchSpec), channel mcp; detail "full" answers the
 * SearchResponse, "compact" (default) its compact form, capped at 30,000 characters of the
 * larger of this result's model text and its structured JSON.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import * as z from "zod"
import type { SearchResponse } from "../../domain/search-schemas.js"
import { searchSpec } from "../../http/routes/search.js"
import { toCompact } from "../../search/compact.js"
import { annotateForeign, newBoundary, renderResultForModel } from "../../security/model-output.js"
import { toolResult } from "../result.js"
import { callTool, type ToolContext } from "./context.js"
import { day, entityId, relationKind, scopeName } from "./schemas.js"

export const SEARCH_RULES_DESCRIPTION =
  "Cite every bundle with its date and source. If a head carries recheck, ask the person \"still valid?\" before " +
  "applying it and read provenance first. If a stage did not run and nothing was found, say which stages ran. " +
  "Prefer rules that state a restriction for the action you are planning. Groups list refs, each entry once in " +
  "related; for a full bundle call read_rule or pass detail: \"full\", and if truncated is set, search narrower for " +
  "the omitted bundles."

export const searchRulesInput = () =>
  z.strictObject({
    scopes: z.array(scopeName).min(1).max(20),
    cross_scope: z.boolean().optional(),
    text: z.string().min(1).max(20_000).optional(),
    terms: z.array(z.string().min(1).max(100)).max(20).optional(),
    relation: z.strictObject({ kind: relationKind, name: z.string().min(1) }).optional(),
    as_of: day.nullable().optional(),
    include_proposals: z.boolean().optional(),
    limit: z.number().int().min(1).max(50).optional(),
    entity: entityId.optional(),
    detail: z.enum(["compact", "full"]).optional()
  }).refine((r) => r.text !== undefined || (r.terms?.length ?? 0) > 0, { message: "give text or at least one term", path: ["text"] })

export const registerSearchRules = (server: McpServer, ctx: ToolContext): void => {
  server.registerTool("search_rules", {
    title: "Search rules",
    description: SEARCH_RULES_DESCRIPTION,
    inputSchema: searchRulesInput(),
    annotations: { readOnlyHint: true, openWorldHint: false }
  }, (args) => {
    const { detail, ...request } = args
    return callTool(ctx, "core", searchSpec, args, { value: request }, (outcome) => {
      const full = outcome.body as SearchResponse
      if (detail === "full") return toolResult(full)
      const boundary = newBoundary()
      const compact = toCompact(full, (c) => renderResultForModel(c, { boundary }), annotateForeign)
      return toolResult(compact, boundary)
    })
  })
}
