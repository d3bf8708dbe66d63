/**
 * "Previously rejected similar" (architecture.md §4.1): rejected_fts, which only the approval
 * channel reads, searched with the words of a rule's statement and keywords. The one reader of
 * rejected_fts besides decide.ts (AT3). Every token reaches MATCH as a quoted literal.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { isStopword } from "../search/lexical/stopwords.js"
import { tokenize } from "../search/lexical/text.js"

export const REJECTED_SIMILAR_LIMIT = 5
/** Query words taken from statement and keywords (first seen first). */
export const REJECTED_SIMILAR_TERMS = 16

export interface RejectedSimilar {
  readonly rule_id: string
  readonly version: number
  readonly statement: string
  readonly quote: string
  readonly rejected_at: string | null
  readonly reason: string | null
  readonly decided_by_identity: string | null
}

/** The MATCH expression: distinct non-stopword tokens, each quoted, joined by OR; null when none. */
export const rejectedQuery = (text: string): string | null => {
  const seen = new Set<string>()
  for (const t of tokenize(text)) {
    if (t.length < 2 || isStopword(t, ["de", "en"])) continue
    seen.add(t)
    if (seen.size >= REJECTED_SIMILAR_TERMS) break
  }
  if (seen.size === 0) return null
  return [...seen].map((t) => `"${t.replace(/"/g, "\"\"")}"`).join(" OR ")
}

/** Up to five rejected rules like the given text, best first (bm25 4/3/2/1), without `excludeSeq`. */
export const rejectedSimilar = (
  sql: SqlClient,
  input: { readonly statement: string; readonly keywords: ReadonlyArray<string> },
  excludeSeq: number
) =>
  Effect.gen(function*() {
    const match = rejectedQuery(`${input.statement} ${input.keywords.join(" ")}`)
    if (match === null) return [] as Array<RejectedSimilar>
    return yield* sql<RejectedSimilar>`
      SELECT r.id AS rule_id, v.version, v.statement, v.quote,
        (SELECT d.decided_at FROM decision d WHERE d.rule_id = r.id AND d.kind = 'reject' ORDER BY d.id DESC LIMIT 1) AS rejected_at,
        (SELECT d.reason FROM decision d WHERE d.rule_id = r.id AND d.kind = 'reject' ORDER BY d.id DESC LIMIT 1) AS reason,
        (SELECT d.decided_by_identity FROM decision d WHERE d.rule_id = r.id AND d.kind = 'reject' ORDER BY d.id DESC LIMIT 1) AS decided_by_identity
      FROM (SELECT rowid AS seq, bm25(rejected_fts, 4, 3, 2, 1) AS score FROM rejected_fts
              WHERE rejected_fts MATCH ${match} AND rowid <> ${excludeSeq} ORDER BY score LIMIT ${REJECTED_SIMILAR_LIMIT}) f
        JOIN rule r ON r.seq = f.seq
        JOIN current_version v ON v.rule_id = r.id
      ORDER BY f.score, r.seq`
  })
