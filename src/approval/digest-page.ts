/**
 * GET /approval/digest?since=<day> (gaps.md §13 "Digest"): per scope of the person's grant, what
 * the approval policy adopted without a person since the day (with where each stands now), how
 * many rule proposals and structure changes wait for a person (linked to where they are decided)
 * and the confirmed rules due for recheck, oldest first, each with one click to mark it reviewed.
 * The digest itself is src/operations/digest.ts (the same as GET /ops/digest).
 */
import { plural } from "../contracts/words.js"
import type { AdoptedRule, Digest, ScopeDigest } from "../operations/digest.js"
import { ageText, badge, type Clockwork, detailsLine, ageDays } from "./format.js"
import { type Html, html } from "./html.js"
import { adoptedState } from "./index-page.js"
import { layout, type Viewer } from "./layout.js"
import { recheckList } from "./recheck-list.js"
import { ruleLink } from "./rule-page.js"
import { structurePath } from "./structure-page.js"

/** How many adopted rules the page lists per scope (newest first). */
export const DIGEST_ADOPTED_SHOWN = 200

const adoptedItem = (r: AdoptedRule, c: Clockwork): Html => html`<li>
  <div class="statement">${ruleLink(r.rule_id, r.statement)}</div>
  <div class="meta">
    ${badge(r.status)}${r.status === "confirmed" && r.newest_origin === "auto" ? html`<span class="badge auto">auto-adopted</span>` : ""}
    <span>${adoptedState(r)}</span>
    <span>adopted <time datetime="${r.adopted_at}">${r.day}, ${ageText(ageDays(r.adopted_at, c.nowMs, c.zone))}</time></span>
  </div>
  ${detailsLine([r.rule_id, `version ${r.version}`, `${r.mode} mode`, `class ${r.class}`])}
</li>`

const scopeSection = (s: ScopeDigest, o: DigestPageInput): Html => {
  const head = html`<h2 id="s-${s.scope}">${s.scope}</h2>`
  if (s.unavailable !== null) return html`<section aria-labelledby="s-${s.scope}">${head}<p class="notice warn">${s.unavailable}</p></section>`
  const adopted = s.adopted.length + s.adoptedStructure.length
  const shown = s.adopted.slice(0, DIGEST_ADOPTED_SHOWN)
  return html`<section aria-labelledby="s-${s.scope}">${head}
  <p class="counts small"><span>${plural(adopted, "adoption")}</span><span>${plural(s.waiting.rules, "rule proposal")} waiting</span><span>${plural(s.waiting.structure, "structure change")} waiting</span><span>${s.dueForRecheck.length} due for recheck</span></p>
  <h3 id="adopted-${s.scope}">Adopted by the approval policy</h3>
  ${adopted === 0
    ? html`<p class="muted">The policy adopted nothing here since ${o.digest.since}.</p>`
    : html`<p class="small muted">Adopted without a person since ${o.digest.since}, newest first. Each stays retractable until a person confirms it; open one to confirm or revoke it.</p>
  ${shown.length === 0 ? "" : html`<ol class="list adopted">${shown.map((r) => adoptedItem(r, o.clock))}</ol>`}
  ${s.adopted.length > shown.length ? html`<p class="small muted">${plural(s.adopted.length - shown.length, "older adoption")} not listed: pick a later day to see them in smaller parts.</p>` : ""}
  ${s.adoptedStructure.length === 0 ? "" : html`<p>${plural(s.adoptedStructure.length, "structure change")} adopted: <a href="${structurePath(s.scope)}">see the structure page</a>.</p>`}`}
  <h3 id="waiting-${s.scope}">Waiting for a person</h3>
  <p>${s.waiting.rules === 0 ? html`No rule proposal` : html`<a href="/approval?scope=${s.scope}">${plural(s.waiting.rules, "rule proposal")}</a>`} and ${
    s.waiting.structure === 0 ? html`no structure change` : html`<a href="${structurePath(s.scope)}">${plural(s.waiting.structure, "structure change")}</a>`
  } wait${s.waiting.rules + s.waiting.structure === 1 ? "s" : ""} for a person.</p>
  <h3 id="recheck-${s.scope}">Due for recheck</h3>
  ${recheckList({ scope: s.scope, due: s.dueForRecheck, days: o.recheckAfterDays, viewer: o.viewer, canDecide: o.canDecide, bulk: null })}
</section>`
}

export interface DigestPageInput {
  readonly viewer: Viewer
  readonly digest: Digest
  readonly clock: Clockwork
  readonly recheckAfterDays: number
  readonly canDecide: boolean
}

export const digestPage = (o: DigestPageInput): Html => {
  const d = o.digest
  const body = html`
<p class="small"><a href="/approval">← Open proposals</a></p>
<h1>Digest since ${d.since}</h1>
<p class="muted">What the approval policy adopted without a person from ${d.since} to today (${d.today}), what waits for a person, and which confirmed rules are due for recheck — for every scope of your grant.</p>
<form method="get" action="/approval/digest" class="card">
  <label for="since">Since <span class="hint">(a day: YYYY-MM-DD)</span></label>
  <input id="since" type="text" name="since" required inputmode="numeric" pattern="[0-9]{4}-[0-9]{2}-[0-9]{2}" placeholder="YYYY-MM-DD" value="${d.since}">
  <button type="submit" class="secondary">Show the digest</button>
</form>
${d.scopes.length === 0 ? html`<p class="muted">Your grant covers no scope.</p>` : d.scopes.map((s) => scopeSection(s, o))}`
  return layout({ title: `Digest since ${d.since}`, viewer: o.viewer, body })
}
