/**
 * The lexicon over the data file's bytes, without a JavaScript object per group or term: the
 * body stays one buffer (one group per line, lexicon-file.ts) and an open-addressing hash table
 * of typed arrays maps each (lang, term) to the list of its groups. A group becomes objects only
 * when a lookup returns it. Built in one pass over the bytes; hundreds of thousands of groups
 * load in a fraction of a second and cost a few tens of megabytes (bench/lexicon.ts measures).
 */
import type { Lexicon, LexiconGroup, LexiconLang } from "./lexicon.js"

const BAR = 0x7c
const TAB = 0x09
const LF = 0x0a

const FNV_PRIME = 16777619
const seedOf = (lang: number): number => (2166136261 ^ lang) | 0
/** FNV-1a's low bits mix poorly; the table masks them, so the hash gets murmur3's finalizer. */
const finish = (h: number): number => {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b)
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35)
  return h ^ (h >>> 16)
}

const grow = (a: Int32Array<ArrayBuffer>, size: number): Int32Array<ArrayBuffer> => {
  if (size <= a.length) return a
  const b = new Int32Array(Math.max(size, a.length * 2))
  b.set(a)
  return b
}

const nextPowerOfTwo = (n: number): number => 2 ** Math.ceil(Math.log2(Math.max(2, n)))

const EMPTY: ReadonlyArray<LexiconGroup> = Object.freeze([])

/**
 * A lexicon over `body`: lines `de|de…<tab>en|en…`, each ending with a line feed. `expectedTerms`
 * sizes the tables (the header's count; a wrong count only costs a resize). The result says how
 * many lines it read, so the caller can hold it against the header.
 */
export const packedLexicon = (body: Buffer, expectedTerms: number): { readonly lexicon: Lexicon; readonly lines: number } => {
  const n = body.length
  let groupStart = new Int32Array(1024)
  // a term is 4 ints: its first byte in body, its length * 2 + lang, its first and last occurrence
  let termCap = Math.max(1024, expectedTerms)
  let term = new Int32Array(termCap * 4)
  // an occurrence is 2 ints: its group, the term's next occurrence (-1: none)
  let occCap = termCap * 2
  let occ = new Int32Array(occCap * 2)
  // a slot is 2 ints: the term's hash and the term (-1: empty)
  let mask = nextPowerOfTwo(termCap * 2) - 1
  let slots = new Int32Array((mask + 1) * 2).fill(-1)
  let hashes = new Int32Array(termCap)
  let terms = 0
  let occs = 0

  const sameBytes = (a: number, b: number, len: number): boolean => {
    for (let k = 0; k < len; k++) if (body[a + k] !== body[b + k]) return false
    return true
  }

  const rehash = () => {
    mask = (mask + 1) * 2 - 1
    slots = new Int32Array((mask + 1) * 2).fill(-1)
    for (let t = 0; t < terms; t++) {
      const h = hashes[t] as number
      let s = h & mask
      while (slots[s * 2 + 1] !== -1) s = (s + 1) & mask
      slots[s * 2] = h
      slots[s * 2 + 1] = t
    }
  }

  const add = (start: number, end: number, lang: number, hash: number, group: number) => {
    const key = (end - start) * 2 + lang
    let s = hash & mask
    let t = slots[s * 2 + 1] as number
    while (t !== -1) {
      if (slots[s * 2] === hash && term[t * 4 + 1] === key && sameBytes(term[t * 4] as number, start, end - start)) break
      s = (s + 1) & mask
      t = slots[s * 2 + 1] as number
    }
    if (occs === occCap) {
      occCap *= 2
      occ = grow(occ, occCap * 2)
    }
    const o = occs++
    occ[o * 2] = group
    occ[o * 2 + 1] = -1
    if (t === -1) {
      if (terms === termCap) {
        termCap *= 2
        term = grow(term, termCap * 4)
        hashes = grow(hashes, termCap)
      }
      t = terms++
      term[t * 4] = start
      term[t * 4 + 1] = key
      term[t * 4 + 2] = o
      term[t * 4 + 3] = o
      hashes[t] = hash
      slots[s * 2] = hash
      slots[s * 2 + 1] = t
      if (terms * 2 > mask + 1) rehash()
    } else {
      occ[(term[t * 4 + 3] as number) * 2 + 1] = o
      term[t * 4 + 3] = o
    }
  }

  let group = 0
  let lang = 0
  let start = 0
  let hash = seedOf(0)
  groupStart[0] = 0
  for (let i = 0; i < n; i++) {
    const b = body[i] as number
    if (b === BAR || b === TAB || b === LF) {
      if (i > start) add(start, i, lang, finish(hash), group)
      if (b === TAB) lang = 1
      else if (b === LF) {
        group++
        groupStart = grow(groupStart, group + 1)
        groupStart[group] = i + 1
        lang = 0
      }
      start = i + 1
      hash = seedOf(lang)
    } else {
      hash = Math.imul(hash ^ b, FNV_PRIME)
    }
  }
  const groups = group
  const bounds = groupStart.slice(0, groups + 1)

  const decode = (g: number): LexiconGroup => {
    const line = body.toString("utf8", bounds[g] as number, (bounds[g + 1] as number) - 1)
    const tab = line.indexOf("\t")
    const side = (s: string) => (s === "" ? [] : s.split("|"))
    return { de: side(line.slice(0, tab)), en: side(line.slice(tab + 1)) }
  }

  const find = (lang: number, text: string): number => {
    const bytes = Buffer.from(text, "utf8")
    let h = seedOf(lang)
    for (const b of bytes) h = Math.imul(h ^ b, FNV_PRIME)
    h = finish(h)
    const key = bytes.length * 2 + lang
    let s = h & mask
    let t = slots[s * 2 + 1] as number
    while (t !== -1) {
      if (slots[s * 2] === h && term[t * 4 + 1] === key) {
        const at = term[t * 4] as number
        if (body.compare(bytes, 0, bytes.length, at, at + bytes.length) === 0) return t
      }
      s = (s + 1) & mask
      t = slots[s * 2 + 1] as number
    }
    return -1
  }

  const groupsOf = (lang: LexiconLang, text: string): ReadonlyArray<LexiconGroup> => {
    if (text === "") return EMPTY
    const t = find(lang === "de" ? 0 : 1, text)
    if (t === -1) return EMPTY
    const out: Array<LexiconGroup> = []
    for (let o = term[t * 4 + 2] as number; o !== -1; o = occ[o * 2 + 1] as number) out.push(decode(occ[o * 2] as number))
    return out
  }

  return { lexicon: { groups, terms, groupsOf }, lines: groups }
}
