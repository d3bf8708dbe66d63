/**
 * Stage b (docs/stages.md, Measured): printed, never asserted.
 *
 * 1. Embedding time per rule (documents in batches, as the catch-up embeds them) and per query,
 *    median and p95. With BENCH_MODEL_DIR (a model_dir holding bge-m3/ or qwen3-embedding-0.6b/)
 *    and BENCH_MODEL it measures that real model; without, the tiny test model, whose figure is
 *    only the pipeline's own cost (tokenizer, worker thread, onnxruntime call, pooling) — never a
 *    real model's time, and never a relevance figure.
 * 2. Exact nearest neighbours over 10k and 100k random unit vectors of dimension 1024: the
 *    onnxruntime MatMul scorer (what stage b uses) and the plain JS loop, each with the top-200
 *    selection, median and p95 over 30 queries.
 * 3. The catch-up as the service runs it (the live SearchStages layer, catchUpRound in rounds of
 *    32, texts read, vectors written): milliseconds per indexed rule, with the tiny test model of
 *    dimension 1024 (or BENCH_MODEL_DIR's real model).
 * 4. search() latency with stage b on at 10k and 100k confirmed rules (BENCH_STAGES_SIZES),
 *    median and p95, against stage a alone in the same run (the same service, SearchStages
 *    without stages for the stage-a rows): stage b's question embedding with the tiny model of
 *    dimension 1024 (a real model adds its query time, table 1), exact neighbours over random unit
 *    vectors of dimension 1024 in vec_rule (the neighbours' cost does not depend on the values),
 *    the b pool through the filters, RRF, coverage for heads only b found, the bundles.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Duration, Effect, Logger, LogLevel } from "effect"
import { formatRuleId } from "../src/contracts/ids.js"
import { ScopeStore } from "../src/db/scope-store.js"
import type { SearchRequest } from "../src/domain/search-schemas.js"
import { LexicalIndex } from "../src/search/lexical/index.js"
import { search } from "../src/search/search.js"
import { openOnnxEmbedder } from "../src/search/semantic/embedder.js"
import { JS_SCORER, type KnnScorer, makeKnnScorer, topK } from "../src/search/semantic/knn.js"
import type { SemanticModelId } from "../src/search/semantic/models.js"
import { writeVectors } from "../src/search/semantic/vectors.js"
import { SearchStages } from "../src/search/stage.js"
import { ServicesLive } from "../src/services.js"
import { writeTinyModelDir } from "../test/support/tiny-tokenizers.js"
import { benchConfig } from "./config.js"
import { stats } from "./support.js"


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

// ---- 3 and 4: the catch-up and search() with stage b, through the live layer -----------------------

/** bench/search.ts's corpus: business words, then 20,000 synthetic words, drawn Zipf-like (rank⁻¹). */
const BUSINESS = [
  "Lieferzeit", "Hakenleiste", "Bestellung", "Lieferant", "Rechnung", "Zahlungsziel", "Skonto", "Kunde", "Angebot",
  "Muster", "Versand", "Palette", "Spedition", "Reklamation", "Gutschrift", "Preisliste", "Rabatt", "Lager",
  "delivery", "supplier", "invoice", "payment", "customer", "discount", "sample", "shipping", "warehouse", "order"
]
const SYL = ["ka", "ri", "mo", "te", "lu", "ser", "an", "dor", "vi", "pel", "gu", "nes", "tra", "bo", "lin", "ex"]
const VOCAB = [...BUSINESS, ...Array.from({ length: 20_000 }, (_, i) => [i % 16, (i >> 4) % 16, (i >> 8) % 16, (i >> 12) % 16].map((k) => SYL[k]).join(""))]
let zipfSeed = 7
const zipfRand = (n: number) => {
  zipfSeed = (zipfSeed * 1103515245 + 12345) % 2147483648
  return zipfSeed % n
}
const CUM = (() => {
  let acc = 0
  return VOCAB.map((_, i) => (acc += 1 / (i + 1)))
})()
const word = () => {
  const x = (zipfRand(1_000_000) / 1_000_000) * (CUM[CUM.length - 1] ?? 1)
  let lo = 0
  let hi = CUM.length - 1
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if ((CUM[mid] ?? 0) < x) lo = mid + 1
    else hi = mid
  }
  return VOCAB[lo] ?? "x"
}
const sentence = (n: number) => Array.from({ length: n }, word).join(" ")
const QUERIES = ["Lieferzeit Hakenleiste", "Rechnung Skonto", "delivery time supplier", "Liefrzeit", "Zahlungsziele Kunde",
  "warehouse pallets shipping", "Preislisten Rabatt", "customer discount sample", "Reklamation Gutschrift", "order invoice payment"]

/** n confirmed rules (version 1 proposed, 2 confirmed) written straight into the tables, as bench/search.ts does (no relations). */
interface RuleText {
  readonly statement: string
  readonly keywords: string
  readonly quote: string
}
const zipfRule = (seq: number): RuleText => ({ statement: `${sentence(12)} ${seq}`, keywords: JSON.stringify([word(), word()]), quote: sentence(15) })
/** table 1's texts, so the catch-up's figure compares with the embedder's own */
const benchRule = (seq: number): RuleText => ({ statement: ruleText(seq), keywords: "[]", quote: "said in the meeting" })

const seedRules = (sql: SqlClient, n: number, textOf: (seq: number) => RuleText) =>
  sql.withTransaction(Effect.gen(function*() {
    const t = "2026-01-01T00:00:00.000Z"
    yield* sql`INSERT INTO source (id, kind, title, occurred_at, sender, thread, link, excerpt, fulltext_sha256, fetched_at, feeder)
      VALUES ('manual:person:1', 'manual', NULL, NULL, NULL, NULL, NULL, NULL, NULL, ${t}, 'person:1')`.raw
    for (let seq = 1; seq <= n; seq++) {
      const id = formatRuleId("bench", seq)
      const { statement, keywords, quote } = textOf(seq)
      yield* sql`INSERT INTO rule (seq, id, created_at, created_by) VALUES (${seq}, ${id}, ${t}, 'person:1')`.raw
      for (const [version, status] of [[1, "proposed"], [2, "confirmed"]] as const) {
        yield* sql`INSERT INTO rule_version (rule_id, version, kind, statement, source_id, quote, timestamp_s, source_link, said_at, speaker,
            relations, keywords, valid_from, valid_until, supersedes, superseded_by, status, reason, changed_by, changed_at)
          VALUES (${id}, ${version}, 'rule', ${statement}, 'manual:person:1', ${quote}, NULL, NULL, ${t}, NULL, '[]', ${keywords},
            '2026-01-01', NULL, NULL, NULL, ${status}, 'bench', 'person:1', ${t})`.raw
      }
    }
  }))

const stagesConfigOf = (dir: string, modelDir: string, semantic: boolean) =>
  benchConfig(dir, {
    scopes: [{ name: "bench", providers_allowed: ["local"] }],
    search: semantic ? { semantic: { enabled: true, model: "bge-m3", model_dir: modelDir } } : {}
  })

const quiet = <A, E>(e: Effect.Effect<A, E>) => Effect.runPromise(e.pipe(Logger.withMinimumLogLevel(LogLevel.Warning)))

/** The scope `bench` with n rules, the lexical index built, and (vectors) a random unit vector of dim 1024 per current version. */
const seedScope = (dir: string, modelDir: string, n: number, vectors: boolean, textOf: (seq: number) => RuleText) =>
  quiet(Effect.gen(function*() {
    const store = yield* ScopeStore
    yield* store.create("bench")
    const { sql } = yield* store.use("bench")
    yield* seedRules(sql, n, textOf)
    yield* sql.withTransaction((yield* LexicalIndex).rebuild(sql))
    if (!vectors) return
    for (let from = 1; from <= n; from += 1000) {
      const rows = Array.from({ length: Math.min(1000, n - from + 1) }, (_, k) => ({ seq: from + k, version: 2, vector: unit(1024) }))
      yield* writeVectors(sql, "bge-m3", rows)
    }
  }).pipe(Effect.provide(ServicesLive(stagesConfigOf(dir, modelDir, false))), Effect.scoped))

const settledScope = Effect.flatMap(SearchStages, (s) => (s.vectors === undefined ? Effect.void : s.vectors.settled("bench")))
const settledModel = Effect.flatMap(SearchStages, (s) => (s.vectors === undefined ? Effect.void : s.vectors.settled()))

const catchUpBench = async () => {
  const realDir = process.env.BENCH_MODEL_DIR
  const n = Number(process.env.BENCH_CATCH_UP_RULES ?? (realDir === undefined ? 2_000 : 200))
  const dir = mkdtempSync(join(tmpdir(), "gn-bench-catch-up-"))
  try {
    const modelDir = realDir ?? join(dir, "models")
    if (realDir === undefined) writeTinyModelDir(modelDir, "bge-m3", { dim: 1024 })
    await seedScope(dir, modelDir, n, false, benchRule)
    const r = await quiet(Effect.gen(function*() {
      yield* settledModel
      const t0 = performance.now()
      yield* settledScope
      const ms = performance.now() - t0
      const status = yield* Effect.flatMap(SearchStages, (s) => (s.vectors === undefined ? Effect.die("no stage b") : s.vectors.status))
      return { ms, status: status.scopes[0] }
    }).pipe(Effect.provide(ServicesLive(stagesConfigOf(dir, modelDir, true))), Effect.scoped))
    const label = realDir === undefined ? "tiny test model with bge-m3's interface (dim 1024): the pipeline's own cost, not bge-m3's time" : `bge-m3 from ${realDir}`
    console.log(`\nStage b catch-up through the live layer (rounds of 32: texts read, embedded, vectors written; the rule texts of the first table), ${label}`)
    console.log("rules | embedded | total s | ms per indexed rule")
    console.log(`${String(n).padEnd(5)} | ${String(r.status?.embedded ?? "?").padStart(8)} | ${(r.ms / 1000).toFixed(1).padStart(7)} | ${(r.ms / n).toFixed(2).padStart(19)}`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const searchLatencyBench = async () => {
  const sizes = (process.env.BENCH_STAGES_SIZES ?? "10000,100000").split(",").map(Number).filter((x) => x > 0)
  console.log("\nsearch() with stage b on vs stage a alone, same service and run (10 queries × 4 rounds after one warm-up round, the two in turn; limit 10)")
  console.log("stage b: the tiny test model's question embedding (dim 1024; a real model adds its query time, see the first table), exact neighbours over random unit vectors")
  console.log("rules   | load s | a alone median / p95 ms | a+b median / p95 ms | stage b duration median ms | heads only b found (of 10)")
  for (const n of sizes) {
    const dir = mkdtempSync(join(tmpdir(), "gn-bench-stage-b-"))
    try {
      const modelDir = join(dir, "models")
      writeTinyModelDir(modelDir, "bge-m3", { dim: 1024 })
      await seedScope(dir, modelDir, n, true, zipfRule)
      const r = await quiet(Effect.gen(function*() {
        const t0 = performance.now()
        yield* settledModel
        yield* settledScope
        const load = performance.now() - t0
        const stageAOnly = (req: SearchRequest) => Effect.provideService(search(req, "00000000-0000-4000-8000-000000000000"), SearchStages, { stages: [] })
        const a: Array<number> = []
        const ab: Array<number> = []
        const bMs: Array<number> = []
        const onlyB: Array<number> = []
        for (let round = 0; round <= 4; round++) {
          for (const text of QUERIES) {
            const req: SearchRequest = { scopes: ["bench"], cross_scope: false, text, as_of: null, include_proposals: false, limit: 10 }
            // the two in turn, each first every other round (the second of a pair finds the pages cached)
            const timed = <A, E, R>(e: Effect.Effect<A, E, R>) => Effect.map(Effect.timed(e), ([d, x]) => [Duration.toMillis(d), x] as const)
            const bFirst = round % 2 === 1
            const first = bFirst ? yield* timed(search(req, "00000000-0000-4000-8000-000000000000")) : null
            const [aMs] = yield* timed(stageAOnly(req))
            const [abMs, withB] = first ?? (yield* timed(search(req, "00000000-0000-4000-8000-000000000000")))
            if (round === 0) continue
            if (withB.response.stages.b.state !== "ran") return yield* Effect.die(`stage b did not run: ${JSON.stringify(withB.response.stages.b)}`)
            ab.push(abMs)
            a.push(aMs)
            bMs.push(withB.response.stages.b.duration_ms ?? 0)
            onlyB.push(withB.response.bundles.filter((b) => b.head.found_via.includes("semantic")).length)
          }
        }
        return { load, a: stats(a), ab: stats(ab), b: stats(bMs), onlyB: onlyB.reduce((x, y) => x + y, 0) / Math.max(1, onlyB.length) }
      }).pipe(Effect.provide(ServicesLive(stagesConfigOf(dir, modelDir, true))), Effect.scoped))
      console.log(`${String(n).padEnd(7)} | ${(r.load / 1000).toFixed(1).padStart(6)} | ${r.a.median.toFixed(1).padStart(11)} / ${r.a.p95.toFixed(1).padStart(9)} | ${r.ab.median.toFixed(1).padStart(9)} / ${r.ab.p95.toFixed(1).padStart(7)} | ${r.b.median.toFixed(1).padStart(26)} | ${r.onlyB.toFixed(1).padStart(26)}`)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
  console.log("load s: the model's open and the scope's cold read of its vectors into memory (once per scope and process, in the background)")
}

export const stagesBench = async (): Promise<void> => {
  await embeddingBench()
  await knnBench()
  await catchUpBench()
  await searchLatencyBench()
}
