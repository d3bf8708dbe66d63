/**
 * The scope vocabulary (fts5vocab rows over lex_word and lex_stem): document frequencies for
 * IDF, key terms and decompounding, and the candidates of typo correction.
 *
 * What only writes change is kept in memory per scope connection, in the connection's
 * stamp cache (stamp-cache.ts): the number of indexed rules, document frequencies (a word the
 * vocabulary lacks as 0), the typo candidates of a first letter and length range, which words the
 * vocabulary holds (the de↔en expansions) and the rule counts of term weights. Without a cache
 * every read goes to the file. Through a write of this process that changed some rules' rows the
 * vocabulary is carried (stamp-cache.ts carryPart): everything the changed tokens cannot have
 * changed is kept, the rest read again when asked.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { boundedPart, carryPart, type IndexChange } from "./stamp-cache.js"
import { editDistance, fold, hasDigit } from "./text.js"

export type VocabTable = "lex_word_vocab" | "lex_stem_vocab"

/** What one scope's reads of the vocabulary found under one stamp of its file. */
interface ScopeVocab {
  docs: number | undefined
  readonly df: Record<VocabTable, Map<string, number>>
  readonly starting: Map<string, ReadonlyArray<{ term: string; doc: number }>>
  readonly near: Map<string, ReadonlyArray<NearWord>>
  readonly counts: Map<string, number>
  readonly has: { readonly exact: Map<string, boolean>; readonly prefixes: Map<string, boolean> }
  /** entries held; past MAX_ENTRIES the cache starts again */
  entries: number
}

const MAX_ENTRIES = 200_000
const PART = "vocab"

const emptyVocab = (): ScopeVocab => ({
  docs: undefined, df: { lex_word_vocab: new Map(), lex_stem_vocab: new Map() }, starting: new Map(), near: new Map(), counts: new Map(),
  has: { exact: new Map(), prefixes: new Map() }, entries: 0
})

/** The connection's vocabulary under the file's stamp, or undefined when it has no cache (uncached reads). */
const cacheOf = (sql: SqlClient): ScopeVocab | undefined => boundedPart(sql, PART, emptyVocab, (c) => c.entries, MAX_ENTRIES)

/** The quoted tokens of a MATCH expression (match.ts altExpr: each token an FTS5 literal, a prefix marked " *"). */
const tokensOfMatch = (match: string): Array<{ readonly token: string; readonly prefix: boolean }> =>
  [...match.matchAll(/"((?:[^"]|"")*)"(\s*\*)?/g)].map((m) => ({ token: fold((m[1] ?? "").replaceAll("\"\"", "\"")), prefix: m[2] !== undefined }))

/**
 * The vocabulary kept through changes of the rows of some rules: the frequencies, known words and
 * prefixes of the tokens they touched are dropped, and so are the typo candidates of the first
 * letters they start with, the rule counts of expressions that name one of them, and the number of
 * indexed rules; everything else still holds.
 */
const carry = (part: unknown, changes: ReadonlyArray<IndexChange>): ScopeVocab => {
  const v = part as ScopeVocab
  const words = new Set(changes.flatMap((c) => c.words))
  const stems = new Set(changes.flatMap((c) => c.stems))
  const firsts = new Set([...words].map((w) => String.fromCodePoint(w.codePointAt(0) ?? 0)))
  for (const w of words) {
    v.df.lex_word_vocab.delete(w)
    v.has.exact.delete(w)
  }
  for (const t of stems) v.df.lex_stem_vocab.delete(t)
  const anyStarts = (set: ReadonlySet<string>, prefix: string) => {
    for (const w of set) if (w.startsWith(prefix)) return true
    return false
  }
  for (const p of [...v.has.prefixes.keys()]) if (anyStarts(words, p)) v.has.prefixes.delete(p)
  for (const key of [...v.starting.keys()]) if (firsts.has(key.slice(0, key.indexOf("\u0000")))) v.starting.delete(key)
  for (const key of [...v.near.keys()]) if (firsts.has(String.fromCodePoint(key.codePointAt(0) ?? 0))) v.near.delete(key)
  for (const key of [...v.counts.keys()]) {
    const at = key.indexOf("\u0000")
    const changed = key.slice(0, at) === "lex_word" ? words : stems
    const named = tokensOfMatch(key.slice(at + 1)).some((t) => (t.prefix ? anyStarts(changed, t.token) : changed.has(t.token)))
    if (named) v.counts.delete(key)
  }
  v.docs = undefined
  v.entries = v.df.lex_word_vocab.size + v.df.lex_stem_vocab.size + v.has.exact.size + v.has.prefixes.size + v.counts.size +
    [...v.starting.values()].reduce((n, l) => n + l.length + 1, 0) + [...v.near.values()].reduce((n, l) => n + l.length + 1, 0)
  return v
}
carryPart(PART, carry)

/** The document frequency the connection's cache holds for a folded token, without reading (undefined: not held). */
export const heldFrequency = (sql: SqlClient, table: VocabTable, token: string): number | undefined => cacheOf(sql)?.df[table].get(fold(token))

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
    const cache = cacheOf(sql)
    const known = cache?.df[table]
    const missing = known === undefined ? wanted : wanted.filter((t) => !known.has(t))
    if (missing.length > 0) {
      // one statement text per table keeps the prepared-statement cache warm
      const rows = yield* sql.unsafe<{ term: string; doc: number }>(
        `SELECT term, doc FROM ${table} WHERE term IN (SELECT value FROM json_each(?))`,
        [JSON.stringify(missing)]
      )
      for (const r of rows) out.set(r.term, Number(r.doc))
      if (known !== undefined && cache !== undefined) {
        for (const t of missing) known.set(t, out.get(t) ?? 0)
        cache.entries += missing.length
      }
    }
    if (known !== undefined) {
      for (const t of wanted) {
        const df = known.get(t) ?? 0
        if (df > 0) out.set(t, df)
      }
    }
    return out
  })

/** Number of indexed rules (every status that is indexed). */
export const documentCount = (sql: SqlClient): Effect.Effect<number, SqlError> => {
  const cache = cacheOf(sql)
  if (cache?.docs !== undefined) return Effect.succeed(cache.docs)
  return Effect.map(sql<{ n: number }>`SELECT count(*) AS n FROM lex_doc`, (rows) => {
    const n = Number(rows[0]?.n ?? 0)
    if (cache !== undefined) cache.docs = n
    return n
  })
}

/** Vocabulary words that start with the first character of `token`, within a length range. */
export const wordsStartingLike = (
  sql: SqlClient,
  token: string,
  minLength: number,
  maxLength: number
): Effect.Effect<ReadonlyArray<{ term: string; doc: number }>, SqlError> => {
  const first = String.fromCodePoint(token.codePointAt(0) ?? 0x61)
  const next = String.fromCodePoint((first.codePointAt(0) ?? 0x61) + 1)
  const cache = cacheOf(sql)
  const key = `${first}\u0000${minLength}\u0000${maxLength}`
  const known = cache?.starting.get(key)
  if (known !== undefined) return Effect.succeed(known)
  return Effect.map(
    sql<{ term: string; doc: number }>`SELECT term, doc FROM lex_word_vocab
      WHERE term >= ${first} AND term < ${next} AND length(term) BETWEEN ${minLength} AND ${maxLength}`,
    (rows) => {
      if (cache !== undefined) {
        cache.starting.set(key, rows)
        cache.entries += rows.length + 1
      }
      return rows
    }
  )
}

/** A vocabulary word near a (folded) token: its rules and its edit distance. */
export interface NearWord {
  readonly term: string
  readonly doc: number
  readonly d: number
}

/**
 * The typo candidates of a folded token: vocabulary words with its first letter, within `max`
 * edits (optimal string alignment), without digits, not the token itself; fewest edits first, then
 * the most rules, then by word. Computed once per token under the stamp.
 */
export const nearWords = (sql: SqlClient, q: string, max: number): Effect.Effect<ReadonlyArray<NearWord>, SqlError> =>
  Effect.gen(function*() {
    const cache = cacheOf(sql)
    const key = `${q}\u0000${max}`
    const known = cache?.near.get(key)
    if (known !== undefined) return known
    const cands = yield* wordsStartingLike(sql, q, q.length - max, q.length + max)
    const near = cands
      .filter((c) => !hasDigit(c.term) && c.term !== q)
      .map((c) => ({ term: c.term, doc: Number(c.doc), d: editDistance(q, c.term, max) }))
      .filter((c) => c.d <= max)
      .sort((a, b) => a.d - b.d || b.doc - a.doc || (a.term < b.term ? -1 : a.term > b.term ? 1 : 0))
    if (cache !== undefined) {
      cache.near.set(key, near)
      cache.entries += near.length + 1
    }
    return near
  })

/** The rules whose row in `table` matches `match` (a MATCH expression), counted once per stamp. */
export const matchingRules = (sql: SqlClient, table: "lex_word" | "lex_stem", match: string): Effect.Effect<number, SqlError> => {
  const cache = cacheOf(sql)
  const key = `${table}\u0000${match}`
  const known = cache?.counts.get(key)
  if (known !== undefined) return Effect.succeed(known)
  return Effect.map(sql.unsafe<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE ${table} MATCH ?`, [match]), (rows) => {
    const n = Number(rows[0]?.n ?? 0)
    if (cache !== undefined) {
      cache.counts.set(key, n)
      cache.entries += 1
    }
    return n
  })
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
    const wantE = [...new Set([...exact].map(fold))]
    const wantP = [...new Set([...prefixes].map(fold))]
    const out = { exact: new Set<string>(), prefixes: new Set<string>() }
    const has = cacheOf(sql)?.has
    const e = has === undefined ? wantE : wantE.filter((w) => !has.exact.has(w))
    const p = has === undefined ? wantP : wantP.filter((w) => !has.prefixes.has(w))
    const fromCache = () => {
      if (has === undefined) return out
      for (const w of wantE) if (has.exact.get(w) === true) out.exact.add(w)
      for (const w of wantP) if (has.prefixes.get(w) === true) out.prefixes.add(w)
      return out
    }
    if (e.length === 0 && p.length === 0) return fromCache()
    const rows = yield* sql.unsafe<{ kind: string; w: string }>(
      `SELECT 'e' AS kind, j.value AS w FROM json_each(?) j
         WHERE EXISTS (SELECT 1 FROM lex_word_vocab WHERE term = j.value)
       UNION ALL
       SELECT 'p', j.value FROM json_each(?) j
         WHERE EXISTS (SELECT 1 FROM lex_word_vocab WHERE term >= j.value AND term < j.value || char(1114111))`,
      [JSON.stringify(e), JSON.stringify(p)]
    )
    for (const r of rows) (r.kind === "e" ? out.exact : out.prefixes).add(r.w)
    const cache = cacheOf(sql)
    if (has === undefined || cache === undefined) return out
    for (const w of e) has.exact.set(w, out.exact.has(w))
    for (const w of p) has.prefixes.set(w, out.prefixes.has(w))
    cache.entries += e.length + p.length
    return fromCache()
  })
