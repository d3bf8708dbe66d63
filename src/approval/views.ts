/**
 * Loading and rendering the rule page: called by the page route (src/http/routes/approval.ts)
 * after the scope-check pipeline, and by the form handlers for the page a post lands on.
 */
import { Effect } from "effect"
import { AppConfig } from "../config/config.js"
import { ScopeStore } from "../db/scope-store.js"
import { scopeOfRuleId } from "../contracts/ids.js"
import { todayIn } from "../contracts/time.js"
import { clockwork } from "./context.js"
import type { Viewer } from "./layout.js"
import type { Outcome } from "./outcome.js"
import { grantNames, ruleDetail } from "./queries.js"
import { rulePage } from "./rule-page.js"
import { pendingRuleLinks, ruleLinksSection } from "./structure-view.js"

/** The rule page of `ruleId` for the viewer, or undefined when the rule does not exist. */
export const loadRulePage = (
  ruleId: string,
  o: { readonly viewer: Viewer; readonly canDecide: boolean; readonly canRedact?: boolean; readonly outcome: Outcome | null }
) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const store = yield* ScopeStore
    const clock = yield* clockwork
    const today = yield* todayIn(config.file.zone)
    const scope = scopeOfRuleId(ruleId)
    const detail = yield* store.read(scope, ({ sql }) => ruleDetail(sql, ruleId, today))
    if (detail === undefined) return undefined
    const links = yield* store.read(scope, ({ sql }) => pendingRuleLinks(sql, ruleId, config.file.public_url))
    const names = yield* grantNames
    return rulePage({
      detail, ruleId, viewer: o.viewer, canDecide: o.canDecide, seesRedactions: o.canDecide || o.canRedact === true, names, clock,
      outcome: o.outcome,
      pendingLinks: ruleLinksSection(o.viewer, o.canDecide, ruleId, links, clock, o.outcome)
    })
  })
