/**
 * The seam for search stages b (local embeddings) and c (reranker) (architecture.md §7.8).
 * Each reports ran | off | failed | budget | not-allowed; not running is never an error.
 *
 *   interface SearchStage {
 *     name: "b" | "c"
 *     availability(scope) → StageState | null          null: it would run for that scope
 *     timeoutMs                                         each run is bounded by it (search.ts)
 *     start({ text, deadline }) → Effect<request>       stage b begins embedding the question here
 *   }
 *   stage b request: run({ scope, db, includeProposals }) → Effect<StageOutcome<SemanticHit[]>>
 *   stage c request: run({ scope, candidates })          → Effect<StageOutcome<Map<key, score>>>
 *
 * search() calls start once per search (before stage a, so b embeds while a runs) and run once
 * per scope; interruption of the search's fiber is the stop signal (the §7.8 `signal`). A stage
 * without `start` only reports its availability (a test's stand-in); null then reads as ran.
 *
 * The stages reach search() through the SearchStages layer (the design card's SearchStages): the
 * live layer (stages-live.ts: SearchStagesLive) builds them from the configuration; a test provides other stages
 * (one that fails, times out or is off) without touching the configuration. A stage that throws
 * — in availability, start or run — is failed with reason "internal error" and the answer is
 * that of stage a (or a+b).
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Context, type Effect } from "effect"
import type { StageState } from "../domain/search-schemas.js"
import type { SemanticHit } from "./semantic/stage-b.js"
import type { SemanticStatus } from "./semantic/live.js"

export const OFF: StageState = { state: "off", duration_ms: null, reason: "disabled in config" }
export const FAILED_INTERNAL: StageState = { state: "failed", duration_ms: null, reason: "internal error" }

export interface StageQuery {
  /** the question as stages b and c see it: the request's text, else its terms joined by spaces */
  readonly text: string
  /** Date.now() instant by which the stage's work for this search should be done */
  readonly deadline: number
}

/** How one run of a stage for one scope ended: ran with its value, or failed / budget with a reason. */
export type StageOutcome<A> =
  | { readonly state: "ran"; readonly duration_ms: number; readonly value: A }
  | { readonly state: "failed" | "budget" | "off" | "not-allowed"; readonly duration_ms: number | null; readonly reason: string }

export interface StageBRequest {
  /** stage b's pool for one scope: current rule versions near the question, best first */
  readonly run: (input: {
    readonly scope: string
    readonly db: SqlClient
    readonly includeProposals: boolean
  }) => Effect.Effect<StageOutcome<ReadonlyArray<SemanticHit>>>
}

export interface StageCCandidate {
  /** the head's rule id */
  readonly key: string
  /** what is sent (ruleEmbeddingText of the head's version) */
  readonly text: string
}

export interface StageCRequest {
  /** scores in [0, 1] by key for the candidates the provider scored */
  readonly run: (input: {
    readonly scope: string
    readonly candidates: ReadonlyArray<StageCCandidate>
  }) => Effect.Effect<StageOutcome<ReadonlyMap<string, number>>>
}

interface StageBase {
  /** The state of the stage for a scope before it runs, or null when it would run. */
  readonly availability: (scope: string) => StageState | null
  /** a run that takes longer is failed with the stage's timeout reason (defaults in search.ts) */
  readonly timeoutMs?: number
}

export interface StageB extends StageBase {
  readonly name: "b"
  readonly start?: (query: StageQuery) => Effect.Effect<StageBRequest>
}

export interface StageC extends StageBase {
  readonly name: "c"
  /** search.reranker.threshold: heads below it are dropped where stage c ran (default 0) */
  readonly threshold?: number
  readonly start?: (query: StageQuery) => Effect.Effect<StageCRequest>
}

export type SearchStage = StageB | StageC

/** The stages b and c of this process (architecture.md §7.8), and stage b's vectors when it has any. */
export interface SearchStagesShape {
  readonly stages: ReadonlyArray<SearchStage>
  /** the live stage b's vectors: progress per scope (GET /ops/status) and the catch-up's wake-up */
  readonly vectors?: SemanticVectorsHandle
}

export interface SemanticVectorsHandle {
  /** the model's state and every allowed scope's vectors (total, embedded, pending) */
  readonly status: Effect.Effect<SemanticStatus>
  /** a rule of the scope was written: its catch-up runs once the writer's transaction ends */
  readonly wake: (scope: string) => Effect.Effect<void>
  /** waits until the model opened (or failed) and, for a scope, until its vectors are caught up (tests, benches) */
  readonly settled: (scope?: string) => Effect.Effect<void>
}

export class SearchStages extends Context.Tag("Groundnote/SearchStages")<SearchStages, SearchStagesShape>() {}

export const stageNamed = <N extends SearchStage["name"]>(stages: ReadonlyArray<SearchStage>, name: N) =>
  stages.find((s): s is Extract<SearchStage, { readonly name: N }> => s.name === name)

/** The availability of a stage for a scope; no stage is off, a stage that throws has failed (never the search). */
export const availabilityOf = (stage: SearchStage | undefined, scope: string): StageState | null => {
  if (stage === undefined) return OFF
  try {
    return stage.availability(scope)
  } catch {
    return FAILED_INTERNAL
  }
}

/** The state a stage reports for a scope from its availability alone (a stage that would run: ran). */
export const stageState = (stages: ReadonlyArray<SearchStage>, name: SearchStage["name"], scope: string): StageState =>
  availabilityOf(stageNamed(stages, name), scope) ?? { state: "ran", duration_ms: null, reason: null }

/**
 * One state for the response from the states of its scopes (docs/decisions.md, gaps.md §11 Stages b and c):
 * failed first (something did not work), then budget, then ran (the stage shaped at least one
 * scope's answer), then not-allowed, then off. The reason is that of the first scope in request
 * order with the chosen state; duration_ms the sum of the scopes' durations (null when none has one).
 */
export const combineStates = (states: ReadonlyArray<StageState>): StageState => {
  const order: ReadonlyArray<StageState["state"]> = ["failed", "budget", "ran", "not-allowed", "off"]
  const state = order.find((s) => states.some((x) => x.state === s)) ?? "off"
  const first = states.find((x) => x.state === state)
  if (first === undefined) return OFF
  const durations = states.filter((x) => x.state === state && x.duration_ms !== null).map((x) => x.duration_ms as number)
  return { state, duration_ms: durations.length === 0 ? null : durations.reduce((a, b) => a + b, 0), reason: first.reason }
}
