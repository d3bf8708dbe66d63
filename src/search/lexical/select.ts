/**
 * The best `n` of a list of scored rows without sorting every row: the k-th smallest in linear
 * time (quickselect on a reused copy) bounds them, and only those are sorted. Stage a keeps the
 * best rows of a sub-query (bm25: the smallest first) and the best 200 of the pool (fused
 * values: the largest first) with it.
 */
import { grown } from "./scratch.js"

let scratch = new Float64Array(1024)

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

/**
 * Indices of the `n` best of values[0..size), best first: the smallest values ("ascending") or
 * the largest ("descending"), ties by seqOf ascending; all of them when there are fewer.
 */
export const bestIndices = (
  values: ArrayLike<number>,
  seqOf: (i: number) => number,
  size: number,
  n: number,
  direction: "ascending" | "descending"
): Array<number> => {
  const sign = direction === "ascending" ? 1 : -1
  // −1, 1 or the seqs' difference (small integers), never a fraction: a comparator's fraction is a new heap number at each call
  const order = (i: number, j: number) => {
    const a = values[i] as number
    const b = values[j] as number
    return a < b ? -sign : a > b ? sign : seqOf(i) - seqOf(j)
  }
  const chosen: Array<number> = []
  if (size <= n) {
    for (let i = 0; i < size; i++) chosen.push(i)
    return chosen.sort(order)
  }
  if (direction === "ascending") {
    const bound = kthSmallest(values, size, n - 1)
    for (let i = 0; i < size; i++) if ((values[i] as number) <= bound) chosen.push(i)
  } else {
    // the n-th largest is the (size − n)-th smallest (0-based): no negated copy
    const bound = kthSmallest(values, size, size - n)
    for (let i = 0; i < size; i++) if ((values[i] as number) >= bound) chosen.push(i)
  }
  return chosen.sort(order).slice(0, n)
}
