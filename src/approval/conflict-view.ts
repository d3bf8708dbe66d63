/**
 * The conflict view of a proposal's rule page (gaps.md §13 "Conflict view"): each confirmed rule
 * the proposal nearly duplicates or is linked to by contradicts, beside the proposal — both
 * statements and both quotes, two columns on a laptop, one above the other on a phone — and three
 * actions, each a form of the decision writer (POST /v1/rules/:id/decision, session and csrf):
 * "replace" confirms the proposal with supersedes = the confirmed rule (which becomes superseded
 * from the day given), "keep both" confirms it, "reject" rejects it with a reason.
 */
import { timestamp } from "./format.js"
import { type Html, html, segment } from "./html.js"
import { csrfField, type Viewer } from "./layout.js"
import type { Conflict } from "./marks.js"
import type { Outcome } from "./outcome.js"
import type { RuleVersionRow } from "../domain/rules.js"

export interface ConflictViewInput {
  readonly ruleId: string
  readonly current: RuleVersionRow
  readonly conflicts: ReadonlyArray<Conflict>
  readonly viewer: Viewer
  readonly canDecide: boolean
  readonly outcome: Outcome | null
}

/** The value of a field of a refused conflict form, else the fallback. */
const sent = (p: ConflictViewInput, action: string, field: string, fallback: string): string => {
  const o = p.outcome
  return o?.kind === "refused" && o.sent.conflict === action && o.sent[field] !== undefined ? o.sent[field] : fallback
}

const SOURCE_KIND: Readonly<Record<string, string>> = { jamie: "Meeting", mail: "Mail", manual: "Own words" }

const sourceLine = (v: RuleVersionRow, kind: string | null, title: string | null): Html => {
  const k = kind ?? v.source_id.slice(0, v.source_id.indexOf(":"))
  const at = v.timestamp_s === null ? "" : ` at ${timestamp(v.timestamp_s) ?? ""}`
  return html`<p class="small muted">${SOURCE_KIND[k] ?? k}${title === null ? "" : html`: ${title}`}${at}${v.speaker === null ? "" : html` · said by ${v.speaker}`} · valid from ${v.valid_from}</p>`
}

const WHY: Readonly<Record<string, string>> = {
  "near-duplicate": "says nearly the same",
  contradicts: "is linked to this proposal as contradicting it"
}

const side = (p: ConflictViewInput, c: Conflict, own: { readonly kind: string | null; readonly title: string | null }): Html => html`
<div class="side" id="conflict-${c.rule.rule_id}">
  <div class="new">
    <h3>This proposal</h3>
    <p class="statement">${p.current.statement}</p>
    <blockquote>${p.current.quote}</blockquote>
    ${sourceLine(p.current, own.kind, own.title)}
  </div>
  <div class="old">
    <h3>Confirmed rule <a href="/approval/rules/${segment(c.rule.rule_id)}">${c.rule.rule_id}</a></h3>
    <p class="small">It ${c.why.map((w) => WHY[w] ?? w).join(" and ")}.</p>
    <p class="statement">${c.rule.statement}</p>
    <blockquote>${c.rule.quote}</blockquote>
    ${sourceLine(c.rule, c.source_kind, c.source_title)}
  </div>
</div>`

const hidden = (p: ConflictViewInput, decision: string, action: string): Html =>
  html`<input type="hidden" name="decision" value="${decision}"><input type="hidden" name="version" value="${p.current.version}"><input type="hidden" name="conflict" value="${action}">${csrfField(p.viewer)}`

const replaceForm = (p: ConflictViewInput, c: Conflict, endpoint: string): Html => {
  const id = c.rule.rule_id
  const from = p.current.valid_from < c.rule.valid_from ? c.rule.valid_from : p.current.valid_from
  const field = `x-from-${id}`
  return html`<form method="post" action="${endpoint}" class="decide" aria-labelledby="x-replace-${id}">
  <h3 id="x-replace-${id}">Replace ${id}</h3>
  <p class="small muted">Confirms this proposal; ${id} stops applying from the day below (it stays on record as superseded).</p>
  ${hidden(p, "confirm", `replace-${id}`)}
  <input type="hidden" name="supersedes" value="${id}">
  <label for="${field}">From <span class="hint">(YYYY-MM-DD, not before ${c.rule.valid_from})</span></label>
  <input id="${field}" type="text" name="valid_from" required inputmode="numeric" pattern="[0-9]{4}-[0-9]{2}-[0-9]{2}" placeholder="YYYY-MM-DD" value="${sent(p, `replace-${id}`, "valid_from", from)}">
  <button type="submit">Replace ${id} with this proposal</button>
</form>`
}

export const conflictSection = (p: ConflictViewInput, own: { readonly kind: string | null; readonly title: string | null }): Html | string => {
  if (p.conflicts.length === 0 || p.current.status !== "proposed") return ""
  const endpoint = `/v1/rules/${segment(p.ruleId)}/decision`
  const ids = p.conflicts.map((c) => c.rule.rule_id)
  // a proposal that names one of them in supersedes replaces it when confirmed: "keep both" cannot be offered
  const replacesOne = p.current.supersedes !== null && ids.includes(p.current.supersedes)
  const one = p.conflicts.length === 1
  const actions = !p.canDecide
    ? html`<p class="notice warn">Your grant can read this scope but not decide in it.</p>`
    : html`<div class="actions conflict-actions">
  ${p.conflicts.map((c) => replaceForm(p, c, endpoint))}
  ${replacesOne
      ? html`<p class="small muted">This proposal already says it replaces ${p.current.supersedes ?? ""}; confirming it replaces that rule.</p>`
      : html`<form method="post" action="${endpoint}" class="decide" aria-labelledby="x-keep-h">
  <h3 id="x-keep-h">Keep both</h3>
  <p class="small muted">Confirms this proposal; ${one ? "the confirmed rule stays" : "the confirmed rules stay"} in force too.</p>
  ${hidden(p, "confirm", "keep")}
  <button type="submit" class="secondary">Keep both</button>
</form>`}
  <form method="post" action="${endpoint}" class="decide" aria-labelledby="x-reject-h">
  <h3 id="x-reject-h">Reject</h3>
  ${hidden(p, "reject", "reject")}
  <label for="x-reason">Reason <span class="hint">(required)</span></label>
  <textarea id="x-reason" name="reason" required maxlength="1000">${sent(p, "reject", "reason", "")}</textarea>
  <button type="submit" class="danger">Reject this proposal</button>
</form>
</div>`
  return html`<section aria-labelledby="conflict-h" class="conflicts">
<h2 id="conflict-h">${one ? "Conflicts with a confirmed rule" : `Conflicts with ${p.conflicts.length} confirmed rules`}</h2>
<p class="small muted">Compare them, then replace the confirmed rule with this proposal, keep both, or reject this proposal.</p>
${p.conflicts.map((c) => side(p, c, own))}
${actions}
</section>`
}
