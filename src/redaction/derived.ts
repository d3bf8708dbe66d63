/**
 * Rebuilds every derived copy of the rows a redaction changed, in its transaction (gaps.md §12
 * step 3): rule_fts and the lexical tables (lex_*, lex_relation) of each touched rule from its
 * current version (the RuleIndex port, which also wakes stage b), the rejected full-text row of a
 * touched rejected rule, entity_fts and entity_fts_key of each touched entity, and the vectors of
 * every touched rule version (deleted: stage b embeds the current version again). The stamps move
 * by their triggers (content_stamp on every changed row, index_stamp on lex_doc), so no cached
 * answer or vocabulary outlives the old text.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { ftsColumns, type FtsSource, syncRuleFts } from "../db/fts.js"
import type { RuleIndexShape } from "../domain/rule-index.js"
import { syncEntityFts } from "../graph/fts.js"

export interface Touched {
  /** rule id → the versions whose text changed */
  readonly rules: ReadonlyMap<string, ReadonlySet<number>>
  /** entity ids whose versions changed */
  readonly entities: ReadonlySet<string>
}

/** The full-text row of a rejected rule: the text of the version it was rejected from (decide.ts writes the same). */
const syncRejectedRow = (sql: SqlClient, ruleId: string) =>
  Effect.gen(function*() {
    const rows = yield* sql<FtsSource & { seq: number }>`
      SELECT r.seq, v.keywords, v.statement, v.relations, v.quote FROM rule r
      JOIN rule_version v ON v.rule_id = r.id
      WHERE r.id = ${ruleId} AND v.version = (SELECT max(version) - 1 FROM rule_version WHERE rule_id = ${ruleId})
        AND (SELECT status FROM rule_version WHERE rule_id = ${ruleId} ORDER BY version DESC LIMIT 1) = 'rejected'`
    const row = rows[0]
    if (row === undefined) return
    const held = yield* sql<{ n: number }>`SELECT count(*) AS n FROM rejected_fts WHERE rowid = ${row.seq}`
    if ((held[0]?.n ?? 0) === 0) return
    const c = ftsColumns(row)
    yield* sql`DELETE FROM rejected_fts WHERE rowid = ${row.seq}`.raw
    yield* sql`INSERT INTO rejected_fts (rowid, keywords, statement, relations, quote)
      VALUES (${row.seq}, ${c.keywords}, ${c.statement}, ${c.relations}, ${c.quote})`.raw
  })

export const rebuildDerived = (sql: SqlClient, index: RuleIndexShape, touched: Touched, turn: Effect.Effect<void> = Effect.void) =>
  Effect.gen(function*() {
    for (const [ruleId, versions] of touched.rules) {
      yield* turn
      yield* syncRuleFts(sql, ruleId)
      yield* index.reindexRule(sql, ruleId)
      yield* syncRejectedRow(sql, ruleId)
      const seq = yield* sql<{ seq: number }>`SELECT seq FROM rule WHERE id = ${ruleId}`
      if (seq[0] !== undefined) {
        yield* sql`DELETE FROM vec_rule WHERE seq = ${seq[0].seq} AND version IN ${sql.in([...versions])}`.raw
      }
    }
    for (const id of touched.entities) {
      yield* turn
      const rows = yield* sql<{ seq: number; name: string; aliases: string }>`
        SELECT e.seq, c.name, c.aliases FROM entity e JOIN entity_current c ON c.id = e.id WHERE e.id = ${id}`
      const row = rows[0]
      if (row !== undefined) yield* syncEntityFts(sql, { seq: row.seq, name: row.name, aliases: JSON.parse(row.aliases) as Array<string> })
    }
  })
