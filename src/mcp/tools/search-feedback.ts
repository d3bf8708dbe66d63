/**
 * search_feedback {search_id, bundles, missing}: the same recordFeedback() and pipeline as
 * POST /v1/search/:search_id/feedback (feedbackSpec). An unknown or foreign search id is
 * not-found, the same answer for both.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import * as z from "zod"
import { feedbackSpec } from "../../http/routes/search.js"
import { toolResult } from "../result.js"
import { callTool, type ToolContext } from "./context.js"
import { ruleRef } from "./schemas.js"

export const SEARCH_FEEDBACK_DESCRIPTION =
  "Tell Groundnote how a search_rules answer helped: each bundle relevant or irrelevant, and rules it should have " +
  "found (missing). Pass the search_id of that answer. It improves search and changes no rule."

export const registerSearchFeedback = (server: McpServer, ctx: ToolContext): void => {
  server.registerTool("search_feedback", {
    title: "Feedback on a search",
    description: SEARCH_FEEDBACK_DESCRIPTION,
    inputSchema: z.strictObject({
      search_id: z.string().min(1).max(100),
      bundles: z.array(z.strictObject({ ref: ruleRef, verdict: z.enum(["relevant", "irrelevant"]) })).max(50),
      missing: z.array(ruleRef).max(50)
    }).refine((f) => f.bundles.length + f.missing.length > 0, { message: "give at least one verdict or missing ref", path: ["bundles"] }),
    annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false }
  }, (args) => {
    const { search_id, ...req } = args
    return callTool(ctx, "core", feedbackSpec, args, { params: { search_id }, value: req }, (outcome) => toolResult(outcome.body as object))
  })
}
