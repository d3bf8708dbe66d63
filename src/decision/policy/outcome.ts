/**
 * Whether the policy may adopt a classified proposal (gaps.md §10, invariant 2): pure.
 *
 * modeFor picks the mode of a proposal from config.approval: the scope's class mode, else the
 * scope's mode, else default_mode; no approval block means manual everywhere. decideOutcome then
 * says auto or person, with every reason that applies, in this order: mandatory exceptions,
 * supersedes (only a person replaces a confirmed rule), holds (what the scope says against
 * adopting: a confirmed rule saying the same, a retracted twin), the mode (manual never adopts;
 * classified adopts only class general), the daily limit.
 */
import type { ApprovalConfig, ApprovalMode } from "../../config/schema.js"
import type { Classification, ProposalClass } from "./classify.js"

export interface Outcome {
  readonly outcome: "auto" | "person"
  readonly reasons: ReadonlyArray<string>
}

/** The mode for a proposal of `cls` in `scope`. */
export const modeFor = (approval: ApprovalConfig | undefined, scope: string, cls: ProposalClass): ApprovalMode => {
  if (approval === undefined) return "manual"
  const entry = approval.scopes?.[scope]
  const classMode = cls === "payment" ? undefined : entry?.classes?.[cls]
  return classMode ?? entry?.mode ?? approval.default_mode
}

/**
 * auto only when nothing below applies; `remainingDailyLimit` is how many adoptions this scope
 * has left today; `holds` are further reasons a person decides (each a sentence).
 */
export const decideOutcome = (
  classification: Classification,
  mode: ApprovalMode,
  remainingDailyLimit: number,
  holds: ReadonlyArray<string> = []
): Outcome => {
  const reasons: Array<string> = classification.exceptions.map((e) => e.reason)
  if (classification.supersedes !== null) {
    reasons.push(`It replaces confirmed rule ${classification.supersedes}: only a person supersedes a rule.`)
  }
  reasons.push(...holds)
  if (mode === "manual") {
    reasons.push("Manual mode: a person decides every proposal in this scope.")
  } else if (mode === "classified" && classification.class !== "general") {
    reasons.push(`Classified mode adopts only general proposals; this one is ${classification.class}.`)
  }
  if (!(remainingDailyLimit > 0)) {
    reasons.push("The daily limit of automatic adoptions for this scope is reached; a person decides.")
  }
  if (reasons.length > 0) return { outcome: "person", reasons }
  return {
    outcome: "auto",
    reasons: [`Adopted automatically (${mode} mode, class ${classification.class}, no mandatory exception, ruleset ${classification.ruleset}); it stays retractable until a person confirms it.`]
  }
}
