/**
 * A sub-query's rows from its phrases, held in memory per stamp of the file, so a
 * phrase searched again is added up in memory instead of ranked again by FTS5.
 *
 * FTS5's bm25 of `p1 OR p2 OR …` gives a row −(0 + t1 + t2 + …), the terms added in phrase
 * order (fts5_aux.c, fts5Bm25Function), where ti — the phrase's IDF in the table (counted over the
 * rows the phrase matches alone) times its weighted frequency in the row over the row's length —
 * is 0 for a phrase the row does not hold, and is exactly what bm25 gives the row for the phrase
 * alone, negated. So the rows of the OR are the union of the phrases' rows and their scores are,
 * bit for bit, those terms added in phrase order. Each phrase's rows (rowid, term) are read once
 * per stamp of the file — what only writes change — and kept in the connection's stamp cache; a
 * search adds them up in memory instead of running bm25 over every matching row of every
 * sub-query again. The rows a sub-query keeps are then chosen exactly as the one-step query
 * `… JOIN lex_doc … WHERE status IN (…) AND seq <> excluded ORDER BY score, seq LIMIT n` would
 * (lex_doc's rows are kept under the stamp too). The test compares both on random scopes.
 *
 * Bounded: past MAX_HELD phrase rows the phrases start again (a phrase of a common word at 100k
 * rules holds ~90k rows, 12 bytes each).
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import type { LexFtsTable } from "./schema.js"
import { grown } from "./scratch.js"
import { bestIndices } from "./select.js"
import { cachePart } from "./stamp-cache.js"

export type IndexedStatus = "confirmed" | "superseded" | "proposed"

/** A row of a sub-query: the indexed version (lex_doc) and the row's bm25 (lower is better). */
export interface SubQueryRow {
  readonly seq: number
  readonly rule_id: string
  readonly version: number
  readonly status: IndexedStatus
  readonly valid_from: string
  readonly valid_until: string | null
  readonly score: number
}

type DocInfo = Omit<SubQueryRow, "score">

/** One phrase's rows: rowids and their bm25 terms (−bm25 of the phrase alone). */
interface PhraseRows {
  readonly seqs: Int32Array
  readonly terms: Float64Array
}

interface PhrasePart {
  readonly phrases: Map<string, PhraseRows>
  /** phrases asked once under this stamp (answered by FTS5 that time) */
  readonly seen: Set<string>
  /** rows held by `phrases` */
  held: number
  /** lex_doc by seq; null: no lex_doc row */
  readonly docs: Map<number, DocInfo | null>
}

const PART = "phrases"
const MAX_HELD = 4_000_000

const emptyPart = (): PhrasePart => ({ phrases: new Map(), seen: new Set(), held: 0, docs: new Map() })

const MAX_SEEN = 100_000

const keyOf = (table: LexFtsTable, weights: ReadonlyArray<number>, phrase: string): string => `${table}\u0000${weights.join(",")}\u0000${phrase}`

/** Whether the connection keeps phrase rows (it has a stamp cache); else the pool asks FTS5 for each sub-query. */
export const keepsPhraseRows = (sql: SqlClient): boolean => cachePart(sql, PART, emptyPart) !== undefined

/**
 * Whether a sub-query is answered from phrase rows (subQueryRows): on a connection that keeps them,
 * unless every one of its phrases is new under this stamp — neither held nor asked before. Then
 * FTS5 answers and the phrases are marked: reading a phrase's rows costs about 1.5× FTS5's own
 * pass, so a text searched once under a stamp (possible_duplicates right after its proposal was
 * written, a search after each write) costs what it did. A sub-query with a phrase asked before
 * reads the rows of its phrases not held yet, and from then on they are added up in memory: a
 * text asked again, and — what an agent does — a new text beside words searched before (a held
 * answer answers the text asked again, so waiting until each phrase of a sub-query had been asked
 * would leave a new word's sub-query to FTS5's pass over every row of the words beside it).
 */
export const answersFromPhraseRows = (sql: SqlClient, table: LexFtsTable, phrases: ReadonlyArray<string>, weights: ReadonlyArray<number>): boolean => {
  const part = cachePart(sql, PART, emptyPart)
  if (part === undefined) return false
  if (part.seen.size > MAX_SEEN) part.seen.clear()
  let known = false
  for (const phrase of phrases) {
    const key = keyOf(table, weights, phrase)
    if (part.phrases.has(key) || part.seen.has(key)) known = true
    else part.seen.add(key)
  }
  return known
}

/**
 * A phrase's rows as two JSON arrays in one row: the rowids and their bm25, in the order FTS5
 * gives them (both aggregates read the same rows, one after the other). Not a row per match: at
 * 10k rules a common word's phrase has ~6k rows, and a JS array for each (what the driver makes
 * of a row) was what a young generation's collection found alive when it fell in that read (8 ms
 * a collection). SQLite writes a REAL in JSON with the digits that read back to the same double
 * (the test compares the sums with FTS5's own, bit for bit). `LIMIT -1` keeps bm25 in the inner
 * query, where FTS5 computes it.
 */
const phraseSql = (table: LexFtsTable): string =>
  `SELECT json_group_array(rowid), json_group_array(score) FROM
    (SELECT rowid, bm25(${table}, ?, ?, ?, ?) AS score FROM ${table} WHERE ${table} MATCH ? LIMIT -1)`
const PHRASE_SQL: Record<LexFtsTable, string> = { lex_word: phraseSql("lex_word"), lex_stem: phraseSql("lex_stem"), lex_tri: phraseSql("lex_tri") }

/** The typed arrays of a phrase's two JSON arrays (terms negated: −bm25). */
const phraseArrays = (rowids: unknown, scores: unknown): PhraseRows => {
  const ids = JSON.parse(typeof rowids === "string" ? rowids : "[]") as Array<number>
  const bm25 = JSON.parse(typeof scores === "string" ? scores : "[]") as Array<number>
  const terms = new Float64Array(bm25.length)
  for (let i = 0; i < bm25.length; i++) terms[i] = -(bm25[i] as number)
  return { seqs: Int32Array.from(ids), terms }
}

const phraseRows = (
  sql: SqlClient,
  part: PhrasePart,
  table: LexFtsTable,
  weights: ReadonlyArray<number>,
  phrase: string
): Effect.Effect<PhraseRows, SqlError> => {
  const key = keyOf(table, weights, phrase)
  const known = part.phrases.get(key)
  if (known !== undefined) return Effect.succeed(known)
  return Effect.map(sql.unsafe(PHRASE_SQL[table], [...weights, phrase]).values, (rows) => {
    const found = phraseArrays(rows[0]?.[0], rows[0]?.[1])
    if (part.held + found.seqs.length > MAX_HELD) {
      part.phrases.clear()
      part.held = 0
    }
    part.phrases.set(key, found)
    part.held += found.seqs.length
    return found
  })
}

/**
 * Scratch buffers, reused (a search allocates no large arrays): the sums and marks indexed by seq,
 * the union's seqs and scores. One search at a time per thread uses them
 * between two yields; a union that must outlive a yield (a read of lex_doc) is copied first. The
 * selection of the best rows is select.ts's.
 */
let sums = new Float64Array(1024)
let marks = new Uint8Array(1024)
let unionSeqs = new Int32Array(1024)
let unionScores = new Float64Array(1024)

interface Union {
  readonly seqs: Int32Array
  readonly scores: Float64Array
  readonly size: number
}

/** The union of the phrases' rows with their scores −(0 + t1 + t2 + …), in no particular order (in the scratch buffers). */
const addUp = (lists: ReadonlyArray<PhraseRows>): Union => {
  let maxSeq = 0
  let total = 0
  for (const l of lists) {
    total += l.seqs.length
    for (let j = 0; j < l.seqs.length; j++) if ((l.seqs[j] as number) > maxSeq) maxSeq = l.seqs[j] as number
  }
  sums = grown(sums, maxSeq + 1, (n) => new Float64Array(n))
  marks = grown(marks, maxSeq + 1, (n) => new Uint8Array(n))
  unionSeqs = grown(unionSeqs, total, (n) => new Int32Array(n))
  unionScores = grown(unionScores, total, (n) => new Float64Array(n))
  let size = 0
  for (const l of lists) {
    for (let j = 0; j < l.seqs.length; j++) {
      const s = l.seqs[j] as number
      if (marks[s] === 0) {
        marks[s] = 1
        sums[s] = 0
        unionSeqs[size++] = s
      }
      sums[s] = (sums[s] as number) + (l.terms[j] as number)
    }
  }
  for (let i = 0; i < size; i++) {
    const s = unionSeqs[i] as number
    unionScores[i] = -(sums[s] as number)
    marks[s] = 0
  }
  return { seqs: unionSeqs, scores: unionScores, size }
}

/** The union in arrays of its own (it outlives a yield). */
const detached = (u: Union): Union =>
  u.seqs === unionSeqs ? { seqs: u.seqs.slice(0, u.size), scores: u.scores.slice(0, u.size), size: u.size } : u

/** Indices of the `n` best rows by (score, seq), in that order (all rows when there are fewer): bm25, the smallest first. */
const best = (u: Union, n: number): Array<number> => {
  const { seqs } = u
  return bestIndices(u.scores, (i) => seqs[i] as number, u.size, n, "ascending")
}

/** The rows of the ordered union entries that pass the filter, at most filter.limit (a function of its own: V8 optimizes it once). */
const keep = (u: Union, order: ReadonlyArray<number>, docs: PhrasePart["docs"], filter: RowFilter): Array<SubQueryRow> => {
  const out: Array<SubQueryRow> = []
  for (const i of order) {
    const seq = u.seqs[i] as number
    const d = docs.get(seq)
    if (d === null || d === undefined || seq === filter.excludeSeq || !filter.statuses.includes(d.status)) continue
    out.push({
      seq, rule_id: d.rule_id, version: d.version, status: d.status, valid_from: d.valid_from, valid_until: d.valid_until,
      score: u.scores[i] as number
    })
    if (out.length >= filter.limit) break
  }
  return out
}

/** lex_doc of the seqs not known yet, in one read. */
const readDocs = (sql: SqlClient, part: PhrasePart, seqs: ReadonlyArray<number>): Effect.Effect<void, SqlError> => {
  const missing = seqs.filter((s) => !part.docs.has(s))
  if (missing.length === 0) return Effect.void
  return Effect.map(
    sql<DocInfo>`SELECT seq, rule_id, version, status, valid_from, valid_until FROM lex_doc
      WHERE seq IN (SELECT value FROM json_each(${JSON.stringify(missing)}))`,
    (rows) => {
      for (const r of rows) {
        const seq = Number(r.seq)
        part.docs.set(seq, {
          seq, rule_id: r.rule_id, version: Number(r.version), status: r.status, valid_from: r.valid_from, valid_until: r.valid_until
        })
      }
      for (const s of missing) if (!part.docs.has(s)) part.docs.set(s, null)
    }
  )
}

export interface RowFilter {
  readonly statuses: ReadonlyArray<IndexedStatus>
  readonly excludeSeq: number | undefined
  /** the rows kept */
  readonly limit: number
  /** rows ranked before lex_doc is read (then all of them when too few pass) */
  readonly ranked: number
}

/**
 * The rows of `phrases` OR-ed on `table` (bm25 with `weights`): those with a lex_doc row of a
 * searched status, not the excluded seq, best first (score, then seq), at most `limit`. Only on
 * a connection that keeps phrase rows (keepsPhraseRows); reads the rows of phrases not held yet.
 */
export const subQueryRows = (
  sql: SqlClient,
  table: LexFtsTable,
  phrases: ReadonlyArray<string>,
  weights: ReadonlyArray<number>,
  filter: RowFilter
): Effect.Effect<Array<SubQueryRow>, SqlError> =>
  Effect.gen(function*() {
    const part = cachePart(sql, PART, emptyPart)
    if (part === undefined) return yield* Effect.die(new Error("subQueryRows on a connection without a stamp cache"))
    const lists: Array<PhraseRows> = []
    for (const phrase of phrases) lists.push(yield* phraseRows(sql, part, table, weights, phrase))
    let u = addUp(lists)
    /** lex_doc of the ordered rows not known yet (read with the union in arrays of its own) */
    const missingOf = (order: ReadonlyArray<number>) => {
      const out: Array<number> = []
      for (const i of order) if (!part.docs.has(u.seqs[i] as number)) out.push(u.seqs[i] as number)
      return out
    }
    const first = best(u, filter.ranked)
    const missing = missingOf(first)
    if (missing.length > 0) {
      u = detached(u)
      yield* readDocs(sql, part, missing)
    }
    const kept = keep(u, first, part.docs, filter)
    if (kept.length >= filter.limit || first.length === u.size) return kept
    const all = best(u, u.size)
    const rest = missingOf(all)
    if (rest.length > 0) {
      u = detached(u)
      yield* readDocs(sql, part, rest)
    }
    return keep(u, all, part.docs, filter)
  })
