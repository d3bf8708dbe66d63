/**
 * The best `n` of a list of scored rows without sorting every row: the k-th smallest in linear
 * time (quickselect on a reused copy) bounds them, and only those are sorted. Stage a keeps the
 * best rows of a sub-query (bm25: the smallest first) and the best 200 of the pool (fused
 * values: the largest first) with it. The lower bound of a value in strictly ascending seqs (lowerBound)
 * finds rows in a phrase's seqs.
 */
import { grown } from "./scratch.js"

let scratch = new Float64Array(1024)

/**
 * The first position in [from, to) of strictly ascending xs (no value twice: a phrase's seqs) whose
 * value is not below x; `to` when every one is. It stops at an equal value: a lookup of a held seq
 * (a phrase's term of a row) costs what a search for it alone did (halving on to the end cost more).
 */
export const lowerBound = (xs: Int32Array, x: number, from: number, to: number): number => {
  let lo = from
  let hi = to - 1
  while (lo <= hi) {
    const mid = (lo + hi) >> 1
    const m = xs[mid] as number
    if (m < x) lo = mid + 1
    else if (m > x) hi = mid - 1
    else return mid
  }
  return lo
}

/** The k-th smallest (0-based) of xs[0..n); xs is left as it was. */
export const kthSmallest = (xs: ArrayLike<number>, n: number, k: number): number => {
  scratch = grown(scratch, n, (m) => new Float64Array(m))
  const a = scratch
  for (let i = 0; i < n; i++) a[i] = xs[i] as number
  let lo = 0
  let hi = n - 1
  while (lo < hi) {
    const pivot = a[(lo + hi) >> 1] as number
    let i = lo
    let j = hi
    while (i <= j) {
      while ((a[i] as number) < pivot) i++
      while ((a[j] as number) > pivot) j--
      if (i <= j) {
        const t = a[i] as number
        a[i] = a[j] as number
        a[j] = t
        i++
        j--
      }
    }
    if (k <= j) hi = j
    else if (k >= i) lo = i
    else return a[k] as number
  }
  return a[k] as number
}

/** The chosen entries being sorted (scratch, reused): sort key (the value, negated when descending), seq, index. */
let sortKeys = new Float64Array(1024)
let sortSeqs = new Float64Array(1024)
let sortIdx = new Int32Array(1024)

/** Whether entry a sorts before entry b: key, then seq, then index (what a stable sort by key and seq gives). */
const before = (a: number, b: number): boolean => {
  const ka = sortKeys[a] as number
  const kb = sortKeys[b] as number
  if (ka < kb) return true
  if (ka > kb) return false
  const sa = sortSeqs[a] as number
  const sb = sortSeqs[b] as number
  if (sa < sb) return true
  if (sa > sb) return false
  return (sortIdx[a] as number) < (sortIdx[b] as number)
}

const swap = (a: number, b: number): void => {
  const k = sortKeys[a] as number
  sortKeys[a] = sortKeys[b] as number
  sortKeys[b] = k
  const s = sortSeqs[a] as number
  sortSeqs[a] = sortSeqs[b] as number
  sortSeqs[b] = s
  const x = sortIdx[a] as number
  sortIdx[a] = sortIdx[b] as number
  sortIdx[b] = x
}

/**
 * Sorts entries [lo, hi] of the scratch arrays by `before`: quicksort (median of three), insertion
 * sort below 16 entries, the smaller side first so the stack stays shallow. Comparisons inline on
 * typed arrays: Array#sort with a comparator closure was most of the selection's time.
 */
const sortRange = (lo0: number, hi0: number): void => {
  let lo = lo0
  let hi = hi0
  while (hi - lo >= 16) {
    const mid = (lo + hi) >> 1
    if (before(mid, lo)) swap(mid, lo)
    if (before(hi, lo)) swap(hi, lo)
    if (before(hi, mid)) swap(hi, mid)
    // the median at hi − 1 as the pivot; lo and hi already on their sides
    swap(mid, hi - 1)
    const p = hi - 1
    let i = lo
    let j = hi - 1
    for (;;) {
      while (before(++i, p));
      while (before(p, --j));
      if (i >= j) break
      swap(i, j)
    }
    swap(i, hi - 1)
    if (i - lo < hi - i) {
      sortRange(lo, i - 1)
      lo = i + 1
    } else {
      sortRange(i + 1, hi)
      hi = i - 1
    }
  }
  for (let i = lo + 1; i <= hi; i++) {
    for (let j = i; j > lo && before(j, j - 1); j--) swap(j, j - 1)
  }
}

/**
 * Indices of the `n` best of values[0..size), best first: the smallest values ("ascending") or
 * the largest ("descending"), ties by seqOf ascending (then by index: what a stable sort gives);
 * all of them when there are fewer.
 */
export const bestIndices = (
  values: ArrayLike<number>,
  seqOf: (i: number) => number,
  size: number,
  n: number,
  direction: "ascending" | "descending"
): Array<number> => {
  const descending = direction === "descending"
  let bound = 0
  if (size > n) {
    // the n-th largest is the (size − n)-th smallest (0-based): no negated copy
    bound = kthSmallest(values, size, descending ? size - n : n - 1)
  }
  sortKeys = grown(sortKeys, size, (m) => new Float64Array(m))
  sortSeqs = grown(sortSeqs, size, (m) => new Float64Array(m))
  sortIdx = grown(sortIdx, size, (m) => new Int32Array(m))
  let m = 0
  for (let i = 0; i < size; i++) {
    const v = values[i] as number
    if (size > n && (descending ? !(v >= bound) : !(v <= bound))) continue
    // negated, the largest sorts first; −a < −b exactly when a > b
    sortKeys[m] = descending ? -v : v
    sortSeqs[m] = seqOf(i)
    sortIdx[m] = i
    m++
  }
  sortRange(0, m - 1)
  const out = new Array<number>(Math.min(n, m))
  for (let i = 0; i < out.length; i++) out[i] = sortIdx[i] as number
  return out
}
