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
import { NotFound, ReasonMissing } from "../contracts/errors.js"
import { RULE_ID_RE, ruleRef, scopeOfRuleId } from "../contracts/ids.js"
import { retract as retractRule } from "../decision/policy/retract.js"
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
