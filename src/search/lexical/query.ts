/**
 * The query side of stage a (architecture.md §7 steps 1–2): terms from the given terms and the
 * text (stopwords, codes, the 12-term cap, key terms of long texts), and per term its variants
 * and the alternatives each sub-query searches.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { type Alt, orPhrases } from "./match.js"
import { heldMatchCount } from "./phrases.js"
import type { LexicalOptions } from "./options.js"
import { TOTAL_TERM_CAP } from "./options.js"
import type { BilingualLexicon } from "./crosslang.js"
import type { Lexicon } from "./lexicon.js"
import { storesStems } from "./document.js"
import { boundedPart, type CarriedChanges, carryPart } from "./stamp-cache.js"
import type { SynonymGroup } from "./synonyms.js"
import { givenTerms, type RawTerm, textTerms, type TextTerms } from "./terms.js"
import { fold, isAlpha } from "./text.js"
import {
  type AnalyzedTerm, spellingStems, stemsOf, synonymExpansions, type SynonymExpansion, termVariants, variantLookups, type VariantContext
} from "./variants.js"
import { documentCount, documentFrequencies, idf, matchingRules } from "./vocab.js"

export type { Alt } from "./match.js"
export { collapseAlts } from "./variants.js"
export type { AnalyzedTerm, Expansion, SynonymExpansion } from "./variants.js"

export interface Analysis {
  readonly terms: ReadonlyArray<AnalyzedTerm>
  readonly synonyms: ReadonlyArray<SynonymExpansion>
  /** indexed rules when analyzed */
  readonly docs: number
  /** true when the text was long and reduced to its key terms */
  readonly keyterms: boolean
  /**
   * Document frequencies the analysis read, by folded token (0 = not in the vocabulary), of
   * lex_word_vocab and lex_stem_vocab; the pool reads only the tokens missing here.
   */
  readonly frequencies: { readonly word: ReadonlyMap<string, number>; readonly stem: ReadonlyMap<string, number> }
}

const NO_FREQUENCIES: Analysis["frequencies"] = { word: new Map(), stem: new Map() }

/** Every looked-up token with its frequency, 0 for the ones the vocabulary does not hold. */
const looked = (tokens: Iterable<string>, found: ReadonlyMap<string, number>): Map<string, number> =>
  new Map([...tokens].map((t) => [fold(t), found.get(fold(t)) ?? 0]))

export interface QueryInput {
  readonly text?: string | undefined
  readonly terms?: ReadonlyArray<string> | undefined
}
/**
 * Rules whose row in `table` matches one of the alternatives: from the phrase rows the pool holds
 * under this epoch when it holds every one (phrases.ts heldMatchCount), else counted by FTS5.
 */
const matchCount = (sql: SqlClient, table: "lex_word" | "lex_stem", alts: ReadonlyArray<Alt>, o: LexicalOptions): Effect.Effect<number, SqlError> => {
  const phrases = orPhrases(alts)
  if (phrases.length === 0) return Effect.succeed(0)
  const held = heldMatchCount(sql, table, o.fieldWeights, phrases)
  return held !== undefined ? Effect.succeed(held) : matchingRules(sql, table, phrases.join(" OR "))
}

/**
 * A term's analysis as termVariants made it, with the frequencies of the forms it looked up: a
 * word's variants, stems, compound parts and typo corrections do not depend on the question, only
 * on the scope's vocabulary, so they are kept under the index stamp (stamp-cache.ts: a write
 * starts them empty) and a later question with the same word skips them (its business words, in
 * an agent's everyday new question). Kept only when termVariants asked the vocabulary about its
 * own forms alone (then the other terms of the question cannot have changed it); by the fuzzy
 * budget it had when a typo correction was possible (a correction's count depends on it).
 * Carried through a write of this process (stamp-cache.ts carryPart) as the vocabulary is: a
 * term whose forms the write touched, or whose typo candidates it may have changed, is dropped.
 */
interface HeldTerm {
  readonly term: AnalyzedTerm
  readonly fuzzyUsed: number
  /** a typo correction was possible: its candidates are the vocabulary's words of its first letter */
  readonly budgeted: boolean
  /** the forms it looked up in lex_word_vocab and lex_stem_vocab (folded) with their frequency, 0 for none */
  readonly word: ReadonlyMap<string, number>
  readonly stem: ReadonlyMap<string, number>
}
interface HeldTerms {
  readonly terms: Map<string, HeldTerm>
  /** the looked-up forms the terms hold (what bounds the part) */
  forms: number
  /**
   * The keys of the held terms by what a write's changed tokens reach (kept with `terms` by hold and
   * drop): each looked-up word form, each looked-up stem form, and the first letter of a term whose
   * typo corrections were possible. A write looks up its changed tokens here, not every held form.
   */
  readonly byWord: Map<string, Set<string>>
  readonly byStem: Map<string, Set<string>>
  readonly byFirst: Map<string, Set<string>>
}
const TERMS_PART = "analysed-terms"
/**
 * Looked-up forms held per connection (a term holds its alternatives and ~60–130 forms: ~2,000
 * terms; as many entries as the vocabulary's own bound, vocab.ts), then the terms start again.
 */
export const MAX_HELD_FORMS = 200_000
const formsOf = (h: HeldTerm): number => h.word.size + h.stem.size + 1
const heldTermsOf = (sql: SqlClient) =>
  boundedPart(sql, TERMS_PART, (): HeldTerms => ({ terms: new Map(), forms: 0, byWord: new Map(), byStem: new Map(), byFirst: new Map() }),
    (p) => p.forms, MAX_HELD_FORMS)
/** one id per options object (a connection's index may be asked with other options, as tests do) */
const optionIds = new WeakMap<LexicalOptions, number>()
let nextOptionId = 0
const optionIdOf = (o: LexicalOptions): number => {
  let id = optionIds.get(o)
  if (id === undefined) optionIds.set(o, (id = nextOptionId++))
  return id
}
/** The key of a term: without the budget when no correction was possible (fuzzyKey null), else with it (0–2 count). */
const termKey = (o: LexicalOptions, t: RawTerm, fuzzy: number | null): string =>
  `${optionIdOf(o)}\u0000${t.code ? 1 : 0}\u0000${t.tokens.join(" ")}\u0000${t.text}\u0000${fuzzy ?? ""}`

const firstOf = (w: string): string => String.fromCodePoint(w.codePointAt(0) ?? 0)

/** The first letter of a held term a changed word of the same first letter may correct (vocab.ts nearWords: words of its first letter). */
const typoFirstOf = (h: HeldTerm): string | undefined => (h.budgeted ? firstOf(fold(h.term.text)) : undefined)

const indexIn = (index: Map<string, Set<string>>, token: string, key: string): void => {
  const keys = index.get(token)
  if (keys === undefined) index.set(token, new Set([key]))
  else keys.add(key)
}
const unindexIn = (index: Map<string, Set<string>>, token: string, key: string): void => {
  const keys = index.get(token)
  if (keys === undefined) return
  keys.delete(key)
  if (keys.size === 0) index.delete(token)
}

/** Takes the held term `h` of `key` out of the count of forms and the indexes. */
const unindexTerm = (p: HeldTerms, key: string, h: HeldTerm): void => {
  p.forms -= formsOf(h)
  for (const f of h.word.keys()) unindexIn(p.byWord, f, key)
  for (const f of h.stem.keys()) unindexIn(p.byStem, f, key)
  const first = typoFirstOf(h)
  if (first !== undefined) unindexIn(p.byFirst, first, key)
}

/** Drops the held term of `key` and its entries in the indexes. */
const dropTerm = (p: HeldTerms, key: string): void => {
  const h = p.terms.get(key)
  if (h === undefined) return
  p.terms.delete(key)
  unindexTerm(p, key, h)
}

/** Holds `h` under `key` (in place of what was held there) with its entries in the indexes. */
const holdTerm = (p: HeldTerms, key: string, h: HeldTerm): void => {
  const before = p.terms.get(key)
  if (before !== undefined) unindexTerm(p, key, before)
  p.terms.set(key, h)
  p.forms += formsOf(h)
  for (const f of h.word.keys()) indexIn(p.byWord, f, key)
  for (const f of h.stem.keys()) indexIn(p.byStem, f, key)
  const first = typoFirstOf(h)
  if (first !== undefined) indexIn(p.byFirst, first, key)
}

/**
 * The terms kept through changes of some rules' rows: those whose looked-up forms (the frequencies
 * their variants, parts and corrections were made of) the changed tokens do not touch, and whose
 * typo candidates (vocab.ts nearWords: words of the same first letter) they cannot have changed.
 * The terms to drop are found through the indexes by the changed tokens: the work is per changed
 * token and dropped term, not per held term.
 */
const carryTerms = (part: unknown, { changes }: CarriedChanges): HeldTerms => {
  const p = part as HeldTerms
  const dropped = new Set<string>()
  const firsts = new Set<string>()
  const add = (keys: ReadonlySet<string> | undefined) => {
    if (keys !== undefined) for (const k of keys) dropped.add(k)
  }
  for (const c of changes) {
    for (const w of c.words) {
      add(p.byWord.get(w))
      firsts.add(firstOf(w))
    }
    for (const t of c.stems) add(p.byStem.get(t))
  }
  for (const f of firsts) add(p.byFirst.get(f))
  for (const key of dropped) dropTerm(p, key)
  return p
}
carryPart(TERMS_PART, carryTerms)

/** How many terms the connection holds analysed under the file's stamp (undefined: no cache). */
export const heldTermCount = (sql: SqlClient): number | undefined => heldTermsOf(sql)?.terms.size

/** The texts of the terms the connection holds analysed, without reading the stamp (tests). */
export const heldTermTexts = (sql: SqlClient): Array<string> => [...(heldTermsOf(sql)?.terms.values() ?? [])].map((h) => h.term.text)

let termsAnalysed = 0

/** How many terms this thread has analysed (not held, nor carried through a write): a measure for tests. */
export const termsAnalysedCount = (): number => termsAnalysed

/** The most typo corrections one term takes (variants.ts FUZZY_PER_TERM): a budget above it changes nothing. */
const FUZZY_KEY_MAX = 2

/**
 * Terms, variants and sub-query alternatives of a query in a scope. No terms (no text, only
 * stopwords) → an analysis without terms (stage a then answers zero hits).
 */
export const analyze = (
  sql: SqlClient,
  input: QueryInput,
  o: LexicalOptions,
  groups: ReadonlyArray<SynonymGroup>,
  lexicon: BilingualLexicon | null = null,
  dictionary: Lexicon | null = null
): Effect.Effect<Analysis, SqlError> =>
  Effect.gen(function*() {
    const docs = yield* documentCount(sql)
    const given = givenTerms(input.terms ?? [], o)
    const fromText: TextTerms = input.text === undefined
      ? { terms: [], keyterms: false, segments: [] }
      : yield* textTerms(sql, input.text, o, docs)
    const raw: Array<RawTerm> = []
    const seen = new Set<string>()
    for (const t of [...given, ...fromText.terms]) {
      if (seen.has(t.text) || raw.length >= TOTAL_TERM_CAP) continue
      seen.add(t.text)
      raw.push(t)
    }
    if (raw.length === 0) return { terms: [], synonyms: [], docs, keyterms: fromText.keyterms, frequencies: NO_FREQUENCIES }

    const decompounds = o.features.decompound && o.languages.includes("de")
    const isSingle = (t: RawTerm) => !t.code && t.tokens.length === 1 && isAlpha(t.text)
    const singles = raw.filter(isSingle)
    const heldPart = heldTermsOf(sql)
    const held = heldPart?.terms
    // a term held without a budget needs nothing read; a term held by budget only knows its forms
    const heldFirst = raw.map((t) => held?.get(termKey(o, t, null)))
    // the forms the variants of the terms not held look up first, in two batches (lex_word_vocab,
    // lex_stem_vocab); a compound's parts follow as its decomposition asks (termVariants, ctx.lookUp)
    const ownLookups = raw.map((t, i) =>
      heldFirst[i] !== undefined ? null : {
        word: variantLookups([t], isSingle(t) ? [t] : [], o),
        stem: storesStems(o) && isSingle(t) ? [...stemsOf(t.text, o), ...spellingStems(t.text, o)] : []
      })
    const lookups = new Set(ownLookups.flatMap((l) => (l === null ? [] : [...l.word])))
    const stemLookups = ownLookups.flatMap((l) => l?.stem ?? [])
    const df = yield* documentFrequencies(sql, "lex_word_vocab", lookups)
    const sdf = storesStems(o) ? yield* documentFrequencies(sql, "lex_stem_vocab", stemLookups) : new Map<string, number>()
    // the frequencies of every term's forms, as one batch of all of them would give them
    const word = looked(lookups, df)
    const stem = looked(stemLookups, sdf)
    for (const h of heldFirst) {
      if (h === undefined) continue
      for (const [k, v] of h.word) word.set(k, v)
      for (const [k, v] of h.stem) stem.set(k, v)
    }
    let asked: Set<string> | null = null
    let askedStem: Set<string> | null = null
    const ctx: VariantContext = {
      o, singles, decompounds,
      dfOf: (t: string) => {
        const f = fold(t)
        asked?.add(f)
        return word.get(f) ?? 0
      },
      sdfOf: (t: string) => {
        const f = fold(t)
        askedStem?.add(f)
        return stem.get(f) ?? 0
      },
      holds: (f: string) => word.has(f),
      lookUp: (forms: ReadonlyArray<string>) =>
        Effect.map(documentFrequencies(sql, "lex_word_vocab", forms), (found) => {
          for (const f of forms) word.set(f, found.get(f) ?? 0)
        })
    }

    let fuzzyBudget = o.features.fuzzy ? o.maxFuzzyTerms : 0
    const terms: Array<AnalyzedTerm> = []
    for (const [i, t] of raw.entries()) {
      const budgetKey = Math.min(fuzzyBudget, FUZZY_KEY_MAX)
      const known = heldFirst[i] ?? held?.get(termKey(o, t, budgetKey))
      const own = ownLookups[i]
      if (known !== undefined || own === null || own === undefined) {
        const k = known as HeldTerm
        terms.push(k.term)
        fuzzyBudget -= k.fuzzyUsed
        continue
      }
      asked = new Set()
      askedStem = new Set()
      const { term, fuzzyUsed, budgeted, partForms } = yield* termVariants(sql, t, ctx, fuzzyBudget)
      termsAnalysed++
      const frequencies = { word: looked([...own.word, ...partForms], word), stem: looked(own.stem, stem) }
      // kept when it asked about its own forms alone: then no other term of the question changed it
      const alone = [...asked].every((f) => frequencies.word.has(f)) && [...askedStem].every((f) => frequencies.stem.has(f))
      if (heldPart !== undefined && alone) {
        holdTerm(heldPart, termKey(o, t, budgeted ? budgetKey : null), { term, fuzzyUsed, budgeted, ...frequencies })
      }
      asked = null
      askedStem = null
      terms.push(term)
      fuzzyBudget -= fuzzyUsed
    }
    const segments = [...given.map((g) => g.tokens), ...fromText.segments]
    const synonyms = yield* synonymExpansions(sql, terms, segments, groups, lexicon, o, seen, dictionary)
    return { terms, synonyms, docs, keyterms: fromText.keyterms, frequencies: { word, stem } }
  })

const weightsOf = new WeakMap<Analysis, ReadonlyArray<number>>()

/**
 * The weight of each term (coverage, step 6a): its IDF in the scope — the rules its word
 * alternatives match, else its stem alternatives; a phrase weighs as its rarest word. Read on
 * first use and kept with the analysis (the pool does not need them, possible_duplicates never
 * asks); a single term is not counted (coverage = its share, whatever its weight).
 */
export const termWeights = (sql: SqlClient, a: Analysis, o: LexicalOptions): Effect.Effect<ReadonlyArray<number>, SqlError> =>
  Effect.gen(function*() {
    const known = weightsOf.get(a)
    if (known !== undefined) return known
    // one term: coverage is its share whatever its (positive) weight
    if (a.terms.length === 1) return [1]
    const weights: Array<number> = []
    for (const t of a.terms) {
      const df = t.tokens.length > 1
        ? Math.min(...t.tokens.map((x) => a.frequencies.word.get(fold(x)) ?? 0))
        : (yield* matchCount(sql, "lex_word", t.word, o)) || (storesStems(o) ? yield* matchCount(sql, "lex_stem", t.stem, o) : 0)
      weights.push(idf(a.docs, df))
    }
    weightsOf.set(a, weights)
    return weights
  })

/** query.variants: per term its variants, per synonym group its expansions under "~…". */
export const variantsOf = (a: Analysis): Record<string, Array<string>> => {
  const out: Record<string, Array<string>> = {}
  for (const t of a.terms) out[t.text] = [...t.variants]
  for (const s of a.synonyms) out[s.key] = s.expansions.map((e) => e.text)
  return out
}
