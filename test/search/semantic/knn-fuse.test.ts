/** Exact neighbours (knn.ts) against the plain loop and a full sort, RRF fusion (fuse.ts), the stage b gate. */
import { Effect } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { foundViaOf, rrf } from "../../../src/search/semantic/fuse.js"
import { semanticGate } from "../../../src/search/semantic/gate.js"
import { jsScores, makeKnnScorer, topK } from "../../../src/search/semantic/knn.js"
import { testConfig } from "../../support/env.js"
import { seededFloats } from "../../support/tiny-onnx.js"

describe("exact neighbours", () => {
  it("the onnxruntime MatMul scorer gives the plain loop's dot products, also on a view of a larger matrix", async () => {
    const scorer = await Effect.runPromise(makeKnnScorer)
    expect(scorer.kind).toBe("onnx")
    const dim = 37
    const matrix = seededFloats(300 * dim, 3)
    const query = seededFloats(dim, 5)
    const onnx = await scorer.scores(matrix, 250, dim, query)
    const js = jsScores(matrix, 250, dim, query)
    expect(onnx.length).toBe(250)
    onnx.forEach((x, i) => expect(x).toBeCloseTo(js[i] ?? NaN, 4))
    let direct = 0
    for (let j = 0; j < dim; j++) direct += (matrix[249 * dim + j] ?? 0) * (query[j] ?? 0)
    expect(js[249]).toBeCloseTo(direct, 5)
    expect(await scorer.scores(matrix, 0, dim, query)).toEqual(new Float32Array(0))
  })

  it("topK equals a full sort (score descending, ties by the tie key), for any k", () => {
    fc.assert(fc.property(
      fc.array(fc.integer({ min: -5, max: 5 }), { minLength: 0, maxLength: 60 }),
      fc.integer({ min: 0, max: 70 }),
      (values, k) => {
        const scores = Float32Array.from(values, (v) => v / 4)
        const tie = (row: number) => (row * 7) % 61
        const expected = values.map((_, row) => row)
          .sort((x, y) => (scores[y] as number) - (scores[x] as number) || tie(x) - tie(y)).slice(0, k)
        expect(topK(scores, k, tie).map((h) => h.row)).toEqual(expected)
      }
    ), { seed: 17, numRuns: 300 })
  })

  it("topK skips NaN scores", () => {
    expect(topK(Float32Array.from([0.5, NaN, 0.9]), 3, (r) => r).map((h) => h.row)).toEqual([2, 0])
  })
})

describe("RRF (k = 60)", () => {
  it("sums 1/(60 + position) over both lists; a head only b found is marked for found_via semantic", () => {
    const fused = rrf(
      [{ key: "r1", rankA: 3.2 }, { key: "r2", rankA: 2.5 }, { key: "r3", rankA: 1.1 }],
      [{ key: "r3", score: 0.81234 }, { key: "r4", score: 0.7 }, { key: "r1", score: 0.5 }]
    )
    // r1 (a#1, b#3) and r3 (a#3, b#1) tie, as do r2 (a#2) and r4 (b#2): stage a's order decides
    expect(fused.map((f) => f.key)).toEqual(["r1", "r3", "r2", "r4"])
    const by = Object.fromEntries(fused.map((f) => [f.key, f]))
    expect(by.r3?.rank).toEqual({ a: 1.1, b: 0.8123, rrf: Math.round((1 / 63 + 1 / 61) * 1e6) / 1e6 })
    expect(by.r1?.rank).toEqual({ a: 3.2, b: 0.5, rrf: Math.round((1 / 61 + 1 / 63) * 1e6) / 1e6 })
    expect(by.r4).toMatchObject({ rank: { a: null, b: 0.7, rrf: Math.round((1 / 62) * 1e6) / 1e6 }, positionA: null, positionB: 2, onlyB: true })
    expect(by.r2).toMatchObject({ rank: { a: 2.5, b: null }, onlyB: false })
    expect(foundViaOf(by.r4 ?? { onlyB: false }, [])).toEqual(["semantic"])
    expect(foundViaOf(by.r1 ?? { onlyB: true }, ["freight"])).toEqual(["freight"])
  })

  it("ties: the better single position first, then stage a's order", () => {
    // r1 a#1 b#3 and r3 a#3 b#1 tie on value and best position: stage a's order decides
    const fused = rrf([{ key: "r1", rankA: 2 }, { key: "x", rankA: 1.5 }, { key: "r3", rankA: 1 }], [{ key: "r3", score: 0.9 }, { key: "y", score: 0.8 }, { key: "r1", score: 0.7 }])
    expect(fused.map((f) => f.key).slice(0, 2)).toEqual(["r1", "r3"])
    // a#1 alone against b#1 alone: equal values, a first
    expect(rrf([{ key: "a", rankA: 1 }], [{ key: "b", score: 0.3 }]).map((f) => f.key)).toEqual(["a", "b"])
  })

  it("with an empty stage b list the order is stage a's; a key twice in one list counts once", () => {
    const a = [{ key: "p", rankA: 3 }, { key: "q", rankA: 2 }, { key: "p", rankA: 1 }]
    expect(rrf(a, []).map((f) => [f.key, f.positionA, f.rank.b])).toEqual([["p", 1, null], ["q", 2, null]])
    expect(rrf([], [{ key: "s", score: 0.2 }, { key: "s", score: 0.1 }]).map((f) => [f.key, f.positionB])).toEqual([["s", 1]])
  })
})

describe("RRF order by value", () => {
  it("a head in both lists beats heads in one; one list's heads keep their order", () => {
    const fused = rrf(
      [{ key: "a1", rankA: 5 }, { key: "a2", rankA: 4 }, { key: "both", rankA: 3 }],
      [{ key: "b1", score: 0.9 }, { key: "both", score: 0.8 }, { key: "b3", score: 0.7 }]
    )
    expect(fused.map((f) => f.key)).toEqual(["both", "a1", "b1", "a2", "b3"])
    expect(fused.map((f) => f.onlyB)).toEqual([false, false, true, false, true])
  })
})

describe("stage b gate", () => {
  const file = (semantic: Record<string, unknown>) => testConfig("/tmp/gn-unused", {
    search: { semantic },
    scopes: [{ name: "sales", providers_allowed: ["local"] }, { name: "ops", providers_allowed: ["typesafe"] }]
  }).file
  it("off when disabled; not-allowed without local in providers_allowed (or an unknown scope); else allowed", () => {
    expect(semanticGate(file({ enabled: false }), "sales")).toEqual({ _tag: "off", reason: "disabled in config" })
    expect(semanticGate(file({ enabled: true }), "ops")).toEqual({ _tag: "not-allowed", reason: "provider local is not allowed for this scope" })
    expect(semanticGate(file({ enabled: true }), "nope")._tag).toBe("not-allowed")
    expect(semanticGate(file({ enabled: true, model: "qwen3-embedding-0.6b" }), "sales"))
      .toEqual({ _tag: "allowed", semantic: { enabled: true, model: "qwen3-embedding-0.6b" } })
  })
})
