/**
 * FTS5's bm25 of one phrase in one row, computed outside FTS5 with the same float operations, so
 * a term kept from an earlier state of the table can be computed again for the table's new row
 * count, average length and the phrase's new number of rows (phrases.ts carries its rows so).
 *
 * fts5_aux.c (fts5Bm25GetData, fts5Bm25Function), k1 = 1.2, b = 0.75:
 *   avgdl = (double)nToken / (double)nRow                       nToken: all columns' tokens
 *   idf   = log((nRow - nHit + 0.5) / (nHit + 0.5)), 1e-6 when ≤ 0   nHit: the phrase's rows
 *   f     = Σ over the phrase's instances in the row of its column's weight (in instance order)
 *   D     = the row's tokens (all columns)
 *   term  = idf * ((f * (k1 + 1.0)) / (f + k1 * (1 - b + b * D / avgdl)))   bm25 = −(0 + term)
 * The logarithm is SQLite's ln() — the same C library's log() FTS5 calls — not Math.log, which
 * may differ in the last bit. D is the row's %_docsize entry (varints, as FTS5 writes them); nRow
 * and nToken are the count and the sum of those entries (the averages record FTS5 keeps them in is
 * written at the commit only, so a writer reading it in its own transaction would read old ones).
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { valuesOf } from "../../db/held-connection.js"
import type { LexFtsTable } from "./schema.js"

const K1 = 1.2
const B = 0.75

/** The table's number of rows and tokens (all columns) as bm25 reads them. */
export interface Basis {
  readonly rows: number
  readonly tokens: number
}

/** SQLite's varints (sqlite3Fts5GetVarint): the values of a blob given in hex. */
const varints = (hex: string): Array<number> => {
  const out: Array<number> = []
  let v = 0
  let n = 0
  for (let i = 0; i + 1 < hex.length; i += 2) {
    const b = parseInt(hex.slice(i, i + 2), 16)
    n++
    if (n === 9) {
      out.push(v * 256 + b)
      v = 0
      n = 0
    }
    else if ((b & 0x80) === 0) {
      out.push(v * 128 + b)
      v = 0
      n = 0
    }
    else v = v * 128 + (b & 0x7f)
  }
  return out
}

const sum = (xs: ReadonlyArray<number>): number => xs.reduce((a, b) => a + b, 0)

/** The tokens of the given rows (all columns), by seq; a seq without a row is left out. */
export const readLengths = (sql: SqlClient, table: LexFtsTable | string, seqs: ReadonlyArray<number> | "all"): Effect.Effect<Map<number, number>, SqlError> =>
  Effect.map(
    seqs === "all"
      ? valuesOf(sql, sql.unsafe(`SELECT json_group_array(id), json_group_array(hex(sz)) FROM ${table}_docsize`))
      : valuesOf(
        sql,
        sql.unsafe(`SELECT json_group_array(id), json_group_array(hex(sz)) FROM ${table}_docsize
          WHERE id IN (SELECT value FROM json_each(?))`, [JSON.stringify(seqs)])
      ),
    (rows) => {
      const ids = JSON.parse(String(rows[0]?.[0] ?? "[]")) as Array<number>
      const sizes = JSON.parse(String(rows[0]?.[1] ?? "[]")) as Array<string>
      const out = new Map<number, number>()
      for (let i = 0; i < ids.length; i++) out.set(ids[i] as number, sum(varints(sizes[i] as string)))
      return out
    }
  )

const IDF_SQL = [1, 2, 3].map((n) => `SELECT ${Array.from({ length: n }, (_, i) => `ln((? - ? + 0.5) / (? + 0.5)) AS v${i}`).join(", ")}`)

/** idfs by their two counts (what they are a function of), kept so a phrase asks no statement for one computed before. */
const idfMemo = new Map<string, number>()
const MAX_IDF_MEMO = 100_000
const idfKey = (rows: number, hits: number): string => `${rows}:${hits}`
const rememberIdf = (rows: number, hits: number, v: unknown): number => {
  const n = Number(v ?? 0)
  const idf = n <= 0 ? 1e-6 : n
  if (idfMemo.size >= MAX_IDF_MEMO) idfMemo.clear()
  idfMemo.set(idfKey(rows, hits), idf)
  return idf
}

/** The idfs of phrases with `hits` rows in tables of `rows` rows (at most three), by SQLite's ln(): kept ones, else in one statement. */
export const idfsOf = (sql: SqlClient, pairs: ReadonlyArray<readonly [rows: number, hits: number]>): Effect.Effect<Array<number>, SqlError> => {
  const known = pairs.map(([rows, hits]) => idfMemo.get(idfKey(rows, hits)))
  if (known.every((v) => v !== undefined)) return Effect.succeed(known as Array<number>)
  return Effect.map(valuesOf(sql, sql.unsafe(IDF_SQL[pairs.length - 1] as string, pairs.flatMap(([rows, hits]) => [rows, hits, hits]))), (r) =>
    pairs.map(([rows, hits], i) => rememberIdf(rows, hits, r[0]?.[i])))
}

/** The idfs of many pairs computed in one statement and kept for idfsOf (those not kept yet). */
export const keepIdfs = (sql: SqlClient, pairs: ReadonlyArray<readonly [rows: number, hits: number]>): Effect.Effect<void, SqlError> => {
  const missing = new Map<string, readonly [number, number]>()
  for (const [rows, hits] of pairs) if (!idfMemo.has(idfKey(rows, hits))) missing.set(idfKey(rows, hits), [rows, hits])
  if (missing.size === 0) return Effect.void
  const wanted = [...missing.values()]
  return Effect.map(
    valuesOf(
      sql,
      sql.unsafe(`SELECT key, ln((json_extract(value, '$[0]') - json_extract(value, '$[1]') + 0.5) / (json_extract(value, '$[1]') + 0.5))
      FROM json_each(?)`, [JSON.stringify(wanted)])
    ),
    (rows) => {
      for (const [key, v] of rows) {
        const pair = wanted[Number(key)]
        if (pair !== undefined) rememberIdf(pair[0], pair[1], v)
      }
    }
  )
}

export const avgdlOf = (b: Basis): number => b.tokens / b.rows

/** The term (−bm25) of a row with weighted frequency `f` and `d` tokens. */
export const termOf = (idf: number, avgdl: number, f: number, d: number): number =>
  idf * ((f * (K1 + 1.0)) / (f + K1 * (1 - B + B * d / avgdl)))

/**
 * The weighted frequency that gives `term` for a row of `d` tokens, when the column weights are
 * whole numbers (then f is one): undefined when none does, bit for bit.
 */
export const frequencyOf = (idf: number, avgdl: number, term: number, d: number): number | undefined => {
  const k = K1 * (1 - B + B * d / avgdl)
  const r = term / idf
  const f = Math.round((r * k) / (K1 + 1.0 - r))
  return f >= 0 && termOf(idf, avgdl, f, d) === term ? f : undefined
}
