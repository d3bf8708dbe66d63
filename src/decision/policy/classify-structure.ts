/**
 * The classifier of a structure change (gaps.md §13): pure, deterministic, ruleset RULESET. A
 * structure change has class general (names, places and links of the company's own structure
 * carry no money, personal data or outside party the way a rule's statement does), so modes A
 * and B treat it alike. Mandatory exceptions, in this order, each with its reason:
 * large-subtree (a move carrying more than graph.large_subtree nodes), injection (the injection
 * signals of model-output in name, aliases, reason or evidence), secret (a secret or talk of
 * credentials in them), doubt (hedging words or a question mark in reason or evidence) and
 * duplicate (force: true overrode duplicate candidates). Then the outcome as for rules: manual
 * never adopts, the daily limit (shared with rules) holds the rest.
 */
import type { ApprovalMode } from "../../config/schema.js"
import { scanSecrets } from "../../security/secrets.js"
import { injectionSignals } from "../../security/signals.js"
import { CREDENTIAL_PREFIX, CREDENTIAL_WORDS, firstMatch, HEDGES, quoted, RULESET } from "./classify.js"

export const STRUCTURE_EXCEPTIONS = ["large-subtree", "injection", "secret", "doubt", "duplicate"] as const
export type StructureException = (typeof STRUCTURE_EXCEPTIONS)[number]

/** The class every structure change has. */
export const STRUCTURE_CLASS = "general" as const

export interface StructureInput {
  readonly kind: "create" | "move" | "update" | "link"
  readonly texts: ReadonlyArray<{ readonly field: string; readonly text: string }>
  readonly forcedDuplicate: boolean
  readonly subtree: number
  /** graph.large_subtree */
  readonly largeSubtree: number
}

export interface StructureClassification {
  readonly ruleset: typeof RULESET
  readonly exceptions: ReadonlyArray<{ readonly exception: StructureException; readonly reason: string }>
}

/** Fields where an agent states doubt: its own words about the change, not names. */
const DOUBT_FIELDS = new Set(["reason", "evidence"])

export const classifyStructure = (input: StructureInput): StructureClassification => {
  const found = new Map<StructureException, string>()
  if (input.kind === "move" && input.subtree > input.largeSubtree) {
    found.set("large-subtree", `Large subtree: the move carries ${input.subtree} entities (more than ${input.largeSubtree} wait for a person).`)
  }
  const signals = input.texts.flatMap((t) => injectionSignals(t.text).map((s) => `${s} in the ${t.field}`))
  if (signals.length > 0) found.set("injection", `Injection: the text reads like instructions to an AI (${signals.join(", ")}).`)
  const texts = input.texts.map((t) => t.text)
  const secretKinds = [...new Set(scanSecrets(input.texts.map((t) => ({ field: t.field, text: t.text }))).map((h) => h.kind))]
  const credential = firstMatch(CREDENTIAL_WORDS, texts) ?? firstMatch(CREDENTIAL_PREFIX, texts)
  if (secretKinds.length > 0) {
    found.set("secret", `Secret: it holds what looks like a secret (${secretKinds.join(", ")}); a person checks it.`)
  } else if (credential !== null) {
    found.set("secret", `Secret: it is about credentials (${quoted(credential)}); a person checks that no secret is in it.`)
  }
  const own = input.texts.filter((t) => DOUBT_FIELDS.has(t.field)).map((t) => t.text)
  const hedge = firstMatch(HEDGES, own)
  const question = own.some((t) => t.includes("?"))
  if (hedge !== null || question) {
    const what = [hedge === null ? null : quoted(hedge), question ? "a question mark" : null].filter((x) => x !== null).join(" and ")
    found.set("doubt", `Doubt: it sounds uncertain (${what}); a person decides.`)
  }
  if (input.forcedDuplicate) {
    found.set("duplicate", "Duplicate: similar entities exist and force: true overrode them; a person decides whether it is a new one.")
  }
  return { ruleset: RULESET, exceptions: STRUCTURE_EXCEPTIONS.filter((e) => found.has(e)).map((e) => ({ exception: e, reason: found.get(e) ?? "" })) }
}

export interface StructureOutcome {
  readonly outcome: "auto" | "person"
  readonly reasons: ReadonlyArray<string>
}

/** auto only when no exception applies, the mode adopts and the shared daily limit has room. */
export const structureOutcome = (c: StructureClassification, mode: ApprovalMode, remainingDailyLimit: number): StructureOutcome => {
  const reasons: Array<string> = c.exceptions.map((e) => e.reason)
  if (mode === "manual") reasons.push("Manual mode: a person reviews every structure change in this scope.")
  else if (!(remainingDailyLimit > 0)) reasons.push("The daily limit of automatic adoptions for this scope is reached; a person decides.")
  if (reasons.length > 0) return { outcome: "person", reasons }
  return {
    outcome: "auto",
    reasons: [`Adopted by the policy (${mode} mode, class ${STRUCTURE_CLASS}, no mandatory exception, ruleset ${c.ruleset}); retractable until a person decides on it.`]
  }
}
