/**
 * The Ding dictionary (Debian trans-de-en, /usr/share/trans/de-en): one entry per line,
 * `German :: English`; each side has `|`-separated sub-entries (e.g. singular | plural) that pair
 * up by position, each a `;`-separated list of alternatives. An alternative carries annotations:
 * `{f}`, `{pl}`, `{vt}` (grammar), `[Br.]`, `[econ.]`, `[obs.]` (labels), `(…)` (explanations and
 * optional words), `<…>` (other spellings), `/AGB/` (abbreviations).
 *
 * Each sub-entry becomes one group: its German alternatives and its English ones. Kept from an
 * alternative: its words without annotations and without the placeholders etw., jdn., sth., sb.
 * …; in a verb's entry, English terms without their leading "to" and German ones without their
 * leading "sich". Dropped: alternatives labelled vulgar, obsolete, archaic or dated, and
 * conjugated examples ("er/sie zahlt").
 */
import type { LexiconGroup } from "../../src/search/lexical/lexicon.js"
import { distinct, keepTerm } from "./terms.js"

const OPEN = "([{<"
const CLOSE = ")]}>"

/** `text` split at `sep` where no bracket is open (`{prp; +Dat.}` keeps its `;`). */
export const splitTop = (text: string, sep: string): Array<string> => {
  const parts: Array<string> = []
  let depth = 0
  let start = 0
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string
    if (OPEN.includes(c)) depth++
    else if (CLOSE.includes(c)) depth = Math.max(0, depth - 1)
    else if (depth === 0 && text.startsWith(sep, i)) {
      parts.push(text.slice(start, i))
      start = i + sep.length
      i += sep.length - 1
    }
  }
  parts.push(text.slice(start))
  return parts
}

/** Labels whose alternative is left out: vulgar, obsolete, archaic, dated. */
const DROPPED_LABELS = new Set([
  "vulg.", "derb", "obs.", "obs", "archaic", "pseudoarchaic", "dated", "becoming dated", "slightly dated",
  "veraltet", "veraltend", "altertümlich", "altertümelnd", "alt"
])

/**
 * Subjects whose entries are names of species (birds, animals, plants): precise translations
 * that business rules do not use, and a large part of the dictionary. An entry with such a label
 * is left out whole (its plural sub-entry carries no label).
 */
const DROPPED_SUBJECTS = new Set(["ornith.", "zool.", "bot."])

/** The labels in `[…]` of an alternative (a label list "formal, rare" gives each). */
const labelsOf = (alt: string): Array<string> =>
  [...alt.matchAll(/\[([^\]]*)\]/g)].flatMap((m) => (m[1] as string).split(/[,/]/).map((l) => l.trim()))

/** The alternative without its bracketed annotations and abbreviations. */
export const stripAnnotations = (alt: string): string => {
  let text = alt
  for (;;) {
    const next = text.replace(/\{[^{}]*\}|\[[^[\]]*\]|\([^()]*\)|<[^<>]*>/g, " ")
    if (next === text) break
    text = next
  }
  return text.replace(/(^|\s)\/[^/\s][^/]*\/(?=\s|$)/g, " ")
}

const PLACEHOLDER = /^(etw|jdn|jdm|jds|jd|sth|sb|so)\.('s)?$/i

/** Conjugated forms ("er/sie beeilt sich", "he/she hurries") are examples, not terms. */
const CONJUGATED = /^(ich\/er\/sie|er\/sie|sie\/er|he\/she|i\/he\/she) /i

/**
 * One alternative as a term of `lang`, or null when it is not kept; `verb`: the entry is a verb
 * (its first German sub-entry is marked {vt}, {vi}, {vr} or {v}).
 */
export const dingTerm = (alt: string, lang: "de" | "en", verb: boolean): string | null => {
  if (labelsOf(alt).some((l) => DROPPED_LABELS.has(l))) return null
  let words = stripAnnotations(alt).split(/\s+/).filter((w) => w !== "" && !PLACEHOLDER.test(w))
  if (verb && lang === "en" && words[0] === "to" && words.length > 1) words = words.slice(1)
  if (verb && lang === "de" && words[0] === "sich" && words.length > 1) words = words.slice(1)
  const term = words.join(" ")
  return CONJUGATED.test(term) ? null : keepTerm(term)
}

/** The groups of one line of the file (none for a comment or a line it cannot pair up). */
export const dingGroups = (line: string): Array<LexiconGroup> => {
  if (line.startsWith("#") || line.trim() === "") return []
  if (labelsOf(line).some((l) => DROPPED_SUBJECTS.has(l))) return []
  const sides = splitTop(line, "::")
  if (sides.length !== 2) return []
  const de = splitTop(sides[0] as string, "|")
  const en = splitTop(sides[1] as string, "|")
  if (de.length !== en.length) return []
  const verb = /\{(vt|vi|vr|v)\}/.test(de[0] as string)
  const terms = (entry: string, lang: "de" | "en") =>
    distinct(splitTop(entry, ";").flatMap((alt) => {
      const t = dingTerm(alt, lang, verb)
      return t === null ? [] : [t]
    }))
  return de.map((deEntry, i) => ({ de: terms(deEntry, "de"), en: terms(en[i] as string, "en") }))
}

/** The Ding file's version line, e.g. "devel 2023-01-30". */
export const dingVersion = (text: string): string | null => /^# Version :: (.+)$/m.exec(text)?.[1]?.trim() ?? null
