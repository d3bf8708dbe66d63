/**
 * FTS5 MATCH expressions of stage a. Every token is a quoted FTS5 literal (inner " doubled), so
 * user text never reaches MATCH unquoted and never acts as an operator (NEAR, AND, *, :, …).
 */
import { ftsLiteral } from "../../db/fts.js"
import { type LexFtsTable, TOKEN_SEPARATORS } from "./schema.js"
import { fold } from "./text.js"

/** One alternative of a sub-query: a word or a phrase, the last token optionally a prefix. */
export interface Alt {
  readonly tokens: ReadonlyArray<string>
  readonly prefix: boolean
}

/** One alternative as FTS5 syntax: quoted tokens joined into a phrase, "*" for a prefix. */
export const altExpr = (a: Alt): string => `${a.tokens.map(ftsLiteral).join(" + ")}${a.prefix ? " *" : ""}`

/** The phrases of the alternatives in their order (duplicates and empty ones dropped): FTS5 numbers them so. */
export const orPhrases = (alts: ReadonlyArray<Alt>): Array<string> =>
  [...new Set(alts.filter((a) => a.tokens.length > 0 && a.tokens.every((t) => t.length > 0)).map(altExpr))]

/** The OR of the alternatives (duplicates and empty ones dropped), or null when none is left. */
export const orExpr = (alts: ReadonlyArray<Alt>): string | null => {
  const parts = orPhrases(alts)
  return parts.length === 0 ? null : parts.join(" OR ")
}

/**
 * The alternatives of a MATCH expression as `table`'s tokenizer reads them (the inverse of orExpr
 * and altExpr: quoted literals, inner " doubled, joined by " + " into a phrase, a prefix marked
 * " *", alternatives joined by " OR "): a literal's tokens are its folded lower-case letter/digit
 * runs ("_" kept in lex_stem), as a row's are (index.ts rowTokens); an alternative's last token is
 * a prefix when a "*" follows its literals.
 */
export const altsOfMatch = (match: string, table: LexFtsTable): Array<Alt> => {
  const separators = TOKEN_SEPARATORS[table]
  const alts: Array<Alt> = []
  let tokens: Array<string> = []
  let prefix = false
  for (const m of match.matchAll(/"((?:[^"]|"")*)"|\*|\bOR\b/g)) {
    if (m[1] !== undefined) {
      for (const t of m[1].replaceAll("\"\"", "\"").toLowerCase().split(separators)) if (t.length > 0) tokens.push(fold(t))
    } else if (m[0] === "*") prefix = true
    else {
      alts.push({ tokens, prefix })
      tokens = []
      prefix = false
    }
  }
  alts.push({ tokens, prefix })
  return alts
}

/** Parsed alternatives by table and expression, past which they start again. */
const parsed = new Map<string, ReadonlyArray<Alt>>()
const MAX_PARSED = 50_000

/**
 * altsOfMatch, parsed once per table and expression (a phrase held or counted is carried through
 * many writes, and each asks for its tokens): the same alternatives, not to be changed.
 */
export const parsedAltsOf = (match: string, table: LexFtsTable): ReadonlyArray<Alt> => {
  const key = `${table}\u0000${match}`
  let known = parsed.get(key)
  if (known === undefined) {
    if (parsed.size >= MAX_PARSED) parsed.clear()
    known = altsOfMatch(match, table)
    parsed.set(key, known)
  }
  return known
}
