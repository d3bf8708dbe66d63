/**
 * A rewritten row's tokens as FTS5's tokenizer makes them, and a phrase's weighted frequency in
 * them (what bm25 adds up for the row: each column's weight times the phrase's instances in it),
 * for carrying a phrase's rows through a write without copying the rows into the probe
 * (phrases.ts).
 *
 * The lex_word and lex_stem columns hold this module's own tokens joined by one space (document.ts
 * `columnTexts`): lower-case letter and digit runs, and on lex_stem "_" (a compound's tail). FTS5's
 * unicode61 with remove_diacritics 2 splits such a text at the spaces and folds each token as
 * text.ts `fold` does, for every character of SAFE_TEXT (ASCII letters and digits, ß-ö, ø-ÿ; a
 * test asks FTS5 itself character by character). A row holding any other character is left to the
 * probe, where FTS5 reads it; lex_tri (trigrams) always is.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { valuesOf } from "../../db/held-connection.js"
import { type Alt, parsedAltsOf } from "./match.js"
import type { LexFtsTable } from "./schema.js"
import { fold } from "./text.js"

/** The texts whose tokens this module makes as FTS5 does, by table (lex_tri: none). */
export const SAFE_TEXT: Readonly<Record<LexFtsTable, RegExp | null>> = {
  lex_word: /^[a-z0-9 ß-öø-ÿ]*$/,
  lex_stem: /^[a-z0-9_ ß-öø-ÿ]*$/,
  lex_tri: null
}

/** A row's tokens by column (keywords, statement, relations, quote), folded; null: no row. */
export type RowColumns = ReadonlyArray<ReadonlyArray<string>> | null

/** The safe texts of ASCII tokens only, by table: no token needs folding. */
const ASCII_TEXT: Readonly<Record<LexFtsTable, RegExp | null>> = {
  lex_word: /^[a-z0-9 ]*$/,
  lex_stem: /^[a-z0-9_ ]*$/,
  lex_tri: null
}

/** The tokens of one column text; undefined when FTS5 might make others. */
export const columnTokens = (text: string, table: LexFtsTable): Array<string> | undefined => {
  const safe = SAFE_TEXT[table]
  if (safe === null) return undefined
  const ascii = ASCII_TEXT[table]?.test(text) === true
  if (!ascii && !safe.test(text)) return undefined
  const out: Array<string> = []
  for (const t of text.split(" ")) if (t.length > 0) out.push(ascii ? t : fold(t))
  return out
}

/**
 * The rows of `seqs` as they are now, by seq: their tokens (null: no row), or undefined for a row
 * that holds a character FTS5 might tokenize otherwise (the probe answers for it). lex_tri: none.
 */
export const readRowTokens = (
  sql: SqlClient,
  table: LexFtsTable,
  seqs: ReadonlyArray<number>
): Effect.Effect<Map<number, RowColumns | undefined>, SqlError> =>
  Effect.gen(function*() {
    const out = new Map<number, RowColumns | undefined>()
    if (seqs.length === 0) return out
    if (SAFE_TEXT[table] === null) {
      for (const s of seqs) out.set(s, undefined)
      return out
    }
    const rows = yield* valuesOf(
      sql,
      sql.unsafe(`SELECT rowid, keywords, statement, relations, quote FROM main.${table}
        WHERE rowid IN (SELECT value FROM json_each(?))`, [JSON.stringify(seqs)])
    )
    for (const s of seqs) out.set(s, null)
    for (const r of rows) {
      const cols: Array<Array<string>> = []
      for (let c = 1; c <= 4 && cols.length === c - 1; c++) {
        const tokens = columnTokens(typeof r[c] === "string" ? r[c] as string : "", table)
        if (tokens !== undefined) cols.push(tokens)
      }
      out.set(Number(r[0]), cols.length === 4 ? cols : undefined)
    }
    return out
  })

/** The MATCH expressions of one phrase whose literals this module reads as FTS5 does (match.ts altExpr of safe tokens). */
const SAFE_PHRASE: Readonly<Record<LexFtsTable, RegExp | null>> = {
  lex_word: /^[a-z0-9 ß-öø-ÿ"+*]*$/,
  lex_stem: /^[a-z0-9_ ß-öø-ÿ"+*]*$/,
  lex_tri: null
}

/** The one alternative of a phrase's MATCH expression, when FTS5 reads its tokens as this module does; else undefined. */
export const safeAltOf = (phrase: string, table: LexFtsTable): Alt | undefined => {
  const safe = SAFE_PHRASE[table]
  if (safe === null || !safe.test(phrase)) return undefined
  const alts = parsedAltsOf(phrase, table)
  const alt = alts[0]
  return alts.length === 1 && alt !== undefined && alt.tokens.length > 0 ? alt : undefined
}

/** How often the phrase occurs in the tokens (overlapping instances each, as FTS5 counts them). */
export const instances = (tokens: ReadonlyArray<string>, alt: Alt): number => {
  const k = alt.tokens.length
  const last = alt.tokens[k - 1] as string
  let n = 0
  for (let i = 0; i + k <= tokens.length; i++) {
    let j = 0
    while (j < k - 1 && tokens[i + j] === alt.tokens[j]) j++
    if (j < k - 1) continue
    const t = tokens[i + k - 1] as string
    if (alt.prefix ? t.startsWith(last) : t === last) n++
  }
  return n
}

/** The phrase's weighted frequency in a row: each column's weight times its instances there. */
export const weightedFrequency = (row: ReadonlyArray<ReadonlyArray<string>>, alt: Alt, weights: ReadonlyArray<number>): number => {
  let f = 0
  for (let c = 0; c < row.length; c++) {
    const n = instances(row[c] as ReadonlyArray<string>, alt)
    if (n > 0) f += (weights[c] ?? 1) * n
  }
  return f
}
