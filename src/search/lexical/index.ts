/**
 * LexicalIndex: the lexical module of stage a (architecture.md §4.1, §7) as an Effect service,
 * built from AppConfig (search.lexical, search.languages, search.synonyms).
 *
 *   reindexRule(sql, ruleId)           keeps the lex_* rows of one rule current (writers call it
 *                                      next to syncRuleFts, in the same transaction)
 *   ensureBuild(sql) / rebuild(sql)    lex_meta.build check and the full rebuild from current_version
 *   current(sql)                       ensureBuild, then the file's stamp read for the caches
 *                                      (stamp-cache.ts); analyze does it first too
 *   analyzeCurrent(sql, { text?, … })  analyze after current ran in the same transaction
 *   analyze(sql, { text?, terms? })    terms, variants, sub-query alternatives (step 1–2)
 *   pool(sql, analysis, options)       top 200 by fused value (step 3–4)
 *   explain(sql, analysis, seq)        found_via, coverage, matched_terms of one hit (step 6, 6a)
 *   explainMany(sql, analysis, seqs)   the same for several hits, one read per table
 *
 * Every method takes the scope's SqlClient; all run inside the caller's transaction.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, Layer } from "effect"
import { AppConfig } from "../../config/config.js"
import { builtinBilingualLexicon } from "./crosslang.js"
import { type Lexicon, shippedLexicon } from "./lexicon.js"
import * as Doc from "./document.js"
import { explain, explainMany, type Explanation } from "./explain.js"
import { buildKey, type LexicalOptions, lexicalOptions } from "./options.js"
import { analyze, type Analysis, type QueryInput } from "./query.js"
import { pool, type PoolHit, type PoolOptions } from "./rank.js"
import { synonymGroups } from "./synonyms.js"
import { forgetStampCache, refreshStampCache } from "./stamp-cache.js"

export interface LexicalIndexShape {
  readonly options: LexicalOptions
  /** lex_meta.build of these options */
  readonly build: string
  readonly reindexRule: (sql: SqlClient, ruleId: string) => Effect.Effect<void, SqlError>
  /** rebuilds when lex_meta.build is missing or stale; true when it rebuilt */
  readonly ensureBuild: (sql: SqlClient) => Effect.Effect<boolean, SqlError>
  readonly rebuild: (sql: SqlClient) => Effect.Effect<void, SqlError>
  /** whether a check on this connection already found the build current (nothing is read) */
  readonly foundBuilt: (sql: SqlClient) => boolean
  /** ensures the build, then reads the stamp of the caches (a connection without them drops what it held) */
  readonly current: (sql: SqlClient) => Effect.Effect<void, SqlError>
  /** ensures the build first (the first search on a connection may rebuild) */
  readonly analyze: (sql: SqlClient, input: QueryInput) => Effect.Effect<Analysis, SqlError>
  /** analyze without the build check and the stamp read: `current` ran before it in the same transaction */
  readonly analyzeCurrent: (sql: SqlClient, input: QueryInput) => Effect.Effect<Analysis, SqlError>
  readonly pool: (sql: SqlClient, analysis: Analysis, options: PoolOptions) => Effect.Effect<Array<PoolHit>, SqlError>
  readonly explain: (sql: SqlClient, analysis: Analysis, seq: number) => Effect.Effect<Explanation, SqlError>
  /** explain for several hits with one read per table */
  readonly explainMany: (sql: SqlClient, analysis: Analysis, seqs: ReadonlyArray<number>) => Effect.Effect<Map<number, Explanation>, SqlError>
}

export class LexicalIndex extends Context.Tag("Groundnote/LexicalIndex")<LexicalIndex, LexicalIndexShape>() {}

/**
 * The service for given options (tests build it with their own switches). `cache: false` reads
 * the vocabulary from the file on every search (the answers are the same; the test of the cache
 * compares both).
 */
export const makeLexicalIndex = (
  options: LexicalOptions,
  { cache = true, dictionary = shippedLexicon }: { readonly cache?: boolean; readonly dictionary?: () => Lexicon | null } = {}
): LexicalIndexShape => {
  /** the cache of what only writes change, checked against the file's stamp (stamp-cache.ts) */
  const vocabulary = (sql: SqlClient): Effect.Effect<void, SqlError> =>
    cache ? refreshStampCache(sql) : Effect.sync(() => forgetStampCache(sql))
  const current = (sql: SqlClient): Effect.Effect<void, SqlError> => Effect.zipRight(Doc.ensureBuild(sql, options), vocabulary(sql))
  const groups = options.features.synonyms ? synonymGroups(options.synonyms) : []
  // the de↔en vocabulary rides on the syn sub-query and needs both languages
  const pairs = options.features.synonyms && options.features.bilingual &&
      options.languages.includes("de") && options.languages.includes("en")
    ? builtinBilingualLexicon()
    : null
  // the maintained lexicon (read once per process, on the first index that uses it)
  const lexicon = options.features.synonyms ? dictionary() : null
  return {
    options,
    build: buildKey(options),
    reindexRule: (sql, ruleId) => Doc.reindexRule(sql, ruleId, options).pipe(Effect.withSpan("LexicalIndex.reindexRule")),
    ensureBuild: (sql) => Doc.ensureBuild(sql, options),
    rebuild: (sql) => Doc.rebuild(sql, options),
    foundBuilt: (sql) => Doc.foundBuilt(sql, options),
    current,
    analyze: (sql, input) =>
      Effect.zipRight(current(sql), analyze(sql, input, options, groups, pairs, lexicon)).pipe(Effect.withSpan("LexicalIndex.analyze")),
    analyzeCurrent: (sql, input) => analyze(sql, input, options, groups, pairs, lexicon).pipe(Effect.withSpan("LexicalIndex.analyze")),
    pool: (sql, analysis, opts) => pool(sql, analysis, options, opts).pipe(Effect.withSpan("LexicalIndex.pool")),
    // explain may run in a later transaction than the analysis (stage b's heads): stamp read again
    explain: (sql, analysis, seq) => Effect.zipRight(vocabulary(sql), explain(sql, analysis, options, seq)),
    explainMany: (sql, analysis, seqs) => Effect.zipRight(vocabulary(sql), explainMany(sql, analysis, options, seqs))
  }
}

export const lexicalIndexLayer = (
  options: LexicalOptions,
  opts: { readonly cache?: boolean; readonly dictionary?: () => Lexicon | null } = {}
): Layer.Layer<LexicalIndex> =>
  Layer.succeed(LexicalIndex, makeLexicalIndex(options, opts))

export const LexicalIndexLive: Layer.Layer<LexicalIndex, never, AppConfig> = Layer.effect(
  LexicalIndex,
  Effect.map(AppConfig, (config) => makeLexicalIndex(lexicalOptions(config.file.search)))
)

export type { Analysis, QueryInput } from "./query.js"
export type { Explanation } from "./explain.js"
export type { PoolHit, PoolOptions } from "./rank.js"
export type { LexicalOptions } from "./options.js"
