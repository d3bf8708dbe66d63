/**
 * rule_provenance {ref}: where a rule comes from, through the same call as
 * GET /v1/rules/:id/provenance (provenanceSpec): the source, the quote, the excerpt or transcript
 * window, the thread and the attachments. A rejected rule is not-found.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import * as z from "zod"
import { provenanceSpec } from "../../http/routes/rules.js"
import { toolResult } from "../result.js"
import { callTool, ruleIdOfRef, type ToolContext } from "./context.js"
import { ruleRef } from "./schemas.js"

export const RULE_PROVENANCE_DESCRIPTION =
  "Show the evidence of a rule: its source (mail or meeting) with date and sender, the exact quote, the mail text " +
  "or the transcript window around the quote, the other mails of the thread and the attachments with their text. " +
  "Read it before applying a rule that carries recheck, and when the person asks where a rule comes from."

export const registerRuleProvenance = (server: McpServer, ctx: ToolContext): void => {
  server.registerTool("rule_provenance", {
    title: "Provenance of a rule",
    description: RULE_PROVENANCE_DESCRIPTION,
    inputSchema: z.strictObject({ ref: ruleRef }),
    annotations: { readOnlyHint: true, openWorldHint: false }
  }, (args) =>
    callTool(ctx, "core", provenanceSpec, args, { params: { id: ruleIdOfRef(args.ref) } }, (outcome) => toolResult(outcome.body as object)))
}
