/**
 * The query side of stage a (architecture.md §7 steps 1–2): terms from the given terms and the
 * text (stopwords, codes, the 12-term cap, key terms of long texts), and per term its variants
 * and the alternatives each sub-query searches.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { type Alt, orExpr } from "./match.js"
import type { LexicalOptions } from "./options.js"
import { TOTAL_TERM_CAP } from "./options.js"
import type { BilingualLexicon } from "./crosslang.js"
import type { Lexicon } from "./lexicon.js"
import { storesStems } from "./document.js"
import type { SynonymGroup } from "./synonyms.js"
import { givenTerms, type RawTerm, textTerms, type TextTerms } from "./terms.js"
import { fold, isAlpha } from "./text.js"
import { type AnalyzedTerm, stemsOf, synonymExpansions, type SynonymExpansion, termVariants, variantLookups } from "./variants.js"
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
/** Rules whose row in `table` matches one of the alternatives. */
const matchCount = (sql: SqlClient, table: "lex_word" | "lex_stem", alts: ReadonlyArray<Alt>): Effect.Effect<number, SqlError> => {
  const match = orExpr(alts)
  if (match === null) return Effect.succeed(0)
  return matchingRules(sql, table, match)
}

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
    const singles = raw.filter((t) => !t.code && t.tokens.length === 1 && isAlpha(t.text))
    // every form the variants may look up, in two batches (lex_word_vocab, lex_stem_vocab)
    const lookups = variantLookups(raw, singles, o, decompounds)
    const df = yield* documentFrequencies(sql, "lex_word_vocab", lookups)
    const stemLookups = storesStems(o) ? singles.flatMap((t) => stemsOf(t.text, o)) : []
    const sdf = storesStems(o) ? yield* documentFrequencies(sql, "lex_stem_vocab", stemLookups) : new Map<string, number>()
    const ctx = { o, singles, decompounds, dfOf: (t: string) => df.get(fold(t)) ?? 0, sdfOf: (t: string) => sdf.get(fold(t)) ?? 0 }

    let fuzzyBudget = o.features.fuzzy ? o.maxFuzzyTerms : 0
    const terms: Array<AnalyzedTerm> = []
    for (const t of raw) {
      const { term, fuzzyUsed } = yield* termVariants(sql, t, ctx, fuzzyBudget)
      terms.push(term)
      fuzzyBudget -= fuzzyUsed
    }
    const segments = [...given.map((g) => g.tokens), ...fromText.segments]
    const synonyms = yield* synonymExpansions(sql, terms, segments, groups, lexicon, o, seen, dictionary)
    return {
      terms, synonyms, docs, keyterms: fromText.keyterms,
      frequencies: { word: looked(lookups, df), stem: looked(stemLookups, sdf) }
    }
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
        : (yield* matchCount(sql, "lex_word", t.word)) || (storesStems(o) ? yield* matchCount(sql, "lex_stem", t.stem) : 0)
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
