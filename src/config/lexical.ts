/**
 * search.lexical (architecture.md §3): switches and weights of stage a. Every key optional;
 * a missing key takes the module default (the search issue owns the defaults).
 */
import { Schema } from "effect"

const Weight = Schema.Number.pipe(Schema.between(0, 10))
const Flag = Schema.optional(Schema.Boolean)

export const LexicalFeatures = Schema.Struct({
  stem: Flag, decompound: Flag, normalize: Flag, trigram: Flag, fuzzy: Flag,
  synonyms: Flag, bilingual: Flag, validity: Flag, keyterms: Flag, prf: Flag
})

export const SubWeights = Schema.Struct({
  word: Schema.optional(Weight), stem: Schema.optional(Weight), tri: Schema.optional(Weight),
  fuzzy: Schema.optional(Weight), syn: Schema.optional(Weight), prf: Schema.optional(Weight)
})

export const LexicalConfig = Schema.Struct({
  features: Schema.optionalWith(LexicalFeatures, { default: () => ({}) }),
  field_weights: Schema.optional(Schema.Tuple(Weight, Weight, Weight, Weight)),
  fusion: Schema.optional(Schema.Literal("score", "rrf")),
  rrf_k: Schema.optional(Schema.Number.pipe(Schema.int(), Schema.between(1, 1000))),
  sub_weights: Schema.optionalWith(SubWeights, { default: () => ({}) }),
  max_key_terms: Schema.optional(Schema.Number.pipe(Schema.int(), Schema.between(1, 12))),
  long_text_tokens: Schema.optional(Schema.Number.pipe(Schema.int(), Schema.between(1, 10_000))),
  max_fuzzy_terms: Schema.optional(Schema.Number.pipe(Schema.int(), Schema.between(0, 12)))
})
export type LexicalConfig = typeof LexicalConfig.Type
