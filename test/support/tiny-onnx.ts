/**
 * Tiny embedding models for stage b tests, written as ONNX protobuf by hand (no onnx package):
 * onnxruntime-node loads and runs them like a real export. They are toys — their vectors say
 * nothing about relevance and no figure of them is ever reported as search quality.
 *
 * The protobuf is written by src/search/semantic/onnx-proto.ts (the writer stage b's KNN graph
 * uses); the graphs below are this file's.
 *
 * Graphs (hidden size `dim`, token embeddings E[vocab, dim], mask m, ctx = masked mean of E[ids]):
 * - "encoder" (bge-m3-like, XLM-RoBERTa interface): inputs input_ids, attention_mask [, token_type_ids];
 *   last_hidden_state[b, s] = E[ids[b, s]] + ctx[b] (+ T[token_type_ids]). CLS pooling therefore
 *   depends on the whole text, and pad positions never enter ctx.
 * - "pooled": the same plus a second output sentence_embedding[b] = ctx[b] (a 2-D, already pooled output).
 * - "decoder" (qwen3-like): inputs input_ids, attention_mask, position_ids and one empty KV pair
 *   past_key_values.0.key/value [b, 2, past, 4]; last_hidden_state = E[ids] + P[position_ids] + ctx
 *   + sum(past key) (0 for the empty cache). The last token's vector depends on its position, so it
 *   equals the unpadded one only when position_ids count real tokens (left padding).
 * - slowMatMuls > 0 adds input-dependent 1024×1024 MatMuls whose result is multiplied by 0 and
 *   added: the output is unchanged, the run takes long enough for the timeout tests.
 */

import { DT, encodeModel, type OnnxNode as Node, type TensorInit, type ValueInfo } from "../../src/search/semantic/onnx-proto.js"

// ---- the tiny embedding graphs ----------------------------------------------------------------------

/** Deterministic pseudo-random values in [-1, 1) (the table of a toy model). */
export const seededFloats = (n: number, seed: number): Float32Array => {
  const out = new Float32Array(n)
  let s = seed >>> 0
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0
    out[i] = s / 2 ** 31 - 1
  }
  return out
}

const i64 = (name: string, values: ReadonlyArray<number>): TensorInit =>
  ({ name, dims: [values.length], type: DT.INT64, data: BigInt64Array.from(values.map(BigInt)) })

export interface TinyModelOptions {
  readonly kind: "encoder" | "pooled" | "decoder"
  readonly vocab: number
  readonly dim: number
  readonly tokenTypes?: boolean
  readonly slowMatMuls?: number
  readonly seed?: number
  /** the name of the 3-D output (real exports: last_hidden_state; some: token_embeddings) */
  readonly hiddenName?: string
  readonly maxPositions?: number
  /** extra int64 inputs the graph declares and never reads (an export's input this code does not know) */
  readonly extraInputs?: ReadonlyArray<string>
}

/** Position embeddings P of the decoder graph (row = position id). */
export const tinyPositions = (o: Pick<TinyModelOptions, "dim" | "maxPositions">): Float32Array =>
  seededFloats((o.maxPositions ?? 64) * o.dim, 1234)

/** Token embeddings E of a tiny model (row id = token id), as the graph holds them. */
export const tinyEmbeddings = (o: Pick<TinyModelOptions, "vocab" | "dim" | "seed">): Float32Array =>
  seededFloats(o.vocab * o.dim, o.seed ?? 7)

export const tinyModel = (o: TinyModelOptions): Uint8Array => {
  const hidden = o.hiddenName ?? "last_hidden_state"
  const dyn = ["batch_size", "sequence_length"]
  const nodes: Array<Node> = []
  const inits: Array<TensorInit> = [
    { name: "E", dims: [o.vocab, o.dim], type: DT.FLOAT, data: tinyEmbeddings(o) },
    i64("axis1", [1]),
    i64("axis2", [2])
  ]
  const inputs: Array<ValueInfo> = [
    { name: "input_ids", type: DT.INT64, shape: dyn },
    { name: "attention_mask", type: DT.INT64, shape: dyn }
  ]
  nodes.push(
    { op: "Gather", inputs: ["E", "input_ids"], outputs: ["emb"] },
    { op: "Cast", inputs: ["attention_mask"], outputs: ["maskf"], attrs: [{ name: "to", i: DT.FLOAT }] },
    { op: "Unsqueeze", inputs: ["maskf", "axis2"], outputs: ["mask3"] },
    { op: "Mul", inputs: ["emb", "mask3"], outputs: ["masked"] },
    { op: "ReduceSum", inputs: ["masked", "axis1"], outputs: ["sum"], attrs: [{ name: "keepdims", i: 1 }] },
    { op: "ReduceSum", inputs: ["mask3", "axis1"], outputs: ["count"], attrs: [{ name: "keepdims", i: 1 }] },
    { op: "Div", inputs: ["sum", "count"], outputs: ["ctx"] },
    { op: "Add", inputs: ["emb", "ctx"], outputs: ["h0"] }
  )
  let h = "h0"
  if (o.tokenTypes === true) {
    inputs.push({ name: "token_type_ids", type: DT.INT64, shape: dyn })
    inits.push({ name: "T", dims: [2, o.dim], type: DT.FLOAT, data: seededFloats(2 * o.dim, 99) })
    nodes.push(
      { op: "Gather", inputs: ["T", "token_type_ids"], outputs: ["tt"] },
      { op: "Add", inputs: [h, "tt"], outputs: ["h1"] }
    )
    h = "h1"
  }
  if (o.kind === "decoder") {
    const positions = o.maxPositions ?? 64
    inputs.push(
      { name: "position_ids", type: DT.INT64, shape: dyn },
      { name: "past_key_values.0.key", type: DT.FLOAT, shape: ["batch_size", 2, "past_sequence_length", 4] },
      { name: "past_key_values.0.value", type: DT.FLOAT, shape: ["batch_size", 2, "past_sequence_length", 4] }
    )
    inits.push({ name: "P", dims: [positions, o.dim], type: DT.FLOAT, data: tinyPositions(o) })
    nodes.push(
      { op: "Gather", inputs: ["P", "position_ids"], outputs: ["pos"] },
      { op: "Add", inputs: [h, "pos"], outputs: ["h2"] },
      { op: "ReduceSum", inputs: ["past_key_values.0.key"], outputs: ["pastsum"], attrs: [{ name: "keepdims", i: 0 }] },
      { op: "Add", inputs: ["h2", "pastsum"], outputs: ["h3"] }
    )
    h = "h3"
  }
  for (const name of o.extraInputs ?? []) inputs.push({ name, type: DT.INT64, shape: dyn })
  const slow = o.slowMatMuls ?? 0
  if (slow > 0) {
    // C (1024×1024, from ConstantOfShape) scaled by an input-dependent scalar, so nothing folds away.
    inits.push(i64("bigshape", [1024, 1024]))
    nodes.push(
      { op: "ConstantOfShape", inputs: ["bigshape"], outputs: ["C"], attrs: [{ name: "value", t: { name: "v", dims: [1], type: DT.FLOAT, data: Float32Array.of(0.001) } }] },
      { op: "ReduceSum", inputs: ["maskf"], outputs: ["tokens"], attrs: [{ name: "keepdims", i: 0 }] },
      { op: "Mul", inputs: ["C", "tokens"], outputs: ["X0"] }
    )
    for (let i = 0; i < slow; i++) nodes.push({ op: "MatMul", inputs: [`X${i}`, "X0"], outputs: [`X${i + 1}`] })
    inits.push({ name: "zero", dims: [], type: DT.FLOAT, data: Float32Array.of(0) })
    nodes.push(
      { op: "ReduceSum", inputs: [`X${slow}`], outputs: ["big"], attrs: [{ name: "keepdims", i: 0 }] },
      { op: "Mul", inputs: ["big", "zero"], outputs: ["nothing"] },
      { op: "Add", inputs: [h, "nothing"], outputs: ["h9"] }
    )
    h = "h9"
  }
  nodes.push({ op: "Identity", inputs: [h], outputs: [hidden] })
  const outputs: Array<ValueInfo> = [{ name: hidden, type: DT.FLOAT, shape: [...dyn, o.dim] }]
  if (o.kind === "pooled") {
    nodes.push({ op: "ReduceSum", inputs: ["ctx", "axis1"], outputs: ["sentence_embedding"], attrs: [{ name: "keepdims", i: 0 }] })
    outputs.push({ name: "sentence_embedding", type: DT.FLOAT, shape: ["batch_size", o.dim] })
  }
  return encodeModel({ nodes, initializers: inits, inputs, outputs }, "groundnote-tests")
}
