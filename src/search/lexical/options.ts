/**
 * The options of stage a: search.lexical with the module defaults filled in, plus
 * search.languages and search.synonyms (architecture.md §3). Pool size and term caps are
 * contract constants, not keys.
 */
import type { ConfigFile } from "../../config/schema.js"

export type Language = "de" | "en"
export type SubQueryName = "word" | "stem" | "syn" | "fuzzy" | "tri" | "prf"

export interface LexicalFeatures {
  readonly stem: boolean
  readonly decompound: boolean
  readonly normalize: boolean
  readonly trigram: boolean
  readonly fuzzy: boolean
  readonly synonyms: boolean
  /** the de↔en business vocabulary as one-hop synonyms, where the scope holds the other side (needs synonyms) */
  readonly bilingual: boolean
  readonly validity: boolean
  readonly keyterms: boolean
  readonly prf: boolean
}

export interface LexicalOptions {
  readonly features: LexicalFeatures
  /** bm25 weights of keywords, statement, relations, quote */
  readonly fieldWeights: readonly [number, number, number, number]
  readonly fusion: "score" | "rrf"
  readonly rrfK: number
  readonly subWeights: Readonly<Record<SubQueryName, number>>
  readonly maxKeyTerms: number
  readonly longTextTokens: number
  readonly maxFuzzyTerms: number
  readonly languages: ReadonlyArray<Language>
  readonly synonyms: ReadonlyArray<ReadonlyArray<string>>
}

/** Hits per stage a (contract constant). */
export const POOL_SIZE = 200
/** Terms taken from a text (contract constant). */
export const TEXT_TERM_CAP = 12
/** Terms in total, given terms first (contract constant). */
export const TOTAL_TERM_CAP = 20
/** Bumped whenever the analyzer changes what is stored in the lex_* tables. */
export const ANALYZER_VERSION = "gn-lex-1"

export const DEFAULT_FEATURES: LexicalFeatures = {
  stem: true, decompound: true, normalize: true, trigram: false, fuzzy: true,
  synonyms: true, bilingual: true, validity: true, keyterms: true, prf: false
}

export const ALL_OFF: LexicalFeatures = {
  stem: false, decompound: false, normalize: false, trigram: false, fuzzy: false,
  synonyms: false, bilingual: false, validity: false, keyterms: false, prf: false
}

export const DEFAULT_SUB_WEIGHTS: Readonly<Record<SubQueryName, number>> = {
  word: 1, stem: 0.8, syn: 0.8, fuzzy: 0.6, tri: 0.4, prf: 0.3
}

export const DEFAULT_OPTIONS: LexicalOptions = {
  features: DEFAULT_FEATURES,
  fieldWeights: [4, 3, 2, 1],
  fusion: "score",
  rrfK: 60,
  subWeights: DEFAULT_SUB_WEIGHTS,
  maxKeyTerms: 6,
  longTextTokens: 25,
  maxFuzzyTerms: 8,
  languages: ["de", "en"],
  synonyms: []
}

type Search = ConfigFile["search"]

/** The options of a decoded config file. */
export const lexicalOptions = (search: Search): LexicalOptions => {
  const l = search.lexical
  const features = Object.fromEntries(
    Object.entries(DEFAULT_FEATURES).map(([k, v]) => [k, (l.features as Partial<Record<string, boolean>>)[k] ?? v])
  ) as unknown as LexicalFeatures
  const subWeights = Object.fromEntries(
    Object.entries(DEFAULT_SUB_WEIGHTS).map(([k, v]) => [k, (l.sub_weights as Partial<Record<string, number>>)[k] ?? v])
  ) as Record<SubQueryName, number>
  return {
    features,
    fieldWeights: l.field_weights ?? DEFAULT_OPTIONS.fieldWeights,
    fusion: l.fusion ?? DEFAULT_OPTIONS.fusion,
    rrfK: l.rrf_k ?? DEFAULT_OPTIONS.rrfK,
    subWeights,
    maxKeyTerms: l.max_key_terms ?? DEFAULT_OPTIONS.maxKeyTerms,
    longTextTokens: l.long_text_tokens ?? DEFAULT_OPTIONS.longTextTokens,
    maxFuzzyTerms: l.max_fuzzy_terms ?? DEFAULT_OPTIONS.maxFuzzyTerms,
    languages: search.languages.length > 0 ? [...new Set(search.languages)] : DEFAULT_OPTIONS.languages,
    synonyms: search.synonyms
  }
}

/**
 * lex_meta.build: the analyzer version and every option that changes what is stored
 * (stem, decompound, normalize, trigram, and the languages whose stems are stored).
 */
export const buildKey = (o: LexicalOptions): string => {
  const f = o.features
  const flag = (b: boolean) => (b ? 1 : 0)
  return `${ANALYZER_VERSION};stem=${flag(f.stem)};decompound=${flag(f.decompound)};normalize=${flag(f.normalize)};` +
    `trigram=${flag(f.trigram)};languages=${[...o.languages].sort().join(",")}`
}

/** Tails (index-side compound heads) need German and decompound. */
export const storesTails = (o: LexicalOptions): boolean => o.features.decompound && o.languages.includes("de")
