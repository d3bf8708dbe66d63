/**
 * The plain bm25 baseline straight over rule_fts: every query token a quoted FTS5 literal,
 * OR-joined, ranked by bm25(rule_fts, 4, 3, 2, 1), top k. No stopwords, stems, variants,
 * validity, relation or as_of handling; proposals only with include_proposals (rule_fts holds
 * them, the service shows them only on request; rejected rules are never in rule_fts).
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { ftsLiteral } from "../src/db/fts.js"

/** Distinct lowercase letter/digit tokens of the texts (NFKC), in first-seen order. */
export const baselineTokens = (texts: ReadonlyArray<string>): Array<string> => {
  const out: Array<string> = []
  for (const text of texts) {
    for (const t of text.normalize("NFKC").toLowerCase().split(/[^\p{L}\p{N}]+/u)) {
      if (t.length > 0 && !out.includes(t)) out.push(t)
    }
  }
  return out
}

/** The MATCH expression: quoted literals joined by OR; null when the texts hold no token. */
export const baselineMatch = (texts: ReadonlyArray<string>): string | null => {
  const tokens = baselineTokens(texts)
  return tokens.length === 0 ? null : tokens.map(ftsLiteral).join(" OR ")
}

/** Rule ids of the top k rule_fts rows of one scope, best first (ties by seq). */
export const bm25Top = (sql: SqlClient, match: string | null, includeProposals: boolean, k: number) =>
  Effect.gen(function*() {
    if (match === null) return []
    const rows = yield* sql<{ id: string }>`
      SELECT r.id FROM rule_fts f JOIN rule r ON r.seq = f.rowid JOIN current_version v ON v.rule_id = r.id
      WHERE rule_fts MATCH ${match} AND (${includeProposals ? 1 : 0} = 1 OR v.status <> 'proposed')
      ORDER BY bm25(rule_fts, 4, 3, 2, 1), f.rowid LIMIT ${k}`
    return rows.map((r) => r.id)
  })
