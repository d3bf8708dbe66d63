/**
 * The list of rules due for recheck ("still valid?", gaps.md §13): confirmed rules last reviewed
 * more than recheck_after_days ago, oldest first, each with one click to mark it reviewed (the
 * rule page's review decision, POST /v1/rules/:id/decision with decision review and the version
 * seen) and a link to the rule page to change or revoke it. Shared by the recheck page and the
 * digest page.
 */
import { plural } from "../contracts/words.js"
import type { DueRule } from "../search/due-for-recheck.js"
import { ageText, detailsLine } from "./format.js"
import { type Html, html, segment } from "./html.js"
import { csrfField, type Viewer } from "./layout.js"
import { ruleLink, rulePath } from "./rule-page.js"

/** How many due rules a page lists per scope (oldest first); the rest follow once these are reviewed. */
export const RECHECK_SHOWN = 100

export const recheckPath = (scope?: string): string => `/approval/recheck${scope === undefined ? "" : `?scope=${encodeURIComponent(scope)}`}`

const dueItem = (r: DueRule, viewer: Viewer, canDecide: boolean): Html => html`<li id="r-${r.rule_id}">
  <div class="statement">${ruleLink(r.rule_id, r.statement)}</div>
  <div class="meta">
    <span class="badge confirmed">confirmed</span>${r.adoption.kind === "auto" ? html`<span class="badge auto">auto-adopted</span>` : ""}
    <span>last reviewed <time datetime="${r.last_reviewed_at}">${ageText(r.age_days)}</time></span>
  </div>
  ${canDecide
    ? html`<div class="actions"><form method="post" action="/v1/rules/${segment(r.rule_id)}/decision" class="decide">
    <input type="hidden" name="decision" value="review"><input type="hidden" name="version" value="${r.version}">${csrfField(viewer)}
    <button type="submit" class="secondary" aria-label="Still valid: mark reviewed — ${r.statement}">Still valid: mark reviewed</button>
  </form><p class="small"><a href="${rulePath(r.rule_id)}#revoke-h">No longer valid? Open it to revoke or change it</a></p></div>`
    : ""}
  ${detailsLine([r.rule_id, `version ${r.version}`])}
</li>`

/**
 * One scope's due rules (at most RECHECK_SHOWN of `total`), or a line that none is due. `days`
 * is recheck_after_days.
 */
export const recheckList = (o: {
  readonly scope: string
  readonly due: ReadonlyArray<DueRule>
  readonly days: number
  readonly viewer: Viewer
  readonly canDecide: boolean
}): Html => {
  if (o.due.length === 0) return html`<p class="muted">No confirmed rule waits for a recheck: each was reviewed within the last ${o.days} days.</p>`
  const shown = o.due.slice(0, RECHECK_SHOWN)
  return html`<p class="small muted">${plural(o.due.length, "confirmed rule")} last reviewed more than ${o.days} days ago, oldest first. Agents are told to ask "still valid?" before they apply ${o.due.length === 1 ? "it" : "them"}.${
    o.canDecide ? " Mark one reviewed if it still holds, or open it to change or revoke it." : " Your grant can read this scope but not decide in it."
  }</p>
  <ol class="list recheck" aria-label="Due for recheck in ${o.scope}">${shown.map((r) => dueItem(r, o.viewer, o.canDecide))}</ol>
  ${o.due.length > shown.length ? html`<p class="small muted">${plural(o.due.length - shown.length, "more rule")} due; they show here once these are reviewed.</p>` : ""}`
}
