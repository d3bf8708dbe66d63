/**
 * The one composition of the design card's services (ServicesLive): Config, Clock, ScopeStore,
 * OpsStore, JwtVerifier, RateLimiter, SearchStages and ModelOutput, with the lexical index, the
 * RuleIndex port the writers use, the redaction ledger's check of a scope file as it opens (the
 * ScopeOpenCheck port of ScopeStore), the ApprovalPolicy port intake() uses, the one BackupLock of
 * backup run, probe and verify, the ReadPool where searches and exports run and the public
 * listener's Admission control. main.ts, the tests' support and the benches build the service
 * from it; a test replaces any one of them by passing its own layer (a local key set, a limiter, a
 * failing stage b, a TestClock) instead of mocking a module.
 */
import { type Clock, Effect, Layer } from "effect"
import { type JwtVerifier, JwtVerifierLive } from "./auth/jwt.js"
import { BackupLock } from "./backup/lock.js"
import { AppConfig, type AppConfigShape } from "./config/config.js"
import { ApprovalPolicyLive } from "./decision/policy/live.js"
import { StructurePolicyLive } from "./decision/policy/structure-live.js"
import { OpsStore } from "./db/ops-store.js"
import { ScopeOpenCheck } from "./db/scope-open-check.js"
import { ScopeStore } from "./db/scope-store.js"
import type { ApprovalPolicy } from "./domain/approval-policy.js"
import type { StructurePolicy } from "./graph/structure-policy.js"
import { type InFlight, InFlightLive } from "./read-pool/in-flight.js"
import { type ReadPool, ReadPoolLive } from "./read-pool/pool.js"
import type { RuleIndex } from "./domain/rule-index.js"
import { ledgerOpenCheck } from "./redaction/ledger.js"
import { LexicalIndex, LexicalIndexLive } from "./search/lexical/index.js"
import { RuleIndexLive, ruleIndexOf } from "./search/rule-index.js"
import type { SearchStages } from "./search/stage.js"
import { SearchStagesLive } from "./search/stages-live.js"
import { type ModelOutput, ModelOutputLive } from "./security/model-output.js"
import { type Admission, AdmissionLive } from "./transport/admission.js"
import { type RateLimiter, RateLimiterLive } from "./transport/rate-limit.js"

/** Every service a request of any channel may need. */
export type Services =
  | AppConfig
  | ScopeStore
  | OpsStore
  | LexicalIndex
  | RuleIndex
  | ApprovalPolicy
  | StructurePolicy
  | JwtVerifier
  | RateLimiter
  | SearchStages
  | ModelOutput
  | BackupLock
  | ReadPool
  | InFlight
  | Admission

/** A layer to use instead of the live one. */
export interface ServiceOverrides {
  readonly jwt?: Layer.Layer<JwtVerifier, never, AppConfig>
  readonly rateLimiter?: Layer.Layer<RateLimiter, never, AppConfig>
  readonly searchStages?: Layer.Layer<SearchStages, never, AppConfig | ScopeStore | OpsStore>
  readonly modelOutput?: Layer.Layer<ModelOutput>
  readonly lexicalIndex?: Layer.Layer<LexicalIndex, never, AppConfig>
  /** where searches and exports run (default: worker threads, ReadPoolLive; ReadPoolInThread: the calling thread) */
  readonly readPool?: Layer.Layer<ReadPool, never, AppConfig | InFlight>
  /** the public listener's admission control (default AdmissionLive; admissionLayer(options) for other bounds) */
  readonly admission?: Layer.Layer<Admission>
  /** Effect's Clock for everything the services run (default: the runtime's own) */
  readonly clock?: Clock.Clock
}

/**
 * ScopeStore with its open check: a scope file opens level with the redaction ledger, or locked
 * (gaps.md §12 "Nothing comes back"); the replay keeps the lexical rows of `lexical` current.
 */
export const ScopeStoreLive = (lexical: Layer.Layer<LexicalIndex, never, AppConfig> = LexicalIndexLive) =>
  ScopeStore.Default.pipe(Layer.provide(
    Layer.effect(ScopeOpenCheck, Effect.map(Effect.all([OpsStore, LexicalIndex]), ([ops, lex]) => ledgerOpenCheck(ops, ruleIndexOf(lex))))
      .pipe(Layer.provide(Layer.merge(OpsStore.Default, lexical)))
  ))

export const ServicesLive = (config: AppConfigShape, overrides: ServiceOverrides = {}) => {
  const lexical = overrides.lexicalIndex ?? LexicalIndexLive
  const scopeStore = ScopeStoreLive(lexical)
  // stage b's catch-up reads the scope files and is woken by the rule writers through RuleIndex
  const stages = (overrides.searchStages ?? SearchStagesLive).pipe(Layer.provideMerge(Layer.merge(scopeStore, OpsStore.Default)))
  const services = Layer.mergeAll(
    stages,
    BackupLock.Default,
    // the approval policy (intake's port) adopts with the rule index
    ApprovalPolicyLive.pipe(Layer.provideMerge(RuleIndexLive.pipe(Layer.provideMerge(lexical), Layer.provide(stages)))),
    // the structure writers' port: the policy adopts agents' entity and link changes in modes A/B
    StructurePolicyLive,
    overrides.rateLimiter ?? RateLimiterLive,
    overrides.jwt ?? JwtVerifierLive,
    overrides.modelOutput ?? ModelOutputLive,
    (overrides.readPool ?? ReadPoolLive).pipe(Layer.provideMerge(InFlightLive)),
    overrides.admission ?? AdmissionLive
  ).pipe(Layer.provideMerge(Layer.succeed(AppConfig, config)))
  return overrides.clock === undefined ? services : Layer.provide(services, Layer.setClock(overrides.clock))
}
