/**
 * OpenThesaurus in the MyThes format (Debian mythes-de, /usr/share/mythes/th_de_DE_v2.dat): the
 * first line names the encoding; then per headword a line `headword|n` and n synset lines
 * `pos|term|term|…`. Every synset is listed under each of its terms, so the same group recurs
 * (deduplicated when the lexicon is assembled).
 *
 * A term's parentheses are labels ("(ugs.)", "(Oberbegriff)") or optional words ("(sich)",
 * "(etwas)"); both are left out of the term. Dropped: broader and narrower terms and opposites
 * (Oberbegriff, Unterbegriff, Gegenteil, Antonym: not the same meaning) and terms labelled vulgar
 * or obsolete (derb, vulgär, veraltet).
 */
import type { LexiconGroup } from "../../src/search/lexical/lexicon.js"
import { stripAnnotations } from "./ding.js"
import { distinct, keepTerm } from "./terms.js"

const DROPPED_LABELS = new Set(["oberbegriff", "unterbegriff", "gegenteil", "antonym", "derb", "vulgär", "veraltet"])

/** One term of a synset line, or null when it is not kept. */
export const mythesTerm = (raw: string): string | null => {
  const labels = [...raw.matchAll(/\(([^()]*)\)/g)].flatMap((m) => (m[1] as string).split(",").map((l) => l.trim().toLowerCase()))
  if (labels.some((l) => DROPPED_LABELS.has(l))) return null
  return keepTerm(stripAnnotations(raw))
}

/** The groups of the whole file, in file order (repeats included). */
export const mythesGroups = (text: string): Array<LexiconGroup> => {
  const groups: Array<LexiconGroup> = []
  const lines = text.split("\n")
  for (let i = 1; i < lines.length; i++) {
    const head = /^(.*)\|(\d+)$/.exec(lines[i] as string)
    if (head === null) continue
    const n = Number(head[2])
    for (let k = 1; k <= n && i + k < lines.length; k++) {
      const fields = (lines[i + k] as string).split("|").slice(1)
      const de = distinct(fields.flatMap((f) => {
        const t = mythesTerm(f)
        return t === null ? [] : [t]
      }))
      groups.push({ de, en: [] })
    }
    i += n
  }
  return groups
}
