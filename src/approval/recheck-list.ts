/**
 * The list of rules due for recheck ("still valid?", gaps.md §13): confirmed rules last reviewed
 * more than recheck_after_days ago, oldest first, each with one click to mark it reviewed (the
 * rule page's review decision, POST /v1/rules/:id/decision with decision review and the version
 * seen) and a link to the rule page to change or revoke it; with a checkbox each, several are
 * marked reviewed in one post (the scope's bulk form after the list, POST /v1/decisions with
 * decision review and `back=recheck`: the person lands on the recheck page). Shared by the recheck
 * page and the digest page.
 */
import { plural } from "../contracts/words.js"
import type { DueRule } from "../search/due-for-recheck.js"
import { ageText, detailsLine } from "./format.js"
import { type Html, html, segment } from "./html.js"
import { csrfField, type Viewer } from "./layout.js"
import type { BulkState } from "./outcome.js"
import { ruleLink, rulePath } from "./rule-page.js"

/** How many due rules a page lists per scope (oldest first); the rest follow once these are reviewed. */
export const RECHECK_SHOWN = 100

export const recheckPath = (scope?: string): string => `/approval/recheck${scope === undefined ? "" : `?scope=${encodeURIComponent(scope)}`}`

/** The id of a scope's bulk review form: its checkboxes sit in the items (the form attribute), since each item has its own form. */
export const recheckFormId = (scope: string): string => `recheck-form-${scope}`

/** The checkbox of a due rule in its scope's bulk form: its name carries the rule, its value the version seen. */
const pick = (r: DueRule, scope: string, bulk: BulkState | null): Html => html`<label class="pick"><input type="checkbox" form="${recheckFormId(scope)}" name="item:${r.rule_id}" value="${r.version}" aria-label="Select: ${r.statement}"${
  bulk?.checked.has(r.rule_id) === true ? html` checked` : ""
}> Select</label>`

const dueItem = (r: DueRule, scope: string, viewer: Viewer, canDecide: boolean, bulk: BulkState | null): Html => html`<li id="r-${r.rule_id}"${bulk?.refused === r.rule_id ? html` class="refused"` : ""}>
  ${canDecide ? pick(r, scope, bulk) : ""}
  ${bulk?.refused === r.rule_id && bulk.note !== null ? html`<p class="small refused-note"><b>Not saved because of this one:</b> ${bulk.note}</p>` : ""}
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
 * The bulk form of a scope (after its list): mark every selected rule reviewed in one post. The
 * first submit button is a disabled one, so Enter in the note field submits nothing.
 */
const bulkForm = (scope: string, viewer: Viewer, bulk: BulkState | null): Html => html`<form method="post" action="/v1/decisions" id="${recheckFormId(scope)}" class="bulk" aria-label="Mark several rules of ${scope} reviewed">
  <input type="hidden" name="scope" value="${scope}"><input type="hidden" name="back" value="recheck">${csrfField(viewer)}
  <fieldset class="bulk-actions">
  <legend>With the selected rules</legend>
  <button type="submit" disabled hidden>Choose a button</button>
  <label for="recheck-reason-${scope}">Note <span class="hint">(optional)</span></label>
  <input id="recheck-reason-${scope}" type="text" name="reason" maxlength="1000" value="${bulk?.reason ?? ""}">
  <div class="buttons"><button type="submit" name="decision" value="review">Still valid: mark selected reviewed</button></div>
  <p class="small muted">Each selected rule gets its own review with your name. If one of them cannot be saved, none is, and the page names that one.</p>
  </fieldset>
</form>`

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
  /** a refused bulk review of this scope: what was ticked and which one was refused */
  readonly bulk: BulkState | null
}): Html => {
  if (o.due.length === 0) return html`<p class="muted">No confirmed rule waits for a recheck: each was reviewed within the last ${o.days} days.</p>`
  const shown = o.due.slice(0, RECHECK_SHOWN)
  return html`<p class="small muted">${plural(o.due.length, "confirmed rule")} last reviewed more than ${o.days} days ago, oldest first. Agents are told to ask "still valid?" before they apply ${o.due.length === 1 ? "it" : "them"}.${
    o.canDecide ? " Mark one reviewed if it still holds (or select several and mark them at once), or open it to change or revoke it." : " Your grant can read this scope but not decide in it."
  }</p>
  <ol class="list recheck" aria-label="Due for recheck in ${o.scope}">${shown.map((r) => dueItem(r, o.scope, o.viewer, o.canDecide, o.bulk))}</ol>
  ${o.canDecide ? bulkForm(o.scope, o.viewer, o.bulk) : ""}
  ${o.due.length > shown.length ? html`<p class="small muted">${plural(o.due.length - shown.length, "more rule")} due; they show here once these are reviewed.</p>` : ""}`
}
