/**
 * The embedding models of stage b (architecture.md §3 search.semantic.model) and what each needs
 * around the ONNX graph: pooling, padding side, the token an input must end with, and the query
 * text. Model cards: BAAI/bge-m3 (XLM-RoBERTa, dense vector = the [CLS] hidden state, normalised,
 * no instruction, up to 8192 tokens); Qwen/Qwen3-Embedding-0.6B (decoder, last-token pooling,
 * tokenizer padding_side left, the tokenizer appends <|endoftext|>, queries carry
 * "Instruct: <task>\nQuery:<query>", documents nothing, up to 32k tokens).
 */

export type SemanticModelId = "bge-m3" | "qwen3-embedding-0.6b"
export const SEMANTIC_MODELS: ReadonlyArray<SemanticModelId> = ["bge-m3", "qwen3-embedding-0.6b"]

/**
 * The task of the Qwen3 query instruction. The model card asks for one English sentence that
 * describes the task (its default: "Given a web search query, retrieve relevant passages that
 * answer the query"); ours names what an agent asks for. Documents carry no instruction, so
 * changing it never needs a re-embedding.
 */
export const QWEN3_QUERY_TASK = "Given a question about a company's business rules, retrieve the rules that answer it"

/**
 * Token caps (docs/decisions.md, gaps.md §11 Stages b and c). The models take 8192 / 32768 tokens, but attention
 * cost grows with the square of the length on a CPU: a rule's text (statement ≤ 500 characters,
 * keywords, relations, then the quote) fits in 512 tokens except for long quotes, which are cut
 * at the end; a query longer than 512 tokens (a pasted mail) keeps its start.
 */
export const MAX_QUERY_TOKENS = 512
export const MAX_DOCUMENT_TOKENS = 512

export interface ModelSpec {
  readonly id: SemanticModelId
  /** cls: the hidden state of the first real token; last-token: of the last real token */
  readonly pooling: "cls" | "last-token"
  readonly padding: "right" | "left"
  /** the token every input must end with, appended when the tokenizer did not (older Qwen3 tokenizer.json) */
  readonly endToken: string | null
  /** the pad token when tokenizer_config.json names none */
  readonly defaultPad: string
  /** the model's own limit */
  readonly maxModelTokens: number
  readonly queryText: (text: string) => string
}

export const MODEL_SPECS: Readonly<Record<SemanticModelId, ModelSpec>> = {
  "bge-m3": {
    id: "bge-m3",
    pooling: "cls",
    padding: "right",
    endToken: null,
    defaultPad: "<pad>",
    maxModelTokens: 8192,
    queryText: (text) => text
  },
  "qwen3-embedding-0.6b": {
    id: "qwen3-embedding-0.6b",
    pooling: "last-token",
    padding: "left",
    endToken: "<|endoftext|>",
    defaultPad: "<|endoftext|>",
    maxModelTokens: 32_768,
    // the model card's get_detailed_instruct: f'Instruct: {task_description}\nQuery:{query}'
    queryText: (text) => `Instruct: ${QWEN3_QUERY_TASK}\nQuery:${text}`
  }
}
