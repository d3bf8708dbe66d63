/**
 * Stage a as the search pipeline calls it (architecture.md §7; the module is search/lexical/).
 *
 * Exported API (src/search/search.ts is written against exactly this):
 *
 *   type StageAResult = {
 *     terms: Array<string>                          // query.terms of this scope
 *     variants: Record<string, Array<string>>       // query.variants; synonym groups under "~<matched words>"
 *     pool: Array<{ seq: number; rule_id: string; version: number;
 *                   status: "confirmed" | "superseded" | "proposed"; rank_a: number;
 *                   valid_from: string; valid_until: string | null }>   // dates of that version
 *   }                                               // pool: ≤ 200, best first (ties by seq); never rejected
 *
 *   stageA(sql, { text?, terms? }, { includeProposals, targetDay })
 *     : Effect<StageAResult, SqlError, LexicalIndex>
 *     Runs inside the caller's (read) transaction on the scope's connection. The first call on a
 *     connection whose lex_meta.build is missing or stale rebuilds the lex_* tables first (a write).
 *     An input asked again under the same stamp of the file is answered from memory (held below).
 *     No terms (no text, only stopwords) → terms [], pool []. status "proposed" only with
 *     includeProposals. rank_a: the fusion value, 4 decimals, higher is better, comparable only
 *     within one search of one scope. targetDay: YYYY-MM-DD (as_of, else today in config.zone).
 *
 *   explainHit(sql, result, seq)
 *     : Effect<{ found_via: Array<string>; coverage: number; matched_terms: number }, SqlError, LexicalIndex>
 *     For a seq of result.pool (pass the very result object stageA returned: its analysis is
 *     remembered with it; a copy falls back to re-analysing result.terms). found_via is sorted;
 *     coverage 0–1 with 3 decimals; a seq that is not indexed → [], 0, 0. Call it in the same
 *     transaction as stageA: it reads the hit and the next 49 of the pool at once and answers
 *     those from memory.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { type Analysis, type Explanation, LexicalIndex, type PoolHit, type PoolOptions } from "./lexical/index.js"
import { variantsOf } from "./lexical/query.js"
import { boundedPart } from "./lexical/stamp-cache.js"

export interface StageAResult {
  terms: Array<string>
  variants: Record<string, Array<string>>
  pool: Array<{
    seq: number; rule_id: string; version: number; status: "confirmed" | "superseded" | "proposed"; rank_a: number
    valid_from: string; valid_until: string | null
  }>
}

export interface StageAInput {
  readonly text?: string
  readonly terms?: ReadonlyArray<string>
}

/** The analysis behind each result and the hits explained so far, for explainHit. */
interface Behind {
  readonly analysis: Analysis
  readonly explained: Map<number, Explanation>
}
/**
 * Behind a result of a copy (re-analysed from its terms). A result of runStageA carries its answer
 * itself (BEHIND, with the key answerKeyOf reads).
 */
const behind = new WeakMap<StageAResult, Behind>()
const BEHIND: unique symbol = Symbol("stage-a answer")
type Carrying = StageAResult & { readonly [BEHIND]?: Answered }
/** explainHit reads the rows of this many hits at once (search explains the first 50). */
const EXPLAIN_BATCH = 50

/**
 * Stage a's answers under the stamp of the file (what only writes change; stamp-cache.ts): an
 * input asked again under the same stamp, with the same options, gets the analysis, the pool and
 * the hits explained so far from memory, as a query-result cache does. A new input whose analysis
 * equals a held one's (the same words with other spacing or case, say) is analysed and then
 * gets that answer: the pool and the explanations follow from the analysis and the options alone.
 * At most MAX_RESULTS answers per connection (~45 KB each: 200 hits, the analysis and the
 * explanations; measured at 10k rules, so ~9 MB) and MAX_INPUTS inputs (each the key of its
 * answer); then each starts again.
 */
interface Answered extends Behind {
  /** the analysis and the options: what follows from this answer may be held under it (answerKeyOf) */
  readonly key: string
  readonly pool: ReadonlyArray<PoolHit>
}
const RESULTS_PART = "stage-a-results"
const INPUTS_PART = "stage-a-inputs"
export const MAX_RESULTS = 200
export const MAX_INPUTS = 2_000
const resultsOf = (sql: SqlClient) =>
  boundedPart(sql, RESULTS_PART, () => new Map<string, Answered>(), (m) => m.size, MAX_RESULTS - 1)
const inputsOf = (sql: SqlClient) =>
  boundedPart(sql, INPUTS_PART, () => new Map<string, string>(), (m) => m.size, MAX_INPUTS - 1)
const inputKey = (input: StageAInput, opts: PoolOptions): string =>
  JSON.stringify([input.text ?? null, input.terms ?? null, opts.includeProposals, opts.targetDay, opts.excludeSeq ?? null])
/** Everything of an analysis the pool and explain read (the frequencies follow from its tokens under the stamp), with the options. */
const answerKey = (a: Analysis, opts: PoolOptions): string =>
  JSON.stringify([a.terms, a.synonyms, a.docs, a.keyterms, opts.includeProposals, opts.targetDay, opts.excludeSeq ?? null])

/** stageA with the options of the module (possible_duplicates leaves the new rule out). */
export const runStageA = (
  sql: SqlClient,
  input: StageAInput,
  opts: PoolOptions
): Effect.Effect<StageAResult, SqlError, LexicalIndex> =>
  Effect.gen(function*() {
    const lex = yield* LexicalIndex
    // the build and the stamp first: they decide whether what is held still holds
    yield* lex.current(sql)
    const results = resultsOf(sql)
    const inputs = inputsOf(sql)
    const asked = inputKey(input, opts)
    const knownKey = inputs?.get(asked)
    let answered = knownKey === undefined ? undefined : results?.get(knownKey)
    if (answered === undefined) {
      const analysis = yield* lex.analyzeCurrent(sql, { text: input.text, terms: input.terms })
      const key = answerKey(analysis, opts)
      answered = results?.get(key)
      if (answered === undefined) {
        const pool: Array<PoolHit> = analysis.terms.length === 0 ? [] : yield* lex.pool(sql, analysis, opts)
        answered = { key, analysis, pool, explained: new Map() }
        results?.set(key, answered)
      }
      // the held answer's own key string: this analysis' copy of it dies young
      inputs?.set(asked, answered.key)
    }
    return resultOf(answered)
  }).pipe(Effect.withSpan("StageA.run"))

/**
 * A result of `answered`: the pool is copied on first use (callers may change what they get; a
 * search whose scope answer is held never reads it), the answer carried under BEHIND (not
 * enumerable: a copy of the result does not carry it).
 */
const resultOf = (answered: Answered): StageAResult => {
  let pool: StageAResult["pool"] | undefined
  const result = {
    terms: answered.analysis.terms.map((t) => t.text),
    variants: variantsOf(answered.analysis),
    get pool(): StageAResult["pool"] {
      pool ??= answered.pool.map((h) => ({ ...h }))
      return pool
    },
    set pool(value: StageAResult["pool"]) {
      pool = value
    }
  }
  Object.defineProperty(result, BEHIND, { value: answered, enumerable: false })
  return result
}

/**
 * The key of the answer behind a result of stageA (its analysis and options), under which a
 * caller may hold what follows from it; undefined for a result not from stageA.
 */
export const answerKeyOf = (result: StageAResult): string | undefined => (result as Carrying)[BEHIND]?.key

export const stageA = (
  sql: SqlClient,
  input: { text?: string; terms?: ReadonlyArray<string> },
  opts: { includeProposals: boolean; targetDay: string }
): Effect.Effect<StageAResult, SqlError, LexicalIndex> =>
  runStageA(sql, input, { includeProposals: opts.includeProposals, targetDay: opts.targetDay })

type Explained = { found_via: Array<string>; coverage: number; matched_terms: number }

const NOT_INDEXED: Explanation = { found_via: [], coverage: 0, matched_terms: 0 }

/** What is remembered behind a result: its analysis (re-analysed from its terms for a copy) and the hits explained. */
const behindOf = (sql: SqlClient, result: StageAResult): Effect.Effect<Behind, SqlError, LexicalIndex> => {
  const known = (result as Carrying)[BEHIND] ?? behind.get(result)
  if (known !== undefined) return Effect.succeed(known)
  return Effect.gen(function*() {
    const lex = yield* LexicalIndex
    const b: Behind = { analysis: yield* lex.analyze(sql, { terms: result.terms }), explained: new Map() }
    behind.set(result, b)
    return b
  })
}

/** A fresh copy of an explanation (callers may change what they get). */
const copyOf = (e: Explanation): Explained => ({ found_via: [...e.found_via], coverage: e.coverage, matched_terms: e.matched_terms })

export const explainHit = (
  sql: SqlClient,
  result: StageAResult,
  seq: number
): Effect.Effect<Explained, SqlError, LexicalIndex> =>
  Effect.gen(function*() {
    const b = yield* behindOf(sql, result)
    const done = b.explained.get(seq)
    if (done !== undefined) return copyOf(done)
    // this hit and the next ones of the pool, in one read
    const at = result.pool.findIndex((h) => h.seq === seq)
    const batch = [seq, ...(at < 0 ? [] : result.pool.slice(at + 1).map((h) => h.seq).filter((s) => !b.explained.has(s)))]
      .slice(0, EXPLAIN_BATCH)
    const lex = yield* LexicalIndex
    for (const [s, e] of yield* lex.explainMany(sql, b.analysis, batch)) b.explained.set(s, e)
    return copyOf(b.explained.get(seq) ?? NOT_INDEXED)
  })

/**
 * The coverage of the duplicate check (architecture.md §6.3, src/domain/near-duplicate.ts): the
 * hits explained by the query's own words, their forms and the configured synonyms only, without
 * the lexicon's expansions (near duplicate means nearly the same words; its thresholds were
 * measured so). Not cached: the search's own explanations keep the expansions.
 */
export const explainOwnWords = (
  sql: SqlClient,
  result: StageAResult,
  seqs: ReadonlyArray<number>
): Effect.Effect<Map<number, Explained>, SqlError, LexicalIndex> =>
  Effect.gen(function*() {
    const b = yield* behindOf(sql, result)
    const synonyms = b.analysis.synonyms
      .map((s) => ({ ...s, expansions: s.expansions.filter((e) => e.weight === undefined) }))
      .filter((s) => s.expansions.length > 0)
    const lex = yield* LexicalIndex
    const explained = yield* lex.explainMany(sql, { ...b.analysis, synonyms }, [...new Set(seqs)])
    return new Map(seqs.map((s) => [s, copyOf(explained.get(s) ?? NOT_INDEXED)] as const))
  })

/**
 * explainHit for several seqs at once, in one read per table (search explains its first 50 heads
 * so; the heads only stage b found are not in the pool). Same cache, same answers.
 */
export const explainHits = (
  sql: SqlClient,
  result: StageAResult,
  seqs: ReadonlyArray<number>
): Effect.Effect<Map<number, Explained>, SqlError, LexicalIndex> =>
  Effect.gen(function*() {
    const b = yield* behindOf(sql, result)
    const todo = [...new Set(seqs)].filter((s) => !b.explained.has(s))
    if (todo.length > 0) {
      const lex = yield* LexicalIndex
      for (const [s, e] of yield* lex.explainMany(sql, b.analysis, todo)) b.explained.set(s, e)
    }
    return new Map(seqs.map((s) => [s, copyOf(b.explained.get(s) ?? NOT_INDEXED)] as const))
  })
