/**
 * Stage b's embedder on real ONNX models the tests write (test/support/tiny-onnx.ts) with their
 * own tokenizer.json: loading, both poolings, normalisation, batching and padding, the model
 * interfaces of real exports, missing and broken files, and the timeout path. The tiny models'
 * vectors mean nothing: no test asserts relevance.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Tokenizer } from "@huggingface/tokenizers"
import { Effect, Exit } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { checkModel, semanticModelFinding } from "../../../src/search/semantic/check.js"
import { type Embedder, openOnnxEmbedder, type OnnxEmbedderOptions } from "../../../src/search/semantic/embedder.js"
import { STAGE_B_REASONS } from "../../../src/search/semantic/errors.js"
import { QWEN3_QUERY_TASK } from "../../../src/search/semantic/models.js"
import { tempDir } from "../../support/env.js"
import { tinyEmbeddings, tinyPositions } from "../../support/tiny-onnx.js"
import { qwenTokenizer, TINY_MAX_POSITIONS, writeTinyModelDir, xlmrTokenizer } from "../../support/tiny-tokenizers.js"

let dir: string
let cleanup: () => void
beforeEach(() => {
  ;({ dir, cleanup } = tempDir("gn-embed-"))
})
afterEach(() => cleanup())

const withEmbedder = <A>(o: OnnxEmbedderOptions, f: (e: Embedder) => Effect.Effect<A, unknown>): Promise<A> =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(openOnnxEmbedder(o), f)) as Effect.Effect<A>)

const openFailure = async (o: OnnxEmbedderOptions) => {
  const exit = await Effect.runPromiseExit(Effect.scoped(openOnnxEmbedder(o)))
  if (Exit.isSuccess(exit) || exit.cause._tag !== "Fail") throw new Error("expected a typed failure")
  return exit.cause.error
}

const norm = (v: Float32Array) => Math.sqrt(v.reduce((s, x) => s + x * x, 0))
const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * (b[i] ?? 0), 0)
const normalized = (v: ArrayLike<number>) => {
  const n = Math.sqrt(Array.from(v).reduce((s, x) => s + x * x, 0))
  return Float32Array.from(v, (x) => x / n)
}

describe("bge-m3 interface (XLM-RoBERTa export: input_ids, attention_mask → last_hidden_state; CLS pooling)", () => {
  it("loads, embeds a query and documents as unit vectors, and pools the first token of last_hidden_state", async () => {
    writeTinyModelDir(dir, "bge-m3", { dim: 16 })
    const { q, docs, dim } = await withEmbedder({ modelDir: dir, model: "bge-m3" }, (e) =>
      Effect.all({
        q: e.embedQuery("who pays the freight when the customer returns goods"),
        docs: e.embedDocuments(["the customer pays shipping costs", "invoice payment terms days", "the customer pays shipping costs"]),
        dim: Effect.succeed(e.dim)
      }))
    expect(dim).toBe(16)
    for (const v of [q, ...docs]) {
      expect(v.length).toBe(16)
      expect(norm(v)).toBeCloseTo(1, 5)
    }
    expect(dot(docs[0] as Float32Array, docs[2] as Float32Array)).toBeCloseTo(1, 5)
    // the graph's CLS row is E[<s>] + mean of E over the real tokens: computed here from the table
    const tok = xlmrTokenizer()
    const ids = new Tokenizer(tok.json, tok.config).encode("the customer pays shipping costs").ids
    expect(ids[0]).toBe(0)
    const E = tinyEmbeddings({ vocab: tok.vocabSize, dim: 16 })
    const row = (id: number) => E.subarray(id * 16, id * 16 + 16)
    const expected = Array.from({ length: 16 }, (_, j) =>
      (row(0)[j] ?? 0) + ids.reduce((s: number, id: number) => s + (row(id)[j] ?? 0), 0) / ids.length)
    const want = normalized(expected)
    docs[0]?.forEach((x, j) => expect(x).toBeCloseTo(want[j] ?? NaN, 5))
  })

  it("gives a text the same vector alone and in a right-padded batch with longer texts", async () => {
    writeTinyModelDir(dir, "bge-m3")
    const [alone, batch] = await withEmbedder({ modelDir: dir, model: "bge-m3" }, (e) =>
      Effect.all([
        e.embedDocuments(["ask the supplier"]),
        e.embedDocuments(["ask the supplier", "ask the supplier for the delivery time before ordering black hook rails", "a"])
      ]))
    alone[0]?.forEach((x, j) => expect(batch[0]?.[j]).toBeCloseTo(x, 5))
    expect(batch.length).toBe(3)
  })

  it("feeds token_type_ids (zeros) to an export that takes them, and reads a pooled sentence_embedding output", async () => {
    writeTinyModelDir(join(dir, "a"), "bge-m3", { tokenTypes: true })
    writeTinyModelDir(join(dir, "b"), "bge-m3", { kind: "pooled" })
    const a = await withEmbedder({ modelDir: join(dir, "a"), model: "bge-m3" }, (e) => e.embedQuery("invoice"))
    const b = await withEmbedder({ modelDir: join(dir, "b"), model: "bge-m3" }, (e) => e.embedQuery("invoice"))
    expect(norm(a)).toBeCloseTo(1, 5)
    // sentence_embedding of the pooled graph is the mean of E over the tokens, not the CLS row
    const tok = xlmrTokenizer()
    const ids = new Tokenizer(tok.json, tok.config).encode("invoice").ids
    const E = tinyEmbeddings({ vocab: tok.vocabSize, dim: 16 })
    const want = normalized(Array.from({ length: 16 }, (_, j) => ids.reduce((s: number, id: number) => s + (E[id * 16 + j] ?? 0), 0)))
    b.forEach((x, j) => expect(x).toBeCloseTo(want[j] ?? NaN, 5))
  })

  it("loads model.onnx from onnx/ (the model repository layout) and works without tokenizer_config.json", async () => {
    const folder = writeTinyModelDir(dir, "bge-m3", { noConfig: true })
    mkdirSync(join(folder, "onnx"))
    writeFileSync(join(folder, "onnx", "model.onnx"), readFileSync(join(folder, "model.onnx")))
    rmSync(join(folder, "model.onnx"))
    const v = await withEmbedder({ modelDir: dir, model: "bge-m3" }, (e) => e.embedQuery("order"))
    expect(norm(v)).toBeCloseTo(1, 5)
  })
})

describe("qwen3-embedding interface (decoder: position_ids, empty KV cache, last-token pooling, left padding)", () => {
  it("pools the last real token under left padding: a text alone and in a batch gives the same vector", async () => {
    writeTinyModelDir(dir, "qwen3-embedding-0.6b")
    const [alone, batch] = await withEmbedder({ modelDir: dir, model: "qwen3-embedding-0.6b" }, (e) =>
      Effect.all([
        e.embedDocuments(["the supplier"]),
        e.embedDocuments(["ask the supplier for the delivery time before ordering black hook rails", "the supplier"])
      ]))
    expect(norm(alone[0] as Float32Array)).toBeCloseTo(1, 5)
    alone[0]?.forEach((x, j) => expect(batch[1]?.[j]).toBeCloseTo(x, 5))
  })

  it("pools the hidden state of <|endoftext|> at the text's last position, and prefixes queries with the instruction", async () => {
    writeTinyModelDir(dir, "qwen3-embedding-0.6b", { dim: 8 })
    const tok = qwenTokenizer()
    const t = new Tokenizer(tok.json, tok.config)
    const E = tinyEmbeddings({ vocab: tok.vocabSize, dim: 8 })
    const P = tinyPositions({ dim: 8, maxPositions: TINY_MAX_POSITIONS })
    /** the graph's last row: E[<|endoftext|>] + P[length - 1] + mean of E over the tokens */
    const expected = (text: string) => {
      const ids = t.encode(text).ids
      expect(ids[ids.length - 1]).toBe(tok.endOfText)
      const last = ids.length - 1
      return normalized(Array.from({ length: 8 }, (_, j) =>
        (E[tok.endOfText * 8 + j] ?? 0) + (P[last * 8 + j] ?? 0) + ids.reduce((s: number, id: number) => s + (E[id * 8 + j] ?? 0), 0) / ids.length))
    }
    const [docs, query] = await withEmbedder({ modelDir: dir, model: "qwen3-embedding-0.6b" }, (e) =>
      Effect.all([e.embedDocuments(["the supplier", "ask the supplier for the delivery time"]), e.embedQuery("the supplier")]))
    const wantDoc = expected("the supplier")
    docs[0]?.forEach((x, j) => expect(x).toBeCloseTo(wantDoc[j] ?? NaN, 5))
    const wantQuery = expected(`Instruct: ${QWEN3_QUERY_TASK}\nQuery:the supplier`)
    query.forEach((x, j) => expect(x).toBeCloseTo(wantQuery[j] ?? NaN, 5))
  })

  it("appends <|endoftext|> when an older tokenizer.json does not", async () => {
    writeTinyModelDir(join(dir, "old"), "qwen3-embedding-0.6b", { noPostProcessor: true })
    writeTinyModelDir(join(dir, "new"), "qwen3-embedding-0.6b")
    const a = await withEmbedder({ modelDir: join(dir, "old"), model: "qwen3-embedding-0.6b" }, (e) => e.embedDocuments(["the supplier"]))
    const b = await withEmbedder({ modelDir: join(dir, "new"), model: "qwen3-embedding-0.6b" }, (e) => e.embedDocuments(["the supplier"]))
    a[0]?.forEach((x, j) => expect(b[0]?.[j]).toBeCloseTo(x, 6))
  })
})

describe("missing or broken model files → SemanticModelUnavailable with a reason (stage b failed, doctor semantic-model)", () => {
  it("no folder, no model.onnx, no tokenizer.json: missing", async () => {
    expect(await openFailure({ modelDir: dir, model: "bge-m3" })).toMatchObject({
      _tag: "SemanticModelUnavailable", reason: STAGE_B_REASONS.missing, detail: `no folder ${join(dir, "bge-m3")}`
    })
    const folder = writeTinyModelDir(dir, "bge-m3")
    rmSync(join(folder, "tokenizer.json"))
    expect(await openFailure({ modelDir: dir, model: "bge-m3" })).toMatchObject({ reason: STAGE_B_REASONS.missing, detail: `no tokenizer.json in ${folder}` })
    rmSync(join(folder, "model.onnx"))
    expect((await openFailure({ modelDir: dir, model: "bge-m3" })).detail).toMatch(/^no model\.onnx in /)
  })

  it("garbage model.onnx, truncated model.onnx, broken tokenizer.json, an unknown input: broken", async () => {
    const folder = writeTinyModelDir(dir, "bge-m3")
    const good = readFileSync(join(folder, "model.onnx"))
    writeFileSync(join(folder, "model.onnx"), "this is not a model")
    const garbage = await openFailure({ modelDir: dir, model: "bge-m3" })
    expect(garbage).toMatchObject({ reason: STAGE_B_REASONS.broken })
    expect(garbage.detail).toContain("onnxruntime cannot load it")
    writeFileSync(join(folder, "model.onnx"), good.subarray(0, good.length >> 1))
    expect(await openFailure({ modelDir: dir, model: "bge-m3" })).toMatchObject({ reason: STAGE_B_REASONS.broken })
    writeFileSync(join(folder, "model.onnx"), good)
    writeFileSync(join(folder, "tokenizer.json"), "{ not json")
    expect(await openFailure({ modelDir: dir, model: "bge-m3" })).toMatchObject({ reason: STAGE_B_REASONS.broken })
    writeTinyModelDir(dir, "bge-m3", { extraInputs: ["pixel_values"] })
    const other = await openFailure({ modelDir: dir, model: "bge-m3" })
    expect(other.reason).toBe(STAGE_B_REASONS.broken)
    expect(other.detail).toContain('model input "pixel_values" is not supported')
  })

  it("checkModel and the doctor finding say ok with the dimension, fail with the reason, skip when off", async () => {
    const missing = await Effect.runPromise(checkModel(dir, "bge-m3"))
    expect(missing).toMatchObject({ ok: false, reason: STAGE_B_REASONS.missing })
    writeTinyModelDir(join(dir, "models"), "qwen3-embedding-0.6b", { dim: 8 })
    const finding = await Effect.runPromise(semanticModelFinding({ enabled: true, model: "qwen3-embedding-0.6b" }, dir))
    expect(finding).toMatchObject({ id: "semantic-model", status: "ok", remedy: null })
    expect(finding.message).toContain("dimension 8")
    const failing = await Effect.runPromise(semanticModelFinding({ enabled: true, model: "bge-m3", model_dir: join(dir, "models") }, dir))
    expect(failing).toMatchObject({ status: "fail" })
    expect(failing.remedy).toContain(join(dir, "models", "bge-m3"))
    expect(await Effect.runPromise(semanticModelFinding({ enabled: false }, dir))).toMatchObject({ status: "skip" })
  })
})

describe("timeout", () => {
  it("a query on a slow model times out with the timeout reason, and the embedder answers the next call", async () => {
    writeTinyModelDir(dir, "bge-m3", { slowMatMuls: 3 })
    const [timedOut, later] = await withEmbedder({ modelDir: dir, model: "bge-m3" }, (e) =>
      Effect.all([
        Effect.flip(e.embedQuery("invoice", { timeoutMs: 10 })),
        e.embedQuery("invoice", { timeoutMs: 60_000 })
      ]))
    expect(timedOut).toMatchObject({ _tag: "EmbedFailed", reason: STAGE_B_REASONS.timeout, detail: "no vector within 10 ms" })
    expect(norm(later)).toBeCloseTo(1, 5)
  })
})
