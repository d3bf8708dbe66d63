/**
 * An answer that only the lexicon's expansions found, and only weakly, has no candidate
 * (architecture.md §7 step 6a; reason no-candidate, as before the lexicon, when no word of the
 * question occurred in the scope). The lexicon brings a word's synonyms and translations weighted
 * by the share of its senses that hold them (lexicon-expand.ts); a question none of whose own
 * words, forms or configured synonyms a head matches, and whose best head covers less than
 * EXPANSION_ONLY_MIN of its term weight through those expansions, is a question the scope does
 * not answer (a "travel expenses" question finding "move" through travel's many senses).
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import type { LexicalIndex } from "./lexical/index.js"
import { explainOwnWords, type StageAResult } from "./stage-a.js"

/** Below this best coverage, an answer found through lexicon expansions alone has no candidate (docs/decisions.md «Stage a: an answer found only through weak lexicon expansions has no candidate»). */
export const EXPANSION_ONLY_MIN = 0.17

/**
 * Whether stage a's explained heads were found through lexicon expansions alone, all below
 * EXPANSION_ONLY_MIN: the best coverage is below it and no head's hit or head rule matches a word
 * of the question itself (its forms, its configured and curated synonyms). Reads nothing unless
 * the best coverage is below the bound.
 */
export const foundOnlyByWeakExpansions = (
  sql: SqlClient,
  a: StageAResult,
  heads: ReadonlyArray<{ readonly hitSeq: number; readonly headSeq: number }>,
  bestCoverage: number | null
): Effect.Effect<boolean, SqlError, LexicalIndex> =>
  Effect.gen(function*() {
    if (heads.length === 0 || bestCoverage === null || bestCoverage >= EXPANSION_ONLY_MIN) return false
    const own = yield* explainOwnWords(sql, a, heads.flatMap((h) => [h.hitSeq, h.headSeq]))
    return [...own.values()].every((e) => e.coverage === 0)
  })
