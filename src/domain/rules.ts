/** Read-side facts of a rule shared by search, bundles and the approval pages. */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"

/**
 * last_reviewed_at of a rule = the latest decided_at of its confirm/review decisions (the
 * policy's included), else rule.created_at (architecture.md §6.4).
 */
export const lastReviewedAt = (sql: SqlClient, ruleId: string) =>
  Effect.map(
    sql<{ at: string | null }>`
      SELECT coalesce(
        (SELECT max(decided_at) FROM decision WHERE rule_id = ${ruleId} AND kind IN ('confirm', 'review')),
        (SELECT created_at FROM rule WHERE id = ${ruleId})) AS at`,
    (rows) => rows[0]?.at ?? null
  )
