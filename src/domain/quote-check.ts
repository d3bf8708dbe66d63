/**
 * The quote check (architecture.md §6.3): the quote is evidence, checked in code against the
 * stored source. Pure functions.
 *
 * After a redaction (gaps.md §12) a stored text holds the marker "[redacted]" where the erased text
 * was. A quote that holds the marker is never found, and the check never matches across a marker:
 * the text is cut at every marker before it is normalized (normalization would turn the marker
 * into the plain word "redacted"), and the quote, like the closest passage, must lie within one part.
 */
import { REDACTED_MARKER } from "../contracts/redaction.js"


/**
 * Quote characters that are not in \p{P} (backtick, acute, primes, modifier letters …).
 * Every \p{P} character (curly quotes, guillemets, dashes …) is covered by the class itself.
 */
const QUOTE_LIKE = "`´ʹʺʻʼʽˈˊˋ˝′″‴‵‶‷＂＇｀"
const PUNCT_OR_QUOTE = new RegExp(`[\\p{P}${QUOTE_LIKE}]`, "gu")

/** NFKC → lowercase → every \p{P} and quote character to a space → collapse whitespace → trim. */
export const normalizeQuote = (s: string): string =>
  s.normalize("NFKC").toLowerCase().replace(PUNCT_OR_QUOTE, " ").replace(/\s+/gu, " ").trim()

/** A normalized quote shorter than this is never found. */
export const MIN_QUOTE_CHARS = 20
/** The jamie window: segments with start_s within ±120 s of the quote's timestamp. */
export const JAMIE_WINDOW_S = 120

export interface SegmentText {
  readonly n: number
  readonly start_s: number
  readonly text: string
}

/** The segments of the jamie window, joined in n order with a space (speakers excluded). */
export const jamieWindow = (segments: ReadonlyArray<SegmentText>, timestamp_s: number): string =>
  [...segments]
    .filter((s) => s.start_s >= timestamp_s - JAMIE_WINDOW_S && s.start_s <= timestamp_s + JAMIE_WINDOW_S)
    .sort((a, b) => a.n - b.n)
    .map((s) => s.text)
    .join(" ")

/** The quote holds the redaction marker (in any case or width): a redacted text is never evidence. */
export const holdsMarker = (quote: string): boolean => quote.normalize("NFKC").toLowerCase().includes(REDACTED_MARKER)

/** The parts of a stored text between the redaction markers (the whole text when it holds none). */
export const unredactedParts = (text: string): Array<string> => text.split(REDACTED_MARKER)

/**
 * True when the quote holds no marker and its normalization (≥ 20 characters) is a substring of
 * the normalization of one part of the text between markers.
 */
export const quoteFoundIn = (quote: string, text: string): boolean => {
  if (holdsMarker(quote)) return false
  const q = normalizeQuote(quote)
  if ([...q].length < MIN_QUOTE_CHARS) return false
  return unredactedParts(text).some((part) => normalizeQuote(part).includes(q))
}

export const mailQuoteFound = (quote: string, mailText: string): boolean => quoteFoundIn(quote, mailText)

export const jamieQuoteFound = (quote: string, segments: ReadonlyArray<SegmentText>, timestamp_s: number): boolean =>
  quoteFoundIn(quote, jamieWindow(segments, timestamp_s))

// ---------------------------------------------------------------------------------------------
// The closest passage: what to tell an agent whose quote was not found

/** A closest passage shorter than this (an anchor of fewer characters) is no help: none. */
export const MIN_ANCHOR_CHARS = 8
/** How much of the quote and of the passage from the first difference on is shown. */
export const DIFF_CHARS = 60
/** Above this many normalized characters only the quote's start and end are used as anchors. */
const FULL_ANCHOR_LIMIT = 200_000
const MAX_WORD_ANCHORS = 40

export interface Closest {
  /** the passage of the normalized text aligned with the quote (widened to whole words) */
  readonly passage: string
  /** index in the normalized quote of the first character that differs from the passage */
  readonly differs_at: number
  readonly quote_from: string
  readonly source_from: string
  /** where the passage starts in the normalized text */
  readonly offset: number
  /** the longest run of the quote found in the text: where it starts and how long it is */
  readonly anchor: { readonly at: number; readonly length: number }
}

/** The longest prefix of `q` (≥ 0 characters) that occurs in `text`, and where (binary search: prefixes nest). */
const longestPrefixIn = (q: string, text: string): { readonly length: number; readonly at: number } => {
  let lo = 0
  let hi = q.length
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2)
    if (text.includes(q.slice(0, mid))) lo = mid
    else hi = mid - 1
  }
  return { length: lo, at: lo === 0 ? 0 : text.indexOf(q.slice(0, lo)) }
}

/** The longest suffix of `q` that occurs in `text`, and where it starts there. */
const longestSuffixIn = (q: string, text: string): { readonly length: number; readonly at: number } => {
  let lo = 0
  let hi = q.length
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2)
    if (text.includes(q.slice(q.length - mid))) lo = mid
    else hi = mid - 1
  }
  return { length: lo, at: lo === 0 ? 0 : text.indexOf(q.slice(q.length - lo)) }
}

/**
 * Where the quote's start falls in the text, counted back from a run that starts at a word of
 * both: as many words back as the quote has before the run, so a first word of another length
 * ("nach" for "vor") still starts the source's side at its word; else as many characters back.
 */
const alignByWords = (q: string, t: string, run: { readonly at: number; readonly k: number }): number => {
  // a run that begins with the space before a word begins at that word
  const k = q[run.k] === " " && t[run.at] === " " ? run.k + 1 : run.k
  const from = k === run.k ? run.at : run.at + 1
  const atWordStart = k > 0 && q[k - 1] === " " && from > 0 && t[from - 1] === " "
  if (!atWordStart) return run.at - run.k
  let words = 0
  for (let i = 0; i < k; i++) if (q[i] === " ") words++
  let at = from
  while (words > 0 && at > 0) {
    at-- // onto the space before the word
    while (at > 0 && t[at - 1] !== " ") at--
    words--
  }
  return words === 0 ? at : run.at - run.k
}

/**
 * The passage of `text` closest to `quote` (closestWithin), never across a redaction marker: the
 * passage of the part between markers with the longest run of the quote (the earlier on a tie).
 * `offset` and `anchor.at` of a text with markers count in its parts, normalized and joined by a
 * space.
 */
export const closestPassage = (quote: string, text: string): Closest | null => {
  if (!text.includes(REDACTED_MARKER)) return closestWithin(quote, text)
  let best: Closest | null = null
  let at = 0
  for (const part of unredactedParts(text)) {
    const t = normalizeQuote(part)
    const c = closestWithin(quote, t)
    if (c !== null && (best === null || c.anchor.length > best.anchor.length)) {
      best = { ...c, offset: at + c.offset, anchor: { at: at + c.anchor.at, length: c.anchor.length } }
    }
    at += t.length + 1
  }
  return best
}

/**
 * The passage of `text` closest to `quote`, both normalized as the quote check compares them:
 * the quote is anchored where the longest run of it (from its start, from its end, or from one of
 * its first word starts) occurs in the text; the passage runs from where the quote's start fits
 * best near that run (the longest prefix of the quote found there) to where the quote's end
 * falls by the run, widened to whole words. Null when no run of MIN_ANCHOR_CHARS characters of
 * the quote occurs in the text.
 */
const closestWithin = (quote: string, text: string): Closest | null => {
  const q = normalizeQuote(quote)
  const t = normalizeQuote(text)
  if (q.length === 0 || t.length === 0) return null
  /** a run of the quote from its offset `k` found in the text at `at` */
  interface Anchor { readonly length: number; readonly at: number; readonly k: number }
  const anchors: Array<Anchor> = []
  const prefix = longestPrefixIn(q, t)
  anchors.push({ length: prefix.length, at: prefix.at, k: 0 })
  const suffix = longestSuffixIn(q, t)
  anchors.push({ length: suffix.length, at: suffix.at, k: q.length - suffix.length })
  if (t.length <= FULL_ANCHOR_LIMIT) {
    let words = 0
    for (let k = 1; k < q.length && words < MAX_WORD_ANCHORS; k++) {
      if (q[k - 1] !== " ") continue
      words++
      const run = longestPrefixIn(q.slice(k), t)
      anchors.push({ length: run.length, at: run.at, k })
    }
  }
  const best = anchors.reduce((a, b) => (b.length > a.length ? b : a))
  if (best.length < MIN_ANCHOR_CHARS) return null
  // where the quote's start fits best near the run: the longest prefix of the quote found around it
  const from0 = Math.max(0, best.at - best.k - q.length)
  const around = t.slice(from0, Math.min(t.length, best.at + best.length + q.length))
  const lead = longestPrefixIn(q, around)
  // a lead of a few characters is chance ("b" of "bitte"), not where the quote starts
  const near = lead.length >= 4 && from0 + lead.at <= best.at
  const align = near ? from0 + lead.at : alignByWords(q, t, best)
  let differs = near ? lead.length : 0
  if (!near) while (differs < q.length && align + differs >= 0 && q[differs] === t[align + differs]) differs++
  let start = Math.max(0, Math.min(align, best.at))
  let end = Math.min(t.length, Math.max(best.at + best.length, best.at + (q.length - best.k)))
  while (start > 0 && t[start - 1] !== " " && align - start < 20) start--
  while (end < t.length && t[end] !== " " && end - (best.at + q.length - best.k) < 20) end++
  const from = Math.max(0, align + differs)
  return {
    passage: t.slice(start, end),
    differs_at: differs,
    quote_from: q.slice(differs, differs + DIFF_CHARS),
    source_from: t.slice(from, from + DIFF_CHARS),
    offset: start,
    anchor: { at: best.at, length: best.length }
  }
}

/** The closest passage of a meeting and the start_s of the segment it lies in. */
export interface SegmentClosest extends Closest {
  readonly start_s: number
}

/**
 * The closest passage of a meeting transcript, within one segment (one speaker's turn: a passage
 * running into the next segment would join words never said together) and within one part of it
 * between redaction markers (each part counts as a segment of its own here). The longest run of the
 * quote over the whole transcript (segments joined by a space, as the check joins its window)
 * picks the segments it touches; the passage is sought in each of them alone and the one with the
 * longest run wins (the earlier on a tie). `offset` is in the joined normalized transcript. Null
 * when no run of MIN_ANCHOR_CHARS characters of the quote lies within one segment.
 */
export const closestInSegments = (quote: string, segments: ReadonlyArray<{ readonly start_s: number; readonly text: string }>): SegmentClosest | null => {
  let at = 0
  const parts = segments.flatMap((s) => unredactedParts(s.text).map((part) => ({ start_s: s.start_s, text: normalizeQuote(part) })))
    .filter((p) => p.text.length > 0).map((p) => {
    const part = { ...p, from: at }
    at += p.text.length + 1
    return part
  })
  const whole = closestPassage(quote, parts.map((p) => p.text).join(" "))
  if (whole === null) return null
  const runEnd = whole.anchor.at + whole.anchor.length
  let best: SegmentClosest | null = null
  for (const p of parts) {
    if (p.from >= runEnd || p.from + p.text.length <= whole.anchor.at) continue
    const c = closestPassage(quote, p.text)
    if (c !== null && (best === null || c.anchor.length > best.anchor.length)) {
      best = { ...c, offset: p.from + c.offset, anchor: { at: p.from + c.anchor.at, length: c.anchor.length }, start_s: p.start_s }
    }
  }
  return best
}
