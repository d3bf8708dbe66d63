/** The pure parts of stage b: token caps, padding, pooling positions, normalisation, the feed plan. */
import { Tokenizer } from "@huggingface/tokenizers"
import { describe, expect, it } from "vitest"
import { buildFeeds, planModelIo } from "../../../src/search/semantic/feeds.js"
import { MODEL_SPECS } from "../../../src/search/semantic/models.js"
import { halfToFloat, l2normalize, poolIndex, poolRows } from "../../../src/search/semantic/pooling.js"
import { makeTextTokenizer } from "../../../src/search/semantic/tokenize.js"
import { qwenTokenizer, xlmrTokenizer } from "../../support/tiny-tokenizers.js"

const LONG = Array.from({ length: 400 }, () => "the customer returns goods").join(" ")

describe("token caps and padding", () => {
  it("bge-m3: a text over the cap keeps its head and ends in </s>; pads on the right with <pad>", () => {
    const x = xlmrTokenizer()
    const t = makeTextTokenizer(new Tokenizer(x.json, x.config), x.config, MODEL_SPECS["bge-m3"])
    const ids = t.encode(LONG, 16)
    expect(ids.length).toBe(16)
    expect(ids[0]).toBe(0)
    expect(ids[15]).toBe(2)
    expect(t.padId).toBe(1)
    const b = t.pad([[0, 5, 2], [0, 5, 6, 7, 2]])
    expect({ batch: b.batch, seq: b.seq }).toEqual({ batch: 2, seq: 5 })
    expect(Array.from(b.ids, Number)).toEqual([0, 5, 2, 1, 1, 0, 5, 6, 7, 2])
    expect(Array.from(b.mask, Number)).toEqual([1, 1, 1, 0, 0, 1, 1, 1, 1, 1])
  })

  it("qwen3: over the cap ends in <|endoftext|>; pads on the left with <|endoftext|>, positions count real tokens", () => {
    const q = qwenTokenizer()
    const t = makeTextTokenizer(new Tokenizer(q.json, q.config), q.config, MODEL_SPECS["qwen3-embedding-0.6b"])
    const ids = t.encode(LONG, 10)
    expect(ids.length).toBe(10)
    expect(ids[9]).toBe(q.endOfText)
    expect(t.padId).toBe(q.endOfText)
    const b = t.pad([[7, 8], [4, 5, 6, 9]])
    expect(Array.from(b.ids, Number)).toEqual([q.endOfText, q.endOfText, 7, 8, 4, 5, 6, 9])
    expect(Array.from(b.mask, Number)).toEqual([0, 0, 1, 1, 1, 1, 1, 1])
    expect(Array.from(b.positions, Number)).toEqual([0, 0, 0, 1, 0, 1, 2, 3])
  })
})

describe("pooling", () => {
  it("cls takes the first real position, last-token the last real one, on either padding side", () => {
    const right = [1, 1, 1, 0]
    const left = [0, 0, 1, 1]
    expect([poolIndex(right, 0, 4, "cls"), poolIndex(right, 0, 4, "last-token")]).toEqual([0, 2])
    expect([poolIndex(left, 0, 4, "cls"), poolIndex(left, 0, 4, "last-token")]).toEqual([2, 3])
  })

  it("poolRows reads [batch, dim] rows as they are and [batch, seq, dim] at the pooled position, normalised", () => {
    const flat = Float32Array.from([3, 4, 0, 5])
    expect(poolRows(flat, [2, 2], [], "cls").map((v) => Array.from(v))).toEqual([[Math.fround(0.6), Math.fround(0.8)], [0, 1]])
    const hidden = Float32Array.from([1, 0, 0, 2, 9, 9, /* row 2 */ 9, 9, 0, 3, 4, 0])
    const rows = poolRows(hidden, [2, 3, 2], [1, 1, 0, 0, 1, 1], "last-token")
    expect(rows.map((v) => Array.from(v))).toEqual([[0, 1], [1, 0]])
    expect(() => poolRows(flat, [4], [], "cls")).toThrow(/rank 1/)
  })

  it("l2normalize leaves a zero vector zero; halfToFloat reads IEEE halves", () => {
    expect(Array.from(l2normalize(new Float32Array(3)))).toEqual([0, 0, 0])
    expect(Array.from(halfToFloat(Uint16Array.from([0x3c00, 0xc000, 0x3555, 0x0000])))).toEqual([1, -2, 0.333251953125, 0])
  })
})

describe("feed plan", () => {
  const t = (name: string, type: string, shape: Array<number | string> = ["b", "s"]) => ({ name, isTensor: true, type, shape })
  it("takes int32 ids, prefers a pooled output, sizes an empty float16 KV cache from the graph", () => {
    const io = planModelIo(
      [t("input_ids", "int32"), t("attention_mask", "int32"), t("past_key_values.0.key", "float16", ["b", 8, "p", 64])],
      [t("last_hidden_state", "float32", ["b", "s", 1024]), t("sentence_embedding", "float32", ["b", 1024])]
    )
    if (typeof io === "string") throw new Error(io)
    expect(io.output).toBe("sentence_embedding")
    const feeds = buildFeeds(io, { batch: 2, seq: 3, ids: new BigInt64Array(6), mask: new BigInt64Array(6), positions: new BigInt64Array(6) })
    expect(feeds.map((f) => [f.name, f.type, f.dims, f.data.constructor.name])).toEqual([
      ["input_ids", "int32", [2, 3], "Int32Array"],
      ["attention_mask", "int32", [2, 3], "Int32Array"],
      ["past_key_values.0.key", "float16", [2, 8, 0, 64], "Uint16Array"]
    ])
  })

  it("refuses an unknown input, an export without input_ids, a KV input of unknown size, and no usable output", () => {
    expect(planModelIo([t("input_ids", "int64"), t("pixel_values", "float32")], [t("o", "float32", ["b", 3])])).toMatch(/pixel_values/)
    expect(planModelIo([t("attention_mask", "int64")], [t("o", "float32", ["b", 3])])).toBe("the model has no input_ids input")
    expect(planModelIo([t("input_ids", "int64"), t("past_key_values.0.value", "float32", ["b", "h", "p", "d"])], [])).toMatch(/fixed heads/)
    expect(planModelIo([t("input_ids", "int64")], [t("logits", "float32", ["b", "s", "v", "x"])])).toMatch(/no usable output/)
    expect(planModelIo([t("input_ids", "float32")], [])).toMatch(/expected int64 or int32/)
  })
})
