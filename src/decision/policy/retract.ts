/**
 * retract(): the policy's second entrance to the decision path (invariant 2, gaps.md §10). A
 * grant with the right propose (an agent over MCP, a feeder or the CLI over the API) takes back a
 * rule the policy adopted: confirmed → superseded with valid_until = today in config.zone (or its
 * valid_from, for a rule not yet in force), superseded_by null — only while the newest
 * confirm/review decision of the rule is the policy's. A person's confirm or review ends that;
 * after it only a person revokes, on the approval page. One transaction: the version, the
 * decision (kind retract, origin grant: the grant asked; classification of the adoption), FTS and
 * index rows. The trigger decision_policy refuses a retract of a rule a person confirmed.
 */
import { Effect } from "effect"
import { AppConfig } from "../../config/config.js"
import { AlreadyDecided, NotFound } from "../../contracts/errors.js"
import { RULE_ID_RE, ruleRef, scopeOfRuleId } from "../../contracts/ids.js"
import { nowInstant, todayIn } from "../../contracts/time.js"
import { syncRuleFts } from "../../db/fts.js"
import { ScopeStore } from "../../db/scope-store.js"
import { reviewFacts } from "../../domain/adoption.js"
import type { RetractResult } from "../../domain/proposal-schemas.js"
import { RuleIndex } from "../../domain/rule-index.js"
import { currentVersion } from "../../domain/rules.js"

/** Who asks: the grant and its identity (a person's e-mail, a service's label or fingerprint). */
export interface Retractor {
  readonly grantId: string
  readonly identity: string
}

export const NOT_RETRACTABLE_PERSON =
  "a person confirmed or reviewed this rule, so it is no longer retractable; only a person can revoke it on the approval page"

export const retract = Effect.fn("Policy.retract")(function*(ruleId: string, reason: string, by: Retractor) {
  const notFound = new NotFound({ message: `no rule ${ruleId}` })
  if (!RULE_ID_RE.test(ruleId)) return yield* notFound
  const store = yield* ScopeStore
  const config = yield* AppConfig
  const index = yield* RuleIndex
  const scope = scopeOfRuleId(ruleId)
  if (!store.configured.includes(scope)) return yield* notFound
  const now = yield* nowInstant
  const today = yield* todayIn(config.file.zone)
  return yield* store.write(scope, ({ sql }) =>
    Effect.gen(function*() {
      const cur = yield* currentVersion(sql, ruleId)
      // rejected never leaks (invariant 8)
      if (cur === undefined || cur.status === "rejected") return yield* notFound
      const current = ruleRef(ruleId, cur.version)
      if (cur.status !== "confirmed") {
        return yield* new AlreadyDecided({
          message: cur.status === "proposed"
            ? `rule ${ruleId} is a proposal: nothing was adopted, so there is nothing to retract; a person decides it on the approval page`
            : `rule ${ruleId} is superseded already`,
          current
        })
      }
      const facts = yield* reviewFacts(sql, ruleId)
      if (facts.adoption.kind !== "auto") return yield* new AlreadyDecided({ message: NOT_RETRACTABLE_PERSON, current })
      const validUntil = cur.valid_from > today ? cur.valid_from : today
      const version = cur.version + 1
      yield* sql`INSERT INTO rule_version (rule_id, version, kind, statement, source_id, quote, timestamp_s, source_link, said_at,
          speaker, relations, keywords, valid_from, valid_until, supersedes, superseded_by, status, reason, changed_by, changed_at)
        VALUES (${ruleId}, ${version}, ${cur.kind}, ${cur.statement}, ${cur.source_id}, ${cur.quote}, ${cur.timestamp_s},
          ${cur.source_link}, ${cur.said_at}, ${cur.speaker}, ${cur.relations}, ${cur.keywords}, ${cur.valid_from}, ${validUntil},
          ${cur.supersedes}, NULL, 'superseded', ${`retracted: ${reason}`}, ${by.grantId}, ${now})`.raw
      yield* sql`INSERT INTO decision (rule_id, version, kind, origin, mode, classification_id, decided_by, decided_by_identity,
          decided_at, reason, new_version)
        VALUES (${ruleId}, ${cur.version}, 'retract', 'grant', NULL, ${facts.classificationId}, ${by.grantId}, ${by.identity},
          ${now}, ${reason}, ${version})`.raw
      yield* syncRuleFts(sql, ruleId)
      yield* index.reindexRule(sql, ruleId)
      const result: RetractResult = {
        retracted: current,
        current: ruleRef(ruleId, version),
        status: "superseded",
        valid_until: validUntil,
        adoption: facts.adoption,
        decision: { kind: "retract", origin: "grant", version: cur.version, new_version: version, decided_by: by.grantId, decided_at: now, reason }
      }
      return result
    })
  )
})
