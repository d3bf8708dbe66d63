/**
 * Stage c as the live SearchStages layer builds it (architecture.md §7.8, gaps.md §11):
 *
 *   makeRerankerStage({ file, apiKey, baseUrl, opsSql, provider? }) → StageC
 *
 * The provider is made once (the typesafe provider at TYPESAFE_BASE_URL, or the one given, e.g.
 * a test's). availability() answers everything that is known before a search from the
 * configuration and the environment — off, not-allowed (checked before any text could leave the
 * host), no key, an unusable URL — so search() starts no run where nothing may be sent.
 * run() is runStageC (stage-c.ts): gate again, budget reserved in ops.sqlite before the call,
 * the call, its outcome as a state. The threshold of search.reranker replaces min_coverage where
 * stage c ran (search.ts).
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect, type Redacted } from "effect"
import type { ConfigFile } from "../../config/schema.js"
import { OFF, type StageC, type StageOutcome } from "../stage.js"
import { rerankerGate } from "./gate.js"
import type { RerankerProvider } from "./provider.js"
import { runStageC, STAGE_C_REASONS } from "./stage-c.js"
import { makeTypesafeProvider, TYPESAFE_BASE_URL_ENV, typesafeBaseUrl } from "./typesafe.js"

/** search()'s bound on one run beyond timeout_ms: the budget reservation in ops.sqlite and reading the answer */
export const RUN_GRACE_MS = 1_000

export interface RerankerStageDeps {
  readonly file: Pick<ConfigFile, "search" | "scopes" | "zone">
  /** TYPESAFE_API_KEY */
  readonly apiKey: Redacted.Redacted<string> | null
  /** TYPESAFE_BASE_URL as set (undefined: the default) */
  readonly baseUrl: string | undefined
  /** ops.sqlite (OpsStore.sql) */
  readonly opsSql: SqlClient
  /** instead of the typesafe provider (tests) */
  readonly provider?: RerankerProvider
}

export const makeRerankerStage = (deps: RerankerStageDeps): StageC => {
  const reranker = deps.file.search.reranker
  if (!reranker.enabled) return { name: "c", availability: () => OFF }
  const url = typesafeBaseUrl({ [TYPESAFE_BASE_URL_ENV]: deps.baseUrl })
  const provider: RerankerProvider | { readonly error: string } = deps.provider ??
    ("error" in url || deps.apiKey === null
      ? { error: "error" in url ? url.error : STAGE_C_REASONS.noKey }
      : makeTypesafeProvider({ baseUrl: url.url, apiKey: deps.apiKey, model: reranker.model, timeoutMs: reranker.timeout_ms }))
  const stageDeps = { file: deps.file, apiKey: deps.apiKey, provider, opsSql: deps.opsSql }
  return {
    name: "c",
    timeoutMs: reranker.timeout_ms + RUN_GRACE_MS,
    threshold: reranker.threshold,
    availability: (scope) => {
      const gate = rerankerGate(deps.file, scope)
      if (gate._tag !== "allowed") return { state: gate._tag, duration_ms: null, reason: gate.reason }
      if (deps.apiKey === null) return { state: "failed", duration_ms: null, reason: STAGE_C_REASONS.noKey }
      if ("error" in provider) return { state: "failed", duration_ms: null, reason: STAGE_C_REASONS.badUrl }
      return null
    },
    start: (query) =>
      Effect.succeed({
        run: ({ scope, candidates }) =>
          Effect.map(runStageC(stageDeps, { scope, query: query.text, documents: candidates }), (r): StageOutcome<ReadonlyMap<string, number>> =>
            r.state === "ran" ? { state: "ran", duration_ms: r.duration_ms, value: r.scores } : r)
      })
  }
}
