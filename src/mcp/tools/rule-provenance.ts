/**
 * rule_provenance {ref}: where a rule comes from, through the same call as
 * GET /v1/rules/:id/provenance (provenanceSpec): the source, the quote, the excerpt or transcript
 * window, the thread and the attachments. A rejected rule is not-found.
 */
import { Schema } from "effect"
import { parseRuleRef, RuleRef } from "../../contracts/ids.js"
import { ruleProvenance as provenance } from "../../operations/rules.js"
import type { Services } from "../../services.js"
import type { ToolSpec } from "../tool.js"

export const RULE_PROVENANCE_DESCRIPTION =
  "Show the evidence of a rule: its source (mail or meeting) with date and sender, the exact quote, the mail text " +
  "or the transcript window around the quote, the other mails of the thread and the attachments with their text. " +
  "Read it before applying a rule that carries recheck, and when the person asks where a rule comes from."

const RuleRefArgs = Schema.Struct({ ref: RuleRef })

export const ruleProvenance: ToolSpec<typeof RuleRefArgs.Encoded, typeof provenance.input.Type, Services> = {
  name: "rule_provenance",
  title: "Provenance of a rule",
  description: RULE_PROVENANCE_DESCRIPTION,
  kind: "core",
  annotations: { readOnlyHint: true, openWorldHint: false },
  op: provenance,
  args: RuleRefArgs,
  toInput: ({ ref }) => ({ id: parseRuleRef(ref)?.id ?? ref })
}
