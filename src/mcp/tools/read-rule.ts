/**
 * read_rule {ref, as_of?, include_proposals?}: the full bundle of one rule (ref rule/<id>[@<n>]
 * or the bare id <scope>-<nnnn>), through the same
 * call as GET /v1/rules/:id (readSpec). A rejected rule is not-found, also with
 * include_proposals and as_of (invariant 8). The version of the ref is not a filter: the answer
 * is the current version, or with as_of the version in force that day; its head ref names it.
 * head.adoption says who adopted the rule; an auto-adopted statement stays framed (auto-adopted).
 */
import { Schema } from "effect"
import { parseRuleRef, RuleRefOrId } from "../../contracts/ids.js"
import { ReadRuleInput } from "../../domain/rule-schemas.js"
import { readRule as read } from "../../operations/rules.js"
import type { Services } from "../../services.js"
import type { ToolSpec } from "../tool.js"

export const READ_RULE_DESCRIPTION =
  "Read one rule as a full bundle: the head with statement, quote, source, validity and review state, and its " +
  "groups (source, thread, attachments, entities, predecessor, successor, contradicting and related rules). Pass " +
  "ref as rule/<id> (as search answers it) or the bare id <scope>-<nnnn>; " +
  "as_of for the version in force on that day and include_proposals: true to read an unconfirmed proposal. Cite " +
  "its date and source; if recheck is set, ask the person \"still valid?\" and read rule_provenance first. A head " +
  "with adoption kind auto was adopted by the approval policy without a person: say \"auto-adopted\" when you cite it."

/** The tool names the rule by its ref (or its id); the operation reads it by id. */
const ReadRuleArgs = Schema.Struct({ ref: RuleRefOrId, as_of: ReadRuleInput.fields.as_of, include_proposals: ReadRuleInput.fields.include_proposals })

export const readRule: ToolSpec<typeof ReadRuleArgs.Encoded, typeof read.input.Type, Services> = {
  name: "read_rule",
  title: "Read a rule",
  description: READ_RULE_DESCRIPTION,
  kind: "core",
  annotations: { readOnlyHint: true, openWorldHint: false },
  op: read,
  args: ReadRuleArgs,
  toInput: ({ ref, ...rest }) => ({ id: parseRuleRef(ref)?.id ?? ref, ...rest })
}
