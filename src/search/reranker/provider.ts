/**
 * Stage c's provider interface (architecture.md §7.8, gaps.md §11): one call reranks the
 * documents of one scope against the query. The call never fails: every way it can end is a
 * value the stage turns into a state (stage-c.ts).
 *
 *   interface RerankerProvider {
 *     name, model
 *     rerank({ query, documents, topN }) → Effect<RerankOutcome>
 *   }
 *
 * ok: results by document index, relevance_score in [0, 1], best first as the provider sent them;
 * timeout: no answer within timeout_ms (the request was aborted); http-error: a non-2xx status;
 * malformed: a 2xx answer that is not the wire format (not JSON, no results, an index out of
 * range or twice, a score outside [0, 1]); unreachable: no HTTP answer at all (refused, DNS, TLS).
 */
import type { Effect } from "effect"

export interface RerankRequest {
  readonly query: string
  readonly documents: ReadonlyArray<string>
  readonly topN: number
}

export type RerankOutcome =
  | { readonly _tag: "ok"; readonly results: ReadonlyArray<{ readonly index: number; readonly score: number }> }
  | { readonly _tag: "timeout"; readonly ms: number }
  | { readonly _tag: "http-error"; readonly status: number }
  | { readonly _tag: "malformed"; readonly detail: string }
  | { readonly _tag: "unreachable"; readonly detail: string }

export interface RerankerProvider {
  readonly name: "typesafe"
  readonly model: string
  readonly rerank: (request: RerankRequest) => Effect.Effect<RerankOutcome>
}
