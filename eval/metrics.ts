/**
 * Retrieval metrics with binary relevance. Pure functions: a ranking is a list of item keys,
 * best first; `relevant` the keys judged relevant. A key repeated in a ranking counts once, at its
 * first position. Every metric is undefined (NaN) for an empty relevant set: callers report
 * no-answer queries separately (eval/README.md).
 */

/** The ranking with later repeats removed, cut to k. */
const topK = (ranked: ReadonlyArray<string>, k: number): Array<string> => {
  const seen = new Set<string>()
  const out: Array<string> = []
  for (const key of ranked) {
    if (out.length >= k) break
    if (seen.has(key)) continue
    seen.add(key)
    out.push(key)
  }
  return out
}

/** Share of the relevant items that appear in the first k. */
export const recallAtK = (ranked: ReadonlyArray<string>, relevant: ReadonlySet<string>, k: number): number => {
  if (relevant.size === 0) return Number.NaN
  return topK(ranked, k).filter((key) => relevant.has(key)).length / relevant.size
}

/** 1 / rank of the first relevant item within the first k (0 when none). */
export const reciprocalRank = (ranked: ReadonlyArray<string>, relevant: ReadonlySet<string>, k = Number.POSITIVE_INFINITY): number => {
  if (relevant.size === 0) return Number.NaN
  const i = topK(ranked, k).findIndex((key) => relevant.has(key))
  return i === -1 ? 0 : 1 / (i + 1)
}

/** Where a query's first relevant item stands within the first k: first, second or third, fourth to k-th, or not there. */
export type RankBand = "1" | "2–3" | "4–k" | "none"
export const RANK_BANDS: ReadonlyArray<RankBand> = ["1", "2–3", "4–k", "none"]

/** The band of the first relevant item within the first k; null without relevant items. */
export const rankBand = (ranked: ReadonlyArray<string>, relevant: ReadonlySet<string>, k: number): RankBand | null => {
  if (relevant.size === 0) return null
  const i = topK(ranked, k).findIndex((key) => relevant.has(key))
  return i === -1 ? "none" : i === 0 ? "1" : i <= 2 ? "2–3" : "4–k"
}

/** Discounted cumulative gain of a gain list: Σ gain_i / log2(i + 1), i from 1. */
export const dcg = (gains: ReadonlyArray<number>): number =>
  gains.reduce((sum, g, i) => sum + g / Math.log2(i + 2), 0)

/** nDCG@k with binary gains: DCG of the ranking over DCG of the ideal ranking (all relevant first). */
export const ndcgAtK = (ranked: ReadonlyArray<string>, relevant: ReadonlySet<string>, k: number): number => {
  if (relevant.size === 0) return Number.NaN
  const gains = topK(ranked, k).map((key) => (relevant.has(key) ? 1 : 0))
  const ideal = Array.from({ length: Math.min(relevant.size, k) }, () => 1)
  return dcg(gains) / dcg(ideal)
}

/** Arithmetic mean; NaN for no values. */
export const mean = (values: ReadonlyArray<number>): number =>
  values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length

/** One query's outcome as the run measured it. */
export interface QueryOutcome {
  /** rule keys of the returned heads, best first */
  readonly ranked: ReadonlyArray<string>
  readonly relevant: ReadonlySet<string>
  /** coverage of the first head (null: no head, or the run has no coverage) */
  readonly topCoverage: number | null
}

export interface Summary {
  readonly answerable: number
  readonly recall: number
  readonly mrr: number
  readonly ndcg: number
  readonly noAnswer: number
  /** no-answer queries that returned nothing */
  readonly noAnswerEmpty: number
  /** mean coverage of the first head over the no-answer queries (0 for an empty answer); null without coverage */
  readonly noAnswerTopCoverage: number | null
}

/** Recall@k, MRR (cut at k) and nDCG@k over the answerable queries; the no-answer queries apart. */
export const summarize = (outcomes: ReadonlyArray<QueryOutcome>, k: number, withCoverage: boolean): Summary => {
  const answerable = outcomes.filter((o) => o.relevant.size > 0)
  const none = outcomes.filter((o) => o.relevant.size === 0)
  return {
    answerable: answerable.length,
    recall: mean(answerable.map((o) => recallAtK(o.ranked, o.relevant, k))),
    mrr: mean(answerable.map((o) => reciprocalRank(o.ranked, o.relevant, k))),
    ndcg: mean(answerable.map((o) => ndcgAtK(o.ranked, o.relevant, k))),
    noAnswer: none.length,
    noAnswerEmpty: none.filter((o) => o.ranked.length === 0).length,
    noAnswerTopCoverage: withCoverage ? mean(none.map((o) => o.topCoverage ?? 0)) : null
  }
}
