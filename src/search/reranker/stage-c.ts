/**
 * Stage c for one scope: gate, key, budget, call, outcome — in that order, so no text leaves the
 * host unless the scope allows the provider, and no call is made that was not recorded in
 * ops.sqlite first. The result is a state of architecture.md §6.5 StageState, never an error.
 *
 *   runStageC(deps, { scope, query, documents }) → Effect<StageCResult>
 *   applyRerank(keys, scores, threshold)         → { kept, best }   (the threshold of §6.5)
 *
 * documents are the fused heads of the scope, best first, each with its key (rule id) and text
 * (ruleEmbeddingText); only the first RERANK_TOP are sent, each cut to MAX_DOCUMENT_CHARS, the
 * query to MAX_QUERY_CHARS. `reason` is one of the fixed texts of STAGE_C_REASONS (it reaches /v1
 * and MCP results) plus the HTTP status for an http error.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect, type Redacted } from "effect"
import type { ConfigFile } from "../../config/schema.js"
import { reserveRerankerSpend } from "../../db/reranker-usage.js"
import { estimateCostUsd, estimateTokens } from "./cost.js"
import { GATE_REASONS, rerankerGate } from "./gate.js"
import type { RerankerProvider } from "./provider.js"

/** The heads per scope that stage c reranks (architecture.md §7.8). */
export const RERANK_TOP = 50
export const MAX_DOCUMENT_CHARS = 2_000
export const MAX_QUERY_CHARS = 2_000

export const STAGE_C_REASONS = {
  ...GATE_REASONS,
  noKey: "no TYPESAFE_API_KEY in the environment",
  badUrl: "the reranker URL is not usable",
  budget: "monthly reranker budget exhausted",
  notRecorded: "the reranker spend could not be recorded",
  timeout: "reranker timed out",
  httpError: (status: number) => `reranker answered HTTP ${status}`,
  malformed: "reranker answer malformed",
  unreachable: "reranker unreachable"
} as const

/** Every reason text stage c can report (for the model-output server-field list). */
export const STAGE_C_REASON = /^(disabled in config|provider typesafe is not allowed for this scope|reranker is not enabled for this scope|no TYPESAFE_API_KEY in the environment|the reranker URL is not usable|monthly reranker budget exhausted|the reranker spend could not be recorded|reranker timed out|reranker answered HTTP [1-5][0-9][0-9]|reranker answer malformed|reranker unreachable)$/

export type StageCResult =
  | { readonly state: "ran"; readonly duration_ms: number; readonly scores: ReadonlyMap<string, number> }
  | { readonly state: "off" | "not-allowed" | "budget" | "failed"; readonly duration_ms: number | null; readonly reason: string }

export interface StageCDeps {
  readonly file: Pick<ConfigFile, "search" | "scopes" | "zone">
  /** TYPESAFE_API_KEY (AppConfig.env.typesafeApiKey) */
  readonly apiKey: Redacted.Redacted<string> | null
  /** the provider, or why none could be made (an unusable TYPESAFE_BASE_URL) */
  readonly provider: RerankerProvider | { readonly error: string }
  /** ops.sqlite (OpsStore.sql) */
  readonly opsSql: SqlClient
}

export interface StageCRequest {
  readonly scope: string
  readonly query: string
  readonly documents: ReadonlyArray<{ readonly key: string; readonly text: string }>
}

export const runStageC = (deps: StageCDeps, req: StageCRequest): Effect.Effect<StageCResult> =>
  Effect.gen(function*() {
    const gate = rerankerGate(deps.file, req.scope)
    if (gate._tag !== "allowed") return { state: gate._tag, duration_ms: null, reason: gate.reason }
    if (deps.apiKey === null) return { state: "failed", duration_ms: null, reason: STAGE_C_REASONS.noKey }
    const provider = deps.provider
    if ("error" in provider) return { state: "failed", duration_ms: null, reason: STAGE_C_REASONS.badUrl }
    const t0 = performance.now()
    const elapsed = () => Math.round(performance.now() - t0)
    const sent = req.documents.slice(0, RERANK_TOP)
    if (sent.length === 0) return { state: "ran", duration_ms: 0, scores: new Map() }
    const query = req.query.slice(0, MAX_QUERY_CHARS)
    const documents = sent.map((d) => d.text.slice(0, MAX_DOCUMENT_CHARS))
    const tokens = estimateTokens(query, documents)
    const reservation = yield* reserveRerankerSpend(deps.opsSql, deps.file.zone, gate.reranker.monthly_cap_usd, {
      scope: req.scope, provider: provider.name, model: provider.model, documents: documents.length, tokens,
      costUsd: estimateCostUsd(provider.model, tokens)
    }).pipe(Effect.either)
    if (reservation._tag === "Left") return { state: "failed", duration_ms: elapsed(), reason: STAGE_C_REASONS.notRecorded }
    if (reservation.right._tag === "exhausted") return { state: "budget", duration_ms: null, reason: STAGE_C_REASONS.budget }
    const outcome = yield* provider.rerank({ query, documents, topN: documents.length })
    switch (outcome._tag) {
      case "ok": {
        const scores = new Map<string, number>()
        for (const r of outcome.results) {
          const key = sent[r.index]?.key
          if (key !== undefined) scores.set(key, r.score)
        }
        return { state: "ran", duration_ms: elapsed(), scores }
      }
      case "timeout": return { state: "failed", duration_ms: elapsed(), reason: STAGE_C_REASONS.timeout }
      case "http-error": return { state: "failed", duration_ms: elapsed(), reason: STAGE_C_REASONS.httpError(outcome.status) }
      case "malformed": return { state: "failed", duration_ms: elapsed(), reason: STAGE_C_REASONS.malformed }
      case "unreachable": return { state: "failed", duration_ms: elapsed(), reason: STAGE_C_REASONS.unreachable }
    }
  })

/**
 * The heads stage c keeps: those with a score ≥ threshold, by score descending (ties keep the
 * fused order); best = the highest score (null when nothing was scored). An empty `kept` with
 * stage c ran is abstained below-reranker-threshold (architecture.md §6.5).
 */
export const applyRerank = (keys: ReadonlyArray<string>, scores: ReadonlyMap<string, number>, threshold: number) => {
  const scored = keys.flatMap((key, position) => {
    const score = scores.get(key)
    return score === undefined ? [] : [{ key, score, position }]
  })
  const best = scored.reduce<number | null>((b, s) => Math.max(b ?? 0, s.score), null)
  const kept = scored.filter((s) => s.score >= threshold)
    .sort((x, y) => y.score - x.score || x.position - y.position)
    .map(({ key, score }) => ({ key, score }))
  return { kept, best }
}
