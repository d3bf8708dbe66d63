/**
 * FTS5 MATCH expressions of stage a. Every token is a quoted FTS5 literal (inner " doubled), so
 * user text never reaches MATCH unquoted and never acts as an operator (NEAR, AND, *, :, …).
 */
import { ftsLiteral } from "../../db/fts.js"

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
