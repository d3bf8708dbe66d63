/**
 * Step 2 of the query side of stage a (architecture.md §7): per term its variants and the
 * alternatives each sub-query searches — spelling and inflection variants, Snowball stems and the
 * tail token, compound parts and typo corrections found in the scope vocabulary — and the
 * synonym groups (and the de↔en vocabulary) the query words touch.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import type { Alt } from "./match.js"
import type { LexicalOptions } from "./options.js"
import { storesTails } from "./options.js"
import { type BilingualLexicon, crossLanguageExpansions, matchBilingual } from "./crosslang.js"
import type { Lexicon, LexiconLang } from "./lexicon.js"
import { lexiconExpansions, matchLexicon } from "./lexicon-expand.js"
import { isStopword } from "./stopwords.js"
import { matchSynonyms, type SynonymGroup } from "./synonyms.js"
import type { RawTerm } from "./terms.js"
import {
  fold,
  inflectionStrips,
  isAlpha,
  isNumeric,
  spellingIn,
  spellingOut,
  stem,
  tailOf
} from "./text.js"
import { nearWords } from "./vocab.js"

/** A compound part, a typo correction or a synonym: its text and what it searches. */
export interface Expansion {
  readonly text: string
  readonly alts: ReadonlyArray<Alt>
  /** below 1: a lexicon expansion, weighted by the share of the word's senses that hold it (syn sub-query tiers) */
  readonly weight?: number
  /** lex_stem: a one-word lexicon expansion as the head of a stored compound (its tail token: Prüfung → Erstteilprüfung) */
  readonly heads?: ReadonlyArray<Alt>
}

export interface AnalyzedTerm {
  /** as listed in query.terms: lowercase, a phrase's tokens joined by one space */
  readonly text: string
  readonly tokens: ReadonlyArray<string>
  readonly code: boolean
  /** lex_word: the term, spelling variants, inflection strips (prefixes where useful) */
  readonly word: ReadonlyArray<Alt>
  /** lex_stem: Snowball stems and the tail token (the term as the head of a compound) */
  readonly stem: ReadonlyArray<Alt>
  /** lex_tri: substrings */
  readonly tri: ReadonlyArray<string>
  /** lex_stem: compound parts found in the scope vocabulary (segment: which part of the word) */
  readonly parts: ReadonlyArray<Expansion & { readonly segment: number }>
  /** how many parts the word has (a partial decomposition counts its unknown rest) */
  readonly partSegments: number
  /** lex_word: typo corrections from the scope vocabulary */
  readonly corrections: ReadonlyArray<Expansion>
  /** query.variants[term] */
  readonly variants: ReadonlyArray<string>
}

export interface SynonymExpansion {
  /** "~<matched words>" */
  readonly key: string
  /** indices of the terms the matched words belong to */
  readonly terms: ReadonlyArray<number>
  readonly expansions: ReadonlyArray<Expansion>
}

const MIN_PREFIX = 4
/** an inflection strip is searched as a prefix only from 5 characters on (mull* would reach Müll) */
const MIN_STRIP_PREFIX = 5
export const MIN_DECOMPOUND = 6
export const MAX_DECOMPOUND = 40
export const MIN_PART = 3
const MIN_FUZZY = 5
const FUZZY_PER_TERM = 2
export const LINKERS = ["s", "es", "n", "en", "e", "er"]
const LAST_PART_ENDINGS = ["e", "n", "en", "s", "es"]
/** a partial decomposition: a known head of ≥ 4 letters, a known modifier of ≥ 6 */
const MIN_HEAD = 4
const MIN_MODIFIER = 6

export const uniq = <A>(xs: Iterable<A>): Array<A> => [...new Set(xs)]
const prefixable = (t: string): boolean => isAlpha(t) && t.length >= MIN_PREFIX
const wordAlt = (t: string): Alt => ({ tokens: [t], prefix: prefixable(t) })
const phraseAlt = (tokens: ReadonlyArray<string>): Alt => ({ tokens, prefix: prefixable(tokens[tokens.length - 1] ?? "") })

/** Drops duplicates and alternatives a shorter prefix alternative already covers. */
export const collapseAlts = (alts: ReadonlyArray<Alt>): Array<Alt> => {
  const keyed = alts.map((a) => ({ a, key: a.tokens.map(fold).join(" ") }))
  const out: Array<Alt> = []
  const seen = new Set<string>()
  for (const { a, key } of keyed) {
    const seenKey = `${key}${a.prefix ? "*" : ""}`
    if (seen.has(seenKey)) continue
    const covered = keyed.some((o) =>
      o.a.prefix && o.a.tokens.length === a.tokens.length && o.key !== key && key.startsWith(o.key) &&
      o.a.tokens.slice(0, -1).join(" ") === a.tokens.slice(0, -1).join(" "))
    const coveredExact = !a.prefix && keyed.some((o) => o.a.prefix && o.key === key)
    if (covered || coveredExact) continue
    seen.add(seenKey)
    out.push(a)
  }
  return out
}

interface Segmentation {
  readonly parts: ReadonlyArray<ReadonlyArray<string>>
  readonly count: number
  readonly minLen: number
  readonly score: number
}

const better = (a: Segmentation, b: Segmentation | null): boolean =>
  b === null || a.count < b.count || (a.count === b.count && (a.minLen > b.minLen || (a.minLen === b.minLen && a.score > b.score)))

/**
 * The compound parts of `w` found in the scope vocabulary: fewest parts, then the longest
 * shortest part, then the most frequent; linking elements (s, es, n, en, e, er) between parts;
 * the last part may be known in another inflection (Hakenleisten → haken, leisten / leiste).
 */
const decompose = (
  w: string,
  dfOf: (t: string) => number,
  languages: LexicalOptions["languages"],
  unknown: boolean
): { readonly parts: Array<Array<string>>; readonly segments: number } | null => {
  const L = w.length
  const memo = new Map<number, Segmentation | null>()
  const lastForms = (i: number): Array<string> => {
    const last = w.slice(i)
    return uniq([last, ...inflectionStrips(last, languages), ...LAST_PART_ENDINGS.map((e) => last + e)]).filter((f) => dfOf(f) > 0)
  }
  const best = (i: number): Segmentation | null => {
    const hit = memo.get(i)
    if (hit !== undefined) return hit
    let result: Segmentation | null = null
    if (L - i >= MIN_PART && i > 0) {
      const forms = lastForms(i)
      if (forms.length > 0) {
        const df = Math.max(...forms.map(dfOf))
        result = { parts: [forms], count: 1, minLen: L - i, score: Math.log(1 + df) }
      }
    }
    for (let j = i + MIN_PART; j <= L - MIN_PART; j++) {
      const part = w.slice(i, j)
      const df = dfOf(part)
      if (df === 0) continue
      const starts = [j, ...LINKERS.filter((l) => w.startsWith(l, j)).map((l) => j + l.length)]
      for (const k of starts) {
        if (L - k < MIN_PART) continue
        const rest = best(k)
        if (rest === null) continue
        const cand: Segmentation = {
          parts: [[part], ...rest.parts], count: rest.count + 1,
          minLen: Math.min(part.length, rest.minLen), score: rest.score + Math.log(1 + df)
        }
        if (better(cand, result)) result = cand
      }
    }
    memo.set(i, result)
    return result
  }
  const seg = best(0)
  if (seg !== null && seg.count >= 2) return { parts: seg.parts.map((p) => [...p]), segments: seg.count }
  if (!unknown) return null
  // a word the scope does not know: its longest known head (Wandhakenleiste → hakenleisten) and
  // its longest known modifier (Hakenleistenpreis → hakenleisten); the unknown rest counts as a part
  const parts: Array<Array<string>> = []
  for (let j = MIN_PART; j <= L - MIN_HEAD; j++) {
    const forms = lastForms(j)
    if (forms.length > 0) {
      parts.push(forms)
      break
    }
  }
  for (let j = L - MIN_PART; j >= MIN_MODIFIER; j--) {
    const part = w.slice(0, j)
    if (dfOf(part) > 0) {
      if (!parts.some((p) => p.includes(part))) parts.unshift([part])
      break
    }
  }
  return parts.length === 0 ? null : { parts, segments: parts.length + 1 }
}

/** Alternatives of a compound part on lex_stem: stems, the part as a modifier (prefix), as a head (tail). */
const partAlts = (p: string, o: LexicalOptions): Array<Alt> => {
  const alts: Array<Alt> = []
  if (o.features.stem) for (const lang of o.languages) alts.push({ tokens: [stem(p, lang)], prefix: false })
  else alts.push({ tokens: [p], prefix: false })
  if (prefixable(p)) alts.push({ tokens: [p], prefix: true })
  alts.push({ tokens: [tailOf(p)], prefix: false })
  return collapseAlts(alts)
}

/** What the variants of one term may look up: the scope's document frequencies read by the analysis. */
export interface VariantContext {
  readonly o: LexicalOptions
  /** the single-word alphabetic terms */
  readonly singles: ReadonlyArray<RawTerm>
  readonly decompounds: boolean
  /** document frequency in lex_word_vocab (0 = unknown) */
  readonly dfOf: (t: string) => number
  /** document frequency in lex_stem_vocab (0 = unknown) */
  readonly sdfOf: (t: string) => number
  /** whether dfOf knows the (folded) form: it was read from lex_word_vocab */
  readonly holds: (folded: string) => boolean
  /** reads the frequencies of (folded) forms dfOf does not know yet */
  readonly lookUp: (folded: ReadonlyArray<string>) => Effect.Effect<void, SqlError>
}

/**
 * The forms the variants of the terms look up in lex_word_vocab first (one batch); a compound's
 * parts are read as its decomposition asks for them (termVariants).
 */
export const variantLookups = (raw: ReadonlyArray<RawTerm>, singles: ReadonlyArray<RawTerm>, o: LexicalOptions): Set<string> => {
  const lookups = new Set<string>()
  for (const t of raw) for (const tok of t.tokens) lookups.add(tok)
  for (const t of singles) {
    lookups.add(spellingOut(t.text))
    spellingIn(t.text).forEach((v) => lookups.add(v))
    inflectionStrips(t.text, o.languages).forEach((v) => lookups.add(v))
  }
  return lookups
}

/** The stems of a word, one per configured language (duplicates dropped). */
export const stemsOf = (t: string, o: LexicalOptions): Array<string> => uniq(o.languages.map((l) => stem(t, l)))

/** The stems of a word's other spellings (ae→ä, oe→ö, ue→ü, ss→ß) that are not its own stems. */
export const spellingStems = (t: string, o: LexicalOptions): Array<string> => {
  const own = stemsOf(t, o)
  return uniq(spellingIn(t).flatMap((v) => stemsOf(v, o))).filter((x) => !own.includes(x))
}

/**
 * One term's variants and alternatives; typo corrections only within `fuzzyBudget` (the terms
 * before it used the rest); `fuzzyUsed` is how many it took; `budgeted`: whether a correction was
 * possible (else the budget changes nothing). What it reads of the vocabulary goes through ctx.
 */
export const termVariants = (
  sql: SqlClient,
  t: RawTerm,
  ctx: VariantContext,
  fuzzyBudget: number
): Effect.Effect<{ readonly term: AnalyzedTerm; readonly fuzzyUsed: number; readonly budgeted: boolean; readonly partForms: ReadonlySet<string> }, SqlError> =>
  Effect.gen(function*() {
    const { o, singles, decompounds, dfOf, sdfOf } = ctx
    const single = singles.includes(t)
    let fuzzyUsed = 0
    const spelled = single ? spellingOut(t.text) : t.tokens.map(spellingOut).join(" ")
    const reverse = single ? spellingIn(t.text).filter((v) => fold(v) !== fold(t.text) && dfOf(v) > 0) : []
    const ownStrips = single ? inflectionStrips(t.text, o.languages) : []
    // one inflection strip of the term and of each spelling of it the scope holds (Ueberbruecken → überbrück*)
    const strips = uniq([...ownStrips, ...reverse.flatMap((v) => inflectionStrips(v, o.languages))])

    // word: the term, its spelling variants, its inflection strips
    const word: Array<Alt> = t.code || isNumeric(t.text)
      ? [{ tokens: t.tokens, prefix: false }]
      : collapseAlts([
        phraseAlt(t.tokens),
        ...(spelled !== t.text ? [phraseAlt(spelled.split(" "))] : []),
        ...reverse.map(wordAlt),
        ...strips.map((x) => ({ tokens: [x], prefix: x.length >= MIN_STRIP_PREFIX }))
      ])

    // stem: Snowball stems (phrases of stems per language) and the tail token
    const stemAlts: Array<Alt> = []
    if (o.features.stem) {
      if (t.code) stemAlts.push({ tokens: t.tokens, prefix: false })
      else {
        for (const lang of o.languages) stemAlts.push({ tokens: t.tokens.map((x) => stem(x, lang)), prefix: false })
        // the stems of the word's other spellings the scope holds (Lueftergehaeuse → luftergehaus, as Lüftergehäuse)
        if (single) for (const x of spellingStems(t.text, o)) if (sdfOf(x) > 0) stemAlts.push({ tokens: [x], prefix: false })
      }
    }
    if (storesTails(o) && single && t.text.length >= MIN_PREFIX) stemAlts.push({ tokens: [tailOf(t.text)], prefix: false })

    // (a spelling the scope holds is known itself: its strips need no look-up)
    const wholeKnown = [t.text, spelled, ...reverse, ...ownStrips].some((v) => dfOf(v) > 0)

    // fuzzy: typo corrections of a word the scope does not know in any form
    const corrections: Array<Expansion> = []
    const known = wholeKnown || stemsOf(t.text, o).some((x) => sdfOf(x) > 0) || (single && spellingStems(t.text, o).some((x) => sdfOf(x) > 0))
    // whether the budget could change this term (a correction of it was possible)
    const budgeted = single && !known && t.text.length >= MIN_FUZZY
    if (fuzzyBudget > 0 && budgeted) {
      const q = fold(t.text)
      const max = q.length <= 7 ? 1 : 2
      // a stopword is searched by no query: no correction into one (heben → haben)
      const picked = (yield* nearWords(sql, q, max)).filter((c) => !isStopword(c.term, o.languages)).slice(0, Math.min(FUZZY_PER_TERM, fuzzyBudget))
      for (const c of picked) corrections.push({ text: c.term, alts: [wordAlt(c.term)] })
      fuzzyUsed += picked.length
    }

    // parts: decompounding against the scope vocabulary (a partial one only for a word that is
    // neither known nor a typo of a known word)
    const parts: Array<Expansion & { segment: number }> = []
    let partSegments = 0
    let partForms: ReadonlySet<string> = new Set()
    if (decompounds && single && t.text.length >= MIN_DECOMPOUND && t.text.length <= MAX_DECOMPOUND) {
      // the forms a decomposition asks about follow from the parts it finds: each round reads the
      // forms the one before asked about and did not know, until a round asks only known ones (its
      // answer is the one every candidate read at once would give; docs/decisions.md «Stage a: a
      // compound's parts read as the decomposition asks for them»); every form a round asked
      // counts as the term's own (dfOf noted it)
      const unknown = !known && corrections.length === 0
      const asked = new Set<string>()
      let seg: ReturnType<typeof decompose>
      for (;;) {
        const missing = new Set<string>()
        seg = decompose(t.text, (x) => {
          if (isStopword(x, o.languages)) return 0
          const f = fold(x)
          if (!ctx.holds(f)) {
            missing.add(f)
            return 0
          }
          asked.add(f)
          return dfOf(x)
        }, o.languages, unknown)
        if (missing.size === 0) break
        yield* ctx.lookUp([...missing])
      }
      partForms = asked
      for (const [segment, forms] of (seg?.parts ?? []).entries()) {
        for (const f of forms.slice(0, 2)) parts.push({ text: f, alts: partAlts(f, o), segment })
      }
      partSegments = seg?.segments ?? 0
    }

    const tri = o.features.trigram
      ? uniq([t.text, spelled]).filter((x) => fold(x).length >= 3)
      : []
    return {
      fuzzyUsed,
      budgeted,
      partForms,
      term: {
        text: t.text,
        tokens: t.tokens,
        code: t.code,
        word,
        stem: collapseAlts(stemAlts),
        tri,
        parts,
        partSegments,
        corrections,
        variants: uniq([t.text, ...(spelled !== t.text ? [spelled] : []), ...reverse, ...strips, ...parts.map((p) => p.text), ...corrections.map((c) => c.text)])
      }
    }
  })

/**
 * The synonym groups the query words touch, listed under "~<matched words>", and the de↔en
 * vocabulary's other side of a touched pair where the scope holds its words (under the same key
 * as a group the same words touched). `seen`: the terms' own texts, never an expansion.
 */
export const synonymExpansions = (
  sql: SqlClient,
  terms: ReadonlyArray<AnalyzedTerm>,
  segments: ReadonlyArray<ReadonlyArray<string>>,
  groups: ReadonlyArray<SynonymGroup>,
  lexicon: BilingualLexicon | null,
  o: LexicalOptions,
  seen: ReadonlySet<string>,
  dictionary: Lexicon | null = null
): Effect.Effect<Array<SynonymExpansion>, SqlError> =>
  Effect.gen(function*() {
    const synonyms: Array<SynonymExpansion> = []
    const termsOf = (surfaces: ReadonlyArray<string>): Array<number> => {
      const surfaceTokens = new Set(surfaces.flatMap((s) => s.split(" ")))
      return terms.flatMap((t, i) => surfaces.includes(t.text) || (t.tokens.length === 1 && surfaceTokens.has(t.text)) ? [i] : [])
    }
    const expansionOf = (member: ReadonlyArray<string>): Expansion => {
      const spelled = member.map(spellingOut)
      const alts = collapseAlts([phraseAlt(member), ...(spelled.join(" ") !== member.join(" ") ? [phraseAlt(spelled)] : [])])
      return { text: member.join(" "), alts }
    }
    if (o.features.synonyms && groups.length > 0) {
      for (const m of matchSynonyms(segments, groups, o.languages)) {
        const group = groups[m.group] ?? []
        const expansions: Array<Expansion> = group
          .filter((_, mi) => !m.members.includes(mi))
          .map(expansionOf)
          .filter((e) => !seen.has(e.text))
        if (expansions.length > 0) synonyms.push({ key: `~${m.surfaces.join(", ")}`, terms: termsOf(m.surfaces), expansions })
      }
    }
    // the de↔en vocabulary: the other side of a touched pair, only where the scope holds its words;
    // under the same "~<matched words>" key as a group the same words touched
    /** each match under the "~<matched words>" key, joined to the entry already there */
    const addUnderSurface = (found: ReadonlyArray<{ readonly surface: string; readonly expansions: ReadonlyArray<Expansion> }>) => {
      for (const m of found) {
        const key = `~${m.surface}`
        const at = synonyms.findIndex((s) => s.key === key)
        const same = synonyms[at]
        if (same === undefined) synonyms.push({ key, terms: termsOf([m.surface]), expansions: m.expansions })
        else synonyms[at] = { ...same, expansions: [...same.expansions, ...m.expansions] }
      }
    }
    const bilingual = o.features.synonyms && lexicon !== null ? matchBilingual(segments, lexicon, o.languages) : []
    if (bilingual.length > 0) {
      const listed = new Set(synonyms.flatMap((s) => s.expansions.map((e) => e.text)))
      const found = yield* crossLanguageExpansions(sql, bilingual, o.languages, expansionOf, (text) => seen.has(text) || listed.has(text))
      addUnderSurface(found)
    }
    // the lexicon: synonyms (and with bilingual, translations) of the query's words and phrases,
    // weighted by sense, capped per word, only where the scope holds their words
    const translations = o.features.bilingual && o.languages.includes("de") && o.languages.includes("en")
    const hits = o.features.synonyms && dictionary !== null
      ? matchLexicon(segments, dictionary, { synonyms: true, translations, languages: o.languages })
      : []
    if (hits.length > 0) {
      const listed = new Set(synonyms.flatMap((s) => s.expansions.map((e) => e.text)))
      // a dictionary gives its terms in one form: its last word is searched in its other forms too (trips → trip)
      const weighted = (tokens: ReadonlyArray<string>, weight: number, lang: LexiconLang): Expansion => {
        const e = expansionOf(tokens)
        const last = tokens[tokens.length - 1] ?? ""
        const strips = (tokens.length < 2 ? [] : inflectionStrips(last, o.languages)).map((x): Alt => ({ tokens: [...tokens.slice(0, -1), x], prefix: x.length >= MIN_STRIP_PREFIX }))
        // a German word as the head of a German compound (English writes compounds apart)
        const heads = storesTails(o) && lang === "de" && tokens.length === 1 && prefixable(last) ? [{ tokens: [tailOf(last)], prefix: false }] : []
        return { ...e, alts: collapseAlts([...e.alts, ...strips]), weight, ...(heads.length > 0 ? { heads } : {}) }
      }
      const found = yield* lexiconExpansions(sql, hits, o.languages, weighted, (text) => seen.has(text) || listed.has(text), storesTails(o) ? "heads" : "")
      addUnderSurface(found)
    }
    return synonyms
  })
