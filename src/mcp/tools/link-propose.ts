/**
 * link_propose {scope, from_ref, to_ref, type, confidence, reason, evidence?} (graph.md §9.2):
 * the same proposeLink() and pipeline as POST /v1/links (proposeLinkSpec), channel mcp. The type
 * is one of the proposable types (graph.md §9.3).
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import * as z from "zod"
import { proposeLinkSpec } from "../../http/routes/links.js"
import { toolResult } from "../result.js"
import { callTool, type ToolContext } from "./context.js"
import { endpoint, evidence, graphReason, proposableType, scopeName } from "./schemas.js"

export const LINK_PROPOSE_DESCRIPTION =
  "Propose a link inside one scope between a rule, source, attachment or entity, for example a mail concerns a " +
  "project or a document belongs to an object. Give an honest confidence from 0 to 1 and a reason that names the " +
  "evidence. A proposed link counts in search bundles only once a person confirms it or its confidence reaches the " +
  "configured minimum, and it is always marked as proposed. Thread, attachment, source and supersedes links exist " +
  "already; do not propose them."

export const registerLinkPropose = (server: McpServer, ctx: ToolContext): void => {
  server.registerTool("link_propose", {
    title: "Propose a link",
    description: LINK_PROPOSE_DESCRIPTION,
    inputSchema: z.strictObject({
      scope: scopeName,
      from_ref: endpoint,
      to_ref: endpoint,
      type: proposableType,
      confidence: z.number().min(0).max(1),
      reason: graphReason,
      evidence: evidence.optional()
    }),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false }
  }, (args) => callTool(ctx, "graph", proposeLinkSpec, args, { value: args }, (outcome) => toolResult(outcome.body as object)))
}
