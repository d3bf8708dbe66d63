/**
 * The live SearchStages layer (architecture.md §7.8): stage b (semantic/live.ts) and stage c
 * (reranker/live.ts) built once from the configuration and the environment. Scoped: the model's
 * worker thread and the catch-up fibers end with the layer.
 *
 *   searchStagesLayer(options?) → Layer<SearchStages, never, AppConfig | ScopeStore | OpsStore>
 *   SearchStagesLive = searchStagesLayer()
 *
 * options exist for tests and benches (a short query timeout, a quick retry, a provider of their
 * own); the service uses the defaults.
 */
import { Effect, Layer } from "effect"
import { AppConfig } from "../config/config.js"
import { OpsStore } from "../db/ops-store.js"
import type { ScopeStore } from "../db/scope-store.js"
import { makeRerankerStage } from "./reranker/live.js"
import type { RerankerProvider } from "./reranker/provider.js"
import { makeSemanticStage, type SemanticStageOptions } from "./semantic/live.js"
import { SearchStages } from "./stage.js"

export interface SearchStagesOptions {
  readonly semantic?: SemanticStageOptions
  /** stage c's provider instead of the typesafe one */
  readonly rerankerProvider?: RerankerProvider
}

export const searchStagesLayer = (options: SearchStagesOptions = {}): Layer.Layer<SearchStages, never, AppConfig | ScopeStore | OpsStore> =>
  Layer.scoped(SearchStages, Effect.gen(function*() {
    const config = yield* AppConfig
    const ops = yield* OpsStore
    const b = yield* makeSemanticStage(config.file, config.env.dataDir, options.semantic)
    const c = makeRerankerStage({
      file: config.file, apiKey: config.env.typesafeApiKey, baseUrl: config.env.typesafeBaseUrl, opsSql: ops.sql,
      ...(options.rerankerProvider === undefined ? {} : { provider: options.rerankerProvider })
    })
    return { stages: [b.stage, c], ...(b.vectors === null ? {} : { vectors: b.vectors }) }
  }))

export const SearchStagesLive = searchStagesLayer()
