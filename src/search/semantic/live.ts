/**
 * Stage b as the live SearchStages layer builds it (architecture.md §7.8, gaps.md §11):
 *
 *   makeSemanticStage(file, dataDir, options?) → Effect<{ stage, vectors }, never, Scope | ScopeStore>
 *
 * - The model opens once, in the background, when the layer is built: the service answers at
 *   once; until the model is open stage b reports failed "semantic model is loading" (and it is
 *   not opened at all when no scope allows provider local: not-allowed everywhere). A model
 *   that cannot open (files missing, broken) gives stage b `failed` with its fixed reason on every
 *   search — never a failed layer; the detail with paths goes to the log and to GET /ops/status.
 * - One vector index per allowed scope (vector-index.ts), read lazily by the scope's catch-up
 *   fiber (the first wake-up: at start, or the first search of the scope); until it is read stage
 *   b reports failed "semantic vectors are loading" for that scope.
 * - One catch-up fiber per allowed scope writes vectors for every indexed rule version
 *   (catch-up.ts, in rounds). It wakes at start, after a rule write (wake(scope), called by the
 *   RuleIndex port inside the writer's transaction: its reads wait for the commit on the scope's
 *   one connection) and when a search sees pending versions. Searches never wait for it. A model
 *   change needs nothing extra: the new model's vectors are pending for every rule.
 * - start() embeds the question in a child fiber of the search (interrupted with it); run()
 *   joins it, refreshes the scope's index and answers semanticPool (stage-b.ts).
 */
import { Deferred, Duration, Effect, Either, Fiber, Option, Queue, Scope } from "effect"
import type { ConfigFile } from "../../config/schema.js"
import { ScopeStore } from "../../db/scope-store.js"
import type { StageState } from "../../domain/search-schemas.js"
import { OFF, type SemanticVectorsHandle, type StageB, type StageBRequest, type StageOutcome } from "../stage.js"
import { catchUpRound, DEFAULT_CATCH_UP_LIMIT } from "./catch-up.js"
import { modelDirOf } from "./check.js"
import { DEFAULT_QUERY_TIMEOUT_MS, type Embedder, openOnnxEmbedder } from "./embedder.js"
import { STAGE_B_REASONS } from "./errors.js"
import { semanticGate } from "./gate.js"
import { type KnnScorer, makeKnnScorer } from "./knn.js"
import type { SemanticModelId } from "./models.js"
import { type SemanticHit, semanticPool } from "./stage-b.js"
import { makeVectorIndex, type VectorIndex } from "./vector-index.js"

export interface SemanticStageOptions {
  /** the question's embedding (default 2000 ms) */
  readonly queryTimeoutMs?: number
  /** onnxruntime intra-op threads (default 1) */
  readonly threads?: number
  /** versions per catch-up round (default 32) */
  readonly catchUpLimit?: number
  /** wait after a failed catch-up round before the next try (default 60 000 ms) */
  readonly retryMs?: number
}

export interface ScopeVectorsStatus {
  readonly scope: string
  /** waiting: not read yet (no file yet, or not woken); loading: being read into memory; ready */
  readonly state: "waiting" | "loading" | "ready"
  /** current, not rejected rule versions (as of the last look) */
  readonly total: number | null
  /** of which have a vector of the model */
  readonly embedded: number | null
  readonly pending: number | null
  /** a catch-up round is running */
  readonly running: boolean
}

export interface SemanticStatus {
  readonly model: SemanticModelId
  readonly state: "loading" | "ready" | "failed"
  /** the fixed reason when failed (what searches report) */
  readonly reason: string | null
  /** what exactly is wrong, with paths (operator only: the ops socket and the log) */
  readonly detail: string | null
  readonly dim: number | null
  readonly scopes: ReadonlyArray<ScopeVectorsStatus>
}

type ModelState =
  | { readonly state: "loading" }
  | { readonly state: "ready"; readonly embedder: Embedder; readonly scorer: KnnScorer }
  | { readonly state: "failed"; readonly reason: string; readonly detail: string }

interface ScopeEntry {
  state: ScopeVectorsStatus["state"]
  index: VectorIndex | null
  running: boolean
  /** catch-up attempts finished (settled() waits for the next one) */
  attempts: number
  readonly signal: Queue.Queue<void>
}

const failed = (reason: string, duration_ms: number | null = null): StageState => ({ state: "failed", duration_ms, reason })

export const makeSemanticStage = (
  file: Pick<ConfigFile, "search" | "scopes">,
  dataDir: string,
  options: SemanticStageOptions = {}
): Effect.Effect<{ readonly stage: StageB; readonly vectors: SemanticVectorsHandle | null }, never, Scope.Scope | ScopeStore> =>
  Effect.gen(function*() {
    const semantic = file.search.semantic
    if (!semantic.enabled) return { stage: { name: "b", availability: () => OFF }, vectors: null }
    const store = yield* ScopeStore
    const layerScope = yield* Effect.scope
    const queryTimeoutMs = options.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS
    let model: ModelState = { state: "loading" }
    const modelSettled = yield* Deferred.make<void>()
    const scopes = new Map<string, ScopeEntry>()
    for (const s of file.scopes) {
      if (semanticGate(file, s.name)._tag === "allowed") {
        scopes.set(s.name, { state: "waiting", index: null, running: false, attempts: 0, signal: yield* Queue.sliding<void>(1) })
      }
    }
    if (scopes.size === 0) {
      // no scope allows provider local: every search reports not-allowed, the model (GBs) stays unloaded
      yield* Effect.logInfo("stage b: no scope allows provider local; the model is not loaded")
      const gate = (scope: string): StageState => {
        const g = semanticGate(file, scope)
        return g._tag === "allowed" ? failed(STAGE_B_REASONS.loading) : { state: g._tag, duration_ms: null, reason: g.reason }
      }
      return { stage: { name: "b", availability: gate }, vectors: null }
    }
    const wakeNow = (scope: string): void => {
      const entry = scopes.get(scope)
      if (entry !== undefined && model.state === "ready") entry.signal.unsafeOffer(undefined)
    }

    /** Reads the scope's index once, then embeds rounds until nothing is pending. */
    const catchUp = (scope: string, entry: ScopeEntry, embedder: Embedder, scorer: KnnScorer) =>
      Effect.gen(function*() {
        const handle = yield* Effect.option(store.use(scope))
        // no file yet, or locked: the next wake-up tries again
        if (Option.isNone(handle)) return
        const sql = handle.value.sql
        entry.running = true
        if (entry.index === null) {
          entry.state = "loading"
          const index = yield* makeVectorIndex(embedder.model, embedder.dim, scorer)
          yield* index.refresh(sql)
          entry.index = index
          entry.state = "ready"
        }
        for (;;) {
          const round = yield* catchUpRound(sql, entry.index, embedder, { limit: options.catchUpLimit ?? DEFAULT_CATCH_UP_LIMIT })
          if (round.remaining === 0) break
          if (round.embedded + round.copied === 0) {
            yield* Effect.logWarning("stage b catch-up made no progress").pipe(Effect.annotateLogs({ scope, pending: round.remaining }))
            break
          }
        }
      }).pipe(Effect.ensuring(Effect.sync(() => {
        entry.running = false
        if (entry.state === "loading") entry.state = "waiting"
        entry.attempts++
      })))

    const loop = (scope: string, entry: ScopeEntry, embedder: Embedder, scorer: KnnScorer) =>
      Effect.forever(Effect.zipRight(
        Queue.take(entry.signal),
        catchUp(scope, entry, embedder, scorer).pipe(Effect.catchAll((e) =>
          Effect.logWarning("stage b catch-up failed").pipe(
            Effect.annotateLogs({ scope, error: e._tag, reason: e._tag === "EmbedFailed" ? e.detail : "sql failure" }),
            Effect.zipRight(Effect.sleep(options.retryMs ?? 60_000)),
            Effect.zipRight(Effect.sync(() => entry.signal.unsafeOffer(undefined)))
          )
        ))
      ))

    const open = Effect.gen(function*() {
      const t0 = performance.now()
      const opened = yield* openOnnxEmbedder({
        modelDir: modelDirOf(semantic, dataDir), model: semantic.model, queryTimeoutMs,
        ...(options.threads === undefined ? {} : { threads: options.threads })
      }).pipe(Scope.extend(layerScope), Effect.either)
      if (Either.isLeft(opened)) {
        model = { state: "failed", reason: opened.left.reason, detail: opened.left.detail }
        yield* Effect.logError("semantic model cannot be used").pipe(Effect.annotateLogs({ model: semantic.model, reason: opened.left.reason, detail: opened.left.detail }))
        return
      }
      const embedder = opened.right
      const scorer = yield* makeKnnScorer
      model = { state: "ready", embedder, scorer }
      yield* Effect.logInfo("semantic model loaded").pipe(
        Effect.annotateLogs({ model: semantic.model, dim: embedder.dim, ms: Math.round(performance.now() - t0), knn: scorer.kind })
      )
      for (const [scope, entry] of scopes) {
        yield* Effect.forkIn(loop(scope, entry, embedder, scorer), layerScope)
        entry.signal.unsafeOffer(undefined)
      }
    }).pipe(Effect.ensuring(Deferred.succeed(modelSettled, undefined)))
    yield* Effect.forkIn(open, layerScope)

    const stage: StageB = {
      name: "b",
      timeoutMs: queryTimeoutMs,
      availability: (scope) => {
        const gate = semanticGate(file, scope)
        if (gate._tag !== "allowed") return { state: gate._tag, duration_ms: null, reason: gate.reason }
        if (model.state === "loading") return failed(STAGE_B_REASONS.loading)
        if (model.state === "failed") return failed(model.reason)
        const entry = scopes.get(scope)
        if (entry === undefined) return failed(STAGE_B_REASONS.vectorsLoading)
        if (entry.index === null) {
          wakeNow(scope)
          return failed(STAGE_B_REASONS.vectorsLoading)
        }
        return null
      },
      start: (query) =>
        Effect.gen(function*() {
          const ready = model
          if (ready.state !== "ready") {
            const reason = ready.state === "failed" ? ready.reason : STAGE_B_REASONS.loading
            return { run: () => Effect.succeed({ state: "failed", duration_ms: null, reason }) } satisfies StageBRequest
          }
          // the stage's own time: the question's embedding (while stage a runs) plus each scope's run
          const fiber = yield* Effect.fork(Effect.timed(Effect.either(ready.embedder.embedQuery(query.text, { timeoutMs: Math.max(1, query.deadline - Date.now()) }))))
          return {
            run: ({ scope, db, includeProposals }) =>
              Effect.gen(function*() {
                const [took, embedded] = yield* Fiber.join(fiber)
                const t1 = performance.now()
                const embedMs = Duration.toMillis(took)
                const ms = () => Math.round(embedMs + performance.now() - t1)
                if (Either.isLeft(embedded)) return { state: "failed", duration_ms: ms(), reason: embedded.left.reason } satisfies StageOutcome<never>
                const vector = embedded.right
                const entry = scopes.get(scope)
                const index = entry?.index ?? null
                if (entry === undefined || index === null) return { state: "failed", duration_ms: ms(), reason: STAGE_B_REASONS.vectorsLoading } satisfies StageOutcome<never>
                const hits: ReadonlyArray<SemanticHit> = yield* Effect.orDie(semanticPool(db, index, vector, { includeProposals }))
                // versions without a vector yet (a write the catch-up has not seen): wake it, never wait
                if (index.progress().pending > 0 && !entry.running) wakeNow(scope)
                return { state: "ran", duration_ms: ms(), value: hits } satisfies StageOutcome<ReadonlyArray<SemanticHit>>
              })
          } satisfies StageBRequest
        })
    }

    const vectors: SemanticVectorsHandle = {
      status: Effect.sync((): SemanticStatus => ({
        model: semantic.model,
        state: model.state,
        reason: model.state === "failed" ? model.reason : null,
        detail: model.state === "failed" ? model.detail : null,
        dim: model.state === "ready" ? model.embedder.dim : null,
        scopes: [...scopes].map(([scope, e]) => {
          const p = e.index?.progress()
          return { scope, state: e.state, total: p?.total ?? null, embedded: p?.embedded ?? null, pending: p?.pending ?? null, running: e.running }
        })
      })),
      wake: (scope) => Effect.sync(() => wakeNow(scope)),
      settled: (scope) =>
        Effect.gen(function*() {
          yield* Deferred.await(modelSettled)
          const entry = scope === undefined ? undefined : scopes.get(scope)
          if (scope === undefined || entry === undefined || model.state !== "ready") return
          const before = entry.attempts
          wakeNow(scope)
          while (entry.attempts <= before || entry.running || (yield* Queue.size(entry.signal)) > 0) yield* Effect.sleep(5)
        })
    }
    return { stage, vectors }
  })
