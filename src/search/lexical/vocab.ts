/**
 * The scope vocabulary (fts5vocab rows over lex_word and lex_stem): document frequencies for
 * IDF, key terms and decompounding, and the candidates of typo correction.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { fold } from "./text.js"

export type VocabTable = "lex_word_vocab" | "lex_stem_vocab"

/** Document frequency per (folded) token; absent tokens are not in the map. */
export const documentFrequencies = (
  sql: SqlClient,
  table: VocabTable,
  tokens: Iterable<string>
): Effect.Effect<Map<string, number>, SqlError> =>
  Effect.gen(function*() {
    const wanted = [...new Set([...tokens].map(fold))]
    const out = new Map<string, number>()
    if (wanted.length === 0) return out
    // one statement text per table keeps the prepared-statement cache warm
    const rows = yield* sql.unsafe<{ term: string; doc: number }>(
      `SELECT term, doc FROM ${table} WHERE term IN (SELECT value FROM json_each(?))`,
      [JSON.stringify(wanted)]
    )
    for (const r of rows) out.set(r.term, Number(r.doc))
    return out
  })

/** Number of indexed rules (every status that is indexed). */
export const documentCount = (sql: SqlClient): Effect.Effect<number, SqlError> =>
  Effect.map(sql<{ n: number }>`SELECT count(*) AS n FROM lex_doc`, (rows) => Number(rows[0]?.n ?? 0))

/** Vocabulary words that start with the first character of `token`, within a length range. */
export const wordsStartingLike = (
  sql: SqlClient,
  token: string,
  minLength: number,
  maxLength: number
): Effect.Effect<ReadonlyArray<{ term: string; doc: number }>, SqlError> => {
  const first = String.fromCodePoint(token.codePointAt(0) ?? 0x61)
  const next = String.fromCodePoint((first.codePointAt(0) ?? 0x61) + 1)
  return sql<{ term: string; doc: number }>`SELECT term, doc FROM lex_word_vocab
    WHERE term >= ${first} AND term < ${next} AND length(term) BETWEEN ${minLength} AND ${maxLength}`
}

/** idf = ln(1 + (N − df + 0.5) / (df + 0.5)); an unknown word weighs most. */
export const idf = (docs: number, df: number): number => Math.log(1 + (Math.max(docs, df) - df + 0.5) / (df + 0.5))

/**
 * Which of the (folded) words the vocabulary holds: `exact` as a term, `prefixes` as the start of
 * a term. One statement; each probe stops at the first term it finds.
 */
export const vocabularyHas = (
  sql: SqlClient,
  exact: Iterable<string>,
  prefixes: Iterable<string>
): Effect.Effect<{ readonly exact: ReadonlySet<string>; readonly prefixes: ReadonlySet<string> }, SqlError> =>
  Effect.gen(function*() {
    const e = [...new Set([...exact].map(fold))]
    const p = [...new Set([...prefixes].map(fold))]
    const out = { exact: new Set<string>(), prefixes: new Set<string>() }
    if (e.length === 0 && p.length === 0) return out
    const rows = yield* sql.unsafe<{ kind: string; w: string }>(
      `SELECT 'e' AS kind, j.value AS w FROM json_each(?) j
         WHERE EXISTS (SELECT 1 FROM lex_word_vocab WHERE term = j.value)
       UNION ALL
       SELECT 'p', j.value FROM json_each(?) j
         WHERE EXISTS (SELECT 1 FROM lex_word_vocab WHERE term >= j.value AND term < j.value || char(1114111))`,
      [JSON.stringify(e), JSON.stringify(p)]
    )
    for (const r of rows) (r.kind === "e" ? out.exact : out.prefixes).add(r.w)
    return out
  })
