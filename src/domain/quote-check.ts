/**
 * The quote check (architecture.md §6.3): the quote is evidence, checked in code against the
 * stored source. Pure functions.
 */

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

/** True when the normalized quote (≥ 20 characters) is a substring of the normalized text. */
export const quoteFoundIn = (quote: string, text: string): boolean => {
  const q = normalizeQuote(quote)
  if ([...q].length < MIN_QUOTE_CHARS) return false
  return normalizeQuote(text).includes(q)
}

export const mailQuoteFound = (quote: string, mailText: string): boolean => quoteFoundIn(quote, mailText)

export const jamieQuoteFound = (quote: string, segments: ReadonlyArray<SegmentText>, timestamp_s: number): boolean =>
  quoteFoundIn(quote, jamieWindow(segments, timestamp_s))
