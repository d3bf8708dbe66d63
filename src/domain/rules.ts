/** Read-side facts of a rule shared by search, bundles and the approval pages. */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { NOTHING_REDACTED, type Redacted, redactedMark } from "./redacted.js"

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

export interface RuleVersionRow {
  rule_id: string
  version: number
  kind: "rule" | "note"
  statement: string
  source_id: string
  quote: string
  timestamp_s: number | null
  source_link: string | null
  said_at: string
  speaker: string | null
  relations: string
  keywords: string
  valid_from: string
  valid_until: string | null
  supersedes: string | null
  superseded_by: string | null
  status: "proposed" | "confirmed" | "superseded" | "rejected"
  reason: string
  changed_by: string
  changed_at: string
}

/** RuleVersionOut mirrors rule_version (architecture.md §6.5): arrays parsed, source nested. */
export const ruleVersionOut = (v: RuleVersionRow) => ({
  ref: `rule/${v.rule_id}@${v.version}`,
  rule_id: v.rule_id,
  version: v.version,
  kind: v.kind,
  statement: v.statement,
  source: {
    kind: v.source_id.slice(0, v.source_id.indexOf(":")),
    id: v.source_id,
    quote: v.quote,
    timestamp_s: v.timestamp_s,
    link: v.source_link
  },
  said_at: v.said_at,
  speaker: v.speaker,
  relations: JSON.parse(v.relations) as Array<{ kind: string; name: string; ref: string | null }>,
  keywords: JSON.parse(v.keywords) as Array<string>,
  valid_from: v.valid_from,
  valid_until: v.valid_until,
  supersedes: v.supersedes,
  superseded_by: v.superseded_by,
  status: v.status,
  reason: v.reason,
  changed_by: v.changed_by,
  changed_at: v.changed_at
})
export type RuleVersionOut = ReturnType<typeof ruleVersionOut>

/** The current version of a rule, or undefined. */
export const currentVersion = (sql: SqlClient, ruleId: string) =>
  Effect.map(sql<RuleVersionRow>`SELECT * FROM current_version WHERE rule_id = ${ruleId}`, (rows) => rows[0])

export const allVersions = (sql: SqlClient, ruleId: string) =>
  sql<RuleVersionRow>`SELECT * FROM rule_version WHERE rule_id = ${ruleId} ORDER BY version`

/**
 * Decisions without the deciding person's e-mail (shown only in the approval UI), each with
 * `redacted: true` when a redaction touched its reason.
 */
export const decisionsOf = (sql: SqlClient, ruleId: string, marks: Redacted = NOTHING_REDACTED) =>
  Effect.map(
    sql<{ id: number; kind: string; version: number; origin: string; mode: string | null; decided_by: string; decided_at: string; reason: string | null; new_version: number | null }>`
      SELECT id, kind, version, origin, mode, decided_by, decided_at, reason, new_version FROM decision WHERE rule_id = ${ruleId} ORDER BY id`,
    (rows) => rows.map(({ id, ...d }) => ({ ...d, ...redactedMark(marks.row("decision", id)) }))
  )

/** A rule version's answer (ruleVersionOut) with `redacted: true` when a redaction touched that version's text. */
export const markedVersionOut = (v: RuleVersionRow, marks: Redacted) => ({
  ...ruleVersionOut(v),
  ...redactedMark(marks.row("rule_version", v.rule_id, v.version))
})

export interface ListFilter {
  readonly status: ReadonlyArray<"proposed" | "confirmed" | "superseded" | "rejected">
  readonly relation: { readonly kind: string; readonly name: string } | null
  readonly limit: number
  readonly afterSeq: number
}

/** Current versions by seq, filtered by status and relation (case-insensitive name), one page. */
export const listCurrent = (sql: SqlClient, f: ListFilter) =>
  Effect.map(
    sql<RuleVersionRow & { seq: number }>`
      SELECT r.seq, v.* FROM rule r JOIN current_version v ON v.rule_id = r.id
      WHERE r.seq > ${f.afterSeq} AND v.status IN ${sql.in(f.status)}
        AND (${f.relation === null ? 1 : 0} = 1 OR EXISTS (SELECT 1 FROM json_each(v.relations) j
          WHERE json_extract(j.value, '$.kind') = ${f.relation?.kind ?? ""}
            AND lower(json_extract(j.value, '$.name')) = lower(${f.relation?.name ?? ""})))
      ORDER BY r.seq LIMIT ${f.limit + 1}`,
    (rows) => ({ rows: rows.slice(0, f.limit), more: rows.length > f.limit })
  )

/** created_at of each rule (rule.created_at) for the given ids. */
export const createdAtOf = (sql: SqlClient, ids: ReadonlyArray<string>) =>
  Effect.map(
    ids.length === 0 ? Effect.succeed([]) : sql<{ id: string; created_at: string }>`SELECT id, created_at FROM rule WHERE id IN ${sql.in([...ids])}`,
    (rows) => new Map(rows.map((r) => [r.id, r.created_at]))
  )

/** The rejected rules of a scope with when and why (GET /v1/rejected), newest first. */
export const rejectedRows = (sql: SqlClient) =>
  sql<RuleVersionRow & { decision_id: number; decided_at: string; decision_reason: string | null }>`
    SELECT v.*, d.id AS decision_id, d.decided_at, d.reason AS decision_reason FROM rule r
      JOIN current_version v ON v.rule_id = r.id
      JOIN decision d ON d.rule_id = r.id AND d.kind = 'reject'
    WHERE v.status = 'rejected' ORDER BY r.seq DESC`

/** Current rules of a scope by status, rejected left out (GET /v1/status, list_scopes). */
export const ruleCounts = (sql: SqlClient) =>
  Effect.map(
    sql<{ status: string; n: number }>`SELECT status, count(*) AS n FROM current_version WHERE status <> 'rejected' GROUP BY status`,
    (rows) => {
      const count = (s: string) => rows.find((r) => r.status === s)?.n ?? 0
      return { proposed: count("proposed"), confirmed: count("confirmed"), superseded: count("superseded") }
    }
  )
