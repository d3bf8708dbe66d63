/**
 * The estimated cost of one rerank call, recorded before the call (db/reranker-usage.ts).
 * Rerank wire-format providers bill input tokens of every query–document pair; the estimate
 * counts the query once per document plus each document, at one token per 3 UTF-8 bytes (an
 * over-estimate for German and English BPE tokenizers, which average ~4 bytes a token), and the
 * model's price per million input tokens. Prices: (docs/decisions.md, gaps.md §11 Stages b and c).
 */

/** USD per million input tokens, by model. jev-1.14.0: TypeSafe's published price of Jev 1.13 ($0.042 / Mtok input, output free), the latest price seen. */
export const USD_PER_MILLION_TOKENS: Readonly<Record<string, number>> = { "jev-1.14.0": 0.042 }

const tokensOf = (text: string): number => Math.ceil(Buffer.byteLength(text, "utf8") / 3)

export const estimateTokens = (query: string, documents: ReadonlyArray<string>): number => {
  const q = tokensOf(query)
  return documents.reduce((n, d) => n + q + tokensOf(d), 0)
}

/** Cost in USD; a model without a known price is charged at the highest known price. */
export const estimateCostUsd = (model: string, tokens: number): number =>
  (tokens * (USD_PER_MILLION_TOKENS[model] ?? Math.max(...Object.values(USD_PER_MILLION_TOKENS)))) / 1_000_000
