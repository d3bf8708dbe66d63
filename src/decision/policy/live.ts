/**
 * The policy behind the domain's ApprovalPolicy port (src/domain/approval-policy.ts): what intake()
 * runs inside the proposal's transaction. Reads the facts of the proposal's source and scope,
 * classifies (classify.ts), picks the mode (config.approval), counts today's adoptions (a
 * calendar day in config.zone from the Clock), decides the outcome (outcome.ts), records the
 * classification and, when the outcome is auto, adopts (adopt.ts). Composed once in services.ts.
 */
import { Effect, Layer } from "effect"
import { AppConfig } from "../../config/config.js"
import { todayIn } from "../../contracts/time.js"
import { ApprovalPolicy, type PolicyVerdict } from "../../domain/approval-policy.js"
import { RuleIndex } from "../../domain/rule-index.js"
import { adopt } from "./adopt.js"
import { classify, RULESET } from "./classify.js"
import { adoptedOn, retractedRepeats, scopeFacts, sourceFacts } from "./facts.js"
import { decideOutcome, modeFor } from "./outcome.js"
import { recordClassification } from "./record.js"

const ids = (list: ReadonlyArray<string>): string => list.join(", ")

export const ApprovalPolicyLive: Layer.Layer<ApprovalPolicy, never, AppConfig | RuleIndex> = Layer.effect(
  ApprovalPolicy,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const index = yield* RuleIndex
    const approval = config.file.approval
    const ownDomains = approval?.own_domains ?? []
    return {
      apply: (sql, p) =>
        Effect.gen(function*() {
          const source = yield* sourceFacts(sql, p.request)
          const scope = yield* scopeFacts(sql, p.request, p.duplicates)
          const classification = classify({ proposal: p.request, source, ownDomains, scope })
          const mode = modeFor(approval, p.scope, classification.class)
          const day = yield* todayIn(config.file.zone)
          const limit = approval?.daily_limit ?? 0
          const used = mode === "manual" ? 0 : yield* adoptedOn(sql, day, config.file.zone, Date.parse(p.now))
          const holds: Array<string> = []
          if (scope.sameMeaning.length > 0) {
            holds.push(`Confirmed rule ${ids(scope.sameMeaning)} already says nearly the same: a person decides whether this is the same rule or replaces it.`)
          }
          const retracted = mode === "manual" ? [] : yield* retractedRepeats(sql, p.request, p.ruleId)
          if (retracted.length > 0) {
            holds.push(`The policy adopted the same statement from this source before (${ids(retracted)}) and it was retracted: a person decides.`)
          }
          // manual never adopts: the limit is no reason there
          const outcome = decideOutcome(classification, mode, mode === "manual" ? Number.POSITIVE_INFINITY : limit - used, holds)
          const reasons = [classification.classReason, ...outcome.reasons]
          const classificationId = yield* recordClassification(sql, {
            ruleId: p.ruleId, classification, mode, outcome: outcome.outcome, reasons, day, dailyLimit: limit, now: p.now
          })
          const adoptedVersion = outcome.outcome === "auto"
            ? yield* adopt(sql, index, { ruleId: p.ruleId, classificationId, mode, now: p.now })
            : null
          const verdict: PolicyVerdict = {
            ruleset: RULESET,
            class: classification.class,
            exceptions: classification.exceptions.map((e) => e.exception),
            mode,
            outcome: outcome.outcome,
            reasons,
            adoptedVersion
          }
          return verdict
        })
    }
  })
)
