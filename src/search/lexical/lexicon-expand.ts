/**
 * Stage a's expansions from the lexicon (lexicon.ts: Ding, OpenThesaurus, WordNet): the query's
 * words and phrases of up to three words are looked up in German and English; their
 * same-language synonyms and (bilingual on) their translations become expansions of the syn
 * sub-query. Each expansion carries a weight below the query's own words: the share of the
 * word's senses that hold it, damped (a word with one sense gives full weight, a word with many
 * gives little to each); each word keeps at most MAX_PER_WORD of them, and only those whose
 * words the scope's vocabulary holds (one vocabulary read for the whole query). A same-language
 * synonym also comes by way of the other language: a translation of the word and back (presents →
 * Geschenke → gifts; the dictionaries' groups are per sense, so a word's synonyms are often only
 * in the other language's groups), at PIVOT_FACTOR of both steps' weights.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import type { Lexicon, LexiconGroup, LexiconLang } from "./lexicon.js"
import type { Alt } from "./match.js"
import type { Language } from "./options.js"
import { derivationsOf } from "./derivations.js"
import { isPhrasalVerb, joinedVerbs } from "./particles.js"
import { isStopword } from "./stopwords.js"
import { sameWord } from "./synonyms.js"
import { fold, inflectionStrips, isAlpha, spellingIn, spellingOut, tokenize } from "./text.js"
import { derivedFromVocabulary, documentFrequencies, vocabularyHas } from "./vocab.js"

/** The longest query phrase looked up (Ding's multi-word terms: "terms of payment"). */
export const MAX_PHRASE = 3
/** Expansions one query word or phrase keeps at most (the best weighted that the scope holds). */
export const MAX_PER_WORD = 6
/** Candidates of one word checked against the vocabulary at most (the best weighted). */
const MAX_CANDIDATES = 40
/** Expansions of the lexicon in one query at most. */
export const MAX_PER_QUERY = 48
/** Below this weight an expansion is left out. */
export const MIN_WEIGHT = 0.1
/** A same-language synonym reached through a translation and back: this share of both steps' weights. */
export const PIVOT_FACTOR = 0.6
/** A German word's derivation (melden ~ Meldung ~ gemeldet, derivations.ts): the weak tier's weight. */
export const DERIVED_WEIGHT = 0.5

/** What the lexicon may bring: same-language synonyms, translations, in which languages. */
export interface LexiconUse {
  readonly synonyms: boolean
  readonly translations: boolean
  readonly languages: ReadonlyArray<Language>
}

export interface LexiconCandidate {
  /** the expansion's tokens (as the index tokenizes it) and their text */
  readonly tokens: ReadonlyArray<string>
  readonly text: string
  /** 0–1: the share of the word's senses that hold it, damped */
  readonly weight: number
  /** the side of the lexicon it comes from */
  readonly lang: LexiconLang
}

export interface LexiconHit {
  /** the query words that were looked up, as the query spells them */
  readonly surface: string
  /** how many groups hold the word in the language it was found in (the largest) */
  readonly senses: number
  /** best weighted first */
  readonly candidates: ReadonlyArray<LexiconCandidate>
  /** a word inside a phrase the lexicon holds: expanded only when none of the phrase's expansions occurs in the scope */
  readonly inside?: ReadonlyArray<string>
}

/**
 * The weight of an expansion held by `holding` of the word's `senses` groups: the share, its
 * square root (two senses of equal standing give each 0.71, not 0.5), and 1 for a single sense.
 */
export const senseWeight = (holding: number, senses: number): number =>
  senses <= 0 ? 0 : Math.min(1, Math.sqrt(holding / senses))

const LANGS: ReadonlyArray<LexiconLang> = ["de", "en"]

/**
 * The forms a query phrase is looked up as: itself, its last word one inflection shorter, the
 * umlaut spellings; for a phrasal verb its verb one inflection shorter (handed in → hand in).
 */
const lookupForms = (tokens: ReadonlyArray<string>, lang: LexiconLang): Array<string> => {
  if (isPhrasalVerb(tokens)) {
    if (lang !== "en") return []
    const [verb = "", particle = ""] = tokens
    return [...new Set([verb, ...inflectionStrips(verb, [lang])].map((v) => `${v} ${particle}`))]
  }
  const head = tokens.slice(0, -1)
  const last = tokens[tokens.length - 1] ?? ""
  const lasts = [last, ...inflectionStrips(last, [lang]), ...(lang === "de" ? spellingIn(last) : [])]
  return [...new Set(lasts.map((l) => [...head, l].join(" ")))]
}

/** The groups of the first form the lexicon holds, with that form. */
const groupsFor = (lexicon: Lexicon, tokens: ReadonlyArray<string>, lang: LexiconLang) => {
  for (const form of lookupForms(tokens, lang)) {
    const groups = lexicon.groupsOf(lang, form)
    if (groups.length > 0) return { form, groups }
  }
  return null
}

const other = (lang: LexiconLang): LexiconLang => (lang === "de" ? "en" : "de")

/**
 * The words of `lang` reached from `groups` (the senses of `form` in `lang`) through their
 * translations and back, each at PIVOT_FACTOR × the translation's weight among the word's senses
 * × the word's among the translation's senses (the best way there); the word itself left out.
 */
const pivotWeights = (lexicon: Lexicon, groups: ReadonlyArray<LexiconGroup>, form: string, lang: LexiconLang): Map<string, number> => {
  const o = other(lang)
  const via = new Map<string, number>()
  for (const g of groups) for (const u of g[o]) via.set(u, (via.get(u) ?? 0) + 1)
  const out = new Map<string, number>()
  for (const [u, n] of via) {
    const back = lexicon.groupsOf(o, u)
    if (back.length === 0) continue
    const holding = new Map<string, number>()
    for (const g of back) for (const v of g[lang]) if (v !== form) holding.set(v, (holding.get(v) ?? 0) + 1)
    const toward = senseWeight(n, groups.length)
    for (const [v, m] of holding) {
      const w = PIVOT_FACTOR * toward * senseWeight(m, back.length)
      if ((out.get(v) ?? 0) < w) out.set(v, w)
    }
  }
  return out
}

/** A term as the index compares it (folded, umlauts spelled out). */
const keyOf = (tokens: ReadonlyArray<string>): string => tokens.map((t) => spellingOut(fold(t))).join(" ")

type Candidates = { readonly senses: number; readonly list: ReadonlyArray<LexiconCandidate> } | null

/**
 * The candidates of each phrase looked up so far, per lexicon: a phrase's candidates follow from
 * the lexicon and what it may bring alone, not from the question, so each is computed once and
 * kept (a phrase the lexicon lacks as null). At most MAX_KEPT phrases, then they start again.
 */
const keptPhrases = new WeakMap<Lexicon, Map<string, Candidates>>()
export const MAX_KEPT = 20_000

/** The candidates of one query phrase from the lexicon, best weighted first; null when the lexicon does not hold it. */
const candidatesOf = (lexicon: Lexicon, tokens: ReadonlyArray<string>, use: LexiconUse): Candidates => {
  let known = keptPhrases.get(lexicon)
  if (known === undefined) keptPhrases.set(lexicon, known = new Map())
  const key = `${use.synonyms ? 1 : 0}${use.translations ? 1 : 0}${use.languages.join(",")}\u0000${tokens.join(" ")}`
  const held = known.get(key)
  if (held !== undefined) return held
  const found = lookUp(lexicon, tokens, use)
  if (known.size >= MAX_KEPT) known.clear()
  known.set(key, found)
  return found
}

const lookUp = (lexicon: Lexicon, tokens: ReadonlyArray<string>, use: LexiconUse): Candidates => {
  const weights = new Map<string, { tokens: ReadonlyArray<string>; weight: number; lang: LexiconLang }>()
  const own = keyOf(tokens)
  const phrasal = isPhrasalVerb(tokens)
  let senses = 0
  let found = false
  for (const lang of LANGS) {
    if (!use.languages.includes(lang)) continue
    const hit = groupsFor(lexicon, tokens, lang)
    if (hit === null) continue
    found = true
    const k = hit.groups.length
    senses = Math.max(senses, k)
    const holding = new Map<string, number>()
    const count = (g: LexiconGroup, side: LexiconLang) => {
      for (const term of g[side]) if (term !== hit.form) holding.set(`${side}\u0000${term}`, (holding.get(`${side}\u0000${term}`) ?? 0) + 1)
    }
    for (const g of hit.groups) {
      if (use.synonyms) count(g, lang)
      if (use.translations && use.languages.includes(other(lang))) count(g, other(lang))
    }
    const add = (term: string, w: number, side: LexiconLang) => {
      const toks = tokenize(term)
      if (toks.length === 0 || keyOf(toks) === own) return
      // an inflection of the query's own words is the word sub-query's (a phrasal verb's verb alone too: fill in → fill)
      if (toks.length === tokens.length && toks.every((t, j) => sameWord(t, tokens[j] ?? ""))) return
      if (phrasal && toks.length === 1 && sameWord(toks[0] ?? "", tokens[0] ?? "")) return
      const was = weights.get(term)
      if (was === undefined || was.weight < w) weights.set(term, { tokens: toks, weight: w, lang: side })
    }
    for (const [key, n] of holding) add(key.slice(3), senseWeight(n, k), key.slice(0, 2) as LexiconLang)
    if (use.synonyms) for (const [term, w] of pivotWeights(lexicon, hit.groups, hit.form, lang)) add(term, w, lang)
  }
  // a German word's derivations, whether or not the lexicon holds the word
  const word = tokens[0] ?? ""
  if (tokens.length === 1 && use.synonyms && use.languages.includes("de")) {
    for (const d of derivationsOf(word)) {
      if (sameWord(d, word) || (weights.get(d)?.weight ?? 0) >= DERIVED_WEIGHT) continue
      weights.set(d, { tokens: [d], weight: DERIVED_WEIGHT, lang: "de" })
      found = true
    }
  }
  if (!found) return null
  const list = [...weights.entries()]
    .map(([text, v]) => ({ text, tokens: v.tokens, weight: v.weight, lang: v.lang }))
    .filter((c) => c.weight >= MIN_WEIGHT)
    .sort((a, b) => b.weight - a.weight || a.tokens.length - b.tokens.length || (a.text < b.text ? -1 : a.text > b.text ? 1 : 0))
  return { senses, list: list.slice(0, MAX_CANDIDATES) }
}

/**
 * The query's words and phrases the lexicon holds: the longest phrases first (up to MAX_PHRASE
 * words, within a segment, starting and ending with a content word, or an English verb and its
 * particle: hand in, filled out); before them a German separable verb of the segment
 * (particles.ts: heben … auf, einzureichen), searched as the lexicon's verb with its expansions;
 * a shorter window inside a phrase or verb the lexicon holds is marked `inside` it
 * (lexiconExpansions uses it only when the phrase brings nothing the scope holds); a single word
 * is looked up unless it is a stopword, not alphabetic or shorter than 3 letters, and a German
 * one brings its derivations (derivations.ts) at DERIVED_WEIGHT.
 */
export const matchLexicon = (
  segments: ReadonlyArray<ReadonlyArray<string>>,
  lexicon: Lexicon,
  use: LexiconUse
): Array<LexiconHit> => {
  const out = new Map<string, LexiconHit>()
  for (const seg of segments) {
    /** per token: the phrases the lexicon holds that contain it */
    const covered: Array<Array<string>> = seg.map(() => [])
    // a German separable verb (heben … auf → aufheben): the verb as the lexicon holds it, then its expansions
    if (use.languages.includes("de")) {
      for (const j of joinedVerbs(seg, (v) => lexicon.groupsOf("de", v).length > 0, (w) => isStopword(w, use.languages))) {
        if (out.has(j.surface)) continue
        const found = candidatesOf(lexicon, [j.verb], use)
        const verb: LexiconCandidate = { text: j.verb, tokens: [j.verb], weight: 1, lang: "de" }
        out.set(j.surface, { surface: j.surface, senses: found?.senses ?? 1, candidates: [verb, ...(found?.list ?? [])] })
        if (j.surface !== seg[j.at]) covered[j.at]?.push(j.surface)
      }
    }
    for (let n = Math.min(MAX_PHRASE, seg.length); n >= 1; n--) {
      for (let i = 0; i + n <= seg.length; i++) {
        const window = seg.slice(i, i + n)
        const inside = [...new Set(covered.slice(i, i + n).flat())]
        if (!window.every(isAlpha)) continue
        if (n === 1 && ((window[0] ?? "").length < 3 || isStopword(window[0] ?? "", use.languages))) continue
        // a phrase starts and ends with a content word, or is a phrasal verb (English)
        if (n > 1 && isStopword(window[0] ?? "", use.languages)) continue
        if (n > 1 && isStopword(window[n - 1] ?? "", use.languages) && !(use.languages.includes("en") && isPhrasalVerb(window))) continue
        const surface = window.join(" ")
        const known = out.get(surface)
        const found = known === undefined ? candidatesOf(lexicon, window, use) : { senses: known.senses, list: known.candidates }
        if (found === null) continue
        if (n > 1) for (let j = i; j < i + n; j++) covered[j]?.push(surface)
        if (known !== undefined) {
          // a window found before alone stays alone; one found inside phrases gathers them
          if (known.inside !== undefined) out.set(surface, inside.length === 0 ? { surface, senses: known.senses, candidates: known.candidates } : { ...known, inside: [...new Set([...known.inside, ...inside])] })
          continue
        }
        if (found.list.length > 0) out.set(surface, { surface, senses: found.senses, candidates: found.list, ...(inside.length > 0 ? { inside } : {}) })
      }
    }
  }
  return [...out.values()]
}

interface Probe {
  readonly word: string
  readonly prefix: boolean
}

/** The content words of an alternative and how it searches them (the last one maybe as a prefix). */
export const probesOf = (alt: Alt, languages: ReadonlyArray<Language>): Array<Probe> =>
  alt.tokens.flatMap((t, i) =>
    isStopword(t, languages) ? [] : [{ word: fold(t), prefix: alt.prefix && i === alt.tokens.length - 1 }])

/** A candidate's expansion and the words each of its alternatives searches (for the languages it was built for). */
interface Built<E> {
  /** the candidate's text */
  readonly text: string
  readonly e: E
  readonly probes: ReadonlyArray<ReadonlyArray<Probe>>
}
/** Whether an expansion's words occur in the scope: as words, and the heads of stored compounds it is. */
interface Held {
  readonly asWord: boolean
  readonly heads: ReadonlyArray<Alt>
}
/** Each kept candidate list's expansions, built once per list and languages (candidate lists are kept per lexicon, see candidatesOf). */
const builtOf = new WeakMap<ReadonlyArray<LexiconCandidate>, { readonly languages: string; readonly list: ReadonlyArray<Built<unknown>> }>()

/**
 * The expansions of the hits whose words occur in the scope (each content word of one of its
 * alternatives in lex_word_vocab, a prefix alternative's last word as the start of one), at most
 * MAX_PER_WORD per hit and MAX_PER_QUERY in all, best weighted first. `expansionOf` builds an
 * expansion as the synonym groups do, from its arguments alone (what it builds is kept with the
 * candidates); `skip` drops texts the query already searches. Whether a hit's expansions occur
 * is kept with the connection's vocabulary until a write is carried (derivedFromVocabulary): one
 * vocabulary read for the hits not known so far, none when every one is known or nothing matched.
 */
export const lexiconExpansions = <E extends { readonly text: string; readonly alts: ReadonlyArray<Alt>; readonly heads?: ReadonlyArray<Alt> }>(
  sql: SqlClient,
  hits: ReadonlyArray<LexiconHit>,
  languages: ReadonlyArray<Language>,
  expansionOf: (tokens: ReadonlyArray<string>, weight: number, lang: LexiconLang) => E,
  skip: (text: string) => boolean,
  /** what else `expansionOf` depends on (a kept expansion is built anew when it differs) */
  builtWith = ""
): Effect.Effect<Array<{ readonly surface: string; readonly expansions: ReadonlyArray<E> }>, SqlError> =>
  Effect.gen(function*() {
    const langKey = `${languages.join(",")}|${builtWith}`
    const builtFor = (candidates: ReadonlyArray<LexiconCandidate>): ReadonlyArray<Built<E>> => {
      const was = builtOf.get(candidates)
      if (was !== undefined && was.languages === langKey) return was.list as ReadonlyArray<Built<E>>
      const list = candidates.map((c): Built<E> => {
        const e = expansionOf(c.tokens, c.weight, c.lang)
        return { text: c.text, e, probes: e.alts.map((a) => probesOf(a, languages)) }
      })
      builtOf.set(candidates, { languages: langKey, list })
      return list
    }
    const lists = hits.map((h) => builtFor(h.candidates))
    if (!lists.some((l) => l.some((b) => !skip(b.text)))) return []
    // whether each expansion's words occur, per hit: kept with the connection's vocabulary until
    // a write is carried; the hits not known so far are asked in one read
    const memo = derivedFromVocabulary(sql)
    const helds = lists.map((l) => memo?.get(l) as ReadonlyArray<Held> | undefined)
    const unknown = lists.filter((_, i) => helds[i] === undefined).flat()
    if (unknown.length > 0) {
      const probes = unknown.flatMap((b) => b.probes.flat())
      const has = yield* vocabularyHas(sql, probes.filter((p) => !p.prefix).map((p) => p.word), probes.filter((p) => p.prefix).map((p) => p.word))
      const occurs = (ps: ReadonlyArray<Probe>): boolean =>
        ps.length > 0 && ps.every((p) => (p.prefix ? has.prefixes : has.exact).has(p.word))
      // an expansion as the head of a stored compound: its tail token in lex_stem_vocab
      const headTokens = unknown.flatMap((b) => (b.e.heads ?? []).flatMap((a) => a.tokens))
      const stemDf = headTokens.length === 0 ? new Map<string, number>() : yield* documentFrequencies(sql, "lex_stem_vocab", headTokens)
      for (const [i, l] of lists.entries()) {
        if (helds[i] !== undefined) continue
        const found = l.map((b): Held => ({
          asWord: b.probes.some(occurs),
          heads: (b.e.heads ?? []).filter((a) => a.tokens.every((t) => (stemDf.get(fold(t)) ?? 0) > 0))
        }))
        helds[i] = found
        memo?.set(l, found)
      }
    }
    const taken = new Set<string>()
    let total = 0
    const out: Array<{ readonly surface: string; readonly expansions: ReadonlyArray<E> }> = []
    const expanded = new Set<string>()
    for (const [i, hit] of hits.entries()) {
      if (hit.inside !== undefined && hit.inside.some((p) => expanded.has(p))) continue
      const list = lists[i] ?? []
      const held = helds[i] ?? []
      const kept: Array<E> = []
      for (const [j, b] of list.entries()) {
        if (kept.length >= MAX_PER_WORD || total >= MAX_PER_QUERY) break
        if (skip(b.text)) continue
        const { e } = b
        if (taken.has(e.text)) continue
        const { asWord, heads } = held[j] ?? { asWord: false, heads: [] }
        if (!asWord && heads.length === 0) continue
        taken.add(e.text)
        // the heads the scope holds only (none: no lex_stem sub-query for it)
        kept.push(e.heads === undefined || heads.length === e.heads.length ? e : { ...e, heads })
        total++
      }
      if (kept.length > 0) {
        expanded.add(hit.surface)
        out.push({ surface: hit.surface, expansions: kept })
      }
    }
    return out
  })

/**
 * Whether the lexicon already relates two terms (synonyms or translations): a group that holds
 * one of them (in either language, looked up as a query phrase is) holds the other as well. The
 * curated layer keeps only what the lexicon does not relate (test/search/lexical/curated.test.ts).
 */
export const lexiconRelates = (lexicon: Lexicon, a: string, b: string): boolean => {
  const holds = (from: string, to: string): boolean => {
    const tokens = tokenize(from)
    const target = tokenize(to).join(" ")
    if (tokens.length === 0 || target === "") return false
    return LANGS.some((lang) => {
      const hit = groupsFor(lexicon, tokens, lang)
      return hit !== null && hit.groups.some((g) => g.de.some((t) => tokenize(t).join(" ") === target) || g.en.some((t) => tokenize(t).join(" ") === target))
    })
  }
  return holds(a, b) || holds(b, a)
}
