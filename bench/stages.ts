/**
 * Stage b (issue 17, "Measured"): printed, never asserted.
 *
 * 1. Embedding time per rule (documents in batches, as the catch-up embeds them) and per query,
 *    median and p95. With BENCH_MODEL_DIR (a model_dir holding bge-m3/ or qwen3-embedding-0.6b/)
 *    and BENCH_MODEL it measures that real model; without, the tiny test model, whose figure is
 *    only the pipeline's own cost (tokenizer, worker thread, onnxruntime call, pooling) — never a
 *    real model's time, and never a relevance figure.
 * 2. Exact nearest neighbours over 10k and 100k random unit vectors of dimension 1024: the
 *    onnxruntime MatMul scorer (what stage b uses) and the plain JS loop, each with the top-200
 *    selection, median and p95 over 30 queries.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { openOnnxEmbedder } from "../src/search/semantic/embedder.js"
import { JS_SCORER, type KnnScorer, makeKnnScorer, topK } from "../src/search/semantic/knn.js"
import type { SemanticModelId } from "../src/search/semantic/models.js"
import { writeTinyModelDir } from "../test/support/tiny-tokenizers.js"

const stats = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(s.length * q))] ?? 0
  return { median: at(0.5), p95: at(0.95) }
}

let seed = 11
const rand = () => {
  seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0
  return seed / 2 ** 32 - 0.5
}
const unit = (dim: number, into?: Float32Array, offset = 0): Float32Array => {
  const v = into ?? new Float32Array(dim)
  let sum = 0
  for (let j = 0; j < dim; j++) {
    const x = rand()
    v[offset + j] = x
    sum += x * x
  }
  const n = Math.sqrt(sum)
  for (let j = 0; j < dim; j++) v[offset + j] = (v[offset + j] ?? 0) / n
  return v
}

const RULE_WORDS = ["customer", "returns", "goods", "freight", "shipping", "costs", "invoice", "payment", "terms", "days",
  "supplier", "delivery", "time", "order", "hook", "rails", "black", "Kunde", "Rücksendung", "Versandkosten", "Lieferzeit",
  "Rechnung", "Skonto", "Bestellung", "Hakenleisten", "immer", "vor", "der", "die", "das"]
const ruleText = (i: number) => {
  const n = 25 + (i % 40)
  return Array.from({ length: n }, (_, k) => RULE_WORDS[(i * 7 + k * 13) % RULE_WORDS.length]).join(" ")
}

const embeddingBench = async () => {
  const realDir = process.env.BENCH_MODEL_DIR
  const model = (process.env.BENCH_MODEL ?? "bge-m3") as SemanticModelId
  const tmp = realDir === undefined ? mkdtempSync(join(tmpdir(), "gn-bench-stages-")) : null
  try {
    const modelDir = realDir ?? (tmp as string)
    if (tmp !== null) writeTinyModelDir(tmp, model, { dim: 1024 })
    const label = realDir === undefined
      ? `tiny test model with ${model}'s interface (dim 1024): the pipeline's own cost only, not ${model}'s time`
      : `${model} from ${realDir}`
    console.log(`\nStage b embedding, ${label}`)
    const rules = Array.from({ length: realDir === undefined ? 400 : 64 }, (_, i) => ruleText(i))
    const r = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const t0 = performance.now()
      const e = yield* openOnnxEmbedder({ modelDir, model, threads: Number(process.env.BENCH_THREADS ?? 1) })
      const load = performance.now() - t0
      yield* e.embedDocuments(rules.slice(0, 8))
      const perRule: Array<number> = []
      for (let i = 0; i < rules.length; i += 16) {
        const batch = rules.slice(i, i + 16)
        const t = performance.now()
        yield* e.embedDocuments(batch, { timeoutMs: 600_000 })
        perRule.push((performance.now() - t) / batch.length)
      }
      const query: Array<number> = []
      for (let i = 0; i < 30; i++) {
        const t = performance.now()
        yield* e.embedQuery(`who pays the freight when a customer sends goods back ${i}`, { timeoutMs: 600_000 })
        query.push(performance.now() - t)
      }
      return { load, perRule: stats(perRule), query: stats(query) }
    })))
    console.log("load + probe ms | per rule (batches of 16) median / p95 ms | query median / p95 ms")
    console.log(`${r.load.toFixed(0).padStart(15)} | ${r.perRule.median.toFixed(2).padStart(21)} / ${r.perRule.p95.toFixed(2).padStart(6)} | ${r.query.median.toFixed(2).padStart(12)} / ${r.query.p95.toFixed(2).padStart(6)}`)
    if (realDir === undefined) console.log("no real model at hand: set BENCH_MODEL_DIR (and BENCH_MODEL) to measure bge-m3 or qwen3-embedding-0.6b")
  } finally {
    if (tmp !== null) rmSync(tmp, { recursive: true, force: true })
  }
}

const knnBench = async () => {
  const dim = 1024
  const sizes = (process.env.BENCH_KNN_SIZES ?? "10000,100000").split(",").map(Number).filter((n) => n > 0)
  const onnx = await Effect.runPromise(makeKnnScorer)
  console.log(`\nStage b exact neighbours, random unit vectors of dimension ${dim}, top 200, 30 queries (after 3 warm-up)`)
  console.log("vectors | onnxruntime MatMul median / p95 ms | plain JS loop median / p95 ms | top-200 selection median ms")
  for (const n of sizes) {
    const matrix = new Float32Array(n * dim)
    for (let r = 0; r < n; r++) unit(dim, matrix, r * dim)
    const queries = Array.from({ length: 33 }, () => unit(dim))
    const run = async (scorer: KnnScorer) => {
      const total: Array<number> = []
      const select: Array<number> = []
      for (const [i, q] of queries.entries()) {
        const t = performance.now()
        const scores = await scorer.scores(matrix, n, dim, q)
        const t1 = performance.now()
        topK(scores, 200, (row) => row)
        const t2 = performance.now()
        if (i >= 3) {
          total.push(t2 - t)
          select.push(t2 - t1)
        }
      }
      return { total: stats(total), select: stats(select) }
    }
    const o = await run(onnx)
    const j = await run(JS_SCORER)
    console.log(`${String(n).padEnd(7)} | ${o.total.median.toFixed(1).padStart(20)} / ${o.total.p95.toFixed(1).padStart(11)} | ${j.total.median.toFixed(1).padStart(16)} / ${j.total.p95.toFixed(1).padStart(10)} | ${o.select.median.toFixed(2).padStart(27)}`)
  }
  if (onnx.kind !== "onnx") console.log("(the onnxruntime scorer could not be made: both columns are the plain loop)")
}

export const stagesBench = async (): Promise<void> => {
  await embeddingBench()
  await knnBench()
}
