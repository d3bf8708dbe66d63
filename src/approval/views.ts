/**
 * Loading and rendering the pages: the viewer (identity, grant, csrf token), the clock, and the
 * pages that read a scope. Called by the page routes (src/http/routes/approval.ts) after the
 * scope-check pipeline, and by the decision route for the page a form post lands on.
 */
import { Clock, Effect, Redacted } from "effect"
import { csrfToken } from "../auth/csrf.js"
import { AppConfig } from "../config/config.js"
import { ScopeStore } from "../db/scope-store.js"
import { scopeOfRuleId } from "../domain/ids.js"
import { todayIn } from "../domain/time.js"
import type { Clockwork } from "./format.js"
import type { Viewer } from "./layout.js"
import type { Outcome } from "./outcome.js"
import { grantNames, ruleDetail } from "./queries.js"
import { rulePage } from "./rule-page.js"

export const viewerOf = (identity: string, grantId: string) =>
  Effect.map(AppConfig, (config): Viewer => ({
    identity,
    grantId,
    csrf: csrfToken(Redacted.value(config.env.sessionSecret), identity),
    canLogout: config.env.authMode === "dev-token"
  }))

export const clockwork = Effect.gen(function*() {
  const config = yield* AppConfig
  const nowMs = yield* Clock.currentTimeMillis
  return { nowMs, zone: config.file.zone } satisfies Clockwork
})

/** The rule page of `ruleId` for the viewer, or undefined when the rule does not exist. */
export const loadRulePage = (
  ruleId: string,
  o: { readonly viewer: Viewer; readonly canDecide: boolean; readonly outcome: Outcome | null }
) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const store = yield* ScopeStore
    const clock = yield* clockwork
    const today = yield* todayIn(config.file.zone)
    const scope = scopeOfRuleId(ruleId)
    const detail = yield* store.read(scope, ({ sql }) => ruleDetail(sql, ruleId, today))
    if (detail === undefined) return undefined
    const names = yield* grantNames
    return rulePage({ detail, ruleId, viewer: o.viewer, canDecide: o.canDecide, names, clock, outcome: o.outcome })
  })
