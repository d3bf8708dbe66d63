/**
 * Text primitives of stage a, shared by the index and the query side (architecture.md §7 steps
 * 1–2): tokens, diacritic folding, spelling and inflection variants, Snowball stems, canonical
 * code and unit tokens, the mail frame, and a bounded edit distance.
 */
import { newStemmer } from "snowball-stemmers"
import type { Language } from "./options.js"

/** NFKC, lowercase, split on [^\p{L}\p{N}]+ (the index and the query use exactly this). */
export const tokenize = (text: string): Array<string> =>
  text.normalize("NFKC").toLowerCase().split(/[^\p{L}\p{N}]+/u).filter((t) => t.length > 0)

/** A token with its place in the NFKC text (original case kept). */
export interface Token {
  readonly text: string
  readonly lower: string
  readonly start: number
  readonly end: number
}

export const tokensWithOffsets = (nfkc: string): Array<Token> =>
  [...nfkc.matchAll(/[\p{L}\p{N}]+/gu)].map((m) => ({
    text: m[0], lower: m[0].toLowerCase(), start: m.index, end: m.index + m[0].length
  }))

/** What FTS5 unicode61 remove_diacritics 2 makes of a token: diacritics dropped (ß stays). */
export const fold = (token: string): string => {
  if (/^[ -~]*$/.test(token)) return token
  return token.normalize("NFD").replace(/\p{M}+/gu, "").normalize("NFC")
}

export const isAlpha = (token: string): boolean => /^\p{L}+$/u.test(token)
export const isNumeric = (token: string): boolean => /^\p{N}+$/u.test(token)
export const hasDigit = (token: string): boolean => /\p{N}/u.test(token)

// --- spelling (ä↔ae, ö↔oe, ü↔ue, ß↔ss) -------------------------------------------------------

/** ä→ae, ö→oe, ü→ue, ß→ss. */
export const spellingOut = (t: string): string =>
  t.replace(/ä/g, "ae").replace(/ö/g, "oe").replace(/ü/g, "ue").replace(/ß/g, "ss")

/** The reverse candidates: ae→ä, oe→ö, ue→ü and/or ss→ß (kept by the caller only when known). */
export const spellingIn = (t: string): Array<string> => {
  const umlauts = t.replace(/ae/g, "ä").replace(/oe/g, "ö").replace(/ue/g, "ü")
  const sharp = t.replace(/ss/g, "ß")
  const both = umlauts.replace(/ss/g, "ß")
  return [...new Set([umlauts, sharp, both])].filter((v) => v !== t)
}

// --- inflection ------------------------------------------------------------------------------

const SUFFIXES: Readonly<Record<Language, ReadonlyArray<string>>> = {
  de: ["ern", "en", "er", "es", "n", "e", "s"],
  en: ["ing", "ed", "es", "s"]
}

/** One inflection strip per language (the first suffix that leaves a stem of ≥ 3 characters). */
export const inflectionStrips = (t: string, languages: ReadonlyArray<Language>): Array<string> => {
  if (!isAlpha(t)) return []
  const out: Array<string> = []
  for (const lang of languages) {
    const suffix = SUFFIXES[lang].find((s) => t.endsWith(s) && t.length - s.length >= 3)
    if (suffix !== undefined) out.push(t.slice(0, t.length - suffix.length))
  }
  return [...new Set(out)].filter((v) => v !== t)
}

// --- stems -----------------------------------------------------------------------------------

const stemmers = { de: newStemmer("german"), en: newStemmer("english") }
const stemCache: Record<Language, Map<string, string>> = { de: new Map(), en: new Map() }
const STEM_CACHE_MAX = 200_000

/** Snowball (Porter2) stem of a lowercase token; digits and codes stay as they are. */
export const stem = (token: string, lang: Language): string => {
  const cache = stemCache[lang]
  const hit = cache.get(token)
  if (hit !== undefined) return hit
  const s = isAlpha(token) ? stemmers[lang].stem(token) : token
  if (cache.size >= STEM_CACHE_MAX) cache.clear()
  cache.set(token, s)
  return s
}

/** Tails of a compound: the stems of every suffix of ≥ 4 letters after ≥ 3 letters, "_"-marked. */
export const TAIL_MARK = "_"
export const MIN_TAIL_WORD = 7
const tailCache = new Map<string, ReadonlyArray<string>>()
export const tails = (token: string): ReadonlyArray<string> => {
  if (token.length < MIN_TAIL_WORD) return []
  const hit = tailCache.get(token)
  if (hit !== undefined) return hit
  if (!isAlpha(token)) return []
  const out = new Set<string>()
  for (let i = 3; token.length - i >= 4; i++) out.add(TAIL_MARK + stem(token.slice(i), "de"))
  if (tailCache.size >= STEM_CACHE_MAX) tailCache.clear()
  const list = [...out]
  tailCache.set(token, list)
  return list
}
/** The tail token a query word matches as the head of a stored compound. */
export const tailOf = (token: string): string => TAIL_MARK + stem(token, "de")

// --- canonical code and unit tokens (normalize) ----------------------------------------------

const UNIT_GROUPS: ReadonlyArray<readonly [string, string]> = [
  ["d", "d tag tage tagen tages day days"],
  ["w", "woche wochen week weeks wk wks"],
  ["mo", "monat monate monaten monats month months"],
  ["y", "jahr jahre jahren jahres year years yr yrs"],
  ["h", "h std stunde stunden hour hours hr hrs"],
  ["min", "min mins minute minuten minutes"],
  ["pct", "% prozent percent pct"],
  ["eur", "€ eur euro euros"],
  ["usd", "$ usd dollar dollars"],
  ["chf", "chf franken"],
  ["kg", "kg kilo kilogramm kilogram kilograms"],
  ["g", "g gramm gram grams"],
  ["t", "t tonne tonnen tons tonnes"],
  ["mm", "mm millimeter millimetre"],
  ["cm", "cm zentimeter centimeter centimetre"],
  ["m", "m meter metre meters metres"],
  ["km", "km kilometer kilometre kilometers"],
  ["l", "l liter litre liters litres"],
  ["ml", "ml milliliter"],
  ["stk", "stk stück stueck pcs pc piece pieces"]
]
const UNITS: ReadonlyMap<string, string> = new Map(
  UNIT_GROUPS.flatMap(([canon, forms]) => forms.split(" ").map((f) => [f, canon] as const))
)
/** Lowercase code prefixes that form a code with a number even when not written in capitals. */
const CODE_PREFIXES: ReadonlySet<string> = new Set(["ral", "din", "iso", "en", "dn", "pn", "ip", "vde", "ncs"])

export interface CodeToken {
  /** the canonical token, e.g. ral9005, 30d, 2p5pct */
  readonly token: string
  /** offsets in the NFKC text */
  readonly start: number
  readonly end: number
}

const number = (int: string, sep: string | undefined, frac: string | undefined): string => {
  if (sep === undefined || frac === undefined) return int
  // a separator before exactly three digits groups thousands (1.000 / 1,000); else a decimal point
  return frac.length === 3 ? `${int}${frac}` : `${int}p${frac}`
}

const UNIT_RE = /(?<![\p{L}\p{N}])(\p{N}{1,9})(?:([.,])(\p{N}{1,3}))?[ \t]?-?[ \t]?(%|€|\$|\p{L}{1,12})(?![\p{L}\p{N}])/gu
const PREFIX_CURRENCY_RE = /(?<![\p{L}\p{N}])(€|\$|EUR|USD|CHF)[ \t]?(\p{N}{1,9})(?:([.,])(\p{N}{1,3}))?(?![\p{L}\p{N}])/gu
const CODE_RE = /(?<![\p{L}\p{N}])(\p{L}{1,4})[ \t]?-?[ \t]?(\p{N}{1,8})(?![\p{L}\p{N}])/gu

const isUpper = (s: string): boolean => s === s.toUpperCase() && s !== s.toLowerCase()

/**
 * Canonical code and unit tokens of an NFKC text, in text order: "RAL 9005" / "RAL-9005" →
 * ral9005 (a prefix of 1–4 capitals, or a known code prefix), "30 Tage" / "30 days" / "30-day" →
 * 30d, "2,5 %" → 2p5pct, "€ 1.000" → 1000eur, and every token that mixes letters and digits.
 */
export const codeTokens = (nfkc: string, stopword: (t: string) => boolean): Array<CodeToken> => {
  // every code and unit token holds a digit
  if (!/\p{N}/u.test(nfkc)) return []
  const found: Array<CodeToken> = []
  const taken: Array<readonly [number, number]> = []
  const free = (s: number, e: number) => taken.every(([a, b]) => e <= a || s >= b)
  const add = (token: string, start: number, end: number) => {
    if (!free(start, end)) return
    taken.push([start, end])
    found.push({ token, start, end })
  }
  for (const m of nfkc.matchAll(PREFIX_CURRENCY_RE)) {
    const unit = UNITS.get((m[1] ?? "").toLowerCase())
    if (unit !== undefined) add(`${number(m[2] ?? "", m[3], m[4])}${unit}`.toLowerCase(), m.index, m.index + m[0].length)
  }
  for (const m of nfkc.matchAll(UNIT_RE)) {
    const unit = UNITS.get((m[4] ?? "").toLowerCase())
    if (unit !== undefined) add(`${number(m[1] ?? "", m[2], m[3])}${unit}`.toLowerCase(), m.index, m.index + m[0].length)
  }
  for (const m of nfkc.matchAll(CODE_RE)) {
    const letters = m[1] ?? ""
    const lower = letters.toLowerCase()
    const known = CODE_PREFIXES.has(lower)
    if (!known && (!isUpper(letters) || stopword(lower) || UNITS.has(lower))) continue
    add(`${lower}${m[2] ?? ""}`, m.index, m.index + m[0].length)
  }
  for (const t of tokensWithOffsets(nfkc)) {
    if (hasDigit(t.text) && /\p{L}/u.test(t.text)) add(t.lower, t.start, t.end)
  }
  return found.sort((a, b) => a.start - b.start)
}

// --- the mail frame --------------------------------------------------------------------------

const GREETING = /^(hallo|hello|hi|hey|moin|servus|guten (morgen|tag|abend)|good (morning|afternoon|evening)|liebe[rs]?|sehr geehrte[rs]?|dear)\b/i
const CLOSING = /^(viele|beste|liebe|freundliche|herzliche|schöne|sonnige)n? grüße|^mit (freundlichen|besten|herzlichen) grüßen|^(mfg|vg|lg|bg)\b|^grüße\b|^gruß(?!\p{L})|^(best|kind|warm) (regards|wishes)|^regards\b|^cheers\b|^thanks?( you)?( and (best|kind) regards)?[,!.]?$|^(vielen )?dank(e)?( und (viele|beste) grüße)?[,!.]?$|^(danke|thanks|thank you)[,!.]?\s+\p{Lu}\p{L}+[,!.]?$|^sincerely\b|^best,?$|^yours\b/iu
const HEADER = /^(von|from|an|to|cc|bcc|gesendet|sent|datum|date|betreff|subject|antwort an|reply-to)\s*:/i
const REPLY = /^(am|on) .{4,120}(schrieb|wrote)[^:]{0,80}:\s*$|^-{2,}\s*(original message|ursprüngliche nachricht|forwarded message|weitergeleitete nachricht)\s*-{2,}$/i
const SIGNATURE_LINE = /^(tel|telefon|fon|phone|fax|mobil|mobile|handy|e-?mail|www\.|web|geschäftsführ|amtsgericht|registergericht|hrb|ust|vat|sitz der gesellschaft)\b/i

const words = (line: string): number => line.split(/\s+/).filter((w) => w.length > 0).length

/**
 * The text without its mail frame: greeting lines, header and reply lines, closings with the
 * signature block after them (up to the next blank line, at most 8 lines), "-- " signatures and
 * contact lines; quote markers ("> ") are dropped, the quoted text stays.
 */
export const stripMailFrame = (text: string): string => {
  const lines = text.split(/\r\n|\r|\n/)
  const out: Array<string> = []
  let skip = 0
  for (const raw of lines) {
    const line = raw.replace(/^(\s*>)+\s?/, "").trim()
    if (skip > 0) {
      if (line.length === 0) {
        skip = 0
      } else {
        skip--
      }
      continue
    }
    if (line.length === 0) {
      out.push("")
      continue
    }
    if (line === "--" || raw.startsWith("-- ")) {
      skip = 10
      continue
    }
    if (CLOSING.test(line) && words(line) <= 8) {
      skip = 8
      continue
    }
    if (GREETING.test(line)) {
      // "Hallo Maria, ab sofort …": the greeting up to its comma goes, the rest stays
      const comma = line.search(/[,:!]/)
      const rest = comma >= 0 && words(line.slice(0, comma)) <= 5 ? line.slice(comma + 1).trim() : words(line) <= 6 ? "" : line
      if (rest.length > 0) out.push(rest)
      continue
    }
    if (HEADER.test(line) || REPLY.test(line) ||
      (SIGNATURE_LINE.test(line) && words(line) <= 6)) continue
    out.push(line)
  }
  return out.join("\n")
}

// --- edit distance ---------------------------------------------------------------------------

/** Three rows of the distance table, reused (editDistance runs to its end without yielding; grown as words need). */
let rows = [new Int32Array(32), new Int32Array(32), new Int32Array(32)] as const

/** Optimal string alignment distance (transpositions count 1), or max + 1 once it exceeds max. */
export const editDistance = (a: string, b: string, max: number): number => {
  if (Math.abs(a.length - b.length) > max) return max + 1
  const n = b.length
  if ((rows[0].length as number) <= n) rows = [new Int32Array(2 * n + 2), new Int32Array(2 * n + 2), new Int32Array(2 * n + 2)]
  let prev2 = rows[0]
  let prev = rows[1]
  let cur = rows[2]
  for (let j = 0; j <= n; j++) prev[j] = j
  for (let i = 1; i <= a.length; i++) {
    const ca = a.charCodeAt(i - 1)
    const ca2 = i > 1 ? a.charCodeAt(i - 2) : -1
    cur[0] = i
    let rowMin = i
    for (let j = 1; j <= n; j++) {
      const cb = b.charCodeAt(j - 1)
      const cost = ca === cb ? 0 : 1
      let v = Math.min((prev[j] as number) + 1, (cur[j - 1] as number) + 1, (prev[j - 1] as number) + cost)
      if (i > 1 && j > 1 && ca === b.charCodeAt(j - 2) && ca2 === cb) v = Math.min(v, (prev2[j - 2] as number) + 1)
      cur[j] = v
      if (v < rowMin) rowMin = v
    }
    if (rowMin > max) return max + 1
    const done = prev2
    prev2 = prev
    prev = cur
    cur = done
  }
  return prev[n] as number
}
