/**
 * adopt(): the policy's entrance to the decision path (invariant 2, gaps.md §10). Called only by
 * the policy's verdict (live.ts), which intake() runs inside the proposal's transaction after
 * classify(), for an outcome auto: no mandatory exception, no supersedes, a checked quote, the
 * mode and the daily limit allowing it. It knows one transition, proposed → confirmed: version
 * 2 is version 1 unchanged with status confirmed, changed_by policy@<ruleset>; the decision row
 * has origin auto, the mode and the classification. The triggers of migration 0004 refuse
 * anything else written as the policy.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import type { ApprovalMode } from "../../config/schema.js"
import { syncRuleFts } from "../../db/fts.js"
import { POLICY_PREFIX } from "../../domain/adoption.js"
import type { RuleIndexShape } from "../../domain/rule-index.js"
import type { RuleVersionRow } from "../../domain/rules.js"
import { RULESET } from "./classify.js"

export const POLICY = `${POLICY_PREFIX}${RULESET}` as const

export interface Adoption {
  readonly ruleId: string
  readonly classificationId: number
  readonly mode: ApprovalMode
  readonly now: string
}

/** Confirms version 1 of the rule as the policy; returns the new version (2). */
export const adopt = (sql: SqlClient, index: RuleIndexShape, a: Adoption) =>
  Effect.gen(function*() {
    const rows = yield* sql<RuleVersionRow>`SELECT * FROM rule_version WHERE rule_id = ${a.ruleId} AND version = 1`
    const v = rows[0]
    if (v === undefined || v.status !== "proposed") return yield* Effect.dieMessage(`adopt: ${a.ruleId} has no proposed version 1`)
    const reason = `adopted by the policy (ruleset ${RULESET}, ${a.mode} mode)`
    yield* sql`INSERT INTO rule_version (rule_id, version, kind, statement, source_id, quote, timestamp_s, source_link, said_at,
        speaker, relations, keywords, valid_from, valid_until, supersedes, superseded_by, status, reason, changed_by, changed_at)
      VALUES (${v.rule_id}, 2, ${v.kind}, ${v.statement}, ${v.source_id}, ${v.quote}, ${v.timestamp_s}, ${v.source_link},
        ${v.said_at}, ${v.speaker}, ${v.relations}, ${v.keywords}, ${v.valid_from}, NULL, NULL, NULL, 'confirmed', ${reason},
        ${POLICY}, ${a.now})`.raw
    yield* sql`INSERT INTO decision (rule_id, version, kind, origin, mode, classification_id, decided_by, decided_by_identity,
        decided_at, reason, new_version)
      VALUES (${v.rule_id}, 1, 'confirm', 'auto', ${a.mode}, ${a.classificationId}, ${POLICY}, ${POLICY}, ${a.now}, ${reason}, 2)`.raw
    yield* syncRuleFts(sql, v.rule_id)
    yield* index.reindexRule(sql, v.rule_id)
    return 2
  })
