/**
 * Stage b's candidates for one scope, in the shape of stage a's pool (stage-a.ts), so search()
 * filters them with the same code (validity on the target day, superseded heads followed,
 * proposals only when asked, relation and entity filters, dedupe by head):
 *
 *   semanticPool(sql, index, queryVector, { k?, includeProposals }) → Effect<Array<SemanticHit>, SqlError>
 *
 * The index is refreshed first (the increments since the last search, normally nothing), then
 * the k + 50 nearest current versions are read against the file: a hit whose rule has moved on to
 * a version without a vector yet, or was rejected, is left out, proposals unless asked; the first
 * k remain. rank_b is the cosine similarity.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import type { VectorIndex } from "./vector-index.js"
import { currentHeads } from "./vectors.js"

/** Stage a's pool size (architecture.md §7.4); stage b answers as many. */
export const SEMANTIC_POOL = 200
const SLACK = 50

export interface SemanticHit {
  readonly seq: number
  readonly rule_id: string
  readonly version: number
  readonly status: "confirmed" | "superseded" | "proposed"
  readonly valid_from: string
  readonly valid_until: string | null
  readonly rank_b: number
}

export const semanticPool = (
  sql: SqlClient,
  index: VectorIndex,
  query: Float32Array,
  options: { readonly k?: number; readonly includeProposals: boolean }
) =>
  Effect.gen(function*() {
    const k = options.k ?? SEMANTIC_POOL
    yield* index.refresh(sql)
    const hits = yield* index.search(query, k + SLACK)
    const heads = yield* currentHeads(sql, hits.map((h) => h.seq))
    const out: Array<SemanticHit> = []
    for (const h of hits) {
      const head = heads.get(h.seq)
      if (head === undefined || head.version !== h.version || head.status === "rejected") continue
      if (head.status === "proposed" && !options.includeProposals) continue
      out.push({ ...head, status: head.status, rank_b: h.score })
      if (out.length >= k) break
    }
    return out
  })
