/**
 * The seam for search stages b (local embeddings) and c (reranker) (architecture.md §7.8).
 * Both report ran | off | failed | budget | not-allowed; not running is never an error.
 * Until their issue is built a stage reports `off` ("disabled in config") when the config
 * switches it off, and `failed` ("not available in this build") when the config switches it on.
 *
 * The stages reach search() through the SearchStages layer (the design card's SearchStages): the
 * live layer builds them from the configuration; a test provides other stages (one that fails,
 * times out or is off) without touching the configuration.
 */
import { Context, Effect, Layer } from "effect"
import { AppConfig, type AppConfigShape } from "../config/config.js"
import type { StageState } from "../domain/search-schemas.js"

export interface SearchStage {
  readonly name: "b" | "c"
  /** The state of the stage for a scope before it runs, or null when it would run. */
  readonly availability: (scope: string) => StageState | null
}

export const OFF: StageState = { state: "off", duration_ms: null, reason: "disabled in config" }
export const NOT_BUILT: StageState = { state: "failed", duration_ms: null, reason: "not available in this build" }

const notAllowed = (provider: string): StageState => ({
  state: "not-allowed", duration_ms: null, reason: `provider ${provider} is not allowed for this scope`
})

/** providers_allowed is checked before any text could leave the host. */
export const stagesOf = (config: AppConfigShape): ReadonlyArray<SearchStage> => {
  const scopeConfig = (scope: string) => config.file.scopes.find((s) => s.name === scope)
  return [
    {
      name: "b",
      availability: (scope) => {
        if (!config.file.search.semantic.enabled) return OFF
        return scopeConfig(scope)?.providers_allowed.includes("local") === true ? NOT_BUILT : notAllowed("local")
      }
    },
    {
      name: "c",
      availability: (scope) => {
        if (!config.file.search.reranker.enabled) return OFF
        const s = scopeConfig(scope)
        return s?.reranker === true && s.providers_allowed.includes("typesafe") ? NOT_BUILT : notAllowed("typesafe")
      }
    }
  ]
}

/** The stages b and c of this process (architecture.md §7.8). */
export interface SearchStagesShape {
  readonly stages: ReadonlyArray<SearchStage>
}

export class SearchStages extends Context.Tag("Groundnote/SearchStages")<SearchStages, SearchStagesShape>() {}

export const FAILED_INTERNAL: StageState = { state: "failed", duration_ms: null, reason: "internal error" }

/** The state a stage reports for a scope; a stage that throws has failed (never the search). */
export const stageState = (stages: ReadonlyArray<SearchStage>, name: SearchStage["name"], scope: string): StageState => {
  const stage = stages.find((s) => s.name === name)
  if (stage === undefined) return OFF
  try {
    return stage.availability(scope) ?? { state: "ran", duration_ms: null, reason: null }
  } catch {
    return FAILED_INTERNAL
  }
}

export const SearchStagesLive: Layer.Layer<SearchStages, never, AppConfig> = Layer.effect(
  SearchStages,
  Effect.map(AppConfig, (config) => ({ stages: stagesOf(config) }))
)
