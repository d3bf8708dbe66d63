/**
 * rule_fts maintenance (architecture.md §4.1, no triggers): after every write to a rule, in the
 * same transaction, the rule's row is replaced by its current version unless that is rejected.
 * rejected_fts is written by decision/decide.ts alone (AT3).
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { rowsOf, runOf } from "./held-connection.js"

export interface FtsSource {
  readonly keywords: string
  readonly statement: string
  readonly relations: string
  readonly quote: string
}

export interface FtsColumns {
  readonly keywords: string
  readonly statement: string
  readonly relations: string
  readonly quote: string
}

/** keywords joined by space, statement, relations as "<kind> <name>" joined by space, quote. */
export const ftsColumns = (v: FtsSource): FtsColumns => ({
  keywords: (JSON.parse(v.keywords) as Array<string>).join(" "),
  statement: v.statement,
  relations: (JSON.parse(v.relations) as Array<{ kind: string; name: string }>).map((r) => `${r.kind} ${r.name}`).join(" "),
  quote: v.quote
})

/** Replaces the rule_fts row of a rule (rowid = rule.seq) by its current version. */
export const syncRuleFts = (sql: SqlClient, ruleId: string) =>
  Effect.gen(function*() {
    const rows = yield* rowsOf(
      sql,
      sql<FtsSource & { seq: number; status: string }>`
      SELECT r.seq, v.status, v.keywords, v.statement, v.relations, v.quote
      FROM rule r JOIN current_version v ON v.rule_id = r.id WHERE r.id = ${ruleId}`
    )
    const row = rows[0]
    if (row === undefined) return
    yield* runOf(sql, sql`DELETE FROM rule_fts WHERE rowid = ${row.seq}`)
    if (row.status !== "rejected") {
      const c = ftsColumns(row)
      yield* runOf(
        sql,
        sql`INSERT INTO rule_fts (rowid, keywords, statement, relations, quote)
        VALUES (${row.seq}, ${c.keywords}, ${c.statement}, ${c.relations}, ${c.quote})`
      )
    }
  })

/** Every token a quoted FTS5 literal (inner " doubled): user text never reaches MATCH unquoted. */
export const ftsLiteral = (token: string): string => `"${token.replace(/"/g, "\"\"")}"`

/** An OR query over the distinct lowercase word tokens of the given texts (at most `max`). */
export const orQuery = (texts: ReadonlyArray<string>, max = 32): string | null => {
  const tokens: Array<string> = []
  const seen = new Set<string>()
  for (const text of texts) {
    for (const t of text.normalize("NFKC").toLowerCase().split(/[^\p{L}\p{N}]+/u)) {
      if (t.length < 2 || seen.has(t)) continue
      seen.add(t)
      tokens.push(t)
      if (tokens.length >= max) break
    }
  }
  return tokens.length === 0 ? null : tokens.map(ftsLiteral).join(" OR ")
}
