/**
 * The quote highlighted in its source window. The quote check compares normalized text
 * (domain/quote-check.ts: NFKC, lowercase, punctuation and quote characters to spaces,
 * whitespace collapsed); here the same normalization runs code point by code point with a map
 * back to the raw text, so the highlighted span is exactly the raw text the quote matched.
 */
import { normalizeQuote } from "../domain/quote-check.js"
import { type Html, html } from "./html.js"

export interface Span {
  readonly start: number
  readonly end: number
}

/** Where the quote stands in `text` (UTF-16 offsets of the raw text), or null. */
export const locateQuote = (text: string, quote: string): Span | null => {
  const q = normalizeQuote(quote)
  if (q.length === 0) return null
  let norm = ""
  const from: Array<number> = []
  const to: Array<number> = []
  let i = 0
  for (const cp of text) {
    const n = normalizeQuote(cp)
    const piece = n.length === 0 ? " " : n
    for (const ch of piece) {
      if (ch === " " && (norm.length === 0 || norm.endsWith(" "))) continue
      norm += ch
      for (let k = 0; k < ch.length; k++) {
        from.push(i)
        to.push(i + cp.length)
      }
    }
    i += cp.length
  }
  const at = norm.indexOf(q)
  if (at === -1) return null
  const start = from[at]
  const end = to[at + q.length - 1]
  return start === undefined || end === undefined ? null : { start, end }
}

/** `text` with `span` (clipped to the text) in <mark>; `id` names the mark (a link target). */
export const marked = (text: string, span: Span | null, id?: string): Html => {
  if (span === null || span.end <= 0 || span.start >= text.length) return html`${text}`
  const a = Math.max(0, span.start)
  const b = Math.min(text.length, span.end)
  return html`${text.slice(0, a)}<mark${id === undefined ? "" : html` id="${id}"`}>${text.slice(a, b)}</mark>${text.slice(b)}`
}

/** Pieces joined with one space (the jamie window): each piece's offsets in the joined text. */
export const offsetsOf = (pieces: ReadonlyArray<string>): Array<Span> => {
  const out: Array<Span> = []
  let at = 0
  for (const p of pieces) {
    out.push({ start: at, end: at + p.length })
    at += p.length + 1
  }
  return out
}

/** The part of `span` inside `piece`, relative to the piece. */
export const within = (span: Span | null, piece: Span): Span | null => {
  if (span === null) return null
  const start = Math.max(span.start, piece.start)
  const end = Math.min(span.end, piece.end)
  return start < end ? { start: start - piece.start, end: end - piece.start } : null
}
