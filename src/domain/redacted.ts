/**
 * Which records of a scope a redaction touched (gaps.md §12 "Answers after a redaction"): every
 * row with a `redaction_place` (migration 0009), by table and key (the JSON array of the row's
 * primary-key values). An answer reads it once and marks each record whose shown text lies in a
 * touched row `redacted: true`; the field is left out otherwise.
 *
 * One statement per answer: the content stamp and whether any redaction exists. A scope without a
 * redaction answers from that alone; otherwise the places are read once per connection and content
 * stamp (migration 0009 bumps the stamp with every redaction row and place) and held.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { rowsOf } from "../db/held-connection.js"

export interface Redacted {
  /** no redaction in the scope: nothing is marked */
  readonly none: boolean
  /** the row of `table` with these primary-key values has a touched text column */
  readonly row: (table: string, ...key: ReadonlyArray<string | number>) => boolean
  /** a row of the source itself, or one of its segments, attachments or its mail header, is touched */
  readonly source: (id: string) => boolean
}

const SOURCE_TABLES: ReadonlySet<string> = new Set(["source", "source_segment", "source_attachment", "source_auth"])

const keyOf = (table: string, key: ReadonlyArray<unknown>): string => `${table}\u0000${JSON.stringify(key)}`

export const NOTHING_REDACTED: Redacted = { none: true, row: () => false, source: () => false }

/** The marks of the given places (table, key as stored). */
export const redactedFrom = (places: ReadonlyArray<{ readonly tbl: string; readonly key: string }>): Redacted => {
  if (places.length === 0) return NOTHING_REDACTED
  const rows = new Set<string>()
  const sources = new Set<string>()
  for (const p of places) {
    const key = JSON.parse(p.key) as ReadonlyArray<unknown>
    rows.add(keyOf(p.tbl, key))
    if (SOURCE_TABLES.has(p.tbl) && typeof key[0] === "string") sources.add(key[0])
  }
  return { none: false, row: (table, ...key) => rows.has(keyOf(table, key)), source: (id) => sources.has(id) }
}

/** The marks held per connection, with the content stamp they were read under. */
const held = new WeakMap<SqlClient, { readonly stamp: string; readonly marks: Redacted }>()

/** The touched records of the scope `sql` reads (inside the caller's read transaction). */
export const redactedOf = (sql: SqlClient): Effect.Effect<Redacted, SqlError> =>
  Effect.gen(function*() {
    const rows = yield* rowsOf(sql, sql<{ stamp: string | null; any: number }>`
      SELECT (SELECT seq || ':' || nonce FROM content_stamp WHERE id = 1) AS stamp, EXISTS (SELECT 1 FROM redaction_place) AS any`)
    const r = rows[0]
    if (r === undefined || r.any === 0) return NOTHING_REDACTED
    const known = held.get(sql)
    if (r.stamp !== null && known?.stamp === r.stamp) return known.marks
    const marks = redactedFrom(yield* sql<{ tbl: string; key: string }>`SELECT DISTINCT tbl, key FROM redaction_place`)
    if (r.stamp !== null) held.set(sql, { stamp: r.stamp, marks })
    return marks
  })

/** `{ redacted: true }` to spread into a record when `touched`, else nothing (the field is present only when true). */
export const redactedMark = (touched: boolean): { readonly redacted?: true } => (touched ? { redacted: true } : {})
