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
import { rowsOf } from "../../db/held-connection.js"
import { AppConfig } from "../../config/config.js"
import { builtinBilingualLexicon } from "./crosslang.js"
import { type Lexicon, shippedLexicon } from "./lexicon.js"
import * as Doc from "./document.js"
import { explain, explainMany, type Explanation } from "./explain.js"
import { buildKey, type LexicalOptions, lexicalOptions } from "./options.js"
import { analyze, type Analysis, type QueryInput } from "./query.js"
import { pool, type PoolHit, type PoolOptions } from "./rank.js"
import { TOKEN_SEPARATORS } from "./schema.js"
import { synonymGroups } from "./synonyms.js"
import {
  buildOfIndexStamp,
  forgetStampCache,
  noteIndexChange,
  readIndexStamp,
  refreshStampCache,
  seqOfIndexStamp
} from "./stamp-cache.js"
import { fold } from "./text.js"

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

/**
 * The folded tokens of one rule's rows in lex_word and lex_stem, each as its table's tokenizer
 * makes them (schema.ts TOKEN_SEPARATORS: lex_word splits at "_", lex_stem keeps it), and whether
 * it is indexed (lex_doc).
 */
const rowTokens = (sql: SqlClient, seq: number) =>
  Effect.gen(function*() {
    const of = (rows: ReadonlyArray<Record<string, string | null>>, table: "lex_word" | "lex_stem") =>
      rows.flatMap((r) => Object.values(r).flatMap((text) => (text ?? "").split(TOKEN_SEPARATORS[table]))).filter((t) => t.length > 0).map(fold)
    const words = of(
      yield* rowsOf(sql, sql<Record<string, string | null>>`SELECT keywords, statement, relations, quote FROM lex_word WHERE rowid = ${seq}`),
      "lex_word"
    )
    const stems = of(
      yield* rowsOf(sql, sql<Record<string, string | null>>`SELECT keywords, statement, relations, quote FROM lex_stem WHERE rowid = ${seq}`),
      "lex_stem"
    )
    const indexed = (yield* rowsOf(sql, sql<{ n: number }>`SELECT count(*) AS n FROM lex_doc WHERE seq = ${seq}`))[0]?.n ?? 0
    return { words, stems, indexed: Number(indexed) }
  })

/**
 * Doc.reindexRule, noting the tokens of the rule's rows before and after it with the index stamps
 * around it (stamp-cache.ts noteIndexChange), its seq, the row's tokens before and after apart
 * (the rule counts of term weights move by them) and the change in the number of indexed rules,
 * so the connections' vocabularies, analyses, phrase rows and explained rows are carried through
 * the write. Noted only when the stamp moved by the rule's own rows (≤ 2 changes of
 * lex_doc, the same build).
 */
const reindexNoted = (sql: SqlClient, ruleId: string, options: LexicalOptions) =>
  Effect.gen(function*() {
    const from = yield* readIndexStamp(sql)
    const seq = (yield* sql<{ seq: number }>`SELECT seq FROM rule WHERE id = ${ruleId}`)[0]?.seq
    const before = seq === undefined || from === undefined ? undefined : yield* rowTokens(sql, seq)
    yield* Doc.reindexRule(sql, ruleId, options)
    if (seq === undefined || from === undefined || before === undefined) return
    const to = yield* readIndexStamp(sql)
    if (to === undefined || to === from || buildOfIndexStamp(to) !== buildOfIndexStamp(from)) return
    const moved = seqOfIndexStamp(to) - seqOfIndexStamp(from)
    if (moved < 1 || moved > 2) return
    const after = yield* rowTokens(sql, seq)
    const words = [...new Set([...before.words, ...after.words])]
    const stems = [...new Set([...before.stems, ...after.stems])]
    const where = (tokens: ReadonlyArray<string>, was: ReadonlyArray<string>, is: ReadonlyArray<string>) => {
      const [b, a] = [new Set(was), new Set(is)]
      return tokens.map((t) => (!a.has(t) ? "0" : b.has(t) ? "2" : "1")).join("")
    }
    noteIndexChange(from, to, {
      words, stems, seqs: [seq], docs: after.indexed - before.indexed,
      row: { words: where(words, before.words, after.words), stems: where(stems, before.stems, after.stems) }
    })
  })

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
    reindexRule: (sql, ruleId) =>
      reindexNoted(sql, ruleId, options).pipe(Effect.withSpan("LexicalIndex.reindexRule")),
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
