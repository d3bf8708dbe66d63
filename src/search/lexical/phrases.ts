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
 * (lex_doc's rows are kept under the stamp too). The test compares both on random scopes. A
 * sub-query's business words (its large phrases held before the question) keep their best rows in
 * order, and a new word's rows are merged in (HeldUnion below): the same sums, bit for bit.
 *
 * Bounded: past MAX_HELD phrase rows the phrases start again (a phrase of a common word at 100k
 * rules holds ~90k rows, 12 bytes each; 28 once carried).
 *
 * Carried through a write of this process (stamp-cache.ts carryPart; the note names the seqs whose
 * rows it rewrote): a term moves with the table's row count and average length and the phrase's
 * number of rows, so a phrase held from an earlier stamp is brought up to date when next used
 * (bm25.ts): each row's weighted frequency and length are found from its term once (checked bit
 * for bit), the rewritten seqs' rows give their frequencies — counted in the rows' tokens
 * (row-tokens.ts) where FTS5's tokenizer makes them as this module does, else copied into a temp
 * table with the same tokenizer where FTS5 gives them (the probe) — and every term is computed
 * again with FTS5's formula for the new counts. A phrase that cannot be (weights that are
 * not whole numbers, a frequency that does not give the term back, too many rewritten rows, a
 * chain of writes longer than the log) is read again from FTS5. A phrase whose tokens are not all
 * among the rewritten rows' tokens before and after the write (the note's words and stems) holds
 * none of those rows: its rows stay, and no probe is needed. A carried phrase's terms are computed
 * when a sum needs them (termsOf, or one by one). A sub-query's kept business-word rows are
 * carried too while their order can still be told exactly (carriedUnion).
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { rowsOf, runOf, valuesOf } from "../../db/held-connection.js"
import { avgdlOf, type Basis, frequencyOf, idfsOf, keepIdfs, readLengths, termOf } from "./bm25.js"
import { type Alt, parsedAltsOf } from "./match.js"
import type { LexFtsTable } from "./schema.js"
import { grown } from "./scratch.js"
import { bestIndices, lowerBound } from "./select.js"
import { readRowTokens, type RowColumns, safeAltOf, weightedFrequency } from "./row-tokens.js"
import { cachePart, type CarriedChanges, carryPart, startsOfNoted } from "./stamp-cache.js"

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

/** A version as lex_doc holds it. */
export type DocInfo = Omit<SubQueryRow, "score">

/**
 * A sub-query's rows, best first: each row's version and, at the same index, its bm25 (lower is
 * better). Two arrays, not a row object each: a new word's pool ranks up to 800 rows in each of
 * 6–8 sub-queries, and the versions are the objects the connection already holds (`docs`).
 */
export interface SubQueryRows {
  readonly docs: ReadonlyArray<DocInfo>
  readonly scores: ArrayLike<number>
}

/**
 * One phrase's rows: rowids and their bm25 terms (−bm25 of the phrase alone). A phrase carried
 * through a write whose rows the write did not touch gets its terms when first needed whole
 * (termsOf); a term alone is computed on its own (termAt), with the same float operations.
 */
interface PhraseRows {
  readonly seqs: Int32Array
  /** undefined until needed whole: then termOf(idf, avgdl, freqs[i], lens[i]) for each row */
  terms: Float64Array | undefined
  /** the idf and average length the terms are computed with (NaN: terms read from FTS5) */
  readonly idf: number
  readonly avgdl: number
  /** the part's epoch the terms belong to */
  readonly epoch: number
  /** the table's counts the terms were computed for (undefined: not read yet) */
  readonly basis: Basis | undefined
  /** each row's weighted frequency and tokens, once found (a carried phrase) */
  readonly freqs: Float64Array | undefined
  readonly lens: Float64Array | undefined
}

interface PhrasePart {
  readonly phrases: Map<string, PhraseRows>
  /** phrases asked once under this stamp (answered by FTS5 that time) */
  readonly seen: Set<string>
  /** rows held by `phrases` */
  held: number
  /** lex_doc by seq (an array: a Map's lookups were a tenth of a sub-query's time); null: no lex_doc row */
  readonly docs: Array<DocInfo | null | undefined>
  /** one more with every write the part is carried through */
  epoch: number
  /** the seqs each carried write rewrote, by the epoch it began; the oldest go past MAX_LOG */
  readonly log: Array<LogEntry>
  /** the tables' row lengths and their totals */
  readonly lengths: Map<LexFtsTable, Lengths>
  /** the rewritten rows copied for the epoch they were copied in */
  readonly probes: Map<LexFtsTable, { readonly epoch: number; readonly probe: Probe }>
  /** rewritten rows' tokens by table and seq, until the seq is rewritten again (undefined: FTS5 might tokenize the row otherwise) */
  readonly rowTokens: Map<LexFtsTable, Map<number, RowColumns | undefined>>
  /** sub-queries' bases, their best rows kept in order (see HeldUnion), by table, weights and base phrases */
  readonly unions: Map<string, HeldUnion>
  /** the epoch each base was last asked in */
  readonly unionsAsked: Map<string, number>
}

/**
 * A carried write: the seqs it rewrote, and the folded tokens of their rows in lex_word and
 * lex_stem before and after it (the note's words and stems, as each table's tokenizer makes them).
 */
interface LogEntry {
  readonly epoch: number
  readonly seqs: ReadonlyArray<number>
  readonly tokens: ReadonlyMap<LexFtsTable, ReadonlySet<string>>
}

const PART = "phrases"
const MAX_HELD = 4_000_000
const MAX_LOG = 64
/** rewritten rows past which a carried phrase is read again instead */
const MAX_REWRITTEN = 64

const emptyPart = (): PhrasePart => ({
  phrases: new Map(), seen: new Set(), held: 0, docs: [], epoch: 0, log: [], lengths: new Map(), probes: new Map(),
  rowTokens: new Map(), unions: new Map(), unionsAsked: new Map()
})

/**
 * The part kept through noted changes that name their seqs: the phrases stay (brought up to date
 * when next used), the lex_doc rows and lengths of the rewritten seqs are forgotten.
 */
const carry = (held: unknown, carried: CarriedChanges): PhrasePart | undefined => {
  const part = held as PhrasePart
  const seqs = new Set<number>()
  for (const c of carried.changes) {
    if (c.seqs === undefined) return undefined
    for (const s of c.seqs) seqs.add(s)
  }
  const { lex_word: words, lex_stem: stems } = carried.touched()
  part.epoch++
  // a base not asked since the log's oldest write is let go (it can no longer be carried)
  for (const [key, u] of part.unions) if (u.epoch < part.epoch - MAX_LOG) part.unions.delete(key)
  part.log.push({ epoch: part.epoch, seqs: [...seqs], tokens: new Map([["lex_word", words], ["lex_stem", stems]]) })
  if (part.log.length > MAX_LOG) part.log.shift()
  for (const s of seqs) {
    part.docs[s] = undefined
    for (const lengths of part.lengths.values()) forgetLength(lengths, s)
    for (const rows of part.rowTokens.values()) rows.delete(s)
  }
  return part
}
carryPart(PART, carry)

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

/** The rowids and terms (negated: −bm25) of a phrase's two JSON arrays, seqs ascending (FTS5 gives them so; sorted if not). */
const phraseArrays = (rowids: unknown, scores: unknown): { seqs: Int32Array; terms: Float64Array } => {
  const ids = JSON.parse(typeof rowids === "string" ? rowids : "[]") as Array<number>
  const bm25 = JSON.parse(typeof scores === "string" ? scores : "[]") as Array<number>
  let ascending = true
  for (let i = 1; i < ids.length; i++) if ((ids[i] as number) <= (ids[i - 1] as number)) ascending = false
  const order = ascending ? undefined : ids.map((_, i) => i).sort((a, b) => (ids[a] as number) - (ids[b] as number))
  const seqs = new Int32Array(ids.length)
  const terms = new Float64Array(bm25.length)
  for (let k = 0; k < bm25.length; k++) {
    const i = order === undefined ? k : (order[k] as number)
    seqs[k] = ids[i] as number
    terms[k] = -(bm25[i] as number)
  }
  return { seqs, terms }
}

/**
 * The rewritten rows, copied into a table of their own in the connection's temp schema with the
 * same columns and tokenizer (its CREATE statement is the lexical table's own): a phrase's
 * frequency in them is found there, where FTS5 reads a few rows, not the phrase's whole doclist
 * in the scope's table (what `MATCH … AND rowid = …` costs: bm25 counts every row of the phrase).
 * The copy is contentless (content=''): bm25 reads only the index and the row sizes, which it
 * keeps as the lexical table does, and it is emptied by FTS5's 'delete-all' instead of a DELETE
 * that reads and tokenizes every row again to take it out of the index.
 */
const probeName = (table: LexFtsTable): string => `${table}_probe`
const PROBE_SQL = (table: LexFtsTable): string =>
  `SELECT json_group_array(rowid), json_group_array(score) FROM
    (SELECT rowid, bm25(${probeName(table)}, ?, ?, ?, ?) AS score FROM temp.${probeName(table)} WHERE ${probeName(table)} MATCH ? LIMIT -1)`
const PROBE_ROWS: Record<LexFtsTable, string> = { lex_word: PROBE_SQL("lex_word"), lex_stem: PROBE_SQL("lex_stem"), lex_tri: PROBE_SQL("lex_tri") }
const probeDdl = new Map<LexFtsTable, string>()

/** The probe's CREATE statement from the lexical table's: named `name`, created once per connection, contentless. */
export const probeDdlOf = (tableDdl: string, name: string): string => {
  const named = tableDdl.replace(/^CREATE VIRTUAL TABLE\s+("?)\w+\1/i, `CREATE VIRTUAL TABLE IF NOT EXISTS ${name}`)
  return named.replace(/\)\s*$/, ", content='')")
}

interface Probe {
  basis: Basis | undefined
  readonly lengths: Map<number, number>
  /** the seqs copied (a seq without a row included) */
  readonly has: Set<number>
}

/** The probe of `table` holding (at least) `seqs` as they are now: emptied at each epoch, then filled as phrases need. */
const probeOf = (sql: SqlClient, part: PhrasePart, table: LexFtsTable, seqs: ReadonlySet<number>): Effect.Effect<Probe, SqlError> =>
  Effect.gen(function*() {
    const known = part.probes.get(table)
    const fresh = known === undefined || known.epoch !== part.epoch
    const probe: Probe = fresh ? { basis: undefined, lengths: new Map(), has: new Set() } : known.probe
    const missing = [...seqs].filter((s) => !probe.has.has(s))
    if (!fresh && missing.length === 0) return probe
    const name = `temp.${probeName(table)}`
    if (fresh) {
      let ddl = probeDdl.get(table)
      if (ddl === undefined) {
        const rows = yield* sql<{ sql: string }>`SELECT sql FROM main.sqlite_master WHERE type = 'table' AND name = ${table}`
        ddl = probeDdlOf(rows[0]?.sql ?? "", name)
        probeDdl.set(table, ddl)
      }
      // created once per connection (its CREATE … IF NOT EXISTS costs more than this look-up)
      const made = yield* valuesOf(sql, sql.unsafe(`SELECT 1 FROM temp.sqlite_master WHERE type = 'table' AND name = ?`, [probeName(table)]))
      if (made.length === 0) yield* runOf(sql, sql.unsafe(ddl))
      yield* runOf(sql, sql.unsafe(`INSERT INTO ${name}(${probeName(table)}) VALUES('delete-all')`))
      part.probes.set(table, { epoch: part.epoch, probe })
    }
    // one statement: one FTS5 transaction, so one segment, whatever the number of rows
    yield* runOf(
      sql,
      sql.unsafe(`INSERT INTO ${name} (rowid, keywords, statement, relations, quote)
      SELECT t.rowid, t.keywords, t.statement, t.relations, t.quote
      FROM json_each(?) AS j CROSS JOIN main.${table} AS t ON t.rowid = j.value`, [JSON.stringify(missing)])
    )
    for (const s of missing) probe.has.add(s)
    for (const [s, d] of yield* readLengths(sql, name, missing)) probe.lengths.set(s, d)
    let tokens = 0
    for (const d of probe.lengths.values()) tokens += d
    probe.basis = probe.lengths.size > 0 ? { rows: probe.lengths.size, tokens } : undefined
    return probe
  })

/** rewritten rows' tokens kept per table, past which they start again */
const MAX_ROW_TOKENS = 4_096

/**
 * The rewritten rows' tokens as they are now (each read once, kept until its seq is rewritten
 * again: carry forgets it); undefined when one of them holds a character FTS5 might tokenize
 * otherwise (row-tokens.ts): then the probe.
 */
const rowTokensOf = (
  sql: SqlClient,
  part: PhrasePart,
  table: LexFtsTable,
  seqs: ReadonlySet<number>
): Effect.Effect<Map<number, RowColumns | undefined> | undefined, SqlError> =>
  Effect.gen(function*() {
    let held = part.rowTokens.get(table)
    if (held === undefined || held.size > MAX_ROW_TOKENS) {
      held = new Map()
      part.rowTokens.set(table, held)
    }
    const missing: Array<number> = []
    for (const s of seqs) {
      if (!held.has(s)) missing.push(s)
      else if (held.get(s) === undefined) return undefined
    }
    if (missing.length > 0) for (const [s, r] of yield* readRowTokens(sql, table, missing)) held.set(s, r)
    for (const s of missing) if (held.get(s) === undefined) return undefined
    return held
  })

/**
 * A table's row lengths by seq (NaN: rewritten, not read again yet; −1: no row) and their totals:
 * the counts bm25 reads (FTS5 keeps its own totals in memory until the commit, so the averages
 * record a connection reads in its own write transaction is the old one; %_docsize is written at
 * once). Read whole once, then only the rewritten rows.
 */
interface Lengths {
  d: Float64Array
  rows: number
  tokens: number
  readonly stale: Set<number>
}

const forgetLength = (l: Lengths, s: number): void => {
  const d = s < l.d.length ? (l.d[s] as number) : -1
  if (d >= 0) {
    l.rows--
    l.tokens -= d
  }
  if (s < l.d.length) l.d[s] = NaN
  l.stale.add(s)
}

/** The table's lengths, current: read whole on first use, then the rewritten rows again. */
const lengthsOf = (sql: SqlClient, part: PhrasePart, table: LexFtsTable): Effect.Effect<Lengths, SqlError> =>
  Effect.gen(function*() {
    const known = part.lengths.get(table)
    if (known !== undefined && known.stale.size === 0) return known
    const seqs = known === undefined ? "all" : [...known.stale]
    const read = yield* readLengths(sql, table, seqs)
    const l: Lengths = known ?? { d: new Float64Array(0), rows: 0, tokens: 0, stale: new Set() }
    let max = l.d.length
    for (const s of read.keys()) if (s + 1 > max) max = s + 1
    for (const s of l.stale) if (s + 1 > max) max = s + 1
    if (max > l.d.length) {
      const d = new Float64Array(Math.max(max, l.d.length * 2)).fill(-1)
      d.set(l.d)
      l.d = d
    }
    for (const s of l.stale) l.d[s] = -1
    l.stale.clear()
    for (const [s, d] of read) {
      l.d[s] = d
      l.rows++
      l.tokens += d
    }
    part.lengths.set(table, l)
    return l
  })

const basisOf = (l: Lengths): Basis | undefined => (l.rows > 0 ? { rows: l.rows, tokens: l.tokens } : undefined)

/**
 * Whether a row a carried write rewrote after `epoch` may hold the phrase, before or after the
 * write: every token of the phrase is among that write's rows' tokens (the last a prefix of one
 * when it is a prefix). Always so on lex_tri (a note names no trigrams).
 */
const mayTouch = (part: PhrasePart, table: LexFtsTable, phrase: string, epoch: number): boolean => {
  touchesFound++
  // one alternative (match.ts altExpr), its tokens as the table's tokenizer makes them, as the log's are
  const { tokens, prefix } = parsedAltsOf(phrase, table)[0] as Alt
  if (tokens.length === 0) return true
  const last = tokens.length - 1
  for (const entry of part.log) {
    if (entry.epoch <= epoch) continue
    const set = entry.tokens.get(table)
    if (set === undefined) return true
    let all = true
    for (let i = 0; i < tokens.length && all; i++) {
      const t = tokens[i] as string
      all = i < last || !prefix ? set.has(t) : startsOfNoted(set).has(t)
    }
    if (all) return true
  }
  return false
}

/** mayTouch of a phrase held since `epoch`, found once per sub-query (carriedIdfs) and passed on to rebased. */
interface Touch {
  readonly epoch: number
  readonly may: boolean
}

/** The position of `s` in ascending seqs, or −1. */
const indexOf = (seqs: Int32Array, s: number): number => {
  const i = lowerBound(seqs, s, 0, seqs.length)
  return i < seqs.length && seqs[i] === s ? i : -1
}

/** A phrase's terms, computed whole when they were left to be computed (see PhraseRows). */
const termsOf = (l: PhraseRows): Float64Array => {
  if (l.terms !== undefined) return l.terms
  const { freqs, lens, idf, avgdl } = l
  const n = l.seqs.length
  const terms = new Float64Array(n)
  if (freqs === undefined || lens === undefined) throw new Error("a phrase's terms left without its frequencies")
  for (let i = 0; i < n; i++) terms[i] = termOf(idf, avgdl, freqs[i] as number, lens[i] as number)
  l.terms = terms
  return terms
}

/** The term of `s` in a phrase's rows (its seqs ascending); NaN when the phrase does not hold the row. */
const termAt = (l: PhraseRows, s: number): number => {
  const i = indexOf(l.seqs, s)
  if (i < 0) return NaN
  if (l.terms !== undefined) return l.terms[i] as number
  return termOf(l.idf, l.avgdl, (l.freqs as Float64Array)[i] as number, (l.lens as Float64Array)[i] as number)
}

/** The seqs rewritten since `epoch`; undefined when the log no longer reaches back to it. */
const rewrittenSince = (part: PhrasePart, epoch: number): Set<number> | undefined => {
  const first = part.log[0]
  if (first === undefined || first.epoch > epoch + 1) return undefined
  const out = new Set<number>()
  for (const entry of part.log) if (entry.epoch > epoch) for (const s of entry.seqs) out.add(s)
  return out
}

/**
 * A phrase held from an earlier epoch brought up to date (see the header), or undefined when it
 * cannot be: then it is read again.
 */
const rebased = (
  sql: SqlClient,
  part: PhrasePart,
  table: LexFtsTable,
  weights: ReadonlyArray<number>,
  phrase: string,
  old: PhraseRows,
  touch: Touch | undefined
): Effect.Effect<PhraseRows | undefined, SqlError> =>
  Effect.gen(function*() {
    const rewritten = rewrittenSince(part, old.epoch)
    if (rewritten === undefined || rewritten.size > MAX_REWRITTEN || !weights.every(Number.isInteger) || old.basis === undefined) return undefined
    const current = yield* lengthsOf(sql, part, table)
    const basis = basisOf(current)
    if (basis === undefined) return undefined
    // the positions of the rewritten seqs among the phrase's rows, ascending (they are few; the rows many)
    const n = old.seqs.length
    const removed: Array<number> = []
    for (const s of rewritten) {
      const i = indexOf(old.seqs, s)
      if (i >= 0) removed.push(i)
    }
    removed.sort((x, y) => x - y)
    // the rows kept: every one but the rewritten seqs', with its frequency and length
    let freqs = old.freqs
    let lens = old.lens
    if (freqs === undefined || lens === undefined) {
      const oldTerms = termsOf(old)
      const lengths = current.d
      const [idf = 0] = yield* idfsOf(sql, [[old.basis.rows, n]])
      const avgdl = avgdlOf(old.basis)
      freqs = new Float64Array(n)
      lens = new Float64Array(n)
      let r = 0
      for (let i = 0; i < n; i++) {
        if (r < removed.length && removed[r] === i) {
          r++
          continue
        }
        const s = old.seqs[i] as number
        const d = s < lengths.length ? (lengths[s] as number) : -1
        const f = d < 0 ? undefined : frequencyOf(idf, avgdl, oldTerms[i] as number, d)
        if (f === undefined) return undefined
        freqs[i] = f
        lens[i] = d
      }
    }
    // a phrase no rewritten row holds, before or after: the same rows, their terms for the new
    // counts, computed when needed (a rewritten seq among its rows: the tokens were not FTS5's)
    if (removed.length === 0 && !(touch?.epoch === old.epoch ? touch.may : mayTouch(part, table, phrase, old.epoch))) {
      const [idf = 0] = yield* idfsOf(sql, [[basis.rows, n]])
      return { seqs: old.seqs, terms: undefined, idf, avgdl: avgdlOf(basis), epoch: part.epoch, basis, freqs, lens }
    }
    // the rewritten seqs' rows now: their frequencies counted in their tokens (row-tokens.ts), or
    // where FTS5 might tokenize a row otherwise, from the probe, checked against its bm25
    probed++
    const addedSeqs: Array<number> = []
    const addedFreqs: Array<number> = []
    const addedLens: Array<number> = []
    const kept = n - removed.length
    let idf: number
    const alt = safeAltOf(phrase, table)
    const tokens = alt === undefined ? undefined : yield* rowTokensOf(sql, part, table, rewritten)
    if (alt !== undefined && tokens !== undefined) {
      counted++
      for (const s of [...rewritten].sort((x, y) => x - y)) {
        const row = tokens.get(s)
        const f = row === undefined || row === null ? 0 : weightedFrequency(row, alt, weights)
        if (f === 0) continue
        const d = s < current.d.length ? (current.d[s] as number) : -1
        if (!(d >= 0)) return undefined
        addedSeqs.push(s)
        addedFreqs.push(f)
        addedLens.push(d)
      }
      idf = (yield* idfsOf(sql, [[basis.rows, kept + addedSeqs.length]]))[0] ?? 0
    } else {
      const probe = yield* probeOf(sql, part, table, rewritten)
      let found: { seqs: Int32Array; terms: Float64Array } = { seqs: new Int32Array(0), terms: new Float64Array(0) }
      if (probe.basis !== undefined) {
        const rows = yield* valuesOf(sql, sql.unsafe(PROBE_ROWS[table], [...weights, phrase]))
        found = phraseArrays(rows[0]?.[0], rows[0]?.[1])
      }
      let matched = 0
      for (let i = 0; i < found.seqs.length; i++) if (rewritten.has(found.seqs[i] as number)) matched++
      const idfs = yield* idfsOf(sql, probe.basis === undefined ? [[basis.rows, kept + matched]] : [[basis.rows, kept + matched], [probe.basis.rows, found.seqs.length]])
      idf = idfs[0] ?? 0
      const probeIdf = idfs[1] ?? 0
      if (probe.basis !== undefined) {
        const probeAvgdl = avgdlOf(probe.basis)
        for (let i = 0; i < found.seqs.length; i++) {
          const s = found.seqs[i] as number
          if (!rewritten.has(s)) continue
          const d = probe.lengths.get(s)
          const f = d === undefined ? undefined : frequencyOf(probeIdf, probeAvgdl, found.terms[i] as number, d)
          if (f === undefined || d === undefined) return undefined
          addedSeqs.push(s)
          addedFreqs.push(f)
          addedLens.push(d)
        }
      }
    }
    const total = kept + addedSeqs.length
    const avgdl = avgdlOf(basis)
    // the terms for the new counts are computed when needed (termsOf, termAt)
    if (kept === n && addedSeqs.length === 0) return { seqs: old.seqs, terms: undefined, idf, avgdl, epoch: part.epoch, basis, freqs, lens }
    const added = addedSeqs.map((_, i) => i).sort((x, y) => (addedSeqs[x] as number) - (addedSeqs[y] as number))
    // rows only added past the last (a new rule): written after the kept ones, in room left for them
    const appended = removed.length === 0 && (n === 0 || (addedSeqs[added[0] as number] as number) > (old.seqs[n - 1] as number))
    const grown3 = appended ? grownInPlace(old.seqs, freqs, lens, total) : undefined
    if (grown3 !== undefined) {
      const [seqs, newFreqs, newLens] = grown3
      for (const [k, a] of added.entries()) {
        seqs[n + k] = addedSeqs[a] as number
        newFreqs[n + k] = addedFreqs[a] as number
        newLens[n + k] = addedLens[a] as number
      }
      return { seqs, terms: undefined, idf, avgdl, epoch: part.epoch, basis, freqs: newFreqs, lens: newLens }
    }
    // the rows kept and the rewritten ones merged, seqs ascending (as FTS5 gives them): the runs
    // between them copied whole, into arrays with room for rows added later
    const room = total + Math.max(16, total >> 4)
    const seqs = roomy(new Int32Array(room), total)
    const newFreqs = roomy(new Float64Array(room), total)
    const newLens = roomy(new Float64Array(room), total)
    let src = 0
    let dst = 0
    let r = 0
    const copyUntil = (end: number): void => {
      while (src < end) {
        while (r < removed.length && (removed[r] as number) < src) r++
        const stop = r < removed.length && (removed[r] as number) < end ? (removed[r] as number) : end
        copied += stop - src
        seqs.set(old.seqs.subarray(src, stop), dst)
        newFreqs.set(freqs.subarray(src, stop), dst)
        newLens.set(lens.subarray(src, stop), dst)
        dst += stop - src
        src = stop
        if (src < end) {
          src++
          r++
        }
      }
    }
    for (const k of added) {
      const s = addedSeqs[k] as number
      // the first row at or past s (a rewritten row at s is not copied)
      copyUntil(lowerBound(old.seqs, s, 0, n))
      seqs[dst] = s
      newFreqs[dst] = addedFreqs[k] as number
      newLens[dst] = addedLens[k] as number
      dst++
    }
    copyUntil(n)
    return { seqs, terms: undefined, idf, avgdl, epoch: part.epoch, basis, freqs: newFreqs, lens: newLens }
  })

/**
 * A phrase's arrays may be the first rows of larger buffers with room for rows added later: how
 * many of a buffer's elements a view uses (the last one made of it). A view made of the first n
 * of them leaves the rest to a later one, so an earlier view (held by a base carried from an
 * earlier epoch) never sees its rows change.
 */
const used = new WeakMap<ArrayBufferLike, number>()

/** The first `n` elements of `a` as a view, the rest left as room. */
const roomy = <T extends Int32Array | Float64Array>(a: T, n: number): T => {
  used.set(a.buffer, n)
  return a.subarray(0, n) as T
}

/** The three arrays grown to `total` rows in their own buffers, when all three have room and no later view took it; else undefined. */
const grownInPlace = (
  seqs: Int32Array,
  freqs: Float64Array,
  lens: Float64Array,
  total: number
): [Int32Array, Float64Array, Float64Array] | undefined => {
  const n = seqs.length
  for (const a of [seqs, freqs, lens]) {
    if (a.byteOffset !== 0 || used.get(a.buffer) !== n || a.buffer.byteLength < total * a.BYTES_PER_ELEMENT) return undefined
  }
  const s = new Int32Array(seqs.buffer, 0, total)
  const f = new Float64Array(freqs.buffer, 0, total)
  const l = new Float64Array(lens.buffer, 0, total)
  for (const a of [s, f, l]) used.set(a.buffer, total)
  return [s, f, l]
}

/**
 * The idfs the sub-query's phrases held from an earlier epoch need to be carried (rebased: their
 * rows' frequencies, and the new counts of a phrase no rewritten row holds), in one statement
 * instead of one each; and each such phrase's mayTouch, by phrase, for rebased.
 */
const carriedIdfs = (
  sql: SqlClient,
  part: PhrasePart,
  table: LexFtsTable,
  weights: ReadonlyArray<number>,
  phrases: ReadonlyArray<string>
): Effect.Effect<Map<string, Touch>, SqlError> =>
  Effect.gen(function*() {
    const touches = new Map<string, Touch>()
    const pairs: Array<readonly [number, number]> = []
    let basis: Basis | undefined
    for (const phrase of phrases) {
      const known = part.phrases.get(keyOf(table, weights, phrase))
      if (known === undefined || known.epoch === part.epoch || known.basis === undefined) continue
      if (basis === undefined) basis = basisOf(yield* lengthsOf(sql, part, table))
      if (basis === undefined) return touches
      if (known.freqs === undefined) pairs.push([known.basis.rows, known.seqs.length])
      const may = mayTouch(part, table, phrase, known.epoch)
      touches.set(phrase, { epoch: known.epoch, may })
      if (!may) pairs.push([basis.rows, known.seqs.length])
    }
    if (pairs.length > 1) yield* keepIdfs(sql, pairs)
    return touches
  })

/**
 * How many rows of `table` hold any of the phrases (what `count(*) … MATCH` of their OR counts),
 * from their rows held under this epoch; undefined when one of them is not held so (then the caller
 * asks FTS5). A phrase's held rows are every row FTS5 matches (LIMIT -1), whatever their status.
 */
export const heldMatchCount = (
  sql: SqlClient,
  table: LexFtsTable,
  weights: ReadonlyArray<number>,
  phrases: ReadonlyArray<string>
): number | undefined => {
  const part = cachePart(sql, PART, emptyPart)
  if (part === undefined || phrases.length === 0) return undefined
  const lists: Array<Int32Array> = []
  for (const phrase of phrases) {
    const known = part.phrases.get(keyOf(table, weights, phrase))
    if (known === undefined || known.epoch !== part.epoch) return undefined
    lists.push(known.seqs)
  }
  heldCounts++
  if (lists.length === 1) return (lists[0] as Int32Array).length
  const seen = new Set<number>()
  for (const l of lists) for (let i = 0; i < l.length; i++) seen.add(l[i] as number)
  return seen.size
}

/** Keeps a phrase's rows in the part (all of them start again past MAX_HELD). */
const hold = (part: PhrasePart, key: string, rows: PhraseRows, replaced: PhraseRows | undefined): PhraseRows => {
  if (replaced !== undefined) part.held -= replaced.seqs.length
  if (part.held + rows.seqs.length > MAX_HELD) {
    part.phrases.clear()
    part.held = 0
  }
  part.phrases.set(key, rows)
  part.held += rows.seqs.length
  return rows
}

let readWhole = 0
let probed = 0
let counted = 0
let heldCounts = 0
let copied = 0
let carriedPhrases = 0
let touchesFound = 0

/** How many phrases this thread has brought up to date through writes instead of reading them again: a measure for tests. */
export const phrasesCarried = (): number => carriedPhrases

/** How many times this thread has looked through the log of writes for whether a rewritten row may hold a phrase (mayTouch): a measure for tests. */
export const phraseTouchesFound = (): number => touchesFound

/** How many phrase rows this thread has copied to bring phrases up to date (rows added past the last are not): a measure for tests. */
export const phraseRowsCopied = (): number => copied

/** How many phrases this thread has brought up to date through the rewritten rows (a rewritten row may hold them): a measure for tests. */
export const phrasesProbed = (): number => probed

/** Of those, how many were counted in the rows' tokens, not asked of the probe (row-tokens.ts): a measure for tests. */
export const phrasesCounted = (): number => counted

/** How many rule counts of term weights this thread has taken from held phrase rows (heldMatchCount): a measure for tests. */
export const matchCountsFromHeldRows = (): number => heldCounts

/** How many phrases this thread has read whole from FTS5 (not carried, nor held): a measure for tests and the bench. */
export const phrasesReadWhole = (): number => readWhole

const phraseRows = (
  sql: SqlClient,
  part: PhrasePart,
  table: LexFtsTable,
  weights: ReadonlyArray<number>,
  phrase: string,
  touch: Touch | undefined
): Effect.Effect<PhraseRows, SqlError> =>
  Effect.gen(function*() {
    const key = keyOf(table, weights, phrase)
    const known = part.phrases.get(key)
    if (known !== undefined && known.epoch === part.epoch) return known
    if (known !== undefined) {
      const carried = yield* rebased(sql, part, table, weights, phrase, known, touch)
      if (carried !== undefined) {
        carriedPhrases++
        return hold(part, key, carried, known)
      }
      part.phrases.delete(key)
      part.held -= known.seqs.length
    }
    const rows = yield* valuesOf(sql, sql.unsafe(PHRASE_SQL[table], [...weights, phrase]))
    readWhole++
    const basis = basisOf(yield* lengthsOf(sql, part, table))
    const found = phraseArrays(rows[0]?.[0], rows[0]?.[1])
    return hold(part, key, { ...found, idf: NaN, avgdl: NaN, epoch: part.epoch, basis, freqs: undefined, lens: undefined }, undefined)
  })

/**
 * Scratch buffers, reused (a search allocates no large arrays): the sums and marks indexed by seq,
 * the union's seqs and scores. One search at a time per thread uses them, in code that does not
 * yield; what outlives a yield is copied into arrays of its own. The selection of the best rows
 * is select.ts's.
 */
let sums = new Float64Array(1024)
let addedUp = 0

/** How many phrase rows this thread has added into sub-queries' sums: a measure for tests and the bench. */
export const phraseRowsAddedUp = (): number => addedUp

let carriedBases = 0

/** How many sub-queries' bases this thread has carried through writes (carriedUnion): a measure for tests. */
export const basesCarried = (): number => carriedBases

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
  addedUp += total
  let size = 0
  for (const l of lists) {
    const terms = termsOf(l)
    for (let j = 0; j < l.seqs.length; j++) {
      const s = l.seqs[j] as number
      if (marks[s] === 0) {
        marks[s] = 1
        sums[s] = 0
        unionSeqs[size++] = s
      }
      sums[s] = (sums[s] as number) + (terms[j] as number)
    }
  }
  for (let i = 0; i < size; i++) {
    const s = unionSeqs[i] as number
    unionScores[i] = -(sums[s] as number)
    marks[s] = 0
  }
  return { seqs: unionSeqs, scores: unionScores, size }
}

/** Rows of a union in (score, seq) order, best first: `count` of them, in arrays of their own; `size` rows in the union. */
interface Ordered {
  readonly seqs: Int32Array
  readonly scores: Float64Array
  readonly count: number
  readonly size: number
}

/** The `n` best rows of a union (all when fewer) in (score, seq) order, copied out of the scratch buffers. */
const inOrder = (u: Union, n: number): Ordered => {
  const { seqs, scores } = u
  const order = bestIndices(scores, (i) => seqs[i] as number, u.size, n, "ascending")
  const out = { seqs: new Int32Array(order.length), scores: new Float64Array(order.length), count: order.length, size: u.size }
  for (let k = 0; k < order.length; k++) {
    const i = order[k] as number
    out.seqs[k] = seqs[i] as number
    out.scores[k] = scores[i] as number
  }
  return out
}

/**
 * The union of a sub-query's large phrases (its base), its best rows kept in (score, seq) order.
 * An agent's questions bring the same business words again beside a word new to the service:
 * their phrases hold most of the rows, the new word's few. Adding up every phrase again and
 * choosing the best rows again is then the sub-query's whole cost, though only the rows the small
 * phrases hold can change: a row none of them holds gets + 0 for each of them in FTS5's sum, which
 * leaves it bit for bit as the base gave it. So the base's best rows are kept, and a question adds
 * up again only the rows of its small phrases — each over every phrase of the sub-query in their
 * order, as FTS5 does — and merges them into the kept order. A row of the small phrases only
 * rises (its terms are positive), so the question's best n are the kept rows' best n it did not
 * add up again, and its own; when the kept rows run out first, the sub-query is added up whole.
 */
interface HeldUnion {
  /** the base phrases' rows it was added up from (held as they are: a carried or re-read phrase is another object) */
  readonly lists: ReadonlyArray<PhraseRows>
  /** the base's best rows, in order */
  readonly seqs: Int32Array
  readonly scores: Float64Array
  /** the base's rows in all */
  readonly size: number
  /** the part's epoch its rows belong to */
  readonly epoch: number
}

/**
 * Rows past which a phrase held before the question is part of a sub-query's base (a business
 * word's phrase has more); a phrase read for this question — the new word's, however common — is
 * merged in, so the base stays the business words'.
 */
const BASE_ROWS = 512
/** Kept unions past which they start again (each holds at most HELD_FACTOR × the rows ranked). */
const MAX_UNIONS = 2_000
/** The base's best rows kept, per row a sub-query ranks: room for the rows a question adds up again. */
const HELD_FACTOR = 2


/**
 * The base's best rows in order: kept; carried from an earlier epoch (carriedUnion); or added up
 * now and kept when the base was kept before or asked before under this epoch; undefined the
 * first time (the sub-query is added up whole, as it was: a search pays nothing for a base no
 * later question may ask).
 */
const heldUnion = (part: PhrasePart, key: string, base: ReadonlyArray<PhraseRows>, ranked: number): HeldUnion | undefined => {
  const known = part.unions.get(key)
  if (known !== undefined && known.lists.length === base.length && known.lists.every((l, i) => l === base[i]) &&
    (known.seqs.length >= ranked || known.seqs.length === known.size)) return known
  if (known !== undefined && known.epoch < part.epoch) {
    const carried = carriedUnion(part, known, base, ranked)
    if (carried !== undefined) {
      part.unions.set(key, carried)
      return carried
    }
  }
  else if (part.unionsAsked.get(key) !== part.epoch) {
    if (part.unionsAsked.size >= MAX_UNIONS) part.unionsAsked.clear()
    part.unionsAsked.set(key, part.epoch)
    return undefined
  }
  if (part.unions.size >= MAX_UNIONS) part.unions.clear()
  const best = inOrder(addUp(base), HELD_FACTOR * ranked)
  const held: HeldUnion = { lists: base, seqs: best.seqs, scores: best.scores, size: best.size, epoch: part.epoch }
  part.unions.set(key, held)
  return held
}

/** FTS5's idf of a phrase of `hits` rows in a table of `rows` (Math.log: within a bit of ln(), for a bound only). */
const idfBound = (rows: number, hits: number): number => {
  const v = Math.log((rows - hits + 0.5) / (hits + 0.5))
  return v <= 0 ? 1e-6 : v
}

/**
 * A base's kept rows carried through the writes since they were kept, when the rows ranked can
 * still be told exactly; else undefined. Each phrase's term of a row not rewritten moves by its
 * idf's ratio and by its length factor, which grows by at most the ratio of the average lengths
 * (bm25.ts termOf: f + k1·(1 − b + b·d/avgdl) in the divisor), so no row outside the kept ones
 * can have passed the last kept row's sum times the largest of those ratios. The kept rows are
 * added up again (their terms one by one), the rewritten rows of the base too, and those above
 * that bound are the base's best rows, in order.
 */
const carriedUnion = (part: PhrasePart, known: HeldUnion, base: ReadonlyArray<PhraseRows>, ranked: number): HeldUnion | undefined => {
  if (known.lists.length !== base.length) return undefined
  const rewritten = rewrittenSince(part, known.epoch)
  if (rewritten === undefined || rewritten.size > MAX_REWRITTEN) return undefined
  let grow = 0
  for (let i = 0; i < base.length; i++) {
    const was = known.lists[i] as PhraseRows
    const now = base[i] as PhraseRows
    if (was.basis === undefined || now.basis === undefined) return undefined
    const r = (idfBound(now.basis.rows, now.seqs.length) / idfBound(was.basis.rows, was.seqs.length)) *
      Math.max(1, avgdlOf(now.basis) / avgdlOf(was.basis))
    if (!(r < 2)) return undefined
    if (r > grow) grow = r
  }
  const complete = known.seqs.length === known.size
  const bound = complete ? -Infinity : -(known.scores[known.seqs.length - 1] as number) * grow * (1 + 1e-9)
  // the rows added up again: the kept ones not rewritten, and the rewritten ones
  const seqs: Array<number> = []
  for (let k = 0; k < known.seqs.length; k++) if (!rewritten.has(known.seqs[k] as number)) seqs.push(known.seqs[k] as number)
  let size = known.size
  for (const s of rewritten) {
    if (known.lists.some((l) => indexOf(l.seqs, s) >= 0)) size--
    if (!base.some((l) => indexOf(l.seqs, s) >= 0)) continue
    size++
    seqs.push(s)
  }
  // each phrase's terms of those rows added in the phrases' order, as addUp adds them: the rows
  // found in each phrase's by galloping from the last one found (a few thousand rows against a
  // phrase's tens of thousands), a term computed only for a row added up
  const ascending = Int32Array.from(seqs).sort()
  let top = 0
  for (const s of seqs) if (s > top) top = s
  sums = grown(sums, top + 1, (x) => new Float64Array(x))
  for (const s of seqs) sums[s] = 0
  for (const l of base) {
    const ls = l.seqs
    const n = ls.length
    let lo = 0
    for (let k = 0; k < ascending.length && lo < n; k++) {
      const s = ascending[k] as number
      if ((ls[lo] as number) < s) {
        // the first position at or past s: gallop, then halve
        let step = 1
        while (lo + step < n && (ls[lo + step] as number) < s) step *= 2
        lo = lowerBound(ls, s, lo + (step >> 1) + 1, Math.min(lo + step, n))
      }
      if (lo >= n || ls[lo] !== s) continue
      addedUp++
      sums[s] = (sums[s] as number) + (l.terms !== undefined
        ? (l.terms[lo] as number)
        : termOf(l.idf, l.avgdl, (l.freqs as Float64Array)[lo] as number, (l.lens as Float64Array)[lo] as number))
      lo++
    }
  }
  const scores = seqs.map((x) => -(sums[x] as number))
  const order = bestIndices(scores, (k) => seqs[k] as number, seqs.length, seqs.length, "ascending")
  let m = 0
  while (m < order.length && -(scores[order[m] as number] as number) > bound) m++
  if (m < ranked && !(complete && m === order.length)) return undefined
  carriedBases++
  const out = { seqs: new Int32Array(m), scores: new Float64Array(m) }
  for (let k = 0; k < m; k++) {
    out.seqs[k] = seqs[order[k] as number] as number
    out.scores[k] = scores[order[k] as number] as number
  }
  return { lists: base, seqs: out.seqs, scores: out.scores, size: complete && m === order.length ? m : Math.max(size, m), epoch: part.epoch }
}

/** The rows the small phrases hold, each added up over every phrase in order, in (score, seq) order; and how many the base lacks. */
interface Merged {
  readonly seqs: Int32Array
  readonly scores: Float64Array
  readonly fresh: number
  readonly maxSeq: number
}

const mergedRows = (lists: ReadonlyArray<PhraseRows>, inBase: ReadonlyArray<boolean>): Merged => {
  let maxSeq = 0
  for (const [i, l] of lists.entries()) {
    if (inBase[i] === true) continue
    for (let j = 0; j < l.seqs.length; j++) if ((l.seqs[j] as number) > maxSeq) maxSeq = l.seqs[j] as number
  }
  marks = grown(marks, maxSeq + 1, (n) => new Uint8Array(n))
  const seqs: Array<number> = []
  for (const [i, l] of lists.entries()) {
    if (inBase[i] === true) continue
    for (let j = 0; j < l.seqs.length; j++) {
      const s = l.seqs[j] as number
      if (marks[s] === 0) {
        marks[s] = 1
        seqs.push(s)
      }
    }
  }
  const scores = new Float64Array(seqs.length)
  let fresh = 0
  for (const [k, s] of seqs.entries()) {
    marks[s] = 0
    // FTS5's sum: 0, then each phrase's term in the sub-query's order (+ 0 for a phrase without the row)
    let sum = 0
    let based = false
    for (const [i, l] of lists.entries()) {
      const t = termAt(l, s)
      if (t !== t) continue
      addedUp++
      sum = sum + t
      if (inBase[i] === true) based = true
    }
    scores[k] = -sum
    if (!based) fresh++
  }
  const order = bestIndices(scores, (k) => seqs[k] as number, seqs.length, seqs.length, "ascending")
  const out = { seqs: new Int32Array(order.length), scores: new Float64Array(order.length), fresh, maxSeq }
  for (let k = 0; k < order.length; k++) {
    out.seqs[k] = seqs[order[k] as number] as number
    out.scores[k] = scores[order[k] as number] as number
  }
  return out
}

/** Whether row (sa, a) comes before row (sb, b): score, then seq. */
const precedes = (a: number, sa: number, b: number, sb: number): boolean => a < b || (!(a > b) && sa < sb)

/**
 * The `n` best rows of the base merged with the small phrases' rows (theirs replace the base's);
 * undefined when the base's kept rows run out before.
 */
const mergedOrder = (held: HeldUnion, merged: Merged, n: number): Ordered | undefined => {
  const size = held.size + merged.fresh
  const count = Math.min(n, size)
  const { maxSeq } = merged
  marks = grown(marks, maxSeq + 1, (m) => new Uint8Array(m))
  const mm = marks
  for (let k = 0; k < merged.seqs.length; k++) mm[merged.seqs[k] as number] = 1
  const seqs = new Int32Array(count)
  const scores = new Float64Array(count)
  const hs = held.seqs
  const cut = hs.length < held.size
  let i = 0
  let j = 0
  let k = 0
  for (; k < count; k++) {
    while (i < hs.length && (hs[i] as number) <= maxSeq && mm[hs[i] as number] === 1) i++
    if (i === hs.length && cut) break
    const takeHeld = j >= merged.seqs.length ||
      (i < hs.length && precedes(held.scores[i] as number, hs[i] as number, merged.scores[j] as number, merged.seqs[j] as number))
    if (takeHeld) {
      seqs[k] = hs[i] as number
      scores[k] = held.scores[i] as number
      i++
    } else {
      seqs[k] = merged.seqs[j] as number
      scores[k] = merged.scores[j] as number
      j++
    }
  }
  for (let x = 0; x < merged.seqs.length; x++) mm[merged.seqs[x] as number] = 0
  return k < count ? undefined : { seqs, scores, count, size }
}

/**
 * The sub-query's rows in order, `n` at a time: from the base's kept rows and the small phrases'
 * rows, else (no base, or more rows asked than kept) added up whole.
 */
const orderOf = (
  part: PhrasePart,
  table: LexFtsTable,
  weights: ReadonlyArray<number>,
  phrases: ReadonlyArray<string>,
  lists: ReadonlyArray<PhraseRows>,
  heldBefore: ReadonlyArray<boolean>,
  ranked: number
): ((n: number) => Ordered) => {
  const whole = (n: number): Ordered => inOrder(addUp(lists), n)
  const inBase = lists.map((l, i) => heldBefore[i] === true && l.seqs.length >= BASE_ROWS)
  const base = lists.filter((_, i) => inBase[i] === true)
  if (base.length === 0) return whole
  const key = `${table}\u0000${weights.join(",")}\u0000${phrases.filter((_, i) => inBase[i] === true).join("\u0001")}`
  const held = heldUnion(part, key, base, ranked)
  if (held === undefined) return whole
  const merged = mergedRows(lists, inBase)
  return (n) => mergedOrder(held, merged, n) ?? whole(n)
}

/** The rows of the ordered entries that pass the filter, at most filter.limit (a function of its own: V8 optimizes it once). */
const keep = (o: Ordered, docs: PhrasePart["docs"], filter: RowFilter): SubQueryRows => {
  const kept: Array<DocInfo> = []
  const scores = new Float64Array(Math.min(o.count, filter.limit))
  for (let i = 0; i < o.count; i++) {
    const seq = o.seqs[i] as number
    const d = docs[seq]
    if (d === null || d === undefined || seq === filter.excludeSeq || !filter.statuses.includes(d.status)) continue
    scores[kept.length] = o.scores[i] as number
    kept.push(d)
    if (kept.length >= filter.limit) break
  }
  return { docs: kept, scores: scores.subarray(0, kept.length) }
}

/** lex_doc of the seqs not known yet, in one read. */
const readDocs = (sql: SqlClient, part: PhrasePart, o: Ordered): Effect.Effect<void, SqlError> => {
  const missing: Array<number> = []
  for (let i = 0; i < o.count; i++) if (part.docs[o.seqs[i] as number] === undefined) missing.push(o.seqs[i] as number)
  if (missing.length === 0) return Effect.void
  return Effect.map(
    rowsOf(
      sql,
      sql<DocInfo>`SELECT seq, rule_id, version, status, valid_from, valid_until FROM lex_doc
      WHERE seq IN (SELECT value FROM json_each(${JSON.stringify(missing)}))`
    ),
    (rows) => {
      for (const r of rows) {
        const seq = Number(r.seq)
        part.docs[seq] = {
          seq, rule_id: r.rule_id, version: Number(r.version), status: r.status, valid_from: r.valid_from, valid_until: r.valid_until
        }
      }
      for (const s of missing) if (part.docs[s] === undefined) part.docs[s] = null
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
): Effect.Effect<SubQueryRows, SqlError> =>
  Effect.gen(function*() {
    const part = cachePart(sql, PART, emptyPart)
    if (part === undefined) return yield* Effect.die(new Error("subQueryRows on a connection without a stamp cache"))
    const touches = yield* carriedIdfs(sql, part, table, weights, phrases)
    const lists: Array<PhraseRows> = []
    // a phrase held before this question may belong to the base; one read now is the new word's
    const heldBefore: Array<boolean> = []
    for (const phrase of phrases) {
      const known = part.phrases.get(keyOf(table, weights, phrase))
      heldBefore.push(known !== undefined)
      // a phrase held under this epoch without a step of the fiber runtime
      lists.push(known !== undefined && known.epoch === part.epoch ? known : yield* phraseRows(sql, part, table, weights, phrase, touches.get(phrase)))
    }
    const ordered = orderOf(part, table, weights, phrases, lists, heldBefore, filter.ranked)
    const first = ordered(filter.ranked)
    yield* readDocs(sql, part, first)
    const kept = keep(first, part.docs, filter)
    if (kept.docs.length >= filter.limit || first.count === first.size) return kept
    const all = ordered(first.size)
    yield* readDocs(sql, part, all)
    return keep(all, part.docs, filter)
  })
