/**
 * A redaction made the way the service's own transaction makes it, at the database level (gaps.md
 * §12, migration 0009): in one write transaction the permit row (seq = 1 + the last), the
 * `redaction` row, every occurrence of the term in the named text columns replaced by the marker,
 * one `redaction_place` per touched column with the offsets of the text as it was, the permit
 * deleted last. Derived copies (FTS, lexical tables) are the redaction core's job and are left as
 * they are: the tests using this read the answers, which come from the rows.
 */
import { createHash } from "node:crypto"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { writeTransaction } from "../../src/db/connection.js"
import { REDACTED_MARKER } from "../../src/contracts/redaction.js"

/** One row to redact: the table, its primary-key columns and values (in key order), the text columns to look in. */
export interface RedactTarget {
  readonly table: string
  readonly key: Readonly<Record<string, string | number>>
  readonly columns: ReadonlyArray<string>
}

export interface RedactOptions {
  readonly reason?: string
  readonly at?: string
  readonly requestedBy?: string
  readonly decidedBy?: string
}

/**
 * The [start, end) UTF-16 ranges of every occurrence of `term` in `text`, ascending; case-insensitive
 * like the redaction's matcher (for texts whose lower case keeps their length).
 */
const rangesOf = (text: string, term: string): Array<[number, number]> => {
  const [hay, needle] = text.toLowerCase().length === text.length ? [text.toLowerCase(), term.toLowerCase()] : [text, term]
  const out: Array<[number, number]> = []
  for (let at = hay.indexOf(needle); at >= 0; at = hay.indexOf(needle, at + needle.length)) out.push([at, at + needle.length])
  return out
}

/** The text with every range replaced by the marker. */
const replaced = (text: string, ranges: ReadonlyArray<readonly [number, number]>): string => {
  let out = ""
  let from = 0
  for (const [start, end] of ranges) {
    out += `${text.slice(from, start)}${REDACTED_MARKER}`
    from = end
  }
  return out + text.slice(from)
}

/**
 * Redacts `term` in the given rows of the scope `sql` opens; answers the redaction's id
 * (`<scope>-x0001` …) and how many places it touched. A target column without the term is skipped;
 * a redaction that touches nothing is an error of the test.
 */
export const redactRows = (sql: SqlClient, scope: string, term: string, targets: ReadonlyArray<RedactTarget>, opts: RedactOptions = {}) =>
  writeTransaction(sql)(Effect.gen(function*() {
    const next = yield* sql<{ n: number }>`SELECT 1 + coalesce(max(seq), 0) AS n FROM redaction`
    const seq = next[0]?.n ?? 1
    const id = `${scope}-x${String(seq).padStart(4, "0")}`
    yield* sql`INSERT INTO redaction_permit (redaction_seq) VALUES (${seq})`
    const places: Array<{ table: string; key: string; column: string; offsets: string; text: string; where: RedactTarget["key"] }> = []
    for (const t of targets) {
      const where = Object.entries(t.key)
      const cond = where.map(([c]) => `${c} = ?`).join(" AND ")
      const rows = yield* sql.unsafe<Record<string, string | null>>(
        `SELECT ${t.columns.join(", ")} FROM ${t.table} WHERE ${cond}`, where.map(([, v]) => v))
      const row = rows[0]
      if (row === undefined) return yield* Effect.dieMessage(`no ${t.table} row ${JSON.stringify(t.key)}`)
      for (const column of t.columns) {
        const text = row[column]
        if (typeof text !== "string") continue
        const ranges = rangesOf(text, term)
        if (ranges.length === 0) continue
        places.push({
          table: t.table, key: JSON.stringify(Object.values(t.key)), column, offsets: JSON.stringify(ranges),
          text: replaced(text, ranges), where: t.key
        })
      }
    }
    if (places.length === 0) return yield* Effect.dieMessage(`the term occurs in none of the targets`)
    const hash = createHash("sha256").update(`test-salt:${term}`).digest("hex")
    yield* sql`INSERT INTO redaction (seq, id, term_sha256, places, requested_by, decided_by, reason, at)
      VALUES (${seq}, ${id}, ${hash}, ${places.length}, ${opts.requestedBy ?? "person:1"}, ${opts.decidedBy ?? "dpo@example.com"},
        ${opts.reason ?? "erasure request 2026-17"}, ${opts.at ?? "2026-12-01T09:30:00Z"})`
    for (const p of places) {
      const where = Object.entries(p.where)
      yield* sql.unsafe(`UPDATE ${p.table} SET ${p.column} = ? WHERE ${where.map(([c]) => `${c} = ?`).join(" AND ")}`,
        [p.text, ...where.map(([, v]) => v)])
      yield* sql`INSERT INTO redaction_place (redaction_seq, tbl, key, col, offsets) VALUES (${seq}, ${p.table}, ${p.key}, ${p.column}, ${p.offsets})`
    }
    yield* sql`DELETE FROM redaction_permit`
    return { id, places: places.length }
  }))
