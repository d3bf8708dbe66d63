import { describe, expect, it } from "vitest"
import { dcg, mean, ndcgAtK, rankBand, recallAtK, reciprocalRank, summarize } from "../../eval/metrics.js"

const rel = (...keys: Array<string>) => new Set(keys)

describe("recall@k", () => {
  it("is the share of the relevant items within the first k", () => {
    // relevant b, d, x; the first 3 are a b c → 1 of 3
    expect(recallAtK(["a", "b", "c", "d"], rel("b", "d", "x"), 3)).toBeCloseTo(1 / 3, 12)
    // k = 4 adds d → 2 of 3
    expect(recallAtK(["a", "b", "c", "d"], rel("b", "d", "x"), 4)).toBeCloseTo(2 / 3, 12)
    expect(recallAtK(["b", "d", "x"], rel("b", "d", "x"), 10)).toBe(1)
    expect(recallAtK([], rel("a"), 10)).toBe(0)
  })

  it("counts a repeated key once and is undefined without relevant items", () => {
    expect(recallAtK(["a", "a", "a"], rel("a", "b"), 10)).toBe(0.5)
    // the repeat does not push b out of the first 2
    expect(recallAtK(["a", "a", "b"], rel("a", "b"), 2)).toBe(1)
    expect(recallAtK(["a"], rel(), 10)).toBeNaN()
  })
})

describe("rank band of the first relevant item", () => {
  it("says whether the first relevant item is first, second or third, fourth to k-th, or not within k", () => {
    expect(rankBand(["a", "b", "c"], rel("a"), 10)).toBe("1")
    expect(rankBand(["a", "b", "c"], rel("c", "x"), 10)).toBe("2–3")
    expect(rankBand(["a", "b", "c", "d"], rel("d"), 10)).toBe("4–k")
    // past k, or absent: not found within k
    expect(rankBand(["a", "b", "c", "d"], rel("d"), 3)).toBe("none")
    expect(rankBand(["a", "b"], rel("z"), 10)).toBe("none")
  })

  it("counts a repeated key once and has no band without relevant items", () => {
    // the repeats of a do not push b past the second place
    expect(rankBand(["a", "a", "a", "b"], rel("b"), 10)).toBe("2–3")
    expect(rankBand(["a"], rel(), 10)).toBeNull()
  })
})

describe("reciprocal rank (MRR per query)", () => {
  it("is 1 / rank of the first relevant item", () => {
    expect(reciprocalRank(["a", "b", "c"], rel("a"))).toBe(1)
    expect(reciprocalRank(["a", "b", "c"], rel("c", "b"))).toBe(0.5)
    expect(reciprocalRank(["a", "b", "c", "d"], rel("d"))).toBe(0.25)
    expect(reciprocalRank(["a", "b"], rel("z"))).toBe(0)
  })

  it("is cut at k and undefined without relevant items", () => {
    expect(reciprocalRank(["a", "b", "c"], rel("c"), 2)).toBe(0)
    expect(reciprocalRank(["a", "b", "c"], rel("c"), 3)).toBeCloseTo(1 / 3, 12)
    expect(reciprocalRank(["a"], rel())).toBeNaN()
  })

  it("averages to MRR", () => {
    // ranks 1, 2, none → (1 + 0.5 + 0) / 3 = 0.5
    const rrs = [reciprocalRank(["a"], rel("a")), reciprocalRank(["x", "b"], rel("b")), reciprocalRank(["x"], rel("c"))]
    expect(mean(rrs)).toBe(0.5)
  })
})

describe("nDCG@k (binary relevance)", () => {
  it("uses gain / log2(rank + 1)", () => {
    // [1, 0, 1]: 1/log2(2) + 0 + 1/log2(4) = 1 + 0.5 = 1.5
    expect(dcg([1, 0, 1])).toBeCloseTo(1.5, 12)
    expect(dcg([])).toBe(0)
  })

  it("is 1 for an ideal ranking and hand-computed otherwise", () => {
    expect(ndcgAtK(["a", "b", "x"], rel("a", "b"), 10)).toBe(1)
    // one relevant at rank 2: (1/log2 3) / 1 = 0.6309…
    expect(ndcgAtK(["x", "a"], rel("a"), 10)).toBeCloseTo(1 / Math.log2(3), 12)
    // relevant a, b at ranks 1 and 3: (1 + 0.5) / (1 + 1/log2 3) = 1.5 / 1.63093 = 0.91972…
    expect(ndcgAtK(["a", "x", "b"], rel("a", "b"), 10)).toBeCloseTo(1.5 / (1 + 1 / Math.log2(3)), 12)
    expect(ndcgAtK(["a", "x", "b"], rel("a", "b"), 10)).toBeCloseTo(0.91972, 5)
  })

  it("cuts the ranking and the ideal at k", () => {
    // three relevant, k = 2: ideal DCG = 1 + 1/log2 3; ranking x a → (1/log2 3) / (1 + 1/log2 3)
    const i = 1 / Math.log2(3)
    expect(ndcgAtK(["x", "a", "b", "c"], rel("a", "b", "c"), 2)).toBeCloseTo(i / (1 + i), 12)
    // a relevant item past k gains nothing
    expect(ndcgAtK(["x", "y", "a"], rel("a"), 2)).toBe(0)
    expect(ndcgAtK([], rel("a"), 10)).toBe(0)
    expect(ndcgAtK(["a"], rel(), 10)).toBeNaN()
  })

  it("counts a repeated relevant key once", () => {
    // a a b → a at 1, b at 2 (the repeat is dropped): ideal
    expect(ndcgAtK(["a", "a", "b"], rel("a", "b"), 10)).toBe(1)
  })
})

describe("summarize", () => {
  it("averages over the answerable queries and reports the no-answer queries apart", () => {
    const s = summarize([
      { ranked: ["a", "b"], relevant: rel("a"), topCoverage: 1 },
      { ranked: ["x", "b"], relevant: rel("b", "c"), topCoverage: 0.5 },
      { ranked: [], relevant: rel(), topCoverage: null },
      { ranked: ["q"], relevant: rel(), topCoverage: 0.4 }
    ], 10, true)
    expect(s.answerable).toBe(2)
    expect(s.recall).toBeCloseTo((1 + 0.5) / 2, 12)
    expect(s.mrr).toBeCloseTo((1 + 0.5) / 2, 12)
    // second query: b at rank 2 of two relevant → (1/log2 3) / (1 + 1/log2 3)
    const i = 1 / Math.log2(3)
    expect(s.ndcg).toBeCloseTo((1 + i / (1 + i)) / 2, 12)
    expect(s.noAnswer).toBe(2)
    expect(s.noAnswerEmpty).toBe(1)
    expect(s.noAnswerTopCoverage).toBeCloseTo(0.2, 12)
  })

  it("has no coverage figure for a run without coverage", () => {
    expect(summarize([{ ranked: [], relevant: rel(), topCoverage: null }], 10, false).noAnswerTopCoverage).toBeNull()
  })
})
