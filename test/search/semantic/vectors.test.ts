/**
 * Stage b's vectors in a real scope file (migration 0005-vectors, vectors.ts), the in-memory
 * index kept current by increments (vector-index.ts), the catch-up (catch-up.ts) and the
 * candidates of a search (stage-b.ts), with rules written by the real writers and vectors from a
 * tiny ONNX model. The tiny model's similarities mean nothing: orders are checked against the
 * exact dot products, never against an expected relevance.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import type { AppConfigShape } from "../../../src/config/config.js"
import { triggerMessage } from "../../../src/db/errors.js"
import { decide } from "../../../src/decision/decide.js"
import { applyRedaction } from "../../../src/redaction/apply.js"
import { previewRedaction } from "../../../src/redaction/preview.js"
import { catchUpRound } from "../../../src/search/semantic/catch-up.js"
import { type Embedder, openOnnxEmbedder } from "../../../src/search/semantic/embedder.js"
import { jsScores } from "../../../src/search/semantic/knn.js"
import { semanticPool } from "../../../src/search/semantic/stage-b.js"
import { makeVectorIndex, type VectorIndex } from "../../../src/search/semantic/vector-index.js"
import { ruleEmbeddingText } from "../../../src/search/semantic/rule-text.js"
import {
  currentVectors, decodeVector, embeddingInputs, encodeVector, pendingVersions, writeVectors
} from "../../../src/search/semantic/vectors.js"
import { tempDir } from "../../support/env.js"
import { run, sqlOf } from "../../support/run.js"
import { writeTinyModelDir } from "../../support/tiny-tokenizers.js"
import { lexConfig, person, ruleReq, seed } from "../lexical/support.js"

let dir: string
let cleanup: () => void
let config: AppConfigShape
beforeEach(() => {
  ;({ dir, cleanup } = tempDir("gn-vec-"))
  config = lexConfig(dir)
  writeTinyModelDir(`${dir}/models`, "bge-m3", { dim: 16 })
})
afterEach(() => cleanup())

const RULES = [
  ruleReq("The customer pays the shipping costs of returns", ["returns", "freight"]),
  ruleReq("Invoices are paid within 30 days, net", ["payment terms"]),
  ruleReq("Ask the supplier for the delivery time before ordering black hook rails", ["delivery time"]),
  ruleReq("Der Kunde zahlt die Versandkosten der Rücksendung", ["Rücksendung"])
]

/** Runs f with the sales scope's connection and a tiny bge-m3 embedder (closed after). */
const withStage = <A, E>(f: (sql: SqlClient, embedder: Embedder) => Effect.Effect<A, E>) =>
  run(config, Effect.scoped(Effect.gen(function*() {
    const sql = yield* sqlOf("sales")
    const embedder = yield* openOnnxEmbedder({ modelDir: `${dir}/models`, model: "bge-m3" })
    return yield* f(sql, embedder)
  })))
const withSql = <A, E>(f: (sql: SqlClient) => Effect.Effect<A, E>) => run(config, Effect.flatMap(sqlOf("sales"), f))
const newIndex = () => Effect.runPromise(makeVectorIndex("bge-m3", 16))
const seqOf = (id: string) => Number(id.slice("sales-".length))

/** Rounds until nothing is pending; returns the rounds. */
const catchUpAll = (index: VectorIndex) =>
  withStage((sql, embedder) => Effect.gen(function*() {
    const rounds = []
    for (;;) {
      const r = yield* catchUpRound(sql, index, embedder, { limit: 3 })
      rounds.push(r)
      if (r.remaining === 0) return rounds
    }
  }))

describe("vec_rule (scope migration 0005-vectors)", () => {
  it("holds a vector per (seq, version, model); refuses an unknown version, a wrong length and an update", async () => {
    const [id] = await seed(config, RULES.slice(0, 1), "none")
    const seq = seqOf(id ?? "")
    const v = Float32Array.from({ length: 16 }, (_, i) => i / 16)
    const written = await withSql((sql) => Effect.all([
      writeVectors(sql, "bge-m3", [{ seq, version: 1, vector: v }]),
      writeVectors(sql, "bge-m3", [{ seq, version: 1, vector: new Float32Array(16) }]),
      writeVectors(sql, "qwen3-embedding-0.6b", [{ seq, version: 1, vector: new Float32Array(8) }])
    ]))
    expect(written).toEqual([1, 0, 1])
    const stored = await withSql((sql) => sql<{ dim: number; vector: Uint8Array }>`SELECT dim, vector FROM vec_rule WHERE model = 'bge-m3'`)
    expect(stored[0]?.dim).toBe(16)
    expect(Array.from(decodeVector(stored[0]?.vector ?? new Uint8Array()))).toEqual(Array.from(v))
    expect(await withSql((sql) => Effect.flip(writeVectors(sql, "bge-m3", [{ seq, version: 2, vector: v }]))).then((e) => triggerMessage(e)))
      .toBe("vector-of-unknown-version")
    expect(await withSql((sql) => Effect.flip(writeVectors(sql, "bge-m3", [{ seq: 999, version: 1, vector: v }]))).then((e) => triggerMessage(e)))
      .toBe("vector-of-unknown-version")
    expect(await withSql((sql) => Effect.flip(sql`UPDATE vec_rule SET dim = 16`.raw)).then((e) => triggerMessage(e))).toBe("append-only")
    const short = await withSql((sql) =>
      Effect.flip(sql`INSERT INTO vec_rule (seq, version, model, dim, vector) VALUES (${seq}, 1, 'x', 16, ${encodeVector(new Float32Array(3))})`.raw))
    expect(String((short as { cause?: unknown }).cause)).toContain("CHECK constraint failed")
  })

  it("embeds a version as statement, keywords, relations and quote, one per line", () => {
    expect(ruleEmbeddingText({
      statement: "Ask the supplier first", keywords: JSON.stringify(["Lieferzeit", "supplier"]),
      relations: JSON.stringify([{ kind: "supplier", name: "Müller GmbH", ref: null }]), quote: "  said in the hallway "
    })).toBe("Ask the supplier first\nLieferzeit, supplier\nsupplier: Müller GmbH\nsaid in the hallway")
    expect(ruleEmbeddingText({ statement: "Only a statement", keywords: "[]", relations: "[]", quote: "" })).toBe("Only a statement")
  })
})

describe("a redaction reaches the running index (gaps.md §12)", () => {
  it("the touched rule's vector leaves the matrix at the next refresh, its bytes gone; the catch-up embeds the redacted text", async () => {
    const ids = await seed(config, RULES, "none")
    const index = await newIndex()
    await catchUpAll(index)
    expect(index.progress()).toEqual({ total: 4, embedded: 4, pending: 0 })
    const seq = seqOf(ids[2] ?? "")
    const before = await withSql((sql) => sql<{ vector: Uint8Array }>`SELECT vector FROM vec_rule WHERE seq = ${seq}`)
    const old = decodeVector(before[0]?.vector ?? new Uint8Array())
    // the stored vector is the best hit of itself before the redaction
    expect((await Effect.runPromise(index.search(old, 1)))[0]?.seq).toBe(seq)
    await run(config, Effect.flatMap(sqlOf("sales"), (sql) => Effect.gen(function*() {
      const p = yield* previewRedaction(sql, "sales", "hook rails")
      yield* applyRedaction(sql, { scope: "sales", term: "hook rails", reason: "erasure request", preview: p.body.preview, requestedBy: "person:1", decidedBy: "dpo@example.com", at: "2026-11-20T10:00:00Z" })
      yield* index.refresh(sql)
    })))
    expect(index.progress()).toEqual({ total: 4, embedded: 3, pending: 1 })
    expect(index.pending(10)).toEqual([{ seq, version: 1 }])
    expect((await Effect.runPromise(index.search(old, 4))).map((h) => h.seq)).not.toContain(seq)
    await catchUpAll(index)
    expect(index.progress()).toEqual({ total: 4, embedded: 4, pending: 0 })
    const after = await withSql((sql) => sql<{ vector: Uint8Array }>`SELECT vector FROM vec_rule WHERE seq = ${seq}`)
    expect(Array.from(decodeVector(after[0]?.vector ?? new Uint8Array()))).not.toEqual(Array.from(old))
  })
})

describe("catch-up: every current, not rejected version gets a vector", () => {
  it("embeds new rules in rounds; stored vectors are the embedder's document vectors of ruleEmbeddingText", async () => {
    const ids = await seed(config, RULES, "none")
    expect((await withSql((sql) => pendingVersions(sql, "bge-m3", 100))).map((p) => p.rule_id)).toEqual(ids)
    const index = await newIndex()
    const rounds = await catchUpAll(index)
    expect(rounds.map((r) => [r.embedded, r.copied, r.remaining])).toEqual([[3, 0, 1], [1, 0, 0]])
    expect(await withSql((sql) => pendingVersions(sql, "bge-m3", 100))).toEqual([])
    const check = await withStage((sql, embedder) => Effect.gen(function*() {
      const inputs = yield* embeddingInputs(sql, "bge-m3", ids.map((id) => ({ seq: seqOf(id), version: 1 })))
      const fresh = yield* embedder.embedDocuments(inputs.map((i) => i.text))
      const set = yield* currentVectors(sql, "bge-m3")
      return { inputs, fresh, set }
    }))
    expect(check.inputs.map((i) => i.text.split("\n")[0])).toEqual(RULES.map((r) => r.statement))
    expect(Array.from(check.set.seqs)).toEqual(ids.map(seqOf))
    check.fresh.forEach((v, i) => v.forEach((x, j) => expect(check.set.matrix[i * 16 + j]).toBeCloseTo(x, 6)))
    expect(index.progress()).toEqual({ total: 4, embedded: 4, pending: 0 })
  })

  it("a confirm (same text) copies the vector, a confirm with a changed statement embeds, a rejected rule leaves the index", async () => {
    const ids = await seed(config, RULES, "none")
    const index = await newIndex()
    await catchUpAll(index)
    const [a, b, c] = ids as [string, string, string]
    await run(config, Effect.all([
      decide(a, { decision: "confirm", version: 1 }, person),
      decide(b, { decision: "confirm", version: 1, change: { statement: "Invoices are paid within 14 days, net" } }, person),
      decide(c, { decision: "reject", version: 1, reason: "not a rule" }, person)
    ]))
    const rounds = await catchUpAll(index)
    expect(rounds.map((r) => [r.embedded, r.copied, r.remaining])).toEqual([[1, 1, 0]])
    const rows = await withSql((sql) => sql<{ seq: number; version: number; vector: Uint8Array }>`SELECT seq, version, vector FROM vec_rule ORDER BY seq, version`)
    const vec = (seq: number, version: number) => Array.from(decodeVector(rows.find((r) => r.seq === seq && r.version === version)?.vector ?? new Uint8Array()))
    expect(vec(seqOf(a), 2)).toEqual(vec(seqOf(a), 1))
    expect(vec(seqOf(b), 2)).not.toEqual(vec(seqOf(b), 1))
    expect(rows.map((r) => `${r.seq}@${r.version}`)).toEqual(["1@1", "1@2", "2@1", "2@2", "3@1", "4@1"])
    expect(index.progress()).toEqual({ total: 3, embedded: 3, pending: 0 })
    const set = await withSql((sql) => currentVectors(sql, "bge-m3"))
    expect([...set.seqs].map((s, i) => `${s}@${set.versions[i]}`)).toEqual(["1@2", "2@2", "4@1"])
  })

  it("a new index reads the file and matches currentVectors; a new version leaves the index until its vector exists", async () => {
    const ids = await seed(config, RULES, "none")
    await catchUpAll(await newIndex())
    const fresh = await newIndex()
    await withSql((sql) => fresh.refresh(sql))
    expect(fresh.progress()).toEqual({ total: 4, embedded: 4, pending: 0 })
    await run(config, decide(ids[0] ?? "", { decision: "confirm", version: 1 }, person))
    await withSql((sql) => fresh.refresh(sql))
    expect(fresh.progress()).toEqual({ total: 4, embedded: 3, pending: 1 })
    expect(fresh.pending(10)).toEqual([{ seq: 1, version: 2 }])
    const q = Float32Array.from({ length: 16 }, (_, i) => (i % 3) - 1)
    expect((await Effect.runPromise(fresh.search(q, 10))).map((h) => h.seq).sort()).toEqual([2, 3, 4])
  })

  it("skips vectors of another dimension (a model file replaced under the same name)", async () => {
    const [id] = await seed(config, RULES.slice(0, 1), "none")
    await withSql((sql) => writeVectors(sql, "bge-m3", [{ seq: seqOf(id ?? ""), version: 1, vector: new Float32Array(8).fill(0.1) }]))
    const index = await newIndex()
    await withSql((sql) => index.refresh(sql))
    expect([index.skipped(), index.progress().embedded, index.progress().pending]).toEqual([1, 0, 1])
  })
})

describe("exact neighbours and stage b's pool", () => {
  it("search orders by the exact dot product (ties by seq); the pool leaves proposals out unless asked", async () => {
    const ids = await seed(config, [...RULES, ruleReq("Ship samples only after a confirmed order", ["samples"])], "none")
    await run(config, Effect.forEach(ids.slice(0, 4), (id) => decide(id, { decision: "confirm", version: 1 }, person)))
    const index = await newIndex()
    await catchUpAll(index)
    const out = await withStage((sql, embedder) => Effect.gen(function*() {
      const q = yield* embedder.embedQuery("who pays the freight when a customer sends goods back")
      const set = yield* currentVectors(sql, "bge-m3")
      const hits = yield* index.search(q, 10)
      const pool = yield* semanticPool(sql, index, q, { includeProposals: false })
      const withProposals = yield* semanticPool(sql, index, q, { includeProposals: true, k: 3 })
      return { q, set, hits, pool, withProposals }
    }))
    const exact = jsScores(out.set.matrix, out.set.seqs.length, 16, out.q)
    const expected = [...out.set.seqs].map((seq, i) => ({ seq, score: exact[i] as number }))
      .sort((x, y) => y.score - x.score || x.seq - y.seq)
    expect(out.hits.map((h) => h.seq)).toEqual(expected.map((e) => e.seq))
    out.hits.forEach((h, i) => expect(h.score).toBeCloseTo(expected[i]?.score ?? NaN, 5))
    expect(out.pool.map((h) => h.rule_id)).toEqual(expected.filter((e) => e.seq !== 5).map((e) => `sales-${String(e.seq).padStart(4, "0")}`))
    expect(out.pool.every((h) => h.status === "confirmed" && h.version === 2 && h.valid_from === "2026-01-01")).toBe(true)
    expect(out.withProposals.length).toBe(3)
    expect(out.withProposals.map((h) => h.seq)).toEqual(expected.slice(0, 3).map((e) => e.seq))
  })
})
