/**
 * Text → token ids with the model's own tokenizer (@huggingface/tokenizers over tokenizer.json),
 * cut to a token cap, and a batch padded on the model's side with its attention mask and
 * position ids.
 *
 * - The tokenizer's post-processor adds the special tokens (bge-m3: <s> … </s>; Qwen3-Embedding:
 *   … <|endoftext|>). A Qwen3 tokenizer.json from before that post-processor existed adds none:
 *   the end token is appended here when missing (the model card's EOS fix).
 * - Over the cap the head is kept with the trailing special tokens (</s>, <|endoftext|>), as the
 *   Python tokenizers truncate. The text itself is first cut to 8 characters per allowed token,
 *   so a 20,000-character query costs no more tokenizer work than needed.
 * - position_ids count real tokens from 0 (0 on pads), so a left-padded sequence gets the
 *   positions it has alone.
 */
import type { Tokenizer } from "@huggingface/tokenizers"
import type { ModelSpec } from "./models.js"

export interface PaddedBatch {
  readonly batch: number
  readonly seq: number
  /** row-major [batch, seq] */
  readonly ids: BigInt64Array
  readonly mask: BigInt64Array
  readonly positions: BigInt64Array
}

export interface TextTokenizer {
  readonly padId: number
  /** the ids of one text, at most maxTokens long */
  readonly encode: (text: string, maxTokens: number) => Array<number>
  readonly pad: (sequences: ReadonlyArray<ReadonlyArray<number>>) => PaddedBatch
}

const tokenName = (v: unknown): string | undefined => {
  if (typeof v === "string") return v
  if (typeof v === "object" && v !== null && typeof (v as { content?: unknown }).content === "string") return (v as { content: string }).content
  return undefined
}

const CHARS_PER_TOKEN_CAP = 8

export const makeTextTokenizer = (tokenizer: Tokenizer, config: Readonly<Record<string, unknown>>, spec: ModelSpec): TextTokenizer => {
  const special = new Set<number>()
  for (const [id, t] of tokenizer.get_added_tokens_decoder()) if (t.special) special.add(id)
  const configured = tokenName(config.pad_token)
  const padId = (configured === undefined ? undefined : tokenizer.token_to_id(configured)) ?? tokenizer.token_to_id(spec.defaultPad) ?? 0
  const endId = spec.endToken === null ? undefined : tokenizer.token_to_id(spec.endToken)

  const encode = (text: string, maxTokens: number): Array<number> => {
    const cap = Math.max(2, maxTokens)
    const cut = text.length > cap * CHARS_PER_TOKEN_CAP ? text.slice(0, cap * CHARS_PER_TOKEN_CAP) : text
    let ids = tokenizer.encode(cut).ids
    if (endId !== undefined && ids[ids.length - 1] !== endId) ids = [...ids, endId]
    if (ids.length <= cap) return ids
    let tail = 0
    while (tail < 2 && tail < ids.length && special.has(ids[ids.length - 1 - tail] ?? -1)) tail++
    return [...ids.slice(0, cap - tail), ...ids.slice(ids.length - tail)]
  }

  const pad = (sequences: ReadonlyArray<ReadonlyArray<number>>): PaddedBatch => {
    const batch = sequences.length
    const seq = Math.max(1, ...sequences.map((s) => s.length))
    const ids = new BigInt64Array(batch * seq).fill(BigInt(padId))
    const mask = new BigInt64Array(batch * seq)
    const positions = new BigInt64Array(batch * seq)
    sequences.forEach((s, b) => {
      const offset = spec.padding === "left" ? seq - s.length : 0
      s.forEach((id, i) => {
        const at = b * seq + offset + i
        ids[at] = BigInt(id)
        mask[at] = 1n
        positions[at] = BigInt(i)
      })
    })
    return { batch, seq, ids, mask, positions }
  }

  return { padId, encode, pad }
}
