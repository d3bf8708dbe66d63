/**
 * found_via, coverage and matched_terms of one hit (architecture.md §7 steps 6 and 6a), read
 * from the hit's indexed rows, so the comparison uses the index's own normalization. The folded
 * tokens of a row are kept in the connection's stamp cache (stamp-cache.ts): a row changes only
 * with a write, and a search explains up to 50 hits.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { storesStems } from "./document.js"
import type { LexicalOptions } from "./options.js"
import type { Alt } from "./match.js"
import { type Analysis, type Expansion, termWeights } from "./query.js"
import { boundedPart } from "./stamp-cache.js"
import { fold } from "./text.js"

export interface Explanation {
  /** matched query words as the query spells them, parts, corrections, synonym phrases; sorted */
  readonly found_via: Array<string>
  /** share of the query's term weight the hit matches, 0–1, 3 decimals */
  readonly coverage: number
  /** query terms matched in any variant */
  readonly matched_terms: number
}

/** The folded tokens of a row's columns, and all of them as a set (single-word alternatives look there). */
export interface Columns {
  readonly cols: ReadonlyArray<ReadonlyArray<string>>
  readonly all: ReadonlySet<string>
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

interface ExplainPart {
  readonly rows: Record<LexTable, Map<number, { readonly folded: ReadonlyArray<string>; readonly columns: Columns }>>
  held: number
}

const emptyPart = (): ExplainPart => ({ rows: { lex_word: new Map(), lex_stem: new Map(), lex_tri: new Map() }, held: 0 })

const split = (cols: ReadonlyArray<string>): Columns => {
  const toks = cols.map((c) => c.split(" ").filter((t) => t.length > 0))
  return { cols: toks, all: new Set(toks.flat()) }
}

/** The folded column texts (and their tokens) of the given rows of one lex table, by seq. */
const columnsOf = (sql: SqlClient, table: LexTable, seqs: ReadonlyArray<number>) =>
  Effect.gen(function*() {
    const part = boundedPart(sql, PART, emptyPart, (p) => p.held, MAX_ROWS)
    const known = part?.rows[table]
    const out = new Map<number, { readonly folded: ReadonlyArray<string>; readonly columns: Columns }>()
    const missing: Array<number> = []
    for (const seq of seqs) {
      const row = known?.get(seq)
      if (row === undefined) missing.push(seq)
      else out.set(seq, row)
    }
    if (missing.length === 0) return out
    const rows = yield* sql.unsafe<IndexedRow>(
      `SELECT rowid, keywords, statement, relations, quote FROM ${table} WHERE rowid IN (SELECT value FROM json_each(?))`,
      [JSON.stringify(missing)]
    )
    for (const r of rows) {
      const folded = [r.keywords, r.statement, r.relations, r.quote].map(fold)
      const row = { folded, columns: split(folded) }
      out.set(Number(r.rowid), row)
      known?.set(Number(r.rowid), row)
    }
    if (part !== undefined) part.held += rows.length
    return out
  })

const foldedTokens = new WeakMap<Alt, ReadonlyArray<string>>()
const tokensOf = (a: Alt): ReadonlyArray<string> => {
  const known = foldedTokens.get(a)
  if (known !== undefined) return known
  const folded = a.tokens.map(fold)
  foldedTokens.set(a, folded)
  return folded
}

/** Mirrors FTS5 MATCH of one alternative: consecutive tokens, the last one a prefix if marked. */
export const altMatches = (a: Alt, row: Columns): boolean => {
  const q = tokensOf(a)
  const n = q.length
  if (n === 0) return false
  if (n === 1 && !a.prefix) return row.all.has(q[0] ?? "")
  if (n === 1) {
    const want = q[0] ?? ""
    for (const t of row.all) if (t.startsWith(want)) return true
    return false
  }
  return row.cols.some((toks) => {
    for (let i = 0; i + n <= toks.length; i++) {
      let ok = true
      for (let j = 0; j < n && ok; j++) {
        const d = toks[i + j] ?? ""
        const want = q[j] ?? ""
        ok = j === n - 1 && a.prefix ? d.startsWith(want) : d === want
      }
      if (ok) return true
    }
    return false
  })
}

const anyMatch = (alts: ReadonlyArray<Alt>, cols: Columns | null): boolean => cols !== null && alts.some((a) => altMatches(a, cols))
const matched = (xs: ReadonlyArray<Expansion>, cols: Columns | null): Array<Expansion> => xs.filter((x) => anyMatch(x.alts, cols))

const NOTHING: Explanation = { found_via: [], coverage: 0, matched_terms: 0 }

/** Explains one hit from its folded index rows. */
const explainRow = (
  a: Analysis,
  weights: ReadonlyArray<number>,
  words: Columns,
  stems: Columns | null,
  tri: ReadonlyArray<string> | null
): Explanation => {
  const found = new Set<string>()
  const share = a.terms.map((t) => {
    const whole = anyMatch(t.word, words) || anyMatch(t.stem, stems) ||
      (tri !== null && t.tri.some((x) => tri.some((c) => c.includes(fold(x)))))
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
    const hits = matched(s.expansions, words)
    if (hits.length === 0) continue
    hits.forEach((e) => found.add(e.text))
    for (const i of s.terms) share[i] = 1
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
    const words = yield* columnsOf(sql, "lex_word", seqs)
    const stems = storesStems(o) ? yield* columnsOf(sql, "lex_stem", seqs) : null
    const tris = o.features.trigram ? yield* columnsOf(sql, "lex_tri", seqs) : null
    const weights = a.terms.length === 0 ? [] : yield* termWeights(sql, a, o)
    for (const seq of seqs) {
      const w = words.get(seq)
      if (w === undefined || a.terms.length === 0) {
        out.set(seq, NOTHING)
        continue
      }
      const st = stems?.get(seq)
      out.set(seq, explainRow(a, weights, w.columns, st === undefined ? null : st.columns, tris?.get(seq)?.folded ?? null))
    }
    return out
  })

export const explain = (sql: SqlClient, a: Analysis, o: LexicalOptions, seq: number): Effect.Effect<Explanation, SqlError> =>
  Effect.map(explainMany(sql, a, o, [seq]), (m) => m.get(seq) ?? NOTHING)
