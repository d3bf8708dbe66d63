/**
 * GET /approval/rejected?scope=: the scope's rejected rules, newest rejection first, with who
 * rejected them, when and why. Rejected rules exist only on the approval channel (invariant 8).
 */
import { plural } from "../contracts/words.js"
import { detailsLine, type Clockwork, shorten, when } from "./format.js"
import { type Html, html } from "./html.js"
import { layout, type Viewer } from "./layout.js"
import type { RejectedRow } from "./queries.js"
import { ruleLink } from "./rule-page.js"

export const REJECTED_PAGE_SIZE = 100

export const rejectedPage = (o: {
  readonly viewer: Viewer
  readonly scope: string
  readonly rows: ReadonlyArray<RejectedRow>
  readonly total: number
  readonly page: number
  readonly clock: Clockwork
}): Html => {
  const more = o.total - ((o.page - 1) * REJECTED_PAGE_SIZE + o.rows.length)
  const body = html`
<p class="small"><a href="/approval">← Open proposals</a></p>
<h1>Rejected in ${o.scope}</h1>
<p class="muted">${plural(o.total, "rejected rule")}. Agents and searches never see these; they are kept to recognise a proposal that was turned down before.</p>
${o.rows.length === 0 ? html`<p class="muted">None.</p>` : html`<ol class="list">${o.rows.map((r) => html`<li>
  <div class="statement">${ruleLink(r.rule_id, r.statement)}</div>
  <blockquote class="small">${shorten(r.quote, 300)}</blockquote>
  <div class="meta">
    <span class="badge rejected">rejected</span>
    ${r.source_title === null ? "" : html`<span>${shorten(r.source_title, 120)}</span>`}
    <span>${when(r.decided_at, o.clock)}</span>
    ${r.decided_by_identity === null ? "" : html`<span>by ${r.decided_by_identity}</span>`}
  </div>
  ${r.decision_reason === null ? "" : html`<div class="small">Reason: ${r.decision_reason}</div>`}
  ${detailsLine([r.rule_id, `version ${r.version}`])}
</li>`)}</ol>`}
<p>${o.page > 1 ? html`<a href="/approval/rejected?scope=${o.scope}&amp;page=${o.page - 1}">← Newer</a> ` : ""}${
    more > 0 ? html`<a href="/approval/rejected?scope=${o.scope}&amp;page=${o.page + 1}">Older (${more} more) →</a>` : ""
  }</p>`
  return layout({ title: `Rejected in ${o.scope}`, viewer: o.viewer, body })
}
