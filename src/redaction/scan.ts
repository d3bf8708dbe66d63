/**
 * Finds a normalized term in the columns of a scope file: an SQL prefilter that never drops a row
 * the term can be in, then the exact match (match.ts) decides. A row can hold the folded term
 * only if (a) its lower-cased text holds the longest run of ASCII characters of the folded term
 * that has no space, or (b) it has a character outside ASCII (which may fold to ASCII), or (c), in
 * a JSON column, an escape `\u` (which may decode to anything); a pure-ASCII text folds
 * character by character to its lower case, punctuation to spaces, so (a) is exact for it.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { failureTable, foldedIncludes } from "./fold.js"
import { findInJson, findInText, type Range } from "./match.js"
import type { ColumnInfo } from "./places.js"

/** One row's column where the term occurs. */
export interface Found {
  readonly table: string
  readonly column: string
  readonly key: ReadonlyArray<string | number>
  readonly ranges: ReadonlyArray<Range>
}

const NON_ASCII_GLOB = "*[^\u0001-\u007f]*"

/** The longest run of ASCII characters other than space in the folded term ("" when it has none). */
export const asciiAnchor = (folded: string): string => {
  let best = ""
  let run = ""
  for (const ch of folded) {
    const c = ch.charCodeAt(0)
    if (ch.length === 1 && c > 0 && c < 128 && ch !== " ") {
      run += ch
      if (run.length > best.length) best = run
    } else {
      run = ""
    }
  }
  return best
}

const ident = (name: string): string => `"${name.replace(/"/g, "\"\"")}"`

/** Rows of a table by rowid: at most `upTo`, or after `after` (search_log's rows written while a redaction prepares). */
export interface RowidBound {
  readonly upTo?: number
  readonly after?: number
}

/** Every occurrence of the folded term in one column, ordered by the row's key. */
export const scanColumn = (sql: SqlClient, c: ColumnInfo, folded: string, bound: RowidBound = {}, turn: Effect.Effect<void> = Effect.void) =>
  Effect.gen(function*() {
    const anchor = asciiAnchor(folded)
    const col = ident(c.column)
    const keyExpr = `json_array(${c.pk.map(ident).join(", ")})`
    const clauses = [`${col} GLOB ?`]
    const params: Array<string> = [NON_ASCII_GLOB]
    if (anchor.length > 0) {
      clauses.push(`instr(lower(${col}), ?) > 0`)
      params.push(anchor)
    }
    if (c.json !== null) clauses.push(`instr(${col}, '\\u') > 0`)
    const limits: Array<string> = []
    const limitParams: Array<number> = []
    if (bound.upTo !== undefined) {
      limits.push("rowid <= ?")
      limitParams.push(bound.upTo)
    }
    if (bound.after !== undefined) {
      limits.push("rowid > ?")
      limitParams.push(bound.after)
    }
    const rows = yield* sql.unsafe<{ key: string; text: string }>(
      `SELECT ${keyExpr} AS key, ${col} AS text FROM ${ident(c.table)}
       WHERE typeof(${col}) = 'text' AND (${clauses.join(" OR ")})${limits.map((l) => ` AND ${l}`).join("")}
       ORDER BY ${c.pk.map(ident).join(", ")}`,
      [...params, ...limitParams]
    )
    const failure = failureTable(folded)
    const out: Array<Found> = []
    for (const row of rows) {
      yield* turn
      let ranges: Array<Range>
      if (c.json !== null) {
        ranges = findInJson(row.text, folded, c.json)
      } else {
        if (!foldedIncludes(row.text, folded, failure)) continue
        ranges = findInText(row.text, folded)
      }
      if (ranges.length > 0) {
        out.push({ table: c.table, column: c.column, key: JSON.parse(row.key) as Array<string | number>, ranges })
      }
    }
    return out
  })
