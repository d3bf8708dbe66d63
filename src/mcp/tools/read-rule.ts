/**
 * read_rule {ref, as_of?, include_proposals?}: the full bundle of one rule, through the same
 * call as GET /v1/rules/:id (readSpec). A rejected rule is not-found, also with
 * include_proposals and as_of (invariant 8). The version of the ref is not a filter: the answer
 * is the current version, or with as_of the version in force that day; its head ref names it.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import * as z from "zod"
import { readSpec } from "../../http/routes/rules.js"
import { toolResult } from "../result.js"
import { callTool, ruleIdOfRef, type ToolContext } from "./context.js"
import { day, ruleRef } from "./schemas.js"

export const READ_RULE_DESCRIPTION =
  "Read one rule as a full bundle: the head with statement, quote, source, validity and review state, and its " +
  "groups (source, thread, attachments, entities, predecessor, successor, contradicting and related rules). Pass " +
  "as_of for the version in force on that day and include_proposals: true to read an unconfirmed proposal. Cite " +
  "its date and source; if recheck is set, ask the person \"still valid?\" and read rule_provenance first."

export const registerReadRule = (server: McpServer, ctx: ToolContext): void => {
  server.registerTool("read_rule", {
    title: "Read a rule",
    description: READ_RULE_DESCRIPTION,
    inputSchema: z.strictObject({ ref: ruleRef, as_of: day.optional(), include_proposals: z.boolean().optional() }),
    annotations: { readOnlyHint: true, openWorldHint: false }
  }, (args) =>
    callTool(ctx, "core", readSpec, args, {
      params: { id: ruleIdOfRef(args.ref) },
      query: {
        ...(args.as_of === undefined ? {} : { as_of: args.as_of }),
        ...(args.include_proposals === undefined ? {} : { include_proposals: String(args.include_proposals) })
      }
    }, (outcome) => toolResult(outcome.body as object)))
}
