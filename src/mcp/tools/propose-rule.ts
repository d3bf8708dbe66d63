/**
 * propose_rule (ProposalRequest): the same propose() and pipeline as POST /v1/proposals
 * (proposeSpec), channel mcp: reason "proposed via mcp", right propose. The answer is
 * ProposalCreated with the approval_url; nothing is confirmed here.
 */
import { ProposalRequest } from "../../domain/proposal-schemas.js"
import { propose } from "../../operations/proposals.js"
import type { Services } from "../../services.js"
import type { ToolSpec } from "../tool.js"

export const PROPOSE_RULE_DESCRIPTION =
  "Propose a rule or note with its evidence. The quote must be copied exactly from a stored mail or meeting " +
  "(jamie: give timestamp_s of the passage); it is checked against the source, and a quote that is not there is " +
  "refused with quote-not-found. Use source kind manual only for the person's own words. Search first; to replace " +
  "a confirmed rule name it in supersedes. The proposal is unconfirmed until a person confirms it on the approval " +
  "page: tell the person and give the approval_url, and mention possible_duplicates. You never confirm it yourself."

export const proposeRule: ToolSpec<typeof ProposalRequest.Encoded, typeof propose.input.Type, Services> = {
  name: "propose_rule",
  title: "Propose a rule",
  description: PROPOSE_RULE_DESCRIPTION,
  kind: "core",
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  op: propose,
  args: ProposalRequest
}
