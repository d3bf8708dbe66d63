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
import { rowsOf, runOf, valuesOf } from "../../db/held-connection.js"
import { type Alt, parsedAltsOf } from "./match.js"
import { boundedPart, type CarriedChanges, carryPart, type RowTokens, startsOf, startsOfNoted } from "./stamp-cache.js"
import { editDistance, fold, hasDigit } from "./text.js"

export type VocabTable = "lex_word_vocab" | "lex_stem_vocab"

/** What one scope's reads of the vocabulary found under one stamp of its file. */
interface ScopeVocab {
  docs: number | undefined
  readonly df: Record<VocabTable, Map<string, number>>
  readonly starting: Map<string, ReadonlyArray<{ term: string; doc: number }>>
  /** the changed words a typo list may hold since a write it was carried through (read again on its next use) */
  readonly stale: Map<string, Set<string>>
  readonly near: Map<string, ReadonlyArray<NearWord>>
  readonly counts: Map<string, number>
  /** the keys of the rule counts by the tokens their expressions name, per table (what a write's changed tokens reach) */
  readonly countsBy: Record<"lex_word" | "lex_stem", CountIndex>
  readonly has: { readonly exact: Map<string, boolean>; readonly prefixes: Map<string, boolean> }
  /** what callers derived from `has` and `df` (derivedFromVocabulary): a new map when a write is carried */
  derived: WeakMap<object, unknown>
  /** entries held; past MAX_ENTRIES the cache starts again */
  entries: number
}

/** Count keys by a token their expression names: as a whole token, and as the prefix of an alternative. */
interface CountIndex {
  readonly exact: Map<string, Set<string>>
  readonly prefix: Map<string, Set<string>>
}
const emptyCountIndex = (): CountIndex => ({ exact: new Map(), prefix: new Map() })

const MAX_ENTRIES = 200_000
const PART = "vocab"

const emptyVocab = (): ScopeVocab => ({
  docs: undefined, df: { lex_word_vocab: new Map(), lex_stem_vocab: new Map() }, starting: new Map(), stale: new Map(), near: new Map(),
  counts: new Map(), countsBy: { lex_word: emptyCountIndex(), lex_stem: emptyCountIndex() },
  has: { exact: new Map(), prefixes: new Map() }, derived: new WeakMap(), entries: 0
})

/** The connection's vocabulary under the file's stamp, or undefined when it has no cache (uncached reads). */
const cacheOf = (sql: SqlClient): ScopeVocab | undefined => boundedPart(sql, PART, emptyVocab, (c) => c.entries, MAX_ENTRIES)

/** The alternatives of a rule count's expression (its key: table, NUL, expression), parsed once (a count's key is carried through many writes). */
const altsOfCount = (key: string): ReadonlyArray<Alt> =>
  parsedAltsOf(key.slice(key.indexOf("\u0000") + 1), key.startsWith("lex_word\u0000") ? "lex_word" : "lex_stem")

/** Whether an alternative's token at `i` is in a row's `tokens` (a prefix: the start of one of them). */
const hasToken = (a: Alt, i: number, tokens: ReadonlySet<string>): boolean =>
  a.prefix && i === a.tokens.length - 1 ? startsOfNoted(tokens).has(a.tokens[i] ?? "") : tokens.has(a.tokens[i] ?? "")

/** Each token a count's expression names, with the index (whole token or prefix) it is named in. */
const namedTokens = function*(index: CountIndex, alts: ReadonlyArray<Alt>): Generator<readonly [Map<string, Set<string>>, string]> {
  for (const a of alts) for (const [i, t] of a.tokens.entries()) yield [a.prefix && i === a.tokens.length - 1 ? index.prefix : index.exact, t]
}
const indexCount = (index: CountIndex, key: string): void => {
  for (const [by, t] of namedTokens(index, altsOfCount(key))) {
    const keys = by.get(t)
    if (keys === undefined) by.set(t, new Set([key]))
    else keys.add(key)
  }
}
const unindexCount = (index: CountIndex, key: string): void => {
  for (const [by, t] of namedTokens(index, altsOfCount(key))) {
    const keys = by.get(t)
    keys?.delete(key)
    if (keys?.size === 0) by.delete(t)
  }
}
/** The keys of the counts whose expression names one of the tokens (`starts`: every start of them, for a prefix alternative). */
const countsNaming = (index: CountIndex, tokens: ReadonlySet<string>, starts: ReadonlySet<string>): Set<string> => {
  const out = new Set<string>()
  for (const t of tokens) for (const k of index.exact.get(t) ?? []) out.add(k)
  for (const p of starts) for (const k of index.prefix.get(p) ?? []) out.add(k)
  return out
}

/**
 * Whether a row of these tokens matches the expression, as FTS5 would: an alternative of one token
 * matches when the row holds it (a prefix: a token starting with it); a phrase whose tokens the row
 * does not all hold does not match; one whose tokens it holds depends on their order, which the
 * tokens do not tell (undefined), as an alternative without tokens does.
 */
const rowMatches = (alts: ReadonlyArray<Alt>, row: ReadonlySet<string>): boolean | undefined => {
  let unknown = false
  for (const a of alts) {
    if (a.tokens.length === 0) return undefined
    if (!a.tokens.every((_, i) => hasToken(a, i, row))) continue
    if (a.tokens.length === 1) return true
    unknown = true
  }
  return unknown ? undefined : false
}

/** Each rewritten seq's row in one table before the first change and after the last one (stamp-cache.ts CarriedChanges). */
type RowsOf = ReadonlyMap<number, RowTokens>

/** How many more rows match the expression after the changes than before (undefined: not known from the tokens). */
const countMoved = (alts: ReadonlyArray<Alt>, rows: RowsOf): number | undefined => {
  let moved = 0
  for (const { before, after } of rows.values()) {
    const was = rowMatches(alts, before)
    const is = rowMatches(alts, after)
    if (was === undefined || is === undefined) return undefined
    moved += (is ? 1 : 0) - (was ? 1 : 0)
  }
  return moved
}

/** How many more rewritten rows hold the token after the changes than before. */
const frequencyMoved = (token: string, rows: RowsOf): number => {
  let moved = 0
  for (const { before, after } of rows.values()) moved += (after.has(token) ? 1 : 0) - (before.has(token) ? 1 : 0)
  return moved
}

const firstOf = (w: string): string => String.fromCodePoint(w.codePointAt(0) ?? 0)
/** SQLite's length() of a term: its characters (code points). */
const charsOf = (w: string): number => {
  let n = 0
  for (const _ of w) n++
  return n
}

/** A typo list's key (wordsStartingLike): first letter, length range. */
const startingKey = (first: string, minLength: number, maxLength: number): string => `${first}\u0000${minLength}\u0000${maxLength}`
const parseStartingKey = (key: string): { first: string; min: number; max: number } => {
  const [first = "", min = "0", max = "0"] = key.split("\u0000")
  return { first, min: Number(min), max: Number(max) }
}

/**
 * Whether a changed word can be in a typo list (wordsStartingLike's WHERE: its first letter, its
 * length in the range); a first letter whose next code point is not a letter of its own (the
 * surrogates' edge) is taken as touched.
 */
const inList = (w: string, first: string, min: number, max: number): boolean => {
  if (firstOf(w) !== first) return false
  if ((first.codePointAt(0) ?? 0) >= 0xd7ff) return true
  const n = charsOf(w)
  return n >= min && n <= max
}

/**
 * The vocabulary kept through changes of the rows of some rules: the frequency of a token they
 * touched moves by the rewritten rows that hold it after the changes and held it before (each
 * row's tokens in the note; dropped when a change does not tell its row), a word still held by a
 * row stays known and so do the prefixes it starts with, the other known words and their prefixes
 * are dropped; a rule count whose
 * expression names one of them moves by the rewritten rows that match it after the changes and
 * matched it before (each row's tokens in the note), and is dropped when they cannot tell (a
 * phrase whose words a row holds, a change without its row); a typo list keeps its other words and
 * reads again only the changed words it may hold (`stale`, on its next use); the typo candidates
 * of a word stay unless a changed word is one of them (within its edits, of its length range); the
 * number of indexed rules moves by the noted count (read again when a change has none).
 * Everything else still holds.
 */
const carry = (part: unknown, carried: CarriedChanges): ScopeVocab => {
  const v = part as ScopeVocab
  const { changes } = carried
  v.derived = new WeakMap()
  const { lex_word: words, lex_stem: stems } = carried.touched()
  // a changed token's document frequency (the rows holding it) moves by the rewritten rows that
  // hold it after the changes and held it before; without those rows it is read again. A word held
  // by a row is in the vocabulary; one held by none is asked of the file again
  for (const [table, vocab, changed] of [["lex_word", "lex_word_vocab", words], ["lex_stem", "lex_stem_vocab", stems]] as const) {
    const df = v.df[vocab]
    for (const t of changed) {
      const n = df.get(t)
      const rows = n === undefined ? undefined : carried.rows()
      const moved = rows === undefined ? undefined : frequencyMoved(t, rows[table])
      if (n === undefined || moved === undefined) df.delete(t)
      else df.set(t, n + moved)
      if (table === "lex_word") {
        if (n !== undefined && moved !== undefined && n + moved > 0) v.has.exact.set(t, true)
        else v.has.exact.delete(t)
      }
    }
  }
  const wordStarts = startsOfNoted(words)
  // a start of a changed word starts a word of the vocabulary when a rewritten row holds one after
  // the changes (the note's lex_word tokens, as its tokenizer splits them); asked of the file again
  // otherwise (a word only a row held before may be gone)
  const heldNow = new Set<string>()
  for (const { after } of carried.rows()?.lex_word.values() ?? []) for (const t of after) heldNow.add(t)
  const startsNow = startsOf(heldNow)
  for (const p of wordStarts) {
    if (startsNow.has(p)) v.has.prefixes.set(p, true)
    else v.has.prefixes.delete(p)
  }
  const byFirst = new Map<string, Array<string>>()
  for (const w of words) {
    const f = firstOf(w)
    const list = byFirst.get(f)
    if (list === undefined) byFirst.set(f, [w])
    else list.push(w)
  }
  for (const key of v.starting.keys()) {
    const { first, min, max } = parseStartingKey(key)
    for (const w of byFirst.get(first) ?? []) {
      if (!inList(w, first, min, max)) continue
      const stale = v.stale.get(key)
      if (stale === undefined) v.stale.set(key, new Set([w]))
      else stale.add(w)
    }
  }
  for (const key of [...v.near.keys()]) {
    const at = key.lastIndexOf("\u0000")
    const q = key.slice(0, at)
    const max = Number(key.slice(at + 1))
    const first = firstOf(q)
    const touched = (byFirst.get(first) ?? []).some((w) =>
      inList(w, first, q.length - max, q.length + max) && !hasDigit(w) && w !== q && editDistance(q, w, max) <= max
    )
    if (touched) v.near.delete(key)
  }
  const stemStarts = startsOfNoted(stems)
  for (const [table, changed, starts] of [["lex_word", words, wordStarts], ["lex_stem", stems, stemStarts]] as const) {
    // the counts whose expression names a changed token: moved by the rewritten rows that match it
    // now and matched it before, else read again; the others stay as they are
    const index = v.countsBy[table]
    for (const key of countsNaming(index, changed, starts)) {
      const n = v.counts.get(key)
      if (n === undefined) continue
      const rows = carried.rows()
      const moved = rows === undefined ? undefined : countMoved(altsOfCount(key), rows[table])
      if (moved === undefined) {
        v.counts.delete(key)
        unindexCount(index, key)
      } else if (moved !== 0) v.counts.set(key, n + moved)
    }
  }
  let docs = v.docs
  for (const c of changes) docs = docs === undefined || c.docs === undefined ? undefined : docs + c.docs
  v.docs = docs
  v.entries = v.df.lex_word_vocab.size + v.df.lex_stem_vocab.size + v.has.exact.size + v.has.prefixes.size + v.counts.size +
    [...v.starting.values()].reduce((n, l) => n + l.length + 1, 0) + [...v.near.values()].reduce((n, l) => n + l.length + 1, 0)
  return v
}
carryPart(PART, carry)

/** Whether the connection's cache holds that a word of lex_word starts with the (folded) prefix, without reading (undefined: not held). */
export const heldPrefix = (sql: SqlClient, prefix: string): boolean | undefined => cacheOf(sql)?.has.prefixes.get(fold(prefix))

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
      const rows = yield* rowsOf(
        sql,
        sql.unsafe<{ term: string; doc: number }>(
          `SELECT term, doc FROM ${table} WHERE term IN (SELECT value FROM json_each(?))`,
          [JSON.stringify(missing)]
        )
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
  return Effect.map(rowsOf(sql, sql<{ n: number }>`SELECT count(*) AS n FROM lex_doc`), (rows) => {
    const n = Number(rows[0]?.n ?? 0)
    if (cache !== undefined) cache.docs = n
    return n
  })
}

let typoListsRead = 0

/** How many typo lists this thread has read whole from the vocabulary (not held, nor carried): a measure for tests. */
export const typoListsReadWhole = (): number => typoListsRead

/** Vocabulary words that start with the first character of `token`, within a length range (in no particular order). */
export const wordsStartingLike = (
  sql: SqlClient,
  token: string,
  minLength: number,
  maxLength: number
): Effect.Effect<ReadonlyArray<{ term: string; doc: number }>, SqlError> => {
  const first = String.fromCodePoint(token.codePointAt(0) ?? 0x61)
  const next = String.fromCodePoint((first.codePointAt(0) ?? 0x61) + 1)
  const cache = cacheOf(sql)
  const key = startingKey(first, minLength, maxLength)
  const known = cache?.starting.get(key)
  const stale = cache?.stale.get(key)
  if (known !== undefined && stale === undefined) return Effect.succeed(known)
  if (known !== undefined && stale !== undefined && cache !== undefined) {
    // carried through a write: the list's other words are as they were; the changed ones as the vocabulary holds them now
    return Effect.map(documentFrequencies(sql, "lex_word_vocab", stale), (now) => {
      const list = known.filter((r) => !stale.has(r.term))
      for (const w of stale) {
        const doc = now.get(w)
        if (doc !== undefined) list.push({ term: w, doc })
      }
      cache.starting.set(key, list)
      cache.stale.delete(key)
      cache.entries += list.length - known.length
      return list
    })
  }
  return Effect.map(
    rowsOf(
      sql,
      sql<{ term: string; doc: number }>`SELECT term, doc FROM lex_word_vocab
      WHERE term >= ${first} AND term < ${next} AND length(term) BETWEEN ${minLength} AND ${maxLength}`
    ),
    (rows) => {
      typoListsRead++
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

let ruleCountsRead = 0

/** How many rule counts this thread has read from the file (not held, nor carried): a measure for tests. */
export const ruleCountsReadFromFile = (): number => ruleCountsRead

/** The rules whose row in `table` matches `match` (a MATCH expression), counted once per stamp. */
export const matchingRules = (sql: SqlClient, table: "lex_word" | "lex_stem", match: string): Effect.Effect<number, SqlError> => {
  const cache = cacheOf(sql)
  const key = `${table}\u0000${match}`
  const known = cache?.counts.get(key)
  if (known !== undefined) return Effect.succeed(known)
  return Effect.map(rowsOf(sql, sql.unsafe<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE ${table} MATCH ?`, [match])), (rows) => {
    ruleCountsRead++
    const n = Number(rows[0]?.n ?? 0)
    if (cache !== undefined) {
      if (!cache.counts.has(key)) indexCount(cache.countsBy[table], key)
      cache.counts.set(key, n)
      cache.entries += 1
    }
    return n
  })
}

/** idf = ln(1 + (N − df + 0.5) / (df + 0.5)); an unknown word weighs most. */
export const idf = (docs: number, df: number): number => Math.log(1 + (Math.max(docs, df) - df + 0.5) / (df + 0.5))

/**
 * A place for what a caller derives from this connection's vocabulary reads (vocabularyHas,
 * documentFrequencies), keyed by an object of the caller's: it holds until a write is carried
 * (then it starts empty) or the vocabulary starts again; undefined without a cache.
 */
export const derivedFromVocabulary = (sql: SqlClient): WeakMap<object, unknown> | undefined => cacheOf(sql)?.derived

/**
 * The connection's fts5vocab table of lex_word's instances (temp, made on first use): asked
 * whether a term exists, it stops at the term's first instance, where the 'row' table
 * (lex_word_vocab) counts every document of the term first (docs/decisions.md «Stage a: whether a
 * word occurs is asked of the index's instances»).
 */
export const WORD_INSTANCES = "lex_word_instances"

/**
 * Makes the instance table unless this connection has it. Looked up each time: a transaction that
 * made it and rolled back took it away again.
 */
const wordInstances = (sql: SqlClient): Effect.Effect<void, SqlError> =>
  Effect.gen(function*() {
    const made = yield* valuesOf(sql, sql.unsafe(`SELECT 1 FROM temp.sqlite_master WHERE type = 'table' AND name = ?`, [WORD_INSTANCES]))
    if (made.length === 0) yield* runOf(sql, sql.unsafe(`CREATE VIRTUAL TABLE temp.${WORD_INSTANCES} USING fts5vocab(main, lex_word, instance)`))
  })

/**
 * Which of the (folded) words the vocabulary holds: `exact` as a term, `prefixes` as the start of
 * a term. One statement on the index's instances (wordInstances); each probe stops at the first
 * instance it finds.
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
    yield* wordInstances(sql)
    const rows = yield* rowsOf(
      sql,
      sql.unsafe<{ kind: string; w: string }>(
        `SELECT 'e' AS kind, j.value AS w FROM json_each(?) j
         WHERE EXISTS (SELECT 1 FROM temp.${WORD_INSTANCES} WHERE term = j.value)
       UNION ALL
       SELECT 'p', j.value FROM json_each(?) j
         WHERE EXISTS (SELECT 1 FROM temp.${WORD_INSTANCES} WHERE term >= j.value AND term < j.value || char(1114111))`,
        [JSON.stringify(e), JSON.stringify(p)]
      )
    )
    for (const r of rows) (r.kind === "e" ? out.exact : out.prefixes).add(r.w)
    const cache = cacheOf(sql)
    if (has === undefined || cache === undefined) return out
    for (const w of e) has.exact.set(w, out.exact.has(w))
    for (const w of p) has.prefixes.set(w, out.prefixes.has(w))
    cache.entries += e.length + p.length
    return fromCache()
  })
