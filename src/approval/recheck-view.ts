/**
 * The sections of the recheck page: per scope, the confirmed rules due for recheck (oldest first),
 * or why the scope cannot be read (locked). Shared by the page and a refused bulk review from it.
 */
import { Effect } from "effect"
import { AppConfig } from "../config/config.js"
import { ScopeStore } from "../db/scope-store.js"
import { dueForRecheck } from "../search/due-for-recheck.js"
import { clockwork } from "./context.js"
import type { RecheckSection } from "./recheck-page.js"

export const loadRecheckSections = (scopes: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const store = yield* ScopeStore
    const config = yield* AppConfig
    const clock = yield* clockwork
    const recheck = { zone: config.file.zone, recheckAfterDays: config.file.recheck_after_days, nowMs: clock.nowMs }
    const sections: Array<RecheckSection> = []
    for (const scope of scopes) {
      const read = yield* Effect.either(store.read(scope, ({ sql }) => dueForRecheck(sql, recheck)))
      if (read._tag === "Right") sections.push({ scope, unavailable: null, due: read.right })
      else if (read.left._tag === "ScopeLocked") sections.push({ scope, unavailable: read.left.message, due: [] })
      else return yield* read.left
    }
    return { sections, recheckAfterDays: config.file.recheck_after_days }
  })
