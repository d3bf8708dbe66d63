/**
 * Scratch arrays of stage a (phrases.ts's sums and unions, rank.ts's fusion slots, select.ts's
 * copy): typed arrays reused from one search to the next, grown when a search needs more.
 */

/** `buf` when it holds `n`, else a new one of at least `n` and twice its length (`make` makes it). */
export const grown = <T extends Float64Array | Int32Array | Uint8Array>(buf: T, n: number, make: (n: number) => T): T =>
  n <= buf.length ? buf : make(Math.max(n, buf.length * 2))
