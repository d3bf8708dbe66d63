/**
 * Who adopted a rule (slice A, gaps.md §10, architecture.md §6.4): the policy while the newest
 * confirm/review decision of the rule is the policy's (origin auto, decided_by policy@<ruleset>),
 * else a person — also for a proposal, which a person decides. The same decision also gives
 * last_reviewed_at (the policy's included), so a bundle head reads both in one query.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { rowsOf } from "../db/held-connection.js"
import type { Adoption } from "../contracts/schemas.js"

/** decided_by of the policy: policy@<ruleset>. */
export const POLICY_PREFIX = "policy@"

export const PERSON: Adoption = { kind: "person" }

/** The adoption a newest confirm/review decision stands for (none: a person). */
export const adoptionOf = (newest: { readonly origin: string; readonly decided_by: string } | undefined): Adoption =>
  newest !== undefined && newest.origin === "auto" && newest.decided_by.startsWith(POLICY_PREFIX)
    ? { kind: "auto", ruleset: newest.decided_by.slice(POLICY_PREFIX.length) }
    : PERSON

export interface ReviewFacts {
  /** latest decided_at of the confirm/review decisions, else rule.created_at; null for an unknown rule */
  readonly lastReviewedAt: string | null
  readonly adoption: Adoption
  /** the newest confirm/review decision's classification (the policy's), else null */
  readonly classificationId: number | null
}

interface FactsRow {
  readonly decided_at: string | null
  readonly origin: string | null
  readonly decided_by: string | null
  readonly classification_id: number | null
  readonly created_at: string | null
}

const factsOf = (r: FactsRow | undefined): ReviewFacts => {
  if (r === undefined) return { lastReviewedAt: null, adoption: PERSON, classificationId: null }
  const newest = r.origin === null || r.decided_by === null ? undefined : { origin: r.origin, decided_by: r.decided_by }
  return {
    lastReviewedAt: r.decided_at ?? r.created_at,
    adoption: adoptionOf(newest),
    classificationId: newest === undefined ? null : r.classification_id
  }
}

/** last_reviewed_at and the adoption of a rule, from its newest confirm/review decision. */
export const reviewFacts = (sql: SqlClient, ruleId: string): Effect.Effect<ReviewFacts, SqlError> =>
  Effect.map(reviewFactsOf(sql, [ruleId]), (facts) => facts.get(ruleId) ?? factsOf(undefined))

/**
 * reviewFacts of many rules in one read, keyed by rule id; an unknown rule gets the facts of
 * reviewFacts (lastReviewedAt null).
 */
export const reviewFactsOf = (sql: SqlClient, ruleIds: ReadonlyArray<string>): Effect.Effect<Map<string, ReviewFacts>, SqlError> =>
  Effect.map(
    rowsOf(sql, sql<FactsRow & { readonly rule_id: string }>`
      SELECT r.id AS rule_id,
        (SELECT max(m.decided_at) FROM decision m WHERE m.rule_id = r.id AND m.kind IN ('confirm', 'review')) AS decided_at,
        d.origin, d.decided_by, d.classification_id, r.created_at
      FROM json_each(${JSON.stringify([...new Set(ruleIds)])}) j JOIN rule r ON r.id = j.value
      LEFT JOIN decision d ON d.id = (
        SELECT max(e.id) FROM decision e WHERE e.rule_id = r.id AND e.kind IN ('confirm', 'review'))`),
    (rows) => {
      const byId = new Map(rows.map((r) => [r.rule_id, r]))
      return new Map(ruleIds.map((id) => [id, factsOf(byId.get(id))]))
    }
  )

/** Whether a confirmed rule can still be taken back by the policy (retract) or rejected by a person. */
export const isRetractable = (status: string, adoption: Adoption): boolean => status === "confirmed" && adoption.kind === "auto"
