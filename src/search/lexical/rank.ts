/**
 * Sub-queries, fusion and the pool of stage a (architecture.md §7 steps 3–4). Every token
 * reaches MATCH as a quoted FTS5 literal (inner " doubled): user text never steers the query.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { rowsOf } from "../../db/held-connection.js"
import { storesStems } from "./document.js"
import type { LexicalOptions, SubQueryName } from "./options.js"
import { POOL_SIZE } from "./options.js"
import { type Alt, orPhrases } from "./match.js"
import { grown } from "./scratch.js"
import { bestIndices } from "./select.js"
import { answersFromPhraseRows, type DocInfo, type IndexedStatus, subQueryRows, type SubQueryRow, type SubQueryRows } from "./phrases.js"
import type { Analysis } from "./query.js"
import type { LexFtsTable } from "./schema.js"
import { isStopword } from "./stopwords.js"
import { fold, isAlpha } from "./text.js"
import { documentFrequencies, idf, type VocabTable } from "./vocab.js"

export type { IndexedStatus } from "./phrases.js"

export interface PoolOptions {
  readonly includeProposals: boolean
  /** YYYY-MM-DD: as_of, else today in config.zone */
  readonly targetDay: string
  /** a rule left out (possible_duplicates leaves out the new proposal) */
  readonly excludeSeq?: number | undefined
}

export interface PoolHit {
  readonly seq: number
  readonly rule_id: string
  readonly version: number
  readonly status: IndexedStatus
  /** the fusion value, rounded to 4 decimals (higher is better) */
  readonly rank_a: number
  /** of the indexed version (lex_doc): search decides the head without reading the version */
  readonly valid_from: string
  readonly valid_until: string | null
}

export interface SubQuery {
  readonly name: SubQueryName
  readonly table: LexFtsTable
  /** the phrases OR-ed, in order (`match` is their OR) */
  readonly phrases: ReadonlyArray<string>
  readonly match: string
  /** the phrases with every alternative, when `phrases` leaves common ones out (see commonAlts) */
  readonly fullPhrases?: ReadonlyArray<string>
  /** the match with every alternative, when `match` leaves common ones out */
  readonly full?: string
  /** the share of the sub-query's weight its rows get (a syn tier of weaker lexicon expansions: below 1) */
  readonly factor?: number
}

const subQuery = (name: SubQueryName, table: LexFtsTable, phrases: ReadonlyArray<string>, factor?: number): SubQuery =>
  ({ name, table, phrases, match: phrases.join(" OR "), ...(factor === undefined || factor === 1 ? {} : { factor }) })

export { altExpr, orExpr } from "./match.js"

/** Whether an alternative can be left out of a sub-query on `table` (see commonAlts). */
export type CommonAlt = (table: LexFtsTable, alt: Alt) => boolean

interface SubQueryAlts {
  readonly name: SubQueryName
  readonly table: LexFtsTable
  readonly alts: ReadonlyArray<Alt>
  readonly factor?: number
}

/**
 * The syn sub-query's tiers: expansions of weight ≥ STRONG_EXPANSION (the curated groups, the
 * configured ones, a lexicon word of one dominant sense) search at the syn weight — at the word
 * weight when the scope holds none of the words they expand (no rule holds the word itself, so
 * none is outranked; they stand in for it); the weaker lexicon expansions in a further
 * sub-query at WEAK_FACTOR of the syn weight, so a rule found only through them ranks below one
 * found through the query's own words or a sure synonym.
 */
export const STRONG_EXPANSION = 0.7
export const WEAK_FACTOR = 0.5
/**
 * A one-word German expansion also searches lex_stem as the head of a stored compound (its tail
 * token: Prüfung finds Erstteilprüfung), at this share of the syn weight: a compound is narrower
 * than its head, so it ranks below the whole-word tiers (docs/decisions.md «Stage a: a German lexicon expansion finds the compounds it heads»).
 */
export const HEAD_FACTOR = 0.25

/**
 * Whether the scope holds none of the words a synonym entry was matched on, in any of their
 * forms (every token of every variant of its terms — the word, its spellings and inflection
 * strips — read by the analysis with document frequency 0 in lex_word_vocab): then no rule holds
 * the word itself, and its expansions stand for it. A form the analysis did not read counts as held.
 */
const wordAbsent = (a: Analysis, s: Analysis["synonyms"][number]): boolean =>
  s.terms.length > 0 && s.terms.every((i) => {
    const t = a.terms[i]
    if (t === undefined) return false
    return [t.text, ...t.variants].every((v) => v.split(" ").every((tok) => a.frequencies.word.get(fold(tok)) === 0))
  })

const synTiers = (a: Analysis, o: LexicalOptions): Array<SubQueryAlts> => {
  const strong: Array<Alt> = []
  const standIn: Array<Alt> = []
  const weak: Array<Alt> = []
  const heads: Array<Alt> = []
  for (const s of a.synonyms) {
    const absent = wordAbsent(a, s)
    for (const e of s.expansions) {
      if ((e.weight ?? 1) < STRONG_EXPANSION) weak.push(...e.alts)
      else (absent ? standIn : strong).push(...e.alts)
      heads.push(...(e.heads ?? []))
    }
  }
  // the strong expansions of a word the scope lacks search at the word's own weight
  const standInFactor = o.subWeights.syn > 0 ? Math.max(1, o.subWeights.word / o.subWeights.syn) : 1
  return [
    { name: "syn", table: "lex_word", alts: strong },
    ...(standIn.length > 0 ? [{ name: "syn" as const, table: "lex_word" as const, alts: standIn, factor: standInFactor }] : []),
    ...(weak.length > 0 ? [{ name: "syn" as const, table: "lex_word" as const, alts: weak, factor: WEAK_FACTOR }] : []),
    // an expansion as the head of a compound a rule holds is a narrower match: below the weak tier
    ...(heads.length > 0 ? [{ name: "syn" as const, table: "lex_stem" as const, alts: heads, factor: HEAD_FACTOR }] : [])
  ]
}

/** The alternatives of each sub-query of an analysis (prf comes later, from the first hits). */
const subQueryAlts = (a: Analysis, o: LexicalOptions): Array<SubQueryAlts> => {
  const out: Array<SubQueryAlts> = [{ name: "word", table: "lex_word", alts: a.terms.flatMap((t) => t.word) }]
  if (storesStems(o)) out.push({ name: "stem", table: "lex_stem", alts: a.terms.flatMap((t) => [...t.stem, ...t.parts.flatMap((p) => p.alts)]) })
  if (o.features.synonyms) out.push(...synTiers(a, o))
  if (o.features.fuzzy) out.push({ name: "fuzzy", table: "lex_word", alts: a.terms.flatMap((t) => t.corrections.flatMap((c) => c.alts)) })
  if (o.features.trigram) {
    out.push({ name: "tri", table: "lex_tri", alts: a.terms.flatMap((t) => t.tri.map((x) => ({ tokens: [x], prefix: false }))) })
  }
  return out
}

/**
 * The sub-queries of an analysis (prf comes later, from the first hits); a sub-query without
 * alternatives is left out. A sub-query that keeps another alternative searches without the ones
 * `common` names first (`full` holds the match with all of them).
 */
export const subQueries = (a: Analysis, o: LexicalOptions, common: CommonAlt = () => false): Array<SubQuery> =>
  subQueryAlts(a, o).flatMap(({ name, table, alts, factor }): Array<SubQuery> => {
    const full = orPhrases(alts)
    if (full.length === 0) return []
    const reduced = orPhrases(alts.filter((x) => !common(table, x)))
    if (reduced.length === 0 || reduced.length === full.length) return [subQuery(name, table, full, factor)]
    return [{ ...subQuery(name, table, reduced, factor), fullPhrases: full, full: full.join(" OR ") }]
  })

/**
 * A single-word alternative (exact or prefix) whose word is in at least half of the rows of its
 * table. FTS5's bm25 gives a phrase in n ≥ N/2 of N rows the IDF floor 1e-6 (fts5_aux.c: idf =
 * log((N − n + 0.5) / (n + 0.5)), at most 0 → 1e-6; a prefix phrase holds every row of its
 * exact word), so the alternative moves a row's score by less than 1e-5 — yet bm25 reads its
 * position list in every row it matches, for the commonest words nearly the whole table.
 * Without it, every row that matches another alternative keeps its place and its score (to
 * 1e-5); the rows that match only common words rank below all of them. So when the sub-query
 * without the common alternatives still fills its SUB_LIMIT rows, those are the rows (and the
 * order) of the whole sub-query; when it does not, the whole sub-query runs (runSubQuery).
 * Phrases of several words are never left out (their count is not in the vocabulary).
 */
const commonAlts = (sql: SqlClient, a: Analysis, o: LexicalOptions): Effect.Effect<CommonAlt, SqlError> =>
  Effect.gen(function*() {
    if (a.docs === 0) return () => false
    const subs = subQueryAlts(a, o)
    const singles = (table: LexFtsTable) =>
      subs.flatMap((q) => (q.table === table ? q.alts : [])).flatMap((x) => (x.tokens.length === 1 ? x.tokens : []))
    // the analysis read most of them already
    const frequencies = (table: VocabTable, known: ReadonlyMap<string, number>, tokens: ReadonlyArray<string>) =>
      Effect.map(
        documentFrequencies(sql, table, tokens.filter((t) => !known.has(fold(t)))),
        (found) => (t: string) => known.get(t) ?? found.get(t) ?? 0
      )
    const word = yield* frequencies("lex_word_vocab", a.frequencies.word, singles("lex_word"))
    const stem = storesStems(o) ? yield* frequencies("lex_stem_vocab", a.frequencies.stem, singles("lex_stem")) : () => 0
    const half = a.docs / 2
    return (table, alt) => {
      const token = alt.tokens.length === 1 ? alt.tokens[0] : undefined
      const df = table === "lex_word" ? word : table === "lex_stem" ? stem : null
      return token !== undefined && df !== null && df(fold(token)) >= half
    }
  })

/** The sub-queries the pool runs: common alternatives marked by the scope's vocabulary. */
export const planSubQueries = (sql: SqlClient, a: Analysis, o: LexicalOptions): Effect.Effect<Array<SubQuery>, SqlError> =>
  Effect.map(commonAlts(sql, a, o), (common) => subQueries(a, o, common))

type Row = SubQueryRow

/** Rows read by SQL (each with its score) as a sub-query's two arrays. */
const asSubQueryRows = (rows: ReadonlyArray<Row>): SubQueryRows => ({ docs: rows, scores: rows.map((r) => r.score) })

const SUB_LIMIT = POOL_SIZE * 3
/**
 * Rows a sub-query ranks in the FTS table alone before lex_doc is read: SUB_LIMIT and room for
 * rows whose status the search leaves out (proposals, the excluded rule).
 */
const RANKED_LIMIT = SUB_LIMIT + POOL_SIZE

const statusesOf = (p: PoolOptions): ReadonlyArray<IndexedStatus> =>
  p.includeProposals ? ["confirmed", "superseded", "proposed"] : ["confirmed", "superseded"]

/**
 * A sub-query in two steps: the FTS table ranks its matches by bm25 alone (ties by seq) and
 * keeps RANKED_LIMIT, then lex_doc is read for those rows only — not for every match, which for
 * a common word is most of the table. The rows of the search's statuses, in that order, are the
 * first rows of the one-step query (JOINED); when fewer than SUB_LIMIT of them are left and the
 * FTS step was cut, the one-step query answers instead.
 */
const RANKED: Record<LexFtsTable, string> = { lex_word: "", lex_stem: "", lex_tri: "" }
const JOINED: Record<LexFtsTable, string> = { lex_word: "", lex_stem: "", lex_tri: "" }
for (const table of Object.keys(RANKED) as Array<LexFtsTable>) {
  RANKED[table] = `SELECT f.rowid AS seq, d.rule_id, d.version, d.status, d.valid_from, d.valid_until, f.score
    FROM (SELECT rowid, bm25(${table}, ?, ?, ?, ?) AS score FROM ${table} WHERE ${table} MATCH ?
      ORDER BY score, rowid LIMIT ${RANKED_LIMIT}) f
    LEFT JOIN lex_doc d ON d.seq = f.rowid
    ORDER BY f.score, f.rowid`
  JOINED[table] = `SELECT d.seq, d.rule_id, d.version, d.status, d.valid_from, d.valid_until,
      bm25(${table}, ?, ?, ?, ?) AS score
    FROM ${table} JOIN lex_doc d ON d.seq = ${table}.rowid
    WHERE ${table} MATCH ? AND d.status IN (SELECT value FROM json_each(?)) AND d.seq <> ?
    ORDER BY score, d.seq LIMIT ${SUB_LIMIT}`
}

/**
 * A sub-query's rows: from the phrase rows held under the file's stamp (phrases.ts, the same rows
 * and scores bit for bit) once its phrases were asked before, else from FTS5 in two steps.
 */
const runMatch = (sql: SqlClient, table: LexFtsTable, phrases: ReadonlyArray<string>, o: LexicalOptions, p: PoolOptions) =>
  Effect.gen(function*() {
    if (answersFromPhraseRows(sql, table, phrases, o.fieldWeights)) {
      return yield* subQueryRows(sql, table, phrases, o.fieldWeights, {
        statuses: statusesOf(p), excludeSeq: p.excludeSeq, limit: SUB_LIMIT, ranked: RANKED_LIMIT
      })
    }
    const match = phrases.join(" OR ")
    const ranked = yield* rowsOf(sql, sql.unsafe<Row | Partial<Row>>(RANKED[table], [...o.fieldWeights, match]))
    const statuses = statusesOf(p)
    const kept = ranked.filter((r): r is Row => r.status !== undefined && r.status !== null && statuses.includes(r.status) && r.seq !== p.excludeSeq)
    if (kept.length >= SUB_LIMIT || ranked.length < RANKED_LIMIT) return asSubQueryRows(kept.slice(0, SUB_LIMIT))
    return asSubQueryRows(yield* rowsOf(sql, sql.unsafe<Row>(JOINED[table], [...o.fieldWeights, match, JSON.stringify(statuses), p.excludeSeq ?? -1])))
  })

/** A sub-query's rows: without its common alternatives when that fills SUB_LIMIT, else all of it. */
const runSub = (sql: SqlClient, q: SubQuery, o: LexicalOptions, p: PoolOptions) =>
  Effect.flatMap(runMatch(sql, q.table, q.phrases, o, p), (rows) =>
    q.fullPhrases === undefined || rows.docs.length >= SUB_LIMIT ? Effect.succeed(rows) : runMatch(sql, q.table, q.fullPhrases, o, p))

const DAY_MS = 86_400_000
/** Days since 1970 of a day YYYY-MM-DD; a pool ranks up to 1,800 rows, most of a few days. */
const dayNumbers = new Map<string, number>()
const dayNumber = (day: string): number => {
  const known = dayNumbers.get(day)
  if (known !== undefined) return known
  const n = Date.parse(`${day}T00:00:00Z`) / DAY_MS
  if (dayNumbers.size >= 10_000) dayNumbers.clear()
  dayNumbers.set(day, n)
  return n
}

/**
 * The version's standing on the target day: no longer in force (superseded or expired) ×0.5,
 * not yet valid ×0.8, proposed ×0.95; in force with valid_from in the last 365 days up to +5 %.
 */
export const validityFactor = (r: Pick<DocInfo, "status" | "valid_from" | "valid_until">, day: string): number => {
  const proposed = r.status === "proposed" ? 0.95 : 1
  if (r.valid_until !== null && r.valid_until <= day) return 0.5 * proposed
  if (r.valid_from > day) return 0.8 * proposed
  const age = dayNumber(day) - dayNumber(r.valid_from)
  const bonus = age >= 0 && age < 365 ? 0.05 * (1 - age / 365) : 0
  return proposed * (1 + bonus)
}

/**
 * The fused rows: each row once (the first sub-query's row of its seq) and its fusion value, at
 * the same index. Arrays, not a map of objects: a new word's pool fuses ~2,000 rows, and what a
 * pool holds while it runs is what a young generation's collection that falls in it copies.
 */
export interface Fusion {
  readonly rows: ReadonlyArray<DocInfo>
  readonly values: Float64Array
}

/** Index + 1 of a seq's row in the fusion being made, 0 for none (scratch, left all 0). */
let slotOf = new Int32Array(1024)

/** score: Σ sub_weight × (−bm25 / best −bm25); one sub-query alone keeps −bm25. rrf: Σ sub_weight / (k + rank). */
export const fuse = (results: ReadonlyArray<readonly [SubQueryName, SubQueryRows, (number | undefined)?]>, o: LexicalOptions): Fusion => {
  let maxSeq = 0
  let total = 0
  for (const [, { docs }] of results) {
    total += docs.length
    for (const r of docs) if (r.seq > maxSeq) maxSeq = r.seq
  }
  slotOf = grown(slotOf, maxSeq + 1, (n) => new Int32Array(n))
  const fusedRows: Array<DocInfo> = []
  const values = new Float64Array(total)
  const single = results.length === 1
  for (const [name, { docs, scores }, factor] of results) {
    const w = o.subWeights[name] * (factor ?? 1)
    let best = 0
    for (let i = 0; i < docs.length; i++) if (-(scores[i] as number) > best) best = -(scores[i] as number)
    for (let i = 0; i < docs.length; i++) {
      const r = docs[i] as DocInfo
      const score = scores[i] as number
      let v: number
      if (o.fusion === "rrf") v = w / (o.rrfK + i + 1)
      else if (single) v = -score
      else v = w * (best > 0 ? -score / best : 1)
      const at = slotOf[r.seq] as number
      if (at === 0) {
        fusedRows.push(r)
        values[fusedRows.length - 1] = v
        slotOf[r.seq] = fusedRows.length
      } else {
        values[at - 1] = (values[at - 1] as number) + v
      }
    }
  }
  for (const r of fusedRows) slotOf[r.seq] = 0
  return { rows: fusedRows, values: values.subarray(0, fusedRows.length) }
}

const PRF_DOCS = 5
const PRF_TERMS = 5

/**
 * Pseudo-relevance feedback: the most characteristic words (tf × IDF, in at least two rules of
 * the scope) of the first hits that the query does not hold yet, OR-ed on lex_word.
 */
const prfQuery = (sql: SqlClient, a: Analysis, o: LexicalOptions, top: ReadonlyArray<number>) =>
  Effect.gen(function*() {
    if (top.length === 0) return null
    const rows = yield* sql<{ keywords: string; statement: string; relations: string; quote: string }>`
      SELECT keywords, statement, relations, quote FROM lex_word WHERE rowid IN (SELECT value FROM json_each(${JSON.stringify(top)}))`
    const have = new Set(a.terms.flatMap((t) => [...t.tokens, ...t.variants].map(fold)))
    const tf = new Map<string, number>()
    for (const r of rows) {
      for (const tok of [r.keywords, r.statement, r.relations, r.quote].join(" ").split(" ")) {
        const f = fold(tok)
        if (f.length < 4 || !isAlpha(f) || have.has(f) || isStopword(tok, o.languages)) continue
        tf.set(f, (tf.get(f) ?? 0) + 1)
      }
    }
    const df = yield* documentFrequencies(sql, "lex_word_vocab", tf.keys())
    const picked = [...tf.entries()]
      .filter(([t]) => (df.get(t) ?? 0) >= 2)
      .map(([t, n]) => ({ t, s: n * idf(a.docs, df.get(t) ?? 0) }))
      .sort((x, y) => y.s - x.s || (x.t < y.t ? -1 : 1))
      .slice(0, PRF_TERMS)
    const phrases = orPhrases(picked.map((p) => ({ tokens: [p.t], prefix: false })))
    return phrases.length === 0 ? null : subQuery("prf", "lex_word", phrases)
  })

/** The best `n` of the fused rows by value (validity applied), ties by seq; the others are not sorted. */
const rank = (fused: Fusion, o: LexicalOptions, day: string, n: number): Array<{ readonly row: DocInfo; readonly value: number }> => {
  const { rows } = fused
  const values = new Float64Array(rows.length)
  rows.forEach((row, i) => {
    const v = fused.values[i] as number
    values[i] = o.features.validity ? v * validityFactor(row, day) : v
  })
  return bestIndices(values, (i) => (rows[i] as DocInfo).seq, rows.length, n, "descending").map((i) => ({ row: rows[i] as DocInfo, value: values[i] as number }))
}

/** The pool: top 200 by fused value (ties by seq), rank_a rounded to 4 decimals. */
export const pool = (sql: SqlClient, a: Analysis, o: LexicalOptions, p: PoolOptions): Effect.Effect<Array<PoolHit>, SqlError> =>
  Effect.gen(function*() {
    if (a.terms.length === 0) return []
    const queries = yield* planSubQueries(sql, a, o)
    const results: Array<readonly [SubQueryName, SubQueryRows, (number | undefined)?]> = []
    for (const q of queries) results.push([q.name, yield* runSub(sql, q, o, p), q.factor])
    let ranked = rank(fuse(results, o), o, p.targetDay, POOL_SIZE)
    if (o.features.prf) {
      const q = yield* prfQuery(sql, a, o, ranked.slice(0, PRF_DOCS).map((r) => r.row.seq))
      if (q !== null) {
        results.push([q.name, yield* runSub(sql, q, o, p)])
        ranked = rank(fuse(results, o), o, p.targetDay, POOL_SIZE)
      }
    }
    return ranked.slice(0, POOL_SIZE).map((r) => ({
      seq: r.row.seq, rule_id: r.row.rule_id, version: r.row.version, status: r.row.status,
      rank_a: Math.round(r.value * 10_000) / 10_000, valid_from: r.row.valid_from, valid_until: r.row.valid_until
    }))
  })
