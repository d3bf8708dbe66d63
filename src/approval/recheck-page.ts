/**
 * GET /approval/recheck[?scope=] (gaps.md §13 "Due for recheck"): per scope of the person's grant
 * (or the one asked for), the confirmed rules last reviewed more than recheck_after_days ago
 * ("still valid?"), oldest first, each with one click to mark it reviewed, and several at once
 * with the scope's bulk form (recheck-list.ts). After a bulk post: what it saved, or the refusal
 * with the refused rule marked and the selection kept.
 */
import { plural } from "../contracts/words.js"
import type { DueRule } from "../search/due-for-recheck.js"
import { type Html, html } from "./html.js"
import { layout, type Viewer } from "./layout.js"
import { type BulkState, doneNotice, type Outcome, refusedNotice } from "./outcome.js"
import { recheckList, recheckPath } from "./recheck-list.js"

export interface RecheckSection {
  readonly scope: string
  /** null: readable; else why not (locked, no file yet) */
  readonly unavailable: string | null
  readonly due: ReadonlyArray<DueRule>
}

export const recheckPage = (o: {
  readonly viewer: Viewer
  readonly sections: ReadonlyArray<RecheckSection>
  readonly recheckAfterDays: number
  readonly canDecide: boolean
  readonly single: boolean
  readonly outcome: Outcome | null
  /** a refused bulk review of one scope: what was ticked and which one was refused */
  readonly bulk: { readonly scope: string; readonly state: BulkState } | null
}): Html => {
  const total = o.sections.reduce((n, s) => n + s.due.length, 0)
  const notice = o.outcome?.kind === "done" ? doneNotice(o.outcome) : o.outcome?.kind === "refused" ? refusedNotice(o.outcome) : ""
  const body = html`${notice}
<p class="small"><a href="/approval">← Open proposals</a>${o.single ? html` · <a href="${recheckPath()}">All scopes</a>` : ""}</p>
<h1>${total === 0 ? "Nothing is due for recheck" : `${plural(total, "rule")} due for recheck`}</h1>
<p class="muted">A confirmed rule is due for recheck when it was last confirmed or reviewed more than ${o.recheckAfterDays} days ago. Searches then ask agents to check with a person before they apply it.</p>
${o.sections.length === 0 ? html`<p class="muted">Your grant covers no scope.</p>` : o.sections.map((s) => html`<section aria-labelledby="s-${s.scope}">
  <h2 id="s-${s.scope}">${s.scope}${o.single ? "" : html` <a class="small" href="${recheckPath(s.scope)}">only this scope</a>`}</h2>
  ${s.unavailable !== null
    ? html`<p class="notice warn">${s.unavailable}</p>`
    : recheckList({
      scope: s.scope, due: s.due, days: o.recheckAfterDays, viewer: o.viewer, canDecide: o.canDecide, bulk: o.bulk?.scope === s.scope ? o.bulk.state : null
    })}
</section>`)}`
  return layout({ title: "Due for recheck", viewer: o.viewer, body })
}
