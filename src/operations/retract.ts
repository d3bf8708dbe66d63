/**
 * retract (POST /v1/rules/:id/retract {reason}, channel api; the MCP tool rule_retract {ref,
 * reason}; the CLI's `groundnote retract <rule-id> --reason` over the route): one operation for
 * every door. Right propose: taking back what the policy adopted without a person is no
 * decision of a person (invariant 2: retract() in src/decision/policy/retract.ts). A malformed
 * id is the 404 of an unknown one; a blank reason is 400 reason-missing.
 */
import { Effect } from "effect"
import { CurrentCaller } from "../auth/caller.js"
import { operation } from "../auth/operation.js"
import { NotFound, ReasonMissing, refuse } from "../contracts/errors.js"
import { ENTITY_ID_RE, LINK_ID_RE, RULE_ID_RE, ruleRef, scopeOfGraphId, scopeOfRuleId } from "../contracts/ids.js"
import { retract as retractRule } from "../decision/policy/retract.js"
import { retractStructure as retractChange } from "../decision/policy/retract-structure.js"
import { RetractInput } from "../domain/proposal-schemas.js"

export const retract = operation({
  name: "retract",
  right: "propose",
  input: RetractInput,
  label: "retract",
  check: (input) =>
    !RULE_ID_RE.test(input.id)
      ? Effect.fail(new NotFound({ message: `no rule ${input.id}` }))
      : input.reason.trim().length === 0
      ? Effect.fail(new ReasonMissing({ message: "a retract needs a non-blank reason" }))
      : Effect.void,
  scopes: (input) => [scopeOfRuleId(input.id)],
  refs: (input) => [ruleRef(input.id)],
  run: (input) =>
    Effect.gen(function*() {
      const caller = yield* CurrentCaller
      const result = yield* retractRule(input.id, input.reason, { grantId: caller.grant.id, identity: caller.identity.identity })
      return { status: 200, body: result, refs: [result.retracted, result.current] }
    })
})

/**
 * retract_structure (POST /v1/structure/:id/retract {reason}, channel api; the MCP tool
 * structure_retract {id, reason}, channel mcp): takes back an entity or link change the policy
 * adopted, while no person decided on it (gaps.md §13). Right propose, as retract: any grant that
 * may propose in the scope, not only the proposing one. `id` is an entity id (its newest adoption)
 * or a link id; another id is the 404 of an unknown one; a blank reason is 400 reason-missing.
 */
export const retractStructure = operation({
  // logged as a retract, as the rule's (the log's refs say entity/… or link/…)
  name: "retract",
  right: "propose",
  input: RetractInput,
  label: "retract",
  check: (input) =>
    !ENTITY_ID_RE.test(input.id) && !LINK_ID_RE.test(input.id)
      ? Effect.fail(refuse("not-found", { message: `no entity or link ${input.id}`, remedy: "give an entity id or a link id", next: [] }))
      : input.reason.trim().length === 0
      ? Effect.fail(new ReasonMissing({ message: "a retract needs a non-blank reason" }))
      : Effect.void,
  scopes: (input) => [scopeOfGraphId(input.id)],
  refs: (input) => [LINK_ID_RE.test(input.id) ? `link/${input.id}` : `entity/${input.id}`],
  run: (input) =>
    Effect.gen(function*() {
      const caller = yield* CurrentCaller
      const result = yield* retractChange(input.id, input.reason, { grantId: caller.grant.id, identity: caller.identity.identity })
      return { status: 200, body: result, refs: [result.retracted, result.current] }
    })
})
