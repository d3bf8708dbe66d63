/**
 * propose_rule (ProposalRequest): the same propose() and pipeline as POST /v1/proposals
 * (proposeSpec), channel mcp: reason "proposed via mcp", right propose. The answer is
 * ProposalCreated with the approval_url; nothing is confirmed here.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import * as z from "zod"
import { proposeSpec } from "../../http/routes/proposals.js"
import { toolResult } from "../result.js"
import { callTool, type ToolContext } from "./context.js"
import { day, instant, jamieId, keywords, link, mailId, relation, ruleId, scopeName } from "./schemas.js"

export const PROPOSE_RULE_DESCRIPTION =
  "Propose a rule or note with its evidence. The quote must be copied exactly from a stored mail or meeting " +
  "(jamie: give timestamp_s of the passage); it is checked against the source, and a quote that is not there is " +
  "refused with quote-not-found. Use source kind manual only for the person's own words. Search first; to replace " +
  "a confirmed rule name it in supersedes. The proposal is unconfirmed until a person confirms it on the approval " +
  "page: tell the person and give the approval_url, and mention possible_duplicates. You never confirm it yourself."

export const proposeRuleInput = () =>
  z.strictObject({
    scope: scopeName,
    kind: z.enum(["rule", "note"]),
    statement: z.string().min(10).max(500),
    source: z.discriminatedUnion("kind", [
      z.strictObject({ kind: z.literal("jamie"), id: jamieId, quote: z.string().min(20).max(2000), timestamp_s: z.number().int().nonnegative(), link }),
      z.strictObject({ kind: z.literal("mail"), id: mailId, quote: z.string().min(20).max(2000), link: link.nullable() }),
      z.strictObject({ kind: z.literal("manual"), quote: z.string().min(1).max(2000), link: link.nullable() })
    ]),
    said_at: instant,
    speaker: z.string().min(1).max(200).nullable(),
    relations: z.array(relation).max(20),
    keywords,
    valid_from: day,
    supersedes: ruleId.nullable()
  })

export const registerProposeRule = (server: McpServer, ctx: ToolContext): void => {
  server.registerTool("propose_rule", {
    title: "Propose a rule",
    description: PROPOSE_RULE_DESCRIPTION,
    inputSchema: proposeRuleInput(),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false }
  }, (args) => callTool(ctx, "core", proposeSpec, args, { value: args }, (outcome) => toolResult(outcome.body as object)))
}
