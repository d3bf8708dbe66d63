/**
 * Catch-up: vectors for the current rule versions that have none (a new rule, a new version, a
 * new model). A version whose text equals an earlier version's of the same rule (a confirm, a
 * review) gets that vector copied without the model; the others are embedded as documents. The
 * embedding runs outside any transaction; the writes of one round are one transaction.
 *
 *   catchUpRound(sql, index, embedder, { limit? }) → Effect<CatchUpRound, SqlError | EmbedFailed>
 *
 * One round handles at most `limit` versions (default 32) so a search can come between rounds;
 * the caller repeats it while `remaining` > 0 (in the background: searches never wait for it,
 * docs/decisions.md, gaps.md §11 Stages b and c).
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import type { Embedder } from "./embedder.js"
import type { VectorIndex } from "./vector-index.js"
import { embeddingInputs, writeVectors } from "./vectors.js"

export interface CatchUpRound {
  readonly embedded: number
  readonly copied: number
  /** current versions still without a vector after this round */
  readonly remaining: number
  readonly ms: number
}

export const DEFAULT_CATCH_UP_LIMIT = 32

export const catchUpRound = (sql: SqlClient, index: VectorIndex, embedder: Embedder, options: { readonly limit?: number } = {}) =>
  Effect.gen(function*() {
    const t0 = performance.now()
    yield* index.refresh(sql)
    const keys = index.pending(options.limit ?? DEFAULT_CATCH_UP_LIMIT)
    const inputs = yield* embeddingInputs(sql, index.model, keys)
    const copies = inputs.flatMap((i) => (i.reuse !== null && i.reuse.length === index.dim ? [{ seq: i.seq, version: i.version, vector: i.reuse }] : []))
    const toEmbed = inputs.filter((i) => i.reuse === null || i.reuse.length !== index.dim)
    const vectors = yield* embedder.embedDocuments(toEmbed.map((i) => i.text))
    const rows = [...copies, ...toEmbed.map((i, k) => ({ seq: i.seq, version: i.version, vector: vectors[k] as Float32Array }))]
    yield* writeVectors(sql, index.model, rows)
    for (const r of rows) index.add(r.seq, r.version, r.vector)
    yield* index.refresh(sql)
    return {
      embedded: toEmbed.length,
      copied: copies.length,
      remaining: index.progress().pending,
      ms: Math.round(performance.now() - t0)
    } satisfies CatchUpRound
  })
