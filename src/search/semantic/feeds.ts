/**
 * The inputs and the output of an embedding export, read from the session's metadata at load
 * time, and the feeds of one padded batch. Names as the exports use them:
 *
 * - input_ids, attention_mask: every export (int64; int32 accepted);
 * - token_type_ids: BERT-style exports (XLM-RoBERTa has one type: zeros);
 * - position_ids: decoder exports (Qwen3 via Optimum / transformers.js);
 * - past_key_values.<n>.key|value: decoder exports with a KV cache input; fed empty
 *   [batch, kv_heads, 0, head_dim] with the sizes from the graph;
 * - output: sentence_embedding or dense_vecs when the export pools itself ([batch, dim]),
 *   else last_hidden_state / token_embeddings ([batch, seq, dim]), else the first tensor output.
 *
 * Any other input is refused at load with its name: feeding it zeros could be silently wrong.
 */
import type { PaddedBatch } from "./tokenize.js"

export interface IoMeta {
  readonly name: string
  readonly isTensor: boolean
  readonly type?: string
  readonly shape?: ReadonlyArray<number | string>
}

type Role = "ids" | "mask" | "types" | "positions" | "past"
export interface InputPlan {
  readonly name: string
  readonly role: Role
  readonly type: "int64" | "int32" | "float32" | "float16"
  readonly shape: ReadonlyArray<number | string>
}
export interface ModelIo {
  readonly inputs: ReadonlyArray<InputPlan>
  readonly output: string
}

export interface Feed {
  readonly name: string
  readonly type: InputPlan["type"]
  readonly dims: Array<number>
  readonly data: BigInt64Array | Int32Array | Float32Array | Uint16Array
}

const PREFERRED_OUTPUTS = ["sentence_embedding", "dense_vecs", "last_hidden_state", "token_embeddings"]

const roleOf = (name: string): Role | undefined => {
  if (name === "input_ids") return "ids"
  if (name === "attention_mask") return "mask"
  if (name === "token_type_ids") return "types"
  if (name === "position_ids") return "positions"
  if (/^past_key_values\.\d+\.(key|value)$/.test(name)) return "past"
  return undefined
}

/** The plan of a model's inputs and output, or the reason it cannot be fed. */
export const planModelIo = (inputs: ReadonlyArray<IoMeta>, outputs: ReadonlyArray<IoMeta>): ModelIo | string => {
  const plans: Array<InputPlan> = []
  for (const m of inputs) {
    const role = roleOf(m.name)
    if (role === undefined) return `model input "${m.name}" is not supported (known: input_ids, attention_mask, token_type_ids, position_ids, past_key_values.*)`
    const type = m.type ?? ""
    if (role === "past") {
      if (type !== "float32" && type !== "float16") return `model input "${m.name}" has type ${type}; expected float32 or float16`
      const shape = m.shape ?? []
      if (shape.length !== 4 || typeof shape[1] !== "number" || typeof shape[3] !== "number") {
        return `model input "${m.name}" has shape [${shape.join(", ")}]; expected [batch, heads, past, head_dim] with fixed heads and head_dim`
      }
    } else if (type !== "int64" && type !== "int32") return `model input "${m.name}" has type ${type}; expected int64 or int32`
    plans.push({ name: m.name, role, type: type as InputPlan["type"], shape: m.shape ?? [] })
  }
  if (!plans.some((p) => p.role === "ids")) return "the model has no input_ids input"
  const tensors = outputs.filter((o) => o.isTensor)
  const output = PREFERRED_OUTPUTS.find((n) => tensors.some((o) => o.name === n))
    ?? tensors.find((o) => o.shape === undefined || o.shape.length === 0 || o.shape.length === 2 || o.shape.length === 3)?.name
  if (output === undefined) return `the model has no usable output (outputs: ${outputs.map((o) => o.name).join(", ")})`
  return { inputs: plans, output }
}

const ints = (type: "int64" | "int32", values: BigInt64Array): BigInt64Array | Int32Array =>
  type === "int64" ? values : Int32Array.from(values, (v) => Number(v))

/** The feeds of one batch. */
export const buildFeeds = (io: ModelIo, batch: PaddedBatch): Array<Feed> =>
  io.inputs.map((p): Feed => {
    const dims = [batch.batch, batch.seq]
    switch (p.role) {
      case "ids": return { name: p.name, type: p.type, dims, data: ints(p.type as "int64" | "int32", batch.ids) }
      case "mask": return { name: p.name, type: p.type, dims, data: ints(p.type as "int64" | "int32", batch.mask) }
      case "positions": return { name: p.name, type: p.type, dims, data: ints(p.type as "int64" | "int32", batch.positions) }
      case "types": return { name: p.name, type: p.type, dims, data: ints(p.type as "int64" | "int32", new BigInt64Array(batch.ids.length)) }
      case "past": return {
        name: p.name, type: p.type, dims: [batch.batch, Number(p.shape[1]), 0, Number(p.shape[3])],
        data: p.type === "float16" ? new Uint16Array(0) : new Float32Array(0)
      }
    }
  })
