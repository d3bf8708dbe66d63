/**
 * The lexicon from the sources' groups: groups with fewer than two terms in all say nothing (no
 * synonym, no translation) and go; a group with the same terms as an earlier one (in any order)
 * goes. Order: Ding, then OpenThesaurus, then WordNet, each in file order.
 */
import type { LexiconGroup } from "../../src/search/lexical/lexicon.js"

export const assembleGroups = (...sources: ReadonlyArray<Iterable<LexiconGroup>>): Array<LexiconGroup> => {
  const seen = new Set<string>()
  const out: Array<LexiconGroup> = []
  for (const source of sources) {
    for (const g of source) {
      if (g.de.length + g.en.length < 2) continue
      const key = `${[...g.de].sort().join("|")}\t${[...g.en].sort().join("|")}`
      if (seen.has(key)) continue
      seen.add(key)
      out.push(g)
    }
  }
  return out
}
