/**
 * Where a term occurs in a text (gaps.md §12): every occurrence of the folded term (fold.ts) in
 * the folded text, as [start, end) UTF-16 ranges of the ORIGINAL text that cover whole
 * characters, ascending, overlapping or touching ranges merged. In a JSON column the term is
 * sought inside string values only (and in the keys of a column whose keys are data), so the
 * text with its ranges replaced stays valid JSON of the same shape. Pure functions.
 */
import { REDACTED_MARKER } from "../contracts/redaction.js"
import { fold, foldText } from "./fold.js"

export type Range = readonly [number, number]

/** The term as it is compared and hashed: folded and trimmed ("" when nothing is left). */
export const normalizeTerm = (term: string): string => foldText(term)

/** Merges ascending ranges that overlap or touch. */
const merge = (ranges: ReadonlyArray<Range>): Array<Range> => {
  const out: Array<[number, number]> = []
  for (const [s, e] of [...ranges].sort((a, b) => a[0] - b[0] || a[1] - b[1])) {
    const last = out[out.length - 1]
    if (last !== undefined && s <= last[1]) last[1] = Math.max(last[1], e)
    else out.push([s, e])
  }
  return out
}

/** Every occurrence of the normalized term `folded` in `text` (plain text). */
export const findInText = (text: string, folded: string): Array<Range> => {
  if (folded.length === 0 || text.length === 0) return []
  const f = fold(text)
  const found: Array<Range> = []
  for (let at = f.text.indexOf(folded); at >= 0; at = f.text.indexOf(folded, at + 1)) {
    found.push([f.starts[at]!, f.ends[at + folded.length - 1]!])
  }
  return merge(found)
}

/** How a JSON column is searched: object keys too (a column whose keys are terms), members whose values are identifiers. */
export interface JsonShape {
  /** object keys are data (search_log.variants: the term each list varies) */
  readonly keys: boolean
  /** members whose values are identifiers or fixed words, never searched (a relation's kind and ref) */
  readonly skipMembers: ReadonlyArray<string>
  /** a value under a key that holds the term is replaced whole (a redacted term's variants go with it) */
  readonly valuesOfMatchedKey?: boolean
  /**
   * the strings (the keys, when `keys`) are consecutive words of one text (search_log keeps a
   * search's terms one per string): a term is also sought across them, joined by a space, and
   * every string an occurrence touches is replaced whole
   */
  readonly phrase?: boolean
}

interface JsonString {
  /** raw offsets of the string's content (inside the quotes) */
  readonly from: number
  readonly to: number
  readonly isKey: boolean
  /** the member this string is the value of, when it is directly in an object */
  readonly member: string | null
  /** the nearest member key it lies under (through arrays), raw offsets of that key's content */
  readonly owner: { readonly from: number; readonly to: number } | null
}

const hex = (c: number): boolean => (c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102)

/** The decoded content of the raw JSON string content [from, to) and, per decoded unit, its raw [start, end). */
const decode = (json: string, from: number, to: number): { text: string; starts: Array<number>; ends: Array<number> } => {
  const units: Array<string> = []
  const starts: Array<number> = []
  const ends: Array<number> = []
  let i = from
  while (i < to) {
    if (json[i] !== "\\") {
      units.push(json[i]!)
      starts.push(i)
      ends.push(i + 1)
      i++
      continue
    }
    const e = json[i + 1]
    if (e === "u" && [2, 3, 4, 5].every((k) => hex(json.charCodeAt(i + k)))) {
      units.push(String.fromCharCode(parseInt(json.slice(i + 2, i + 6), 16)))
      starts.push(i)
      ends.push(i + 6)
      i += 6
      continue
    }
    const simple: Record<string, string> = { "\"": "\"", "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" }
    units.push(simple[e ?? ""] ?? e ?? "")
    starts.push(i)
    ends.push(i + 2)
    i += 2
  }
  return { text: units.join(""), starts, ends }
}

/** The strings of a JSON text with whether each is an object key, the member it is the value of and the key it lies under. */
const jsonStrings = (json: string): Array<JsonString> => {
  const out: Array<JsonString> = []
  type Key = { readonly from: number; readonly to: number; readonly text: string }
  /** each open container and the key it is the value of */
  const stack: Array<{ readonly type: "o" | "a"; readonly key: Key | null }> = []
  let expectKey = false
  let lastKey: Key | null = null
  let i = 0
  const top = () => stack[stack.length - 1]
  while (i < json.length) {
    const c = json[i]
    if (c === "\"") {
      let j = i + 1
      while (j < json.length && json[j] !== "\"") j += json[j] === "\\" ? 2 : 1
      const inObject = top()?.type === "o"
      const isKey = inObject && expectKey
      const member = inObject && !isKey ? lastKey : null
      const owner = isKey ? null : inObject ? lastKey : top()?.key ?? null
      out.push({ from: i + 1, to: j, isKey, member: member?.text ?? null, owner: owner === null ? null : { from: owner.from, to: owner.to } })
      if (isKey) {
        lastKey = { from: i + 1, to: j, text: decode(json, i + 1, j).text }
        expectKey = false
      }
      i = j + 1
      continue
    }
    if (c === "{" || c === "[") {
      const t = top()
      stack.push({ type: c === "{" ? "o" : "a", key: t === undefined ? null : t.type === "o" ? lastKey : t.key })
      expectKey = c === "{"
    } else if (c === "}" || c === "]") {
      stack.pop()
    } else if (c === ",") {
      expectKey = top()?.type === "o"
    }
    i++
  }
  return out
}

/**
 * The occurrences of the term across consecutive strings (JsonShape.phrase): the strings joined by
 * one space; every string an occurrence touches, whole, and with `valuesOfMatchedKey` the values
 * under a touched key.
 */
const findAcross = (json: string, strings: ReadonlyArray<JsonString>, folded: string, shape: JsonShape): Array<Range> => {
  const words = strings.filter((s) => (shape.keys ? s.isKey : !s.isKey) && s.to > s.from)
  if (words.length < 2) return []
  const bounds: Array<readonly [number, number]> = []
  let joined = ""
  for (const w of words) {
    if (joined.length > 0) joined += " "
    const text = decode(json, w.from, w.to).text
    bounds.push([joined.length, joined.length + text.length])
    joined += text
  }
  const touched = new Set<number>()
  for (const [a, b] of findInText(joined, folded)) {
    bounds.forEach(([s, e], i) => {
      if (s < b && a < e) touched.add(i)
    })
  }
  const out: Array<Range> = []
  for (const i of touched) {
    const w = words[i]!
    out.push([w.from, w.to])
    if (shape.keys && shape.valuesOfMatchedKey === true) {
      for (const s of strings) {
        if (!s.isKey && s.owner !== null && s.owner.from === w.from && s.to > s.from) out.push([s.from, s.to])
      }
    }
  }
  return out
}

/** Every occurrence of the normalized term in the string values of a JSON text, as raw ranges of the JSON text. */
export const findInJson = (json: string, folded: string, shape: JsonShape): Array<Range> => {
  if (folded.length === 0) return []
  const strings = jsonStrings(json)
  const found: Array<Range> = shape.phrase === true ? findAcross(json, strings, folded, shape) : []
  for (const s of strings) {
    if (s.isKey && !shape.keys) continue
    if (!s.isKey && s.member !== null && shape.skipMembers.includes(s.member)) continue
    if (!s.isKey && shape.valuesOfMatchedKey === true && s.owner !== null && s.to > s.from &&
      findInText(decode(json, s.owner.from, s.owner.to).text, folded).length > 0) {
      found.push([s.from, s.to])
      continue
    }
    const d = decode(json, s.from, s.to)
    for (const [a, b] of findInText(d.text, folded)) found.push([d.starts[a]!, d.ends[b - 1]!])
  }
  return merge(found)
}

/** The text with every range replaced by the marker (ranges ascending, not overlapping). */
export const replaceRanges = (text: string, ranges: ReadonlyArray<Range>, marker: string = REDACTED_MARKER): string => {
  let out = ""
  let at = 0
  for (const [s, e] of ranges) {
    out += text.slice(at, s) + marker
    at = e
  }
  return out + text.slice(at)
}
