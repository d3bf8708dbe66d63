/**
 * The k-th smallest of a list of numbers in linear time (quickselect on a reused copy): stage a
 * keeps the best rows of a sub-query and the best 200 of the pool without sorting every row.
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
