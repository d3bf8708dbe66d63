/**
 * Tokenizer files for the tiny test models, in the shapes the real models ship:
 * - xlmr (bge-m3): Unigram over "▁"-prefixed pieces, Metaspace pre-tokenizer, TemplateProcessing
 *   `<s> $A </s>`, ids <s>=0 <pad>=1 </s>=2 <unk>=3 (as XLM-RoBERTa).
 * - qwen (qwen3-embedding): byte-level BPE (the GPT-2 byte alphabet plus merges for a word list),
 *   TemplateProcessing `$A <|endoftext|>` (Qwen3-Embedding's tokenizer appends it), pad
 *   `<|endoftext|>`, eos `<|im_end|>`.
 * Both go through @huggingface/tokenizers exactly as a real tokenizer.json does.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { tinyModel, type TinyModelOptions } from "./tiny-onnx.js"

export const TINY_WORDS = [
  "the", "customer", "returns", "goods", "who", "pays", "freight", "shipping", "costs", "return", "invoice",
  "payment", "terms", "days", "supplier", "delivery", "time", "order", "hook", "rails", "black", "ask",
  "before", "ordering", "kunde", "rücksendung", "versandkosten", "zahlt", "lieferant", "lieferzeit",
  "rechnung", "skonto", "bestellung", "hakenleisten", "schwarz", "immer", "vor", "der", "die", "das", "and", "a"
]

const special = (id: number, content: string) =>
  ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true })

/** bge-m3-like tokenizer.json (Unigram + Metaspace) and its tokenizer_config.json. */
export const xlmrTokenizer = (words: ReadonlyArray<string> = TINY_WORDS) => {
  const pieces: Array<[string, number]> = [["<s>", 0], ["<pad>", 0], ["</s>", 0], ["<unk>", 0]]
  const letters = [...new Set(words.join("").split(""))]
  pieces.push(["▁", -2])
  for (const l of letters) pieces.push([l, -10])
  for (const w of words) pieces.push([`▁${w}`, -3])
  const json = {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: [special(0, "<s>"), special(1, "<pad>"), special(2, "</s>"), special(3, "<unk>")],
    normalizer: { type: "Sequence", normalizers: [{ type: "Replace", pattern: { Regex: " {2,}" }, content: " " }] },
    pre_tokenizer: { type: "Metaspace", replacement: "▁", prepend_scheme: "always", split: true },
    post_processor: {
      type: "TemplateProcessing",
      single: [{ SpecialToken: { id: "<s>", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }, { SpecialToken: { id: "</s>", type_id: 0 } }],
      pair: [
        { SpecialToken: { id: "<s>", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }, { SpecialToken: { id: "</s>", type_id: 0 } },
        { SpecialToken: { id: "</s>", type_id: 0 } }, { Sequence: { id: "B", type_id: 0 } }, { SpecialToken: { id: "</s>", type_id: 0 } }
      ],
      special_tokens: {
        "<s>": { id: "<s>", ids: [0], tokens: ["<s>"] },
        "</s>": { id: "</s>", ids: [2], tokens: ["</s>"] }
      }
    },
    decoder: { type: "Metaspace", replacement: "▁", prepend_scheme: "always", split: true },
    model: { type: "Unigram", unk_id: 3, vocab: pieces, byte_fallback: false }
  }
  const config = {
    tokenizer_class: "XLMRobertaTokenizer", model_max_length: 8192,
    bos_token: "<s>", eos_token: "</s>", sep_token: "</s>", cls_token: "<s>", unk_token: "<unk>", pad_token: "<pad>", mask_token: "<mask>"
  }
  return { json, config, vocabSize: pieces.length }
}

/** GPT-2's byte → printable character table (the byte-level alphabet). */
const byteAlphabet = (): Array<string> => {
  const printable = new Set<number>()
  for (let b = 33; b <= 126; b++) printable.add(b)
  for (let b = 161; b <= 172; b++) printable.add(b)
  for (let b = 174; b <= 255; b++) printable.add(b)
  const out: Array<string> = []
  let n = 0
  for (let b = 0; b < 256; b++) out.push(String.fromCodePoint(printable.has(b) ? b : 256 + n++))
  return out
}

/** qwen3-like tokenizer.json (byte-level BPE) and its tokenizer_config.json. */
export const qwenTokenizer = (words: ReadonlyArray<string> = TINY_WORDS) => {
  const alphabet = byteAlphabet()
  const vocab: Record<string, number> = {}
  for (const ch of alphabet) vocab[ch] = Object.keys(vocab).length
  const merges: Array<[string, string]> = []
  const toByteLevel = (s: string) => [...new TextEncoder().encode(s)].map((b) => alphabet[b] ?? "")
  for (const w of words.flatMap((w) => [w, ` ${w}`])) {
    const chars = toByteLevel(w)
    let left = chars[0] ?? ""
    for (const c of chars.slice(1)) {
      const merged = left + c
      if (vocab[merged] === undefined) {
        vocab[merged] = Object.keys(vocab).length
        merges.push([left, c])
      }
      left = merged
    }
  }
  const endOfText = Object.keys(vocab).length
  const imEnd = endOfText + 1
  const json = {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: [special(endOfText, "<|endoftext|>"), special(imEnd, "<|im_end|>")],
    normalizer: { type: "NFC" },
    pre_tokenizer: {
      type: "Sequence",
      pretokenizers: [
        {
          type: "Split",
          pattern: { Regex: "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+" },
          behavior: "Isolated",
          invert: false
        },
        { type: "ByteLevel", add_prefix_space: false, trim_offsets: false, use_regex: false }
      ]
    },
    post_processor: {
      type: "TemplateProcessing",
      single: [{ Sequence: { id: "A", type_id: 0 } }, { SpecialToken: { id: "<|endoftext|>", type_id: 0 } }],
      pair: [{ Sequence: { id: "A", type_id: 0 } }, { Sequence: { id: "B", type_id: 1 } }, { SpecialToken: { id: "<|endoftext|>", type_id: 1 } }],
      special_tokens: { "<|endoftext|>": { id: "<|endoftext|>", ids: [endOfText], tokens: ["<|endoftext|>"] } }
    },
    decoder: { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: "BPE", dropout: null, unk_token: null, continuing_subword_prefix: "", end_of_word_suffix: "",
      fuse_unk: false, byte_fallback: false, ignore_merges: false, vocab, merges
    }
  }
  const config = {
    tokenizer_class: "Qwen2Tokenizer", model_max_length: 131072, padding_side: "left",
    eos_token: "<|im_end|>", pad_token: "<|endoftext|>", bos_token: null, unk_token: null
  }
  return { json, config, vocabSize: imEnd + 1, endOfText }
}

/** position rows of the tiny decoder graphs */
export const TINY_MAX_POSITIONS = 600

export type TinyModelId = "bge-m3" | "qwen3-embedding-0.6b"

export interface TinyModelDirOptions {
  readonly dim?: number
  readonly kind?: TinyModelOptions["kind"]
  readonly tokenTypes?: boolean
  readonly slowMatMuls?: number
  readonly hiddenName?: string
  readonly extraInputs?: ReadonlyArray<string>
  /** leave tokenizer_config.json out (it is optional) */
  readonly noConfig?: boolean
  /** the tokenizer without its TemplateProcessing post-processor (older Qwen3 tokenizer.json) */
  readonly noPostProcessor?: boolean
}

/**
 * Writes `<modelDir>/<model>/` with model.onnx, tokenizer.json and tokenizer_config.json of a
 * tiny model with the interface of the named real one. Returns the model's folder.
 */
export const writeTinyModelDir = (modelDir: string, model: TinyModelId, o: TinyModelDirOptions = {}): string => {
  const dir = join(modelDir, model)
  mkdirSync(dir, { recursive: true })
  const tok = model === "bge-m3" ? xlmrTokenizer() : qwenTokenizer()
  const json: Record<string, unknown> = { ...tok.json }
  if (o.noPostProcessor === true) json.post_processor = null
  writeFileSync(join(dir, "tokenizer.json"), JSON.stringify(json))
  if (o.noConfig !== true) writeFileSync(join(dir, "tokenizer_config.json"), JSON.stringify(tok.config))
  const kind = o.kind ?? (model === "bge-m3" ? "encoder" : "decoder")
  writeFileSync(join(dir, "model.onnx"), tinyModel({
    kind, vocab: tok.vocabSize, dim: o.dim ?? 16,
    ...(o.tokenTypes === undefined ? {} : { tokenTypes: o.tokenTypes }),
    ...(o.slowMatMuls === undefined ? {} : { slowMatMuls: o.slowMatMuls }),
    ...(o.hiddenName === undefined ? {} : { hiddenName: o.hiddenName }),
    ...(o.extraInputs === undefined ? {} : { extraInputs: o.extraInputs }),
    maxPositions: TINY_MAX_POSITIONS
  }))
  return dir
}
