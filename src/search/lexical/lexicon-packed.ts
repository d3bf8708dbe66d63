/**
 * The lexicon over the data file's bytes, without a JavaScript object per group or term: the
 * body stays one buffer (one group per line, lexicon-file.ts) and hash tables of typed arrays map
 * each (lang, term) to the list of its groups. A group becomes objects only when a lookup returns
 * it.
 *
 * Built in three passes: the first scans the bytes once, hashing each term occurrence and
 * recording it (hash, start, length and language, group) in file order, with a count per
 * partition (256, by the top byte of the hash); the second moves the records into partition
 * order (file order within each); the third builds each partition's table on its own. A
 * partition's table fits the processor's cache, so the build does not wait on memory for each of
 * the million occurrences as one big table would (bench/lexicon.ts measures the load).
 *
 * The tables and the body live in one SharedArrayBuffer (the image), allocated once the first pass
 * has counted the occurrences and the lines, and the passes write into it (nothing is copied
 * afterwards); lookups read it, and the read pool's workers get it and share the main thread's
 * memory instead of each building its own copy. Its term tables are sized by the header's count
 * of terms; a body that holds more is built again with room for one term an occurrence (a bound
 * the terms cannot pass), and the caller refuses it for the miscount.
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

/** The tables a lookup reads, in the order the image holds them. */
const TABLES = ["bounds", "regionStart", "slots", "termStart", "termKey", "termHash", "termHead", "occNext", "occGroup"] as const
type TableName = (typeof TABLES)[number]
type Tables = { readonly [K in TableName]: Int32Array }

/** the image's head: groups, terms, the body's length, then each table's length (Int32 each) */
const HEAD = 3 + TABLES.length

/**
 * An image of tables of these lengths and a body of `bodyLength` bytes: the head (its counts of
 * groups and terms are the builder's to write), a view of each table and of the body, all zero.
 */
const allocateImage = (lengths: Readonly<Record<TableName, number>>, bodyLength: number) => {
  const ints = TABLES.reduce((n, name) => n + lengths[name], 0)
  const image = new SharedArrayBuffer((HEAD + ints) * 4 + bodyLength)
  const head = new Int32Array(image, 0, HEAD)
  head[2] = bodyLength
  let at = HEAD
  const tables: Partial<Record<TableName, Int32Array>> = {}
  TABLES.forEach((name, i) => {
    head[3 + i] = lengths[name]
    tables[name] = new Int32Array(image, at * 4, lengths[name])
    at += lengths[name]
  })
  return { image, head, tables: tables as Tables, body: new Uint8Array(image, at * 4, bodyLength) }
}

/**
 * A lexicon over `body`: lines `de|de…<tab>en|en…`, each ending with a line feed. `expectedTerms`
 * sizes the first pass's records and the term tables (the header's count; a wrong count only
 * costs a resize or a second build). The result says how many lines it read, so the caller can
 * hold it against the header.
 */
export const packedLexicon = (body: Buffer, expectedTerms: number): { readonly lexicon: Lexicon; readonly lines: number; readonly image: SharedArrayBuffer } => {
  const n = body.length
  // pass 1: every occurrence in file order, 4 ints side by side: hash, start, length * 2 + lang,
  // group; the occurrences per partition; where each line starts (the scan is written out: a
  // callback per term costs as much as the scan itself)
  let records = new Int32Array(Math.max(1024, Math.ceil(expectedTerms * 1.5)) * 4)
  let lineStarts = new Int32Array(Math.max(1024, expectedTerms >> 1))
  const first = new Int32Array(PARTITIONS + 1)
  let occurrences = 0
  let lines = 0
  {
    let lang = 0
    let start = 0
    let hash = seedOf(0)
    for (let i = 0; i < n; i++) {
      const b = body[i] as number
      if (b === BAR || b === TAB || b === LF) {
        if (i > start) {
          const h = finish(hash)
          const p = partitionOf(h) + 1
          first[p] = (first[p] as number) + 1
          const at = occurrences * 4
          if (at + 4 > records.length) records = grow(records, at + 4)
          records[at] = h
          records[at + 1] = start
          records[at + 2] = (i - start) * 2 + lang
          records[at + 3] = lines
          occurrences++
        }
        if (b === TAB) lang = 1
        else if (b === LF) {
          lines++
          if (lines >= lineStarts.length) lineStarts = grow(lineStarts, lines + 1)
          lineStarts[lines] = i + 1
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

  // the image, for the terms the header counts (at most one an occurrence); a partition's table
  // has ⌈1.5 × its terms⌉ + 1 slots, so all of them ≤ 1.5 × terms + 2 a partition
  const capacity = Math.min(occurrences, Math.max(0, expectedTerms))
  const built = allocateImage({
    bounds: lines + 1,
    regionStart: PARTITIONS + 1,
    slots: Math.ceil(capacity * 1.5) + 2 * PARTITIONS,
    termStart: capacity,
    termKey: capacity,
    termHash: capacity,
    termHead: capacity,
    occNext: occurrences,
    occGroup: occurrences
  }, n)
  built.body.set(body)
  const { bounds, regionStart, slots, termStart, termKey, termHash, termHead, occNext, occGroup } = built.tables
  bounds.set(lineStarts.subarray(0, lines + 1))

  // pass 2: the records into partition order, file order within each partition: 3 ints
  // (hash, start, key) here, the group in occGroup
  const occ = new Int32Array(occurrences * 3)
  {
    const cursor = first.slice(0, PARTITIONS)
    for (let r = 0; r < occurrences; r++) {
      const h = records[r * 4] as number
      const p = partitionOf(h)
      const o = cursor[p] as number
      cursor[p] = o + 1
      occ[o * 3] = h
      occ[o * 3 + 1] = records[r * 4 + 1] as number
      occ[o * 3 + 2] = records[r * 4 + 2] as number
      occGroup[o] = records[r * 4 + 3] as number
    }
  }

  // pass 3: each partition's terms, the list of each term's occurrences, the partition's table
  const termTail = new Int32Array(capacity)
  let largest = 0
  for (let p = 0; p < PARTITIONS; p++) largest = Math.max(largest, (first[p + 1] as number) - (first[p] as number))
  const scratch = new Int32Array(nextPowerOfTwo(largest * 2))
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
      const hash = occ[o * 3] as number
      const start = occ[o * 3 + 1] as number
      const key = occ[o * 3 + 2] as number
      let s = hash & mask
      let t = scratch[s] as number
      while (t !== -1) {
        if (termHash[t] === hash && termKey[t] === key && sameBytes(termStart[t] as number, start, key >> 1)) break
        s = (s + 1) & mask
        t = scratch[s] as number
      }
      occNext[o] = -1
      if (t === -1) {
        // more terms than the header counts: built again with room for one an occurrence
        if (terms === capacity) return packedLexicon(body, occurrences)
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
    slots.fill(-1, base, base + size)
    for (let t = firstTerm; t < terms; t++) {
      let s = slotOf(termHash[t] as number, size)
      while (slots[base + s] !== -1) s = s + 1 === size ? 0 : s + 1
      slots[base + s] = t
    }
    regionStart[p + 1] = base + size
  }

  built.head[0] = lines
  built.head[1] = terms
  return { lexicon: lexiconOverImage(built.image), lines, image: built.image }
}

/** A lexicon over an image (packedLexicon's): its tables and its body are views of the shared memory. */
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
