/**
 * rule_retract {ref, reason}: takes back a rule the approval policy adopted without a person,
 * through the same operation as POST /v1/rules/:id/retract (src/operations/retract.ts), channel
 * mcp. Only while no person confirmed or reviewed the rule; afterwards already-decided (a person
 * revokes on the approval page). It never confirms, rejects, revokes or reviews.
 */
import { parseRuleRef } from "../../contracts/ids.js"
import { RuleRetractArgs } from "../../domain/proposal-schemas.js"
import { retract } from "../../operations/retract.js"
import type { Services } from "../../services.js"
import type { ToolSpec } from "../tool.js"

export const RULE_RETRACT_DESCRIPTION =
  "Take back a rule that the approval policy adopted without a person (marked auto-adopted): it stops applying " +
  "from today (status superseded; it stays in the history). Use it only when the person asks, with their reason. " +
  "It works only while no person confirmed or reviewed the rule; otherwise it is refused with already-decided " +
  "and only a person can revoke it on the approval page (give the approval_url)."

export const ruleRetract: ToolSpec<typeof RuleRetractArgs.Encoded, typeof retract.input.Type, Services> = {
  name: "rule_retract",
  title: "Retract an auto-adopted rule",
  description: RULE_RETRACT_DESCRIPTION,
  kind: "core",
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  op: retract,
  args: RuleRetractArgs,
  toInput: ({ ref, reason }) => ({ id: parseRuleRef(ref)?.id ?? ref, reason })
}
