/**
 * Reciprocal rank fusion of stage a and stage b (architecture.md §7.8, gaps.md §11; k = 60).
 * Both inputs are already heads (deduplicated by rule, best first, after the validity filter), so
 * fusion happens per scope on the same units search() returns:
 *
 *   rrf(aHeads, bHeads, k = 60) → Array<Fused>
 *
 * rank.rrf = Σ 1 / (k + position) over the lists a head is in (positions from 1), 6 decimals
 * (4 would tie positions 59 and 60 of one list). Order: rrf descending; ties by the better single
 * position, then stage a's order, then stage b's. rank.a stays stage a's value (null for a head
 * only b found), rank.b is the cosine similarity, 4 decimals (null for a head only a found).
 * found_via: stage a's list; a head only b found gets ["semantic"] (gaps.md §11).
 */

export const RRF_K = 60

export interface HeadA {
  readonly key: string
  /** stage a's fusion value (rank.a) */
  readonly rankA: number
}
export interface HeadB {
  readonly key: string
  /** cosine similarity (rank.b before rounding) */
  readonly score: number
}

export interface Fused {
  readonly key: string
  readonly rank: { readonly a: number | null; readonly b: number | null; readonly rrf: number }
  /** 1-based positions in each list */
  readonly positionA: number | null
  readonly positionB: number | null
  /** found only by stage b: its found_via is ["semantic"] */
  readonly onlyB: boolean
}

const round = (x: number, digits: number): number => Math.round(x * 10 ** digits) / 10 ** digits

export const rrf = (a: ReadonlyArray<HeadA>, b: ReadonlyArray<HeadB>, k: number = RRF_K): Array<Fused> => {
  const entries = new Map<string, { positionA: number | null; positionB: number | null; rankA: number | null; score: number | null }>()
  a.forEach((h, i) => {
    if (!entries.has(h.key)) entries.set(h.key, { positionA: i + 1, positionB: null, rankA: h.rankA, score: null })
  })
  b.forEach((h, i) => {
    const e = entries.get(h.key)
    if (e === undefined) entries.set(h.key, { positionA: null, positionB: i + 1, rankA: null, score: h.score })
    else if (e.positionB === null) {
      e.positionB = i + 1
      e.score = h.score
    }
  })
  const fused = [...entries].map(([key, e]) => {
    const value = (e.positionA === null ? 0 : 1 / (k + e.positionA)) + (e.positionB === null ? 0 : 1 / (k + e.positionB))
    return { key, value, e }
  })
  const best = (x: (typeof fused)[number]) => Math.min(x.e.positionA ?? Infinity, x.e.positionB ?? Infinity)
  fused.sort((x, y) =>
    y.value - x.value || best(x) - best(y) ||
    (x.e.positionA ?? Infinity) - (y.e.positionA ?? Infinity) || (x.e.positionB ?? Infinity) - (y.e.positionB ?? Infinity))
  return fused.map(({ key, value, e }) => ({
    key,
    rank: { a: e.rankA, b: e.score === null ? null : round(e.score, 4), rrf: round(value, 6) },
    positionA: e.positionA,
    positionB: e.positionB,
    onlyB: e.positionA === null
  }))
}

/** found_via of a fused head: stage a's matched words, or ["semantic"] for a head only stage b found. */
export const foundViaOf = (fused: Pick<Fused, "onlyB">, fromA: ReadonlyArray<string>): Array<string> =>
  fused.onlyB ? ["semantic"] : [...fromA]
