/**
 * Step 1 of the query side of stage a (architecture.md §7): the terms of a query — the given
 * terms (each a phrase or its canonical code) and the text's (stopwords, codes, the 12-term cap,
 * the key terms of a long text scored by IDF in the scope).
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import type { LexicalOptions } from "./options.js"
import { TEXT_TERM_CAP } from "./options.js"
import { isChatter, isStopword } from "./stopwords.js"
import {
  codeTokens,
  fold,
  inflectionStrips,
  isAlpha,
  isNumeric,
  spellingOut,
  stem,
  stripMailFrame,
  type Token,
  tokenize,
  tokensWithOffsets
} from "./text.js"
import { LINKERS, MIN_PART, uniq } from "./variants.js"
import { documentFrequencies, idf } from "./vocab.js"

/** A term before its variants: lowercase text, its tokens, whether it is a code. */
export interface RawTerm {
  readonly text: string
  readonly tokens: ReadonlyArray<string>
  readonly code: boolean
}

const MAX_KEY_CANDIDATES = 1500
const MAX_SPLIT_CANDIDATES = 150

const codeOfTerm = (term: string, o: LexicalOptions): string | null => {
  if (!o.features.normalize) return null
  const nfkc = term.normalize("NFKC")
  const toks = tokensWithOffsets(nfkc)
  const codes = codeTokens(nfkc, (t) => isStopword(t, o.languages))
  const c = codes[0]
  if (codes.length !== 1 || c === undefined) return null
  return toks.every((t) => t.start >= c.start && t.end <= c.end) ? c.token : null
}

/** Given terms: each the phrase of its letter/digit tokens, or its canonical code. */
export const givenTerms = (terms: ReadonlyArray<string>, o: LexicalOptions): Array<RawTerm> =>
  terms.flatMap((t): Array<RawTerm> => {
    const tokens = tokenize(t)
    if (tokens.length === 0) return []
    const code = codeOfTerm(t, o)
    if (code !== null) return [{ text: code, tokens: [code], code: true }]
    return [{ text: tokens.join(" "), tokens, code: false }]
  })

interface TextScan {
  readonly tokens: ReadonlyArray<Token>
  readonly codes: ReadonlyArray<{ readonly token: string; readonly start: number }>
  /** content words: not a stopword, not a single letter, not inside a code */
  readonly content: ReadonlyArray<Token>
}

const scan = (nfkc: string, o: LexicalOptions): TextScan => {
  const tokens = tokensWithOffsets(nfkc)
  const codes = o.features.normalize ? codeTokens(nfkc, (t) => isStopword(t, o.languages)) : []
  const inCode = (t: Token) => codes.some((c) => t.start >= c.start && t.end <= c.end)
  const content = tokens.filter((t) =>
    !inCode(t) && !isStopword(t.lower, o.languages) && (t.lower.length > 1 || isNumeric(t.lower)))
  return { tokens, codes, content }
}

const isUpperWord = (s: string): boolean => s.length >= 2 && s === s.toUpperCase() && s !== s.toLowerCase()

/** True when the token starts a sentence or a line (its capital then says nothing). */
const sentenceStart = (text: string, start: number): boolean => {
  for (let i = start - 1; i >= 0; i--) {
    const ch = text[i] ?? ""
    if (ch === "\n") return true
    if (/[\s"'„“”‚‘’«»()[\]-]/u.test(ch)) continue
    return /[.!?:;•*]/.test(ch)
  }
  return true
}

interface Candidate {
  readonly token: string
  readonly first: number
  tf: number
  capitalized: boolean
  upper: boolean
  readonly code: boolean
}

/**
 * Key terms of a long text (more than long_text_tokens content words): the mail frame dropped,
 * every distinct content word and code scored by IDF in the scope × (1 + ln tf) × shape
 * (codes ×2, all-capitals ×1.5, capitalized inside a sentence ×1.25, bare numbers ×0.3); a word
 * unknown in the scope counts only as a compound of two known parts (×0.8, rarest part).
 */
const keyTerms = (sql: SqlClient, body: string, s: TextScan, o: LexicalOptions, docs: number) =>
  Effect.gen(function*() {
    const cands = new Map<string, Candidate>()
    for (const c of s.codes) {
      const have = cands.get(c.token)
      if (have !== undefined) have.tf++
      else cands.set(c.token, { token: c.token, first: c.start, tf: 1, capitalized: false, upper: false, code: true })
    }
    for (const t of s.content) {
      const have = cands.get(t.lower) ?? { token: t.lower, first: t.start, tf: 0, capitalized: false, upper: false, code: false }
      have.tf++
      if (isUpperWord(t.text)) have.upper = true
      else if (/^\p{Lu}/u.test(t.text) && !sentenceStart(body, t.start)) have.capitalized = true
      cands.set(t.lower, have)
    }
    // a very long text: its first distinct words only (the lookups stay bounded)
    const list = [...cands.values()].sort((x, y) => x.first - y.first).slice(0, MAX_KEY_CANDIDATES)
    // first the word, its spelling and inflection variants and its stems
    const wordForms = new Map(list.map((c) => [c.token, uniq([c.token, spellingOut(c.token), ...inflectionStrips(c.token, o.languages)])]))
    const stems = new Map(list.map((c) => [c.token, uniq(o.languages.map((l) => stem(c.token, l)))]))
    const df = yield* documentFrequencies(sql, "lex_word_vocab", [...wordForms.values()].flat())
    const sdf = yield* documentFrequencies(sql, "lex_stem_vocab", [...stems.values()].flat())
    const dfOf = (t: string) => df.get(fold(t)) ?? 0
    const knownAs = (c: Candidate) =>
      Math.max(0, ...(wordForms.get(c.token) ?? []).map(dfOf), ...(stems.get(c.token) ?? []).map((x) => sdf.get(fold(x)) ?? 0))
    // then the two-part splits of the unknown long words
    const splits = new Map<string, Array<readonly [string, ReadonlyArray<string>]>>()
    for (const c of list.filter((x) => !x.code && isAlpha(x.token) && x.token.length >= 7 && knownAs(x) === 0).slice(0, MAX_SPLIT_CANDIDATES)) {
      const options: Array<readonly [string, ReadonlyArray<string>]> = []
      for (let i = MIN_PART; c.token.length - i >= MIN_PART; i++) {
        const left = c.token.slice(0, i)
        const rights = [c.token.slice(i), ...inflectionStrips(c.token.slice(i), o.languages)]
        options.push([left, rights])
        for (const l of LINKERS) if (left.endsWith(l) && left.length - l.length >= MIN_PART) options.push([left.slice(0, -l.length), rights])
      }
      splits.set(c.token, options)
    }
    const parts = yield* documentFrequencies(sql, "lex_word_vocab", [...splits.values()].flatMap((opts) => opts.flatMap(([l, rs]) => [l, ...rs])))
    const partDf = (t: string) => (isStopword(t, o.languages) ? 0 : parts.get(fold(t)) ?? 0)
    const scored = list.map((c) => {
      let known = knownAs(c)
      let factor = 1
      if (known === 0) {
        for (const [l, rs] of splits.get(c.token) ?? []) {
          const right = Math.max(0, ...rs.map(partDf))
          const left = partDf(l)
          if (left > 0 && right > 0) {
            known = Math.max(known, Math.min(left, right))
            factor = 0.8
          }
        }
      }
      const shape = (c.code ? 2 : 1) * (c.upper ? 1.5 : c.capitalized ? 1.25 : 1) * (isNumeric(c.token) ? 0.3 : 1) *
        (isChatter(c.token, o.languages) ? 0 : 1)
      return { c, known, base: (1 + Math.log(c.tf)) * shape, rarity: known > 0 ? factor * idf(docs, known) : 0 }
    })
    // an empty or foreign scope knows none of the words: then shape and repetition alone decide
    const anyKnown = scored.some((x) => x.known > 0)
    const ranked = scored
      .map((x) => ({ c: x.c, score: x.base * (anyKnown ? x.rarity : 1) }))
      .filter((x) => x.score > 0)
      .sort((a, b) => b.score - a.score || a.c.first - b.c.first)
    return ranked.slice(0, o.maxKeyTerms).map((x): RawTerm => ({ text: x.c.token, tokens: [x.c.token], code: x.c.code }))
  })

export interface TextTerms {
  readonly terms: ReadonlyArray<RawTerm>
  readonly keyterms: boolean
  /** the token stream synonyms are matched against */
  readonly segments: ReadonlyArray<ReadonlyArray<string>>
}

/**
 * The text without its mail frame (keyterms), unless nothing would be left of it; a text that had
 * a frame (a mail) loses its small talk too.
 */
const bodyOf = (text: string, o: LexicalOptions): { readonly body: string; readonly scan: TextScan } => {
  const whole = text.normalize("NFKC")
  const all = scan(whole, o)
  if (o.features.keyterms) {
    const body = stripMailFrame(text).normalize("NFKC")
    const s = scan(body, o)
    if (s.tokens.length < all.tokens.length) {
      const content = s.content.filter((t) => !isChatter(t.lower, o.languages))
      if (content.length > 0 || s.codes.length > 0) return { body, scan: { ...s, content } }
    }
  }
  return { body: whole, scan: all }
}

export const textTerms = (sql: SqlClient, text: string, o: LexicalOptions, docs: number): Effect.Effect<TextTerms, SqlError> =>
  Effect.gen(function*() {
    const { body, scan: s } = bodyOf(text, o)
    if (o.features.keyterms && s.content.length > o.longTextTokens) {
      const terms = yield* keyTerms(sql, body, s, o, docs)
      return { terms, keyterms: true, segments: terms.map((t) => t.tokens) }
    }
    const list: Array<RawTerm> = []
    const seen = new Set<string>()
    for (const c of s.codes) {
      if (!seen.has(c.token)) list.push({ text: c.token, tokens: [c.token], code: true })
      seen.add(c.token)
    }
    for (const t of s.content) {
      if (!seen.has(t.lower)) list.push({ text: t.lower, tokens: [t.lower], code: false })
      seen.add(t.lower)
    }
    return { terms: list.slice(0, TEXT_TERM_CAP), keyterms: false, segments: [s.tokens.map((t) => t.lower)] }
  })
