/**
 * Cross-language expansion of stage a (gaps.md §11) with the de↔en business vocabulary of
 * bilingual.ts: a query word or phrase that is one side of a pair brings in the other side —
 * one hop, never a chain through a third word — and only where the scope's vocabulary holds the
 * other side's words in the form the expansion searches them. A monolingual scope therefore gets
 * no expansion from the other language (and no extra alternative in its syn sub-query).
 *
 * The pairs are indexed once by the folded, spelled-out form of each side's first word and by
 * its suffix strips, so a search looks up its own words instead of scanning the vocabulary; the
 * scope check is one statement over lex_word_vocab, run only when a query word touched a pair.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { BILINGUAL_PAIRS, type Pair } from "./bilingual.js"
import type { Alt } from "./match.js"
import type { Language } from "./options.js"
import { isStopword } from "./stopwords.js"
import { normal, sameWord } from "./synonyms.js"
import { fold, tokenize } from "./text.js"
import { vocabularyHas } from "./vocab.js"

interface Entry {
  /** the side a query matches, as lowercase tokens */
  readonly side: ReadonlyArray<string>
  /** the other side of the pair */
  readonly other: ReadonlyArray<string>
}

export interface BilingualLexicon {
  /** entries by the normal form of their first word */
  readonly byForm: ReadonlyMap<string, ReadonlyArray<Entry>>
  /** entries by each suffix strip of their first word */
  readonly byStrip: ReadonlyMap<string, ReadonlyArray<Entry>>
}

const push = (m: Map<string, Array<Entry>>, key: string, e: Entry): void => {
  const list = m.get(key)
  if (list === undefined) m.set(key, [e])
  else list.push(e)
}

/** The lookup structure of the pairs (both directions); built once per process for the built-in list. */
export const bilingualLexicon = (pairs: ReadonlyArray<Pair> = BILINGUAL_PAIRS): BilingualLexicon => {
  const byForm = new Map<string, Array<Entry>>()
  const byStrip = new Map<string, Array<Entry>>()
  for (const [de, en] of pairs) {
    const d = tokenize(de)
    const e = tokenize(en)
    if (d.length === 0 || e.length === 0) continue
    for (const entry of [{ side: d, other: e }, { side: e, other: d }]) {
      const first = normal(entry.side[0] ?? "")
      push(byForm, first.form, entry)
      for (const s of first.strips) push(byStrip, s, entry)
    }
  }
  return { byForm, byStrip }
}

let builtin: BilingualLexicon | null = null
/** The lexicon of the built-in vocabulary (built on first use). */
export const builtinBilingualLexicon = (): BilingualLexicon => (builtin ??= bilingualLexicon())

/** Entries whose first word may be `token` (sameWord decides): equal form, or one strip apart. */
const candidates = (lexicon: BilingualLexicon, token: string): Set<Entry> => {
  const n = normal(token)
  const out = new Set<Entry>()
  for (const e of lexicon.byForm.get(n.form) ?? []) out.add(e)
  for (const e of lexicon.byStrip.get(n.form) ?? []) out.add(e)
  for (const s of n.strips) for (const e of lexicon.byForm.get(s) ?? []) out.add(e)
  return out
}

export interface BilingualMatch {
  /** the query words that matched one side of a pair, as the query spells them */
  readonly surface: string
  /** the other sides of the pairs these words matched, in vocabulary order, no duplicates */
  readonly others: ReadonlyArray<ReadonlyArray<string>>
}

/**
 * The pairs the query touches: a side matches where its words follow each other in a segment,
 * each equal to the query word or one inflection away (as synonym members do); a single-word
 * side never matches a stopword. In order of first occurrence.
 */
export const matchBilingual = (
  segments: ReadonlyArray<ReadonlyArray<string>>,
  lexicon: BilingualLexicon,
  languages: ReadonlyArray<Language>
): Array<BilingualMatch> => {
  const found = new Map<string, Map<string, ReadonlyArray<string>>>()
  for (const seg of segments) {
    seg.forEach((token, i) => {
      for (const e of candidates(lexicon, token)) {
        if (e.side.length === 1 && isStopword(token, languages)) continue
        if (i + e.side.length > seg.length) continue
        const window = seg.slice(i, i + e.side.length)
        if (!window.every((t, j) => sameWord(t, e.side[j] ?? ""))) continue
        const surface = window.join(" ")
        const others = found.get(surface) ?? new Map<string, ReadonlyArray<string>>()
        others.set(e.other.join(" "), e.other)
        found.set(surface, others)
      }
    })
  }
  return [...found].map(([surface, others]) => ({ surface, others: [...others.values()] }))
}

/** The content words of an alternative and how it searches them (the last one maybe as a prefix). */
const probesOf = (alt: Alt, languages: ReadonlyArray<Language>): Array<{ readonly word: string; readonly prefix: boolean }> =>
  alt.tokens.flatMap((t, i) =>
    isStopword(t, languages) ? [] : [{ word: fold(t), prefix: alt.prefix && i === alt.tokens.length - 1 }])

/**
 * The expansions of the matches whose words occur in the scope: an expansion stays when one of
 * its alternatives has each content word in lex_word_vocab — as a term, or for a prefix
 * alternative's last word as the start of one. `expansionOf` builds an expansion as the synonym
 * groups do (its text and alternatives); `skip` drops texts the query already searches. Matches
 * left without an expansion are dropped. One vocabulary read, none when nothing matched.
 */
export const crossLanguageExpansions = <E extends { readonly text: string; readonly alts: ReadonlyArray<Alt> }>(
  sql: SqlClient,
  matches: ReadonlyArray<BilingualMatch>,
  languages: ReadonlyArray<Language>,
  expansionOf: (member: ReadonlyArray<string>) => E,
  skip: (text: string) => boolean
): Effect.Effect<Array<{ readonly surface: string; readonly expansions: ReadonlyArray<E> }>, SqlError> =>
  Effect.gen(function*() {
    const taken = new Set<string>()
    const wanted = matches.map((m) => ({
      surface: m.surface,
      expansions: m.others.map(expansionOf).filter((e) => {
        if (skip(e.text) || taken.has(e.text)) return false
        taken.add(e.text)
        return true
      })
    })).filter((m) => m.expansions.length > 0)
    if (wanted.length === 0) return []
    const probes = wanted.flatMap((m) => m.expansions.flatMap((e) => e.alts.flatMap((a) => probesOf(a, languages))))
    const has = yield* vocabularyHas(sql, probes.filter((p) => !p.prefix).map((p) => p.word), probes.filter((p) => p.prefix).map((p) => p.word))
    const occurs = (a: Alt): boolean => {
      const ps = probesOf(a, languages)
      return ps.length > 0 && ps.every((p) => (p.prefix ? has.prefixes : has.exact).has(p.word))
    }
    return wanted
      .map((m) => ({ surface: m.surface, expansions: m.expansions.filter((e) => e.alts.some(occurs)) }))
      .filter((m) => m.expansions.length > 0)
  })
