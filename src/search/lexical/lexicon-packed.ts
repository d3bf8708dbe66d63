/**
 * The lexicon over the data file's bytes, without a JavaScript object per group or term: the
 * body stays one buffer (one group per line, lexicon-file.ts) and hash tables of typed arrays map
 * each (lang, term) to the list of its groups. A group becomes objects only when a lookup returns
 * it.
 *
 * Built in three passes over the bytes: the first counts the term occurrences of each of 256
 * partitions (by the top byte of the term's hash), the second writes every occurrence into its
 * partition, the third builds each partition's table on its own. A partition's table fits the
 * processor's cache, so the build does not wait on memory for each of the million occurrences
 * as one big table would (bench/lexicon.ts measures the load).
 *
 * The tables and the body are then copied into one SharedArrayBuffer (the image), and lookups
 * read that: the read pool's workers get the image and share the main thread's memory instead
 * of each building its own copy.
 */
import type { Lexicon, LexiconGroup, LexiconLang } from "./lexicon.js"

const BAR = 0x7c
const TAB = 0x09
const LF = 0x0a

const FNV_PRIME = 16777619
const seedOf = (lang: number): number => (2166136261 ^ lang) | 0
/** FNV-1a's low bits mix poorly; the tables use all bits, so the hash gets murmur3's finalizer. */
const finish = (h: number): number => {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b)
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35)
  return h ^ (h >>> 16)
}

const PARTITIONS = 256
const partitionOf = (hash: number): number => hash >>> 24
/** A slot of a partition's table of `size` slots, from the hash's low 24 bits. */
const slotOf = (hash: number, size: number): number => Math.floor(((hash & 0xffffff) * size) / 0x1000000)

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
 * sizes the term tables (the header's count; a wrong count only costs a resize). The result says
 * how many lines it read, so the caller can hold it against the header.
 */
export const packedLexicon = (body: Buffer, expectedTerms: number): { readonly lexicon: Lexicon; readonly lines: number; readonly image: SharedArrayBuffer } => {
  const n = body.length
  // pass 1: occurrences per partition, lines (the two scans are written out: a callback per
  // term costs as much as the scan itself)
  const first = new Int32Array(PARTITIONS + 1)
  let lines = 0
  {
    let lang = 0
    let start = 0
    let hash = seedOf(0)
    for (let i = 0; i < n; i++) {
      const b = body[i] as number
      if (b === BAR || b === TAB || b === LF) {
        if (i > start) {
          const p = partitionOf(finish(hash)) + 1
          first[p] = (first[p] as number) + 1
        }
        if (b === TAB) lang = 1
        else if (b === LF) {
          lines++
          lang = 0
        }
        start = i + 1
        hash = seedOf(lang)
      } else {
        hash = Math.imul(hash ^ b, FNV_PRIME)
      }
    }
  }
  for (let p = 0; p < PARTITIONS; p++) first[p + 1] = (first[p + 1] as number) + (first[p] as number)
  const occurrences = first[PARTITIONS] as number

  // pass 2: every occurrence into its partition, in file order within it; an occurrence is 4 ints
  // side by side (one stream of writes per partition): hash, first byte, length * 2 + lang, group
  const occ = new Int32Array(occurrences * 4)
  const bounds = new Int32Array(lines + 1)
  {
    const cursor = first.slice(0, PARTITIONS)
    let group = 0
    let lang = 0
    let start = 0
    let hash = seedOf(0)
    for (let i = 0; i < n; i++) {
      const b = body[i] as number
      if (b === BAR || b === TAB || b === LF) {
        if (i > start) {
          const h = finish(hash)
          const p = partitionOf(h)
          const o = cursor[p] as number
          cursor[p] = o + 1
          const at = o * 4
          occ[at] = h
          occ[at + 1] = start
          occ[at + 2] = (i - start) * 2 + lang
          occ[at + 3] = group
        }
        if (b === TAB) lang = 1
        else if (b === LF) {
          bounds[++group] = i + 1
          lang = 0
        }
        start = i + 1
        hash = seedOf(lang)
      } else {
        hash = Math.imul(hash ^ b, FNV_PRIME)
      }
    }
  }

  // pass 3: each partition's terms, the list of each term's occurrences, the partition's table
  let termCap = Math.max(PARTITIONS, expectedTerms)
  let termStart = new Int32Array(termCap)
  let termKey = new Int32Array(termCap)
  let termHash = new Int32Array(termCap)
  let termHead = new Int32Array(termCap)
  let termTail = new Int32Array(termCap)
  const occNext = new Int32Array(occurrences)
  const occGroup = new Int32Array(occurrences)
  let largest = 0
  for (let p = 0; p < PARTITIONS; p++) largest = Math.max(largest, (first[p + 1] as number) - (first[p] as number))
  const scratch = new Int32Array(nextPowerOfTwo(largest * 2))
  const regionStart = new Int32Array(PARTITIONS + 1)
  let slots = new Int32Array(Math.ceil(termCap * 1.5) + PARTITIONS)
  let terms = 0

  const sameBytes = (a: number, b: number, len: number): boolean => {
    for (let k = 0; k < len; k++) if (body[a + k] !== body[b + k]) return false
    return true
  }

  for (let p = 0; p < PARTITIONS; p++) {
    const from = first[p] as number
    const to = first[p + 1] as number
    const mask = nextPowerOfTwo((to - from) * 2) - 1
    scratch.fill(-1, 0, mask + 1)
    const firstTerm = terms
    for (let o = from; o < to; o++) {
      const hash = occ[o * 4] as number
      const start = occ[o * 4 + 1] as number
      const key = occ[o * 4 + 2] as number
      let s = hash & mask
      let t = scratch[s] as number
      while (t !== -1) {
        if (termHash[t] === hash && termKey[t] === key && sameBytes(termStart[t] as number, start, key >> 1)) break
        s = (s + 1) & mask
        t = scratch[s] as number
      }
      occNext[o] = -1
      occGroup[o] = occ[o * 4 + 3] as number
      if (t === -1) {
        if (terms === termCap) {
          termCap *= 2
          termStart = grow(termStart, termCap)
          termKey = grow(termKey, termCap)
          termHash = grow(termHash, termCap)
          termHead = grow(termHead, termCap)
          termTail = grow(termTail, termCap)
        }
        t = terms++
        termStart[t] = start
        termKey[t] = key
        termHash[t] = hash
        termHead[t] = o
        termTail[t] = o
        scratch[s] = t
      } else {
        occNext[termTail[t] as number] = o
        termTail[t] = o
      }
    }
    // the partition's table: 1.5 slots a term, linear probing within the partition
    const base = regionStart[p] as number
    const size = Math.ceil((terms - firstTerm) * 1.5) + 1
    slots = grow(slots, base + size)
    slots.fill(-1, base, base + size)
    for (let t = firstTerm; t < terms; t++) {
      let s = slotOf(termHash[t] as number, size)
      while (slots[base + s] !== -1) s = s + 1 === size ? 0 : s + 1
      slots[base + s] = t
    }
    regionStart[p + 1] = base + size
  }

  const image = imageOf(body, lines, terms, {
    bounds,
    regionStart,
    slots: slots.subarray(0, regionStart[PARTITIONS] as number),
    termStart: termStart.subarray(0, terms),
    termKey: termKey.subarray(0, terms),
    termHash: termHash.subarray(0, terms),
    termHead: termHead.subarray(0, terms),
    occNext,
    occGroup
  })
  return { lexicon: lexiconOverImage(image), lines, image }
}

/** The tables a lookup reads, in the order the image holds them. */
const TABLES = ["bounds", "regionStart", "slots", "termStart", "termKey", "termHash", "termHead", "occNext", "occGroup"] as const
type Tables = { readonly [K in (typeof TABLES)[number]]: Int32Array }

/** the image's head: groups, terms, the body's length, then each table's length (Int32 each) */
const HEAD = 3 + TABLES.length

/**
 * The built lexicon as one SharedArrayBuffer: the head, the tables, the body's bytes. A worker
 * thread given it (workerData) looks terms up in the same memory, without reading the file or
 * building the tables again (lexiconOverImage).
 */
const imageOf = (body: Buffer, groups: number, terms: number, tables: Tables): SharedArrayBuffer => {
  const ints = TABLES.reduce((n, name) => n + tables[name].length, 0)
  const image = new SharedArrayBuffer((HEAD + ints) * 4 + body.length)
  const all = new Int32Array(image, 0, HEAD + ints)
  all[0] = groups
  all[1] = terms
  all[2] = body.length
  let at = HEAD
  TABLES.forEach((name, i) => {
    all[3 + i] = tables[name].length
    all.set(tables[name], at)
    at += tables[name].length
  })
  new Uint8Array(image, at * 4, body.length).set(body)
  return image
}

/** A lexicon over an image (imageOf): its tables and its body are views of the shared memory. */
export const lexiconOverImage = (image: SharedArrayBuffer): Lexicon => {
  const head = new Int32Array(image, 0, HEAD)
  const groups = head[0] as number
  const terms = head[1] as number
  let at = HEAD
  const view = (i: number): Int32Array => {
    const length = head[3 + i] as number
    const v = new Int32Array(image, at * 4, length)
    at += length
    return v
  }
  const [bounds, regionStart, slots, termStart, termKey, termHash, termHead, occNext, occGroup] = TABLES.map((_, i) => view(i)) as [
    Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array
  ]
  const body = Buffer.from(image, at * 4, head[2] as number)

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
    const p = partitionOf(h)
    const base = regionStart[p] as number
    const size = (regionStart[p + 1] as number) - base
    let s = slotOf(h, size)
    for (let t = slots[base + s] as number; t !== -1; t = slots[base + s] as number) {
      if (termHash[t] === h && termKey[t] === key) {
        const start = termStart[t] as number
        if (body.compare(bytes, 0, bytes.length, start, start + bytes.length) === 0) return t
      }
      s = s + 1 === size ? 0 : s + 1
    }
    return -1
  }

  const groupsOf = (lang: LexiconLang, text: string): ReadonlyArray<LexiconGroup> => {
    if (text === "") return EMPTY
    const t = find(lang === "de" ? 0 : 1, text)
    if (t === -1) return EMPTY
    const out: Array<LexiconGroup> = []
    for (let o = termHead[t] as number; o !== -1; o = occNext[o] as number) out.push(decode(occGroup[o] as number))
    return out
  }

  return { groups, terms, groupsOf }
}
