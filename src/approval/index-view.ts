/**
 * The approval index's data: per scope its counts, a page of open proposals with their stored
 * near-duplicate and conflict marks, the rules adopted today, how many are due for recheck and
 * the structure section (a locked scope is named with its notice). Read by GET /approval and by
 * a refused bulk form, which answers the index itself.
 */
import { Effect } from "effect"
import { AppConfig } from "../config/config.js"
import { todayIn } from "../contracts/time.js"
import { ScopeStore } from "../db/scope-store.js"
import { clockwork } from "./context.js"
import { ADOPTED_SHOWN, PAGE_SIZE, type ScopeSection } from "./index-page.js"
import { dueForRecheck } from "../search/due-for-recheck.js"
import { indexMarks } from "./marks.js"
import { adoptedOn, openProposals, statusCounts } from "./queries.js"
import { structureSection } from "./structure-page.js"
import { pendingOf } from "./structure-view.js"

/** The sections of `scopes` at proposal page `page`. */
export const loadIndexSections = (scopes: ReadonlyArray<string>, page: number) =>
  Effect.gen(function*() {
    const store = yield* ScopeStore
    const config = yield* AppConfig
    const clock = yield* clockwork
    const today = yield* todayIn(config.file.zone)
    const recheck = { zone: config.file.zone, recheckAfterDays: config.file.recheck_after_days, nowMs: clock.nowMs }
    const sections: Array<ScopeSection> = []
    for (const scope of scopes) {
      const read = yield* Effect.either(store.read(scope, ({ sql }) =>
        Effect.gen(function*() {
          const listed = yield* Effect.all({
            counts: statusCounts(sql),
            proposals: openProposals(sql, PAGE_SIZE, (page - 1) * PAGE_SIZE),
            adopted: adoptedOn(sql, today, ADOPTED_SHOWN),
            pending: pendingOf(sql, scope, config.file.public_url),
            due: dueForRecheck(sql, recheck)
          })
          return { ...listed, ...yield* indexMarks(sql, listed.proposals.map((p) => p.rule_id)) }
        })))
      if (read._tag === "Left") {
        if (read.left._tag !== "ScopeLocked") return yield* read.left
        sections.push({ scope, unavailable: read.left.message, counts: { proposed: 0, confirmed: 0, superseded: 0, rejected: 0 }, proposals: [], duplicates: new Map(), conflicts: new Map(), adopted: [], due: 0, page, structure: null })
        continue
      }
      const { counts, proposals, duplicates, conflicts, adopted, pending, due } = read.right
      sections.push({ scope, unavailable: null, counts, proposals, duplicates, conflicts, adopted, due: due.length, page, structure: structureSection(scope, pending, clock) })
    }
    return { sections, clock, today }
  })
