/**
 * propose_rule (ProposalDraft, the request of POST /v1/proposals: ProposalRequest with its
 * optional fields optional): the same operation and pipeline as POST /v1/proposals, channel mcp,
 * reason "proposed via mcp", right propose. The answer is ProposalCreated: status proposed (a person decides on the
 * approval page) or confirmed when the approval policy adopted it (marking auto-adopted,
 * retractable with rule_retract); nothing is confirmed by the tool itself.
 */
import { ProposalDraft } from "../../domain/proposal-schemas.js"
import { propose } from "../../operations/proposals.js"
import type { Services } from "../../services.js"
import type { ToolSpec } from "../tool.js"

export const PROPOSE_RULE_DESCRIPTION =
  "Propose a rule or note with its evidence. Required: scope, kind (rule | note), statement (10–500 characters, " +
  "the rule in your words) and source: {kind: mail, id: \"mail:<message-id>\", quote} or {kind: jamie, id: " +
  "\"jamie:<id>\", quote, timestamp_s (whole seconds into the meeting)} or {kind: manual, quote} for the person's " +
  "own words. The quote (20–2000 characters; manual 1–2000) must be copied exactly from the stored mail, or from " +
  "the meeting within ±120 s of timestamp_s; it is checked, and a quote that is not there is refused with " +
  "quote-not-found, which shows the closest passage of the source: use it. Optional: said_at (a UTC instant " +
  "YYYY-MM-DDTHH:MM:SSZ; default (left out or null) the date of the stored mail or meeting), valid_from (a calendar day YYYY-MM-DD; " +
  "default the day of said_at), speaker (default null), keywords (default []), relations ({kind: customer | " +
  "product | supplier, name, ref}, default []), supersedes (the id of a confirmed rule this one replaces; default " +
  "null), source.link (default null; jamie: left out or null, the meeting's link). Search first; to replace a confirmed rule name it " +
  "in supersedes. A secret (password, key, token) is refused with secret-detected: remove it. The answer says " +
  "status proposed (unconfirmed until a person confirms it on the approval page: tell the person and give the " +
  "approval_url) or confirmed with marking auto-adopted (the approval policy adopted it without a person: say so, " +
  "with its reasons); exceptions lists the mandatory exceptions that hold it for a person (payment, secret, " +
  "contradiction, external-sensitive, injection, unchecked-quote, doubt, large-subtree); mention possible_duplicates. " +
  "You never confirm it yourself."

export const proposeRule: ToolSpec<typeof ProposalDraft.Encoded, typeof propose.input.Type, Services> = {
  name: "propose_rule",
  title: "Propose a rule",
  description: PROPOSE_RULE_DESCRIPTION,
  kind: "core",
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  op: propose,
  args: ProposalDraft
}
