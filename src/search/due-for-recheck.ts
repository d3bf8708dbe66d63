/**
 * The confirmed rules of a scope that are due for recheck ("still valid?"), oldest review first:
 * the same definition as a search answer's head (bundle.ts recheckOf over ageDays of the rule's
 * last_reviewed_at from reviewFactsOf), so a rule is listed here exactly when its head carries
 * recheck. One read narrows the candidates in SQL with a bound looser than the definition (a
 * review at least recheck_after_days − 2 days of elapsed time ago), the definition then decides.
 * Reads only, on the caller's connection.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import type { Adoption } from "../contracts/schemas.js"
import { reviewFactsOf } from "../domain/adoption.js"
import { ageDays, recheckOf } from "./bundle.js"

export interface RecheckOptions {
  /** config.zone */
  readonly zone: string
  /** config.file.recheck_after_days */
  readonly recheckAfterDays: number
  /** the injected clock's now */
  readonly nowMs: number
}

/** A confirmed rule past recheck_after_days as it stands now. */
export interface DueRule {
  readonly rule_id: string
  readonly version: number
  readonly statement: string
  readonly last_reviewed_at: string
  readonly age_days: number
  readonly adoption: Adoption
}

interface Candidate {
  readonly rule_id: string
  readonly version: number
  readonly statement: string
  readonly seq: number
}

const DAY_MS = 86_400_000

/**
 * The SQL bound: a rule whose age in calendar days exceeds N was reviewed more than N − 1 days
 * of elapsed time ago less an hour of a daylight-saving change; N − 2 days leaves room for both.
 */
const candidateBefore = (o: RecheckOptions): string => new Date(o.nowMs - (o.recheckAfterDays - 2) * DAY_MS).toISOString()

/** Every rule of the scope due for recheck, oldest last review first (then by seq). */
export const dueForRecheck = (sql: SqlClient, o: RecheckOptions): Effect.Effect<Array<DueRule>, SqlError> =>
  Effect.gen(function*() {
    const before = candidateBefore(o)
    const candidates = yield* sql<Candidate>`
      SELECT v.rule_id, v.version, v.statement, r.seq FROM current_version v JOIN rule r ON r.id = v.rule_id
      WHERE v.status = 'confirmed'
        AND coalesce((SELECT max(d.decided_at) FROM decision d WHERE d.rule_id = v.rule_id AND d.kind IN ('confirm', 'review')), r.created_at) < ${before}`
    if (candidates.length === 0) return []
    const facts = yield* reviewFactsOf(sql, candidates.map((c) => c.rule_id))
    const due: Array<DueRule & { readonly seq: number }> = []
    for (const c of candidates) {
      const f = facts.get(c.rule_id)
      if (f === undefined || f.lastReviewedAt === null) continue
      const age = ageDays(f.lastReviewedAt, o.zone, o.nowMs)
      if (recheckOf("confirmed", age, o.recheckAfterDays) === null) continue
      due.push({ rule_id: c.rule_id, version: c.version, statement: c.statement, last_reviewed_at: f.lastReviewedAt, age_days: age, adoption: f.adoption, seq: c.seq })
    }
    due.sort((a, b) => Date.parse(a.last_reviewed_at) - Date.parse(b.last_reviewed_at) || a.seq - b.seq)
    return due.map(({ seq: _seq, ...rest }) => rest)
  })

/** How many rules of the scope are due for recheck (dueForRecheck's length). */
export const dueForRecheckCount = (sql: SqlClient, o: RecheckOptions) => Effect.map(dueForRecheck(sql, o), (rows) => rows.length)
