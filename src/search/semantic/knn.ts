/**
 * Exact nearest neighbours over unit vectors: the score of a rule is the dot product of its
 * vector with the query's (= cosine similarity), the answer the k best, ties by seq.
 *
 * The dot products are one MatMul [n, dim] × [dim, 1] in onnxruntime (its CPU kernels use SIMD):
 * measured here at 100k × 1024 against the fastest plain loop (docs/decisions.md, gaps.md §11 Stages b and c), about
 * 7× faster, on one thread. The graph is written by onnx-proto.ts (symbolic n and dim, no weights),
 * and the matrix is passed as a view without a copy. jsScores is the plain loop: the fallback
 * when the session cannot be made and the tests' oracle.
 */
import * as ort from "onnxruntime-node"
import { Effect } from "effect"
import { DT, encodeModel } from "./onnx-proto.js"

export interface KnnScorer {
  /** scores[i] = matrix row i · query, for the first `count` rows of a row-major [*, dim] matrix */
  readonly scores: (matrix: Float32Array, count: number, dim: number, query: Float32Array) => Promise<Float32Array>
  readonly kind: "onnx" | "js"
}

export const MATMUL_MODEL: Uint8Array = encodeModel({
  nodes: [{ op: "MatMul", inputs: ["matrix", "query"], outputs: ["scores"] }],
  initializers: [],
  inputs: [
    { name: "matrix", type: DT.FLOAT, shape: ["n", "dim"] },
    { name: "query", type: DT.FLOAT, shape: ["dim", 1] }
  ],
  outputs: [{ name: "scores", type: DT.FLOAT, shape: ["n", 1] }]
})

/** The plain loop (four accumulators, the fastest JS variant measured). */
export const jsScores = (matrix: Float32Array, count: number, dim: number, query: Float32Array): Float32Array => {
  const out = new Float32Array(count)
  const tail = dim - (dim % 4)
  for (let r = 0; r < count; r++) {
    const o = r * dim
    let a = 0, b = 0, c = 0, d = 0
    for (let j = 0; j < tail; j += 4) {
      a += (matrix[o + j] as number) * (query[j] as number)
      b += (matrix[o + j + 1] as number) * (query[j + 1] as number)
      c += (matrix[o + j + 2] as number) * (query[j + 2] as number)
      d += (matrix[o + j + 3] as number) * (query[j + 3] as number)
    }
    for (let j = tail; j < dim; j++) a += (matrix[o + j] as number) * (query[j] as number)
    out[r] = a + b + c + d
  }
  return out
}

export const JS_SCORER: KnnScorer = { kind: "js", scores: async (m, n, d, q) => jsScores(m, n, d, q) }

/** The onnxruntime scorer (one intra-op thread), or the plain loop when no session can be made. */
export const makeKnnScorer: Effect.Effect<KnnScorer> = Effect.tryPromise(() =>
  ort.InferenceSession.create(MATMUL_MODEL, { executionProviders: ["cpu"], intraOpNumThreads: 1, logSeverityLevel: 3 })
).pipe(
  Effect.map((session): KnnScorer => ({
    kind: "onnx",
    scores: async (matrix, count, dim, query) => {
      if (count === 0) return new Float32Array(0)
      const out = await session.run({
        matrix: new ort.Tensor("float32", matrix.subarray(0, count * dim), [count, dim]),
        query: new ort.Tensor("float32", query, [dim, 1])
      })
      return out.scores?.data as Float32Array
    }
  })),
  Effect.orElseSucceed(() => JS_SCORER)
)

/**
 * The k best rows by score (descending), ties by `tie` ascending (the rule's seq). A bounded
 * heap: O(n log k).
 */
export const topK = (scores: Float32Array, k: number, tie: (row: number) => number): Array<{ row: number; score: number }> => {
  if (k <= 0) return []
  // heap[0] is the worst kept row
  const heap: Array<number> = []
  const worse = (x: number, y: number) => {
    const sx = scores[x] as number
    const sy = scores[y] as number
    return sx < sy || (sx === sy && tie(x) > tie(y))
  }
  const swap = (i: number, j: number) => {
    const t = heap[i] as number
    heap[i] = heap[j] as number
    heap[j] = t
  }
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1
      const r = l + 1
      let m = i
      if (l < heap.length && worse(heap[l] as number, heap[m] as number)) m = l
      if (r < heap.length && worse(heap[r] as number, heap[m] as number)) m = r
      if (m === i) return
      swap(i, m)
      i = m
    }
  }
  for (let row = 0; row < scores.length; row++) {
    if (Number.isNaN(scores[row])) continue
    if (heap.length < k) {
      heap.push(row)
      for (let i = heap.length - 1; i > 0;) {
        const p = (i - 1) >> 1
        if (!worse(heap[i] as number, heap[p] as number)) break
        swap(i, p)
        i = p
      }
    } else if (worse(heap[0] as number, row)) {
      heap[0] = row
      down(0)
    }
  }
  return heap
    .sort((x, y) => (worse(x, y) ? 1 : worse(y, x) ? -1 : 0))
    .map((row) => ({ row, score: scores[row] as number }))
}
