/**
 * Names of entities as resolve compares them (graph.md §5.1, §5.3; gaps.md §7): the normalization,
 * the input bounds of names, aliases and queries, the banded edit distance and the score of one
 * entity against a key. Pure functions; the recall passes are in resolve.ts.
 */
import { Schema } from "effect"
import type { CandidateMatch } from "../contracts/errors.js"

/** Trailing tokens dropped by normalize while at least one token remains (graph.md §5.1). */
export const LEGAL_FORMS: ReadonlySet<string> = new Set([
  "gmbh", "mbh", "ag", "kg", "ohg", "ug", "gbr", "ev", "se", "co", "inc", "ltd", "llc", "plc"
])

/** The bound of a name, an alias and q, as given and after normalization (graph.md §5.3). */
export const NAME_MAX = 200
/** The typo limit: the edit distance is computed only up to this value (graph.md §5.3). */
export const TYPO_MAX = 2

/**
 * normalize(s) = NFKC → lowercase → ä→ae, ö→oe, ü→ue, ß→ss → NFD and drop \p{M} → every character
 * outside [\p{L}\p{N}] to a space → collapse spaces, trim → drop trailing legal-form tokens while
 * at least one token remains.
 */
export const normalize = (s: string): string => {
  const folded = s
    .normalize("NFKC")
    .toLowerCase()
    .replace(/ä/g, "ae")
    .replace(/ö/g, "oe")
    .replace(/ü/g, "ue")
    .replace(/ß/g, "ss")
    .normalize("NFD")
    .replace(/\p{M}/gu, "")
    .replace(/[^\p{L}\p{N}]/gu, " ")
  const tokens = folded.split(" ").filter((t) => t.length > 0)
  while (tokens.length > 1 && LEGAL_FORMS.has(tokens[tokens.length - 1] ?? "")) tokens.pop()
  return tokens.join(" ")
}

/** Length in characters (code points), as SQLite's length() counts them. */
export const charLength = (s: string): number => {
  let n = 0
  for (const _ of s) n++
  return n
}

const boundMessage = (s: string): string | undefined => {
  if (s.trim().length === 0) return "must contain at least one character that is not a space"
  const given = charLength(s)
  if (given > NAME_MAX) return `must be at most ${NAME_MAX} characters (has ${given})`
  const normalized = charLength(normalize(s))
  if (normalized > NAME_MAX) {
    return `must be at most ${NAME_MAX} characters after normalization (NFKC expands some characters; ` +
      `this one becomes ${normalized}): shorten it`
  }
  return undefined
}

/**
 * A name or an alias of an entity: not blank, at most 200 characters as given and at most 200
 * after normalization (graph.md §5.3). The value is kept as given.
 */
export const BoundedName = Schema.String.pipe(
  Schema.filter((s) => boundMessage(s) ?? true, {
    identifier: "BoundedName",
    description: "1–200 characters, also at most 200 after normalization"
  })
)

/** The query of entity_resolve: the bounds of BoundedName, and some letter or digit to search for. */
export const BoundedQuery = Schema.String.pipe(
  Schema.filter((s) => {
    const bound = boundMessage(s)
    if (bound !== undefined) return bound
    return normalize(s).length > 0 || "must contain a letter or a digit (nothing is left after normalization)"
  }, {
    identifier: "BoundedQuery",
    description: "1–200 characters, also at most 200 after normalization, with a letter or digit"
  })
)

/**
 * Optimal string alignment distance (Damerau–Levenshtein with adjacent transpositions, no
 * substring edited twice) over code points, computed only up to `max` (graph.md §5.3): lengths
 * that differ by more than `max` are not compared, only the band |i − j| ≤ max is filled, and the
 * walk stops once a whole row exceeds max. Returns max + 1 for every distance beyond max.
 */
export const damerauLevenshteinBanded = (a: string, b: string, max = TYPO_MAX): number => {
  const over = max + 1
  if (a === b) return 0
  const x = Array.from(a)
  const y = Array.from(b)
  const n = x.length
  const m = y.length
  if (Math.abs(n - m) > max) return over
  const width = 2 * max + 1
  // rows[i % 3][j - i + max] holds D(i, j) capped at max + 1; cells outside the band read as max + 1
  const rows = [new Array<number>(width).fill(over), new Array<number>(width).fill(over), new Array<number>(width).fill(over)]
  const at = (i: number, j: number): number => {
    if (i < 0 || j < 0 || j > m || Math.abs(i - j) > max) return over
    return rows[i % 3]![j - i + max]!
  }
  for (let j = 0; j <= Math.min(m, max); j++) rows[0]![j + max] = j
  for (let i = 1; i <= n; i++) {
    const row = rows[i % 3]!
    row.fill(over)
    let rowMin = over
    for (let j = Math.max(0, i - max); j <= Math.min(m, i + max); j++) {
      let d: number
      if (j === 0) {
        d = i
      } else {
        const cost = x[i - 1] === y[j - 1] ? 0 : 1
        d = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost)
        if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) d = Math.min(d, at(i - 2, j - 2) + 1)
      }
      if (d > over) d = over
      row[j - i + max] = d
      if (d < rowMin) rowMin = d
    }
    if (rowMin > max) return over
  }
  return at(n, m)
}

/** The distinct trigrams of a normalized string (no padding; none below 3 characters). */
export const trigrams = (s: string): Array<string> => {
  const chars = Array.from(s)
  const out = new Set<string>()
  for (let i = 0; i + 3 <= chars.length; i++) out.add(chars.slice(i, i + 3).join(""))
  return [...out]
}

/** Dice coefficient of the trigram sets: 2·|A ∩ B| / (|A| + |B|); 0 when either has none. */
export const trigramDice = (a: string, b: string): number => {
  const ta = trigrams(a)
  const tb = new Set(trigrams(b))
  if (ta.length === 0 || tb.size === 0) return 0
  let common = 0
  for (const t of ta) if (tb.has(t)) common++
  return (2 * common) / (ta.length + tb.size)
}

/** The first characters of the tokens of a normalized string. */
export const initialsOf = (s: string): string =>
  s.split(" ").filter((t) => t.length > 0).map((t) => Array.from(t)[0] ?? "").join("")

/** A key that the initials pass and score consider: one token of 2–6 letters. */
export const isInitialsKey = (key: string): boolean => /^\p{L}{2,6}$/u.test(key)

/** Order of the match kinds when two kinds give the same score (the first wins). */
export const MATCH_ORDER: ReadonlyArray<CandidateMatch> = ["exact", "alias", "tokens", "typo", "initials", "similar"]

/** gaps.md §7 scores, rounded to 3 decimals (the number compared with the thresholds is the one shown). */
export const SCORE = { exact: 1, alias: 0.98, tokens: 0.95, typoCap: 0.94, initials: 0.8, similarFactor: 0.9 } as const

const round3 = (x: number): number => Math.round(x * 1000) / 1000

const sortedTokens = (s: string): string => s.split(" ").sort().join(" ")

type Scored = { score: number; match: CandidateMatch }

/** a beats b: higher score, on equal scores the kind earlier in MATCH_ORDER. */
const beats = (a: Scored, b: Scored | null): boolean =>
  b === null || a.score > b.score || (a.score === b.score && MATCH_ORDER.indexOf(a.match) < MATCH_ORDER.indexOf(b.match))

/** The kinds other than exact and alias for one normalized string s (s ≠ key). */
const kindsOf = (key: string, s: string, keySorted: string, initialsKey: boolean): Array<Scored> => {
  const out: Array<Scored> = []
  if (sortedTokens(s) === keySorted) out.push({ score: SCORE.tokens, match: "tokens" })
  const d = damerauLevenshteinBanded(key, s, TYPO_MAX)
  if (d >= 1 && d <= TYPO_MAX) {
    out.push({ score: Math.min(SCORE.typoCap, 1 - d / Math.max(charLength(key), charLength(s))), match: "typo" })
  }
  if (initialsKey && initialsOf(s) === key) out.push({ score: SCORE.initials, match: "initials" })
  out.push({ score: trigramDice(key, s) * SCORE.similarFactor, match: "similar" })
  return out
}

/**
 * The score of one entity for a normalized key (gaps.md §7): the best over its name and aliases
 * (both normalized here; normalize is idempotent, so normalized input is fine too). exact name
 * 1.00; exact alias 0.98; tokens (same token multiset, other order) 0.95; typo 1 − d/max(len)
 * capped at 0.94 for d ≤ 2; initials 0.80 (key one token of 2–6 letters equal to the initials of
 * the tokens); similar = trigram Dice × 0.9. Equal scores keep the kind earlier in MATCH_ORDER.
 * null when nothing scores above 0.
 */
export const scoreAgainst = (
  key: string,
  name: string,
  aliases: ReadonlyArray<string>
): { score: number; match: CandidateMatch } | null => {
  if (key.length === 0) return null
  const normName = normalize(name)
  if (normName === key) return { score: SCORE.exact, match: "exact" }
  const normAliases = aliases.map(normalize).filter((a) => a.length > 0)
  if (normAliases.includes(key)) return { score: SCORE.alias, match: "alias" }
  const keySorted = sortedTokens(key)
  const initialsKey = isInitialsKey(key)
  let best: Scored | null = null
  for (const s of [normName, ...normAliases]) {
    if (s.length === 0) continue
    for (const k of kindsOf(key, s, keySorted, initialsKey)) {
      const r = { score: round3(k.score), match: k.match }
      if (r.score > 0 && beats(r, best)) best = r
    }
  }
  return best
}
