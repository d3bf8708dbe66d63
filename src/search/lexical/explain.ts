/**
 * found_via, coverage and matched_terms of one hit (architecture.md §7 steps 6 and 6a), read
 * from the hit's indexed rows, so the comparison uses the index's own normalization. The folded
 * columns of a row are kept, as one line (RowLine), in the connection's stamp cache
 * (stamp-cache.ts): a row changes only with a write, and a search explains up to 50 hits.
 * Carried through a write of this process (stamp-cache.ts carryPart): the lines of the seqs the
 * write rewrote are dropped, the others kept; a write that names no seqs starts them again.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { rowsOf } from "../../db/held-connection.js"
import { storesStems } from "./document.js"
import type { LexicalOptions } from "./options.js"
import type { Alt } from "./match.js"
import { type Analysis, type Expansion, termWeights } from "./query.js"
import { boundedPart, type CarriedChanges, carryPart } from "./stamp-cache.js"
import { fold } from "./text.js"

export interface Explanation {
  /** matched query words as the query spells them, parts, corrections, synonym phrases; sorted */
  readonly found_via: Array<string>
  /** share of the query's term weight the hit matches, 0–1, 3 decimals */
  readonly coverage: number
  /** query terms matched in any variant */
  readonly matched_terms: number
}

type LexTable = "lex_word" | "lex_stem" | "lex_tri"

interface IndexedRow {
  readonly rowid: number
  readonly keywords: string
  readonly statement: string
  readonly relations: string
  readonly quote: string
}

const PART = "explain"
/** rows held per connection and stamp before the part starts again */
const MAX_ROWS = 60_000

/**
 * A row's folded columns as one string: each column's tokens (single-spaced, as the index
 * stores them) between spaces, the columns apart by COLUMN_BREAK. A token is then " t " in it, a
 * prefix " p", a phrase its tokens space-joined — never across two columns. One string per row
 * is what a held row costs (~420 bytes at 10k rules; the tokens' arrays and sets it replaced
 * ~2,750; every new word's hits were held so, and a young generation's collection copies what
 * is held).
 */
type RowLine = string

const COLUMN_BREAK = "\n"

interface ExplainPart {
  readonly rows: Record<LexTable, Map<number, RowLine>>
  held: number
}

const emptyPart = (): ExplainPart => ({ rows: { lex_word: new Map(), lex_stem: new Map(), lex_tri: new Map() }, held: 0 })

/**
 * The rows kept through changes of some rules' rows: a row is the rule's indexed text alone, so
 * only the lines of the rewritten seqs are dropped (read again when a search explains them).
 */
const carry = (held: unknown, { changes }: CarriedChanges): ExplainPart | undefined => {
  const part = held as ExplainPart
  for (const c of changes) {
    if (c.seqs === undefined) return undefined
    for (const s of c.seqs) {
      for (const rows of Object.values(part.rows)) if (rows.delete(s)) part.held--
    }
  }
  return part
}
carryPart(PART, carry)

let rowsRead = 0

/** How many rows this thread has read from the lexical tables to explain hits (not held): a measure for tests. */
export const explainRowsRead = (): number => rowsRead

/** The line of a row's folded columns (see RowLine). */
export const rowLine = (folded: ReadonlyArray<string>): RowLine => ` ${folded.join(` ${COLUMN_BREAK} `)} `

/** The folded column texts of the given rows of one lex table as lines, by seq. */
const linesOf = (sql: SqlClient, table: LexTable, seqs: ReadonlyArray<number>) =>
  Effect.gen(function*() {
    const part = boundedPart(sql, PART, emptyPart, (p) => p.held, MAX_ROWS)
    const known = part?.rows[table]
    const out = new Map<number, RowLine>()
    const missing: Array<number> = []
    for (const seq of seqs) {
      const row = known?.get(seq)
      if (row === undefined) missing.push(seq)
      else out.set(seq, row)
    }
    if (missing.length === 0) return out
    const rows = yield* rowsOf(
      sql,
      sql.unsafe<IndexedRow>(
        `SELECT rowid, keywords, statement, relations, quote FROM ${table} WHERE rowid IN (SELECT value FROM json_each(?))`,
        [JSON.stringify(missing)]
      )
    )
    rowsRead += rows.length
    for (const r of rows) {
      const line = rowLine([fold(r.keywords), fold(r.statement), fold(r.relations), fold(r.quote)])
      out.set(Number(r.rowid), line)
      known?.set(Number(r.rowid), line)
    }
    if (part !== undefined) part.held += rows.length
    return out
  })

/** What an alternative looks for in a line (see RowLine); null when one of its tokens is empty. */
const needles = new WeakMap<Alt, string | null>()
const needleOf = (a: Alt): string | null => {
  const known = needles.get(a)
  if (known !== undefined) return known
  const q = a.tokens.map(fold)
  const needle = q.some((t) => t.length === 0) ? null : ` ${q.join(" ")}${a.prefix ? "" : " "}`
  needles.set(a, needle)
  return needle
}

/** altMatches token by token, for an alternative with an empty token (the analysis makes none). */
const tokenMatches = (a: Alt, line: RowLine): boolean => {
  const q = a.tokens.map(fold)
  const cols = line.split(COLUMN_BREAK).map((c) => c.split(" ").filter((t) => t.length > 0))
  return cols.some((toks) => {
    for (let i = 0; i + q.length <= toks.length; i++) {
      let ok = true
      for (let j = 0; j < q.length && ok; j++) {
        const d = toks[i + j] ?? ""
        const want = q[j] ?? ""
        ok = j === q.length - 1 && a.prefix ? d.startsWith(want) : d === want
      }
      if (ok) return true
    }
    return false
  })
}

/**
 * Whether one of the line's columns holds `text`: in the line itself unless `text` could reach
 * past a column (a space at either end, or the column break in it).
 */
const inAColumn = (line: RowLine, text: string): boolean =>
  text.length > 0 && !text.startsWith(" ") && !text.endsWith(" ") && !text.includes(COLUMN_BREAK)
    ? line.includes(text)
    : line.split(COLUMN_BREAK).some((c) => c.slice(1, -1).includes(text))

/**
 * Mirrors FTS5 MATCH of one alternative in a row's line: its tokens consecutive in one column,
 * the last one a prefix if marked.
 */
export const altMatches = (a: Alt, line: RowLine): boolean => {
  if (a.tokens.length === 0) return false
  const needle = needleOf(a)
  return needle === null ? tokenMatches(a, line) : line.includes(needle)
}

const anyMatch = (alts: ReadonlyArray<Alt>, line: RowLine | null): boolean => line !== null && alts.some((a) => altMatches(a, line))
const matched = (xs: ReadonlyArray<Expansion>, line: RowLine | null): Array<Expansion> => xs.filter((x) => anyMatch(x.alts, line))

const NOTHING: Explanation = { found_via: [], coverage: 0, matched_terms: 0 }

/** Explains one hit from its folded index rows. */
const explainRow = (
  a: Analysis,
  weights: ReadonlyArray<number>,
  words: RowLine,
  stems: RowLine | null,
  tri: RowLine | null
): Explanation => {
  const found = new Set<string>()
  const share = a.terms.map((t) => {
    const whole = anyMatch(t.word, words) || anyMatch(t.stem, stems) ||
      (tri !== null && t.tri.some((x) => inAColumn(tri, fold(x))))
    if (whole) {
      found.add(t.text)
      return 1
    }
    const parts = t.parts.filter((p) => anyMatch(p.alts, stems))
    if (parts.length > 0) {
      parts.forEach((p) => found.add(p.text))
      // each part of the word counts for its share (two forms of one part count once)
      return new Set(parts.map((p) => p.segment)).size / Math.max(1, t.partSegments)
    }
    const corrections = matched(t.corrections, words)
    if (corrections.length > 0) {
      corrections.forEach((c) => found.add(c.text))
      return 1
    }
    return 0
  })
  for (const s of a.synonyms) {
    const hits = s.expansions.filter((x) => anyMatch(x.alts, words) || (x.heads !== undefined && anyMatch(x.heads, stems)))
    if (hits.length === 0) continue
    hits.forEach((e) => found.add(e.text))
    // a lexicon expansion counts for its weight (the share of the word's senses that hold it), never above the word itself
    const credit = Math.max(...hits.map((e) => e.weight ?? 1))
    for (const i of s.terms) share[i] = Math.max(share[i] ?? 0, credit)
  }
  const total = weights.reduce((sum, w) => sum + w, 0)
  const got = weights.reduce((sum, w, i) => sum + w * (share[i] ?? 0), 0)
  return {
    found_via: [...found].sort(),
    coverage: total > 0 ? Math.round((got / total) * 1000) / 1000 : 0,
    matched_terms: share.filter((x) => x > 0).length
  }
}

/** found_via, coverage and matched_terms of several hits (one read per lex table); unknown seqs explain nothing. */
export const explainMany = (
  sql: SqlClient,
  a: Analysis,
  o: LexicalOptions,
  seqs: ReadonlyArray<number>
): Effect.Effect<Map<number, Explanation>, SqlError> =>
  Effect.gen(function*() {
    const out = new Map<number, Explanation>()
    if (seqs.length === 0) return out
    const words = yield* linesOf(sql, "lex_word", seqs)
    const stems = storesStems(o) ? yield* linesOf(sql, "lex_stem", seqs) : null
    const tris = o.features.trigram ? yield* linesOf(sql, "lex_tri", seqs) : null
    const weights = a.terms.length === 0 ? [] : yield* termWeights(sql, a, o)
    for (const seq of seqs) {
      const w = words.get(seq)
      if (w === undefined || a.terms.length === 0) {
        out.set(seq, NOTHING)
        continue
      }
      out.set(seq, explainRow(a, weights, w, stems?.get(seq) ?? null, tris?.get(seq) ?? null))
    }
    return out
  })

export const explain = (sql: SqlClient, a: Analysis, o: LexicalOptions, seq: number): Effect.Effect<Explanation, SqlError> =>
  Effect.map(explainMany(sql, a, o, [seq]), (m) => m.get(seq) ?? NOTHING)
