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
import { storesTails, TEXT_TERM_CAP, TOTAL_TERM_CAP } from "./options.js"
import { type BilingualLexicon, crossLanguageExpansions, matchBilingual } from "./crosslang.js"
import { storesStems } from "./document.js"
import { isChatter, isStopword } from "./stopwords.js"
import { matchSynonyms, type SynonymGroup } from "./synonyms.js"
import {
  codeTokens,
  editDistance,
  fold,
  hasDigit,
  inflectionStrips,
  isAlpha,
  isNumeric,
  spellingIn,
  spellingOut,
  stem,
  stripMailFrame,
  tailOf,
  type Token,
  tokenize,
  tokensWithOffsets
} from "./text.js"
import { documentCount, documentFrequencies, idf, wordsStartingLike } from "./vocab.js"

export type { Alt } from "./match.js"

/** A compound part, a typo correction or a synonym: its text and what it searches. */
export interface Expansion {
  readonly text: string
  readonly alts: ReadonlyArray<Alt>
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

interface RawTerm {
  readonly text: string
  readonly tokens: ReadonlyArray<string>
  readonly code: boolean
}

const MIN_PREFIX = 4
/** an inflection strip is searched as a prefix only from 5 characters on (mull* would reach Müll) */
const MIN_STRIP_PREFIX = 5
const MIN_DECOMPOUND = 6
const MAX_DECOMPOUND = 40
const MIN_PART = 3
const MIN_FUZZY = 5
const FUZZY_PER_TERM = 2
const LINKERS = ["s", "es", "n", "en", "e", "er"]
const LAST_PART_ENDINGS = ["e", "n", "en", "s", "es"]
/** a partial decomposition: a known head of ≥ 4 letters, a known modifier of ≥ 6 */
const MIN_HEAD = 4
const MIN_MODIFIER = 6
const MAX_KEY_CANDIDATES = 1500
const MAX_SPLIT_CANDIDATES = 150

/** Rules whose row in `table` matches one of the alternatives. */
const matchCount = (sql: SqlClient, table: "lex_word" | "lex_stem", alts: ReadonlyArray<Alt>): Effect.Effect<number, SqlError> => {
  const match = orExpr(alts)
  if (match === null) return Effect.succeed(0)
  return Effect.map(
    sql.unsafe<{ n: number }>(`SELECT count(*) AS n FROM ${table} WHERE ${table} MATCH ?`, [match]),
    (rows) => Number(rows[0]?.n ?? 0)
  )
}

const uniq = <A>(xs: Iterable<A>): Array<A> => [...new Set(xs)]
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

// --- step 1: terms ---------------------------------------------------------------------------

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
const givenTerms = (terms: ReadonlyArray<string>, o: LexicalOptions): Array<RawTerm> =>
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

interface TextTerms {
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

const textTerms = (sql: SqlClient, text: string, o: LexicalOptions, docs: number): Effect.Effect<TextTerms, SqlError> =>
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

// --- step 2: variants ------------------------------------------------------------------------

interface Segmentation {
  readonly parts: ReadonlyArray<ReadonlyArray<string>>
  readonly count: number
  readonly minLen: number
  readonly score: number
}

const better = (a: Segmentation, b: Segmentation | null): boolean =>
  b === null || a.count < b.count || (a.count === b.count && (a.minLen > b.minLen || (a.minLen === b.minLen && a.score > b.score)))

/** Substrings a decomposition of `w` may look up. */
const partCandidates = (w: string, languages: LexicalOptions["languages"]): Array<string> => {
  const out: Array<string> = []
  for (let i = 0; i < w.length; i++) {
    for (let j = i + MIN_PART; j <= w.length; j++) {
      if (i === 0 && j === w.length) continue
      out.push(w.slice(i, j))
      if (j === w.length) {
        const last = w.slice(i)
        for (const e of LAST_PART_ENDINGS) out.push(last + e)
        out.push(...inflectionStrips(last, languages))
      }
    }
  }
  return out
}

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

/**
 * Terms, variants and sub-query alternatives of a query in a scope. No terms (no text, only
 * stopwords) → an analysis without terms (stage a then answers zero hits).
 */
export const analyze = (
  sql: SqlClient,
  input: QueryInput,
  o: LexicalOptions,
  groups: ReadonlyArray<SynonymGroup>,
  lexicon: BilingualLexicon | null = null
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
    const lookups = new Set<string>()
    for (const t of raw) for (const tok of t.tokens) lookups.add(tok)
    for (const t of singles) {
      lookups.add(spellingOut(t.text))
      spellingIn(t.text).forEach((v) => lookups.add(v))
      inflectionStrips(t.text, o.languages).forEach((v) => lookups.add(v))
      if (decompounds && t.text.length >= MIN_DECOMPOUND && t.text.length <= MAX_DECOMPOUND) {
        partCandidates(t.text, o.languages).forEach((v) => lookups.add(v))
      }
    }
    const df = yield* documentFrequencies(sql, "lex_word_vocab", lookups)
    const dfOf = (t: string) => df.get(fold(t)) ?? 0
    const stemsOf = (t: string) => uniq(o.languages.map((l) => stem(t, l)))
    const stemLookups = storesStems(o) ? singles.flatMap((t) => stemsOf(t.text)) : []
    const sdf = storesStems(o) ? yield* documentFrequencies(sql, "lex_stem_vocab", stemLookups) : new Map<string, number>()

    let fuzzyBudget = o.features.fuzzy ? o.maxFuzzyTerms : 0
    const terms: Array<AnalyzedTerm> = []
    for (const t of raw) {
      const single = singles.includes(t)
      const spelled = single ? spellingOut(t.text) : t.tokens.map(spellingOut).join(" ")
      const reverse = single ? spellingIn(t.text).filter((v) => fold(v) !== fold(t.text) && dfOf(v) > 0) : []
      const strips = single ? inflectionStrips(t.text, o.languages) : []

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
        else for (const lang of o.languages) stemAlts.push({ tokens: t.tokens.map((x) => stem(x, lang)), prefix: false })
      }
      if (storesTails(o) && single && t.text.length >= MIN_PREFIX) stemAlts.push({ tokens: [tailOf(t.text)], prefix: false })

      const wholeKnown = [t.text, spelled, ...reverse, ...strips].some((v) => dfOf(v) > 0)

      // fuzzy: typo corrections of a word the scope does not know in any form
      const corrections: Array<Expansion> = []
      const known = wholeKnown || stemsOf(t.text).some((x) => (sdf.get(fold(x)) ?? 0) > 0)
      if (fuzzyBudget > 0 && single && !known && t.text.length >= MIN_FUZZY) {
        const q = fold(t.text)
        const max = q.length <= 7 ? 1 : 2
        const cands = yield* wordsStartingLike(sql, q, q.length - max, q.length + max)
        const picked = cands
          .filter((c) => !hasDigit(c.term) && c.term !== q)
          .map((c) => ({ term: c.term, doc: Number(c.doc), d: editDistance(q, c.term, max) }))
          .filter((c) => c.d <= max)
          .sort((a, b) => a.d - b.d || b.doc - a.doc || (a.term < b.term ? -1 : a.term > b.term ? 1 : 0))
          .slice(0, Math.min(FUZZY_PER_TERM, fuzzyBudget))
        for (const c of picked) corrections.push({ text: c.term, alts: [wordAlt(c.term)] })
        fuzzyBudget -= picked.length
      }

      // parts: decompounding against the scope vocabulary (a partial one only for a word that is
      // neither known nor a typo of a known word)
      const parts: Array<Expansion & { segment: number }> = []
      let partSegments = 0
      if (decompounds && single && t.text.length >= MIN_DECOMPOUND && t.text.length <= MAX_DECOMPOUND) {
        const seg = decompose(t.text, (x) => (isStopword(x, o.languages) ? 0 : dfOf(x)), o.languages, !known && corrections.length === 0)
        for (const [segment, forms] of (seg?.parts ?? []).entries()) {
          for (const f of forms.slice(0, 2)) parts.push({ text: f, alts: partAlts(f, o), segment })
        }
        partSegments = seg?.segments ?? 0
      }

      const tri = o.features.trigram
        ? uniq([t.text, spelled]).filter((x) => fold(x).length >= 3)
        : []
      terms.push({
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
      })
    }

    // synonyms: groups touched by the query words, listed under "~<matched words>"
    const synonyms: Array<SynonymExpansion> = []
    const segments = [...given.map((g) => g.tokens), ...fromText.segments]
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
    const bilingual = o.features.synonyms && lexicon !== null ? matchBilingual(segments, lexicon, o.languages) : []
    if (bilingual.length > 0) {
      const listed = new Set(synonyms.flatMap((s) => s.expansions.map((e) => e.text)))
      const found = yield* crossLanguageExpansions(sql, bilingual, o.languages, expansionOf, (text) => seen.has(text) || listed.has(text))
      for (const m of found) {
        const key = `~${m.surface}`
        const at = synonyms.findIndex((s) => s.key === key)
        const same = synonyms[at]
        if (same === undefined) synonyms.push({ key, terms: termsOf([m.surface]), expansions: m.expansions })
        else synonyms[at] = { ...same, expansions: [...same.expansions, ...m.expansions] }
      }
    }
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
