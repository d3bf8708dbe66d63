/**
 * The normalisation a redaction compares with (gaps.md §12: the quote check's, with the umlaut
 * and ß folding of entity names): NFKC → lower case → ä→ae ö→oe ü→ue ß→ss → remaining
 * diacritics stripped (NFD, \p{M} dropped) → every \p{P} and quote character, and every other
 * character that is neither letter nor digit, to a space → whitespace runs collapsed. Applied per character, where a character is one code point with the
 * combining marks (and joiners) that follow it, so every folded character knows the original
 * character it came from: a match always covers whole original characters.
 *
 * An existing marker `[redacted]` in a text folds to one barrier character that no term contains:
 * nothing matches across or inside a marker. Pure functions.
 */
import { REDACTED_MARKER } from "../contracts/redaction.js"

const QUOTE_LIKE = "`´ʹʺʻʼʽˈˊˋ˝′″‴‵‶‷＂＇｀"
const PUNCT_OR_QUOTE = new RegExp(`[\\p{P}${QUOTE_LIKE}]`, "gu")
const MARK = /^[\p{M}\u200c\u200d]$/u

/** What a marker folds to: never produced by any other character (NUL folds to a space). */
export const BARRIER = "\u0000"

/** The fold of one character (a code point with its marks), spaces not yet collapsed. */
export const foldChar = (ch: string): string =>
  ch
    .normalize("NFKC")
    .toLowerCase()
    .replace(/ä/g, "ae")
    .replace(/ö/g, "oe")
    .replace(/ü/g, "ue")
    .replace(/ß/g, "ss")
    .normalize("NFD")
    .replace(/\p{M}/gu, "")
    .replace(PUNCT_OR_QUOTE, " ")
    // every other character that is neither letter nor digit (+, €, |, …) separates as in the
    // search's tokens: "+49 151" is found where a search logged "49" "151"
    .replace(/[^\p{L}\p{N}\s\u0000]/gu, " ")
    .replace(/\s/gu, " ")
    .replaceAll(BARRIER, " ")

const ASCII: ReadonlyArray<string> = Array.from({ length: 128 }, (_, i) => foldChar(String.fromCharCode(i)))
const memo = new Map<string, string>()

const foldCached = (ch: string): string => {
  if (ch.length === 1 && ch.charCodeAt(0) < 128) return ASCII[ch.charCodeAt(0)]!
  let f = memo.get(ch)
  if (f === undefined) {
    f = foldChar(ch)
    if (memo.size < 100_000) memo.set(ch, f)
  }
  return f
}

const isMark = (cp: number): boolean => cp >= 0x300 && MARK.test(String.fromCodePoint(cp))

/** The end (UTF-16 index) of the character starting at `i`: its code point and the marks after it. */
export const charEnd = (text: string, i: number): number => {
  const first = text.codePointAt(i)!
  let j = i + (first > 0xffff ? 2 : 1)
  while (j < text.length) {
    const cp = text.codePointAt(j)!
    if (!isMark(cp)) break
    j += cp > 0xffff ? 2 : 1
  }
  return j
}

/**
 * Calls `emit(folded, start, end)` for every character of `text` in order, with whitespace runs
 * already collapsed (a run of spaces is emitted once, spanning its characters). A marker is
 * emitted as BARRIER over its ten characters.
 */
const walk = (text: string, emit: (folded: string, start: number, end: number) => void): void => {
  let i = 0
  let spaceFrom = -1
  let spaceTo = -1
  const flushSpace = () => {
    if (spaceFrom >= 0) emit(" ", spaceFrom, spaceTo)
    spaceFrom = -1
  }
  while (i < text.length) {
    const code = text.charCodeAt(i)
    let end: number
    let f: string
    if (code === 0x5b && text.startsWith(REDACTED_MARKER, i)) {
      end = i + REDACTED_MARKER.length
      f = BARRIER
    } else if (code < 128 && (i + 1 >= text.length || text.charCodeAt(i + 1) < 0x300)) {
      end = i + 1
      f = ASCII[code]!
    } else {
      end = charEnd(text, i)
      f = foldCached(text.slice(i, end))
    }
    // a fold of several characters may hold spaces of its own ("a.b" from one compatibility character)
    for (let k = 0; k < f.length; k++) {
      const c = f[k]!
      if (c === " ") {
        if (spaceFrom < 0) spaceFrom = i
        spaceTo = end
      } else {
        flushSpace()
        emit(c, i, end)
      }
    }
    i = end
  }
  flushSpace()
}

/** A folded text with, per folded UTF-16 unit, the original [start, end) it came from. */
export interface Folded {
  readonly text: string
  readonly starts: Int32Array
  readonly ends: Int32Array
}

export const fold = (text: string): Folded => {
  const parts: Array<string> = []
  let starts = new Int32Array(Math.max(16, text.length + 8))
  let ends = new Int32Array(starts.length)
  let n = 0
  walk(text, (folded, start, end) => {
    for (let k = 0; k < folded.length; k++) {
      if (n >= starts.length) {
        const s = new Int32Array(starts.length * 2)
        s.set(starts)
        starts = s
        const e = new Int32Array(ends.length * 2)
        e.set(ends)
        ends = e
      }
      starts[n] = start
      ends[n] = end
      n++
    }
    parts.push(folded)
  })
  return { text: parts.join(""), starts: starts.subarray(0, n), ends: ends.subarray(0, n) }
}

/** The folded text alone, trimmed (a term as it is compared and hashed). */
export const foldText = (text: string): string => {
  const parts: Array<string> = []
  walk(text, (folded) => parts.push(folded))
  return parts.join("").trim()
}

/**
 * True when the folded `text` may contain `needle` (a folded term): a streaming search over the
 * folded characters without building the folded text or its offsets (the cheap first pass of a
 * preview). Exact: it folds as `fold` does.
 */
export const foldedIncludes = (text: string, needle: string, failure: Int32Array): boolean => {
  if (needle.length === 0) return false
  let q = 0
  let found = false
  walk(text, (folded) => {
    if (found) return
    for (let k = 0; k < folded.length; k++) {
      const c = folded[k]
      while (q > 0 && needle[q] !== c) q = failure[q - 1]!
      if (needle[q] === c) q++
      if (q === needle.length) {
        found = true
        return
      }
    }
  })
  return found
}

/** The KMP failure table of a needle, for foldedIncludes. */
export const failureTable = (needle: string): Int32Array => {
  const f = new Int32Array(Math.max(1, needle.length))
  let k = 0
  for (let i = 1; i < needle.length; i++) {
    while (k > 0 && needle[i] !== needle[k]) k = f[k - 1]!
    if (needle[i] === needle[k]) k++
    f[i] = k
  }
  return f
}
