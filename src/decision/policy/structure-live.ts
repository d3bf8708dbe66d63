/**
 * The policy behind the graph's StructurePolicy port (src/graph/structure-policy.ts): what the
 * structure writers run inside the agent's transaction (gaps.md §13). Picks the mode (a
 * structure change has class general: classify-structure.ts), classifies, counts today's
 * adoptions of the scope (rules and structure share the daily limit), decides and, when the
 * outcome is auto, adopts (adopt-structure.ts). The reasons of an adoption are its review's
 * reason; the reasons a change waits are in the writer's answer (policy). Composed once in
 * services.ts.
 */
import { Effect, Layer } from "effect"
import { AppConfig } from "../../config/config.js"
import { todayIn } from "../../contracts/time.js"
import { StructurePolicy, type StructureVerdict } from "../../graph/structure-policy.js"
import { adoptStructure } from "./adopt-structure.js"
import { classifyStructure, STRUCTURE_CLASS, structureOutcome } from "./classify-structure.js"
import { RULESET } from "./classify.js"
import { adoptedOn } from "./facts.js"
import { modeFor } from "./outcome.js"

export const StructurePolicyLive: Layer.Layer<StructurePolicy, never, AppConfig> = Layer.effect(
  StructurePolicy,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const approval = config.file.approval
    return {
      apply: (sql, p) =>
        Effect.gen(function*() {
          const mode = modeFor(approval, p.scope, STRUCTURE_CLASS)
          const classification = classifyStructure({
            kind: p.kind, texts: p.texts, forcedDuplicate: p.forcedDuplicate, subtree: p.subtree, largeSubtree: config.file.graph.large_subtree
          })
          const day = yield* todayIn(config.file.zone)
          const limit = approval?.daily_limit ?? 0
          const used = mode === "manual" ? 0 : yield* adoptedOn(sql, day, config.file.zone, Date.parse(p.now))
          const outcome = structureOutcome(classification, mode, mode === "manual" ? Number.POSITIVE_INFINITY : limit - used)
          const adoptedVersion = outcome.outcome === "auto"
            ? yield* adoptStructure(sql, { scope: p.scope, target: p.target, channel: p.channel, reason: outcome.reasons.join(" "), now: p.now })
            : null
          const verdict: StructureVerdict = {
            ruleset: RULESET,
            mode,
            outcome: outcome.outcome,
            exceptions: classification.exceptions.map((e) => e.exception),
            reasons: outcome.reasons,
            adoptedVersion
          }
          return verdict
        })
    }
  })
)
