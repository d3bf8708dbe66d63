/**
 * GET /approval: per scope of the person's grant, the rules the approval policy adopted today
 * without a person (with why, and whether they are still retractable), the open proposals newest
 * first (statement, quote, source, speaker, age, and why each waits for a person: its class and
 * mandatory exceptions with their reasons) and the "Structure changes" section (counts and the
 * newest five, graph.md §12). A scope lists PAGE_SIZE proposals per page.
 */
import { plural } from "../contracts/words.js"
import { ageDays, ageText, badge, type Clockwork, detailsLine, reasonsList, shorten, timestamp } from "./format.js"
import { type Html, html } from "./html.js"
import { csrfField, layout, type Viewer } from "./layout.js"
import type { ConflictMark } from "./marks.js"
import { type BulkState, doneNotice, type Outcome, refusedNotice } from "./outcome.js"
import type { AdoptedRow, ProposalRow, ScopeCounts } from "./queries.js"
import { recheckPath } from "./recheck-list.js"
import { ruleLink, rulePath } from "./rule-page.js"

export const PAGE_SIZE = 100
export const QUOTE_CHARS = 300

export interface ScopeSection {
  readonly scope: string
  /** null: the scope is locked or has no file; the message says so */
  readonly unavailable: string | null
  readonly counts: ScopeCounts
  readonly proposals: ReadonlyArray<ProposalRow>
  /** per listed proposal, the other listed proposals it nearly duplicates (stored marks: indexMarks) */
  readonly duplicates: ReadonlyMap<string, ReadonlyArray<string>>
  /** per listed proposal, the confirmed rules it nearly duplicates or contradicts (indexMarks) */
  readonly conflicts: ReadonlyMap<string, ReadonlyArray<ConflictMark>>
  /** the rules the policy adopted today (config.zone), newest first */
  readonly adopted: ReadonlyArray<AdoptedRow>
  /** how many confirmed rules are due for recheck (listed on /approval/recheck) */
  readonly due: number
  readonly page: number
  readonly structure: Html | null
}

/** How many adopted rules of a day the index shows per scope. */
export const ADOPTED_SHOWN = 50

/** Where an adopted rule stands now. */
export const adoptedState = (r: Pick<AdoptedRow, "status" | "newest_origin" | "last_kind">): string => {
  if (r.status === "confirmed" && r.newest_origin === "auto") return "in force, retractable until a person confirms it"
  if (r.status === "confirmed") return "confirmed by a person"
  if (r.status === "rejected") return "rejected by a person"
  if (r.last_kind === "retract") return "retracted"
  if (r.last_kind === "revoke") return "revoked by a person"
  return r.status
}

const adoptedItem = (r: AdoptedRow, c: Clockwork): Html => html`<li>
  <div class="statement">${ruleLink(r.rule_id, r.statement)}</div>
  <div class="meta">
    ${badge(r.status)}${r.status === "confirmed" && r.newest_origin === "auto" ? html`<span class="badge auto">auto-adopted</span>` : ""}
    <span>${adoptedState(r)}</span>
    <span>adopted <time datetime="${r.classified_at}">${ageText(ageDays(r.classified_at, c.nowMs, c.zone))}</time></span>
  </div>
  ${reasonsList(null, r.reasons)}
  ${detailsLine([r.rule_id, `version ${r.version}`, `${r.mode} mode`, `class ${r.class}`])}
</li>`

const SOURCE_KIND: Readonly<Record<string, string>> = { jamie: "Meeting", mail: "Mail", manual: "Own words" }

/** What the index says of a proposal that conflicts with confirmed rules; its rule page shows them side by side. */
const conflictNote = (r: ProposalRow, conflicts: ReadonlyArray<ConflictMark>): Html | string =>
  conflicts.length === 0 ? "" : html`<p class="small conflictnote"><span class="badge exception">conflict</span> ${
    conflicts.map((m, i) => html`${i > 0 ? "; " : ""}${m.why.includes("contradicts") ? "contradicts" : "says nearly the same as"} the confirmed rule <a href="${rulePath(m.rule_id)}">${shorten(m.statement, 90)}</a>`)
  } — <a href="${rulePath(r.rule_id)}#conflict-h">compare them side by side</a> and replace, keep both or reject.</p>`

/** The checkbox of a proposal in its scope's bulk form: its name carries the rule, its value the version seen. */
const pick = (r: ProposalRow, bulk: BulkState | null): Html => html`<label class="pick"><input type="checkbox" name="item:${r.rule_id}" value="${r.version}" aria-label="Select: ${shorten(r.statement, 90)}"${
  bulk?.checked.has(r.rule_id) === true ? html` checked` : ""
}> Select</label>`

const proposalItem = (r: ProposalRow, c: Clockwork, twins: ReadonlyArray<ProposalRow>, conflicts: ReadonlyArray<ConflictMark>, bulk: BulkState | null, canDecide: boolean): Html => {
  const days = ageDays(r.created_at, c.nowMs, c.zone)
  const source = r.source_kind === null ? r.source_id : SOURCE_KIND[r.source_kind] ?? r.source_kind
  const refused = bulk?.refused === r.rule_id
  const classes = [...(twins.length === 0 ? [] : ["dup"]), ...(conflicts.length === 0 ? [] : ["conflict"]), ...(refused ? ["refused"] : [])]
  return html`<li id="p-${r.rule_id}"${classes.length === 0 ? "" : html` class="${classes.join(" ")}"`}>
  ${canDecide ? pick(r, bulk) : ""}
  ${refused && bulk?.note !== null && bulk?.note !== undefined ? html`<p class="small refused-note"><b>Not saved because of this one:</b> ${bulk.note}</p>` : ""}
  <div class="statement">${ruleLink(r.rule_id, r.statement)}</div>
  <blockquote class="small">${shorten(r.quote, QUOTE_CHARS)}</blockquote>
  <div class="meta">
    ${badge("proposed")}
    <span>${source}${r.source_title === null ? "" : html`: ${shorten(r.source_title, 120)}`}${r.timestamp_s === null ? "" : ` at ${timestamp(r.timestamp_s)}`}</span>
    ${r.speaker === null ? "" : html`<span>said by ${r.speaker}</span>`}
    <span>proposed <time datetime="${r.created_at}">${ageText(days)}</time></span>
  </div>
  ${reasonsList(r.exceptions, r.reasons)}
  ${twins.length === 0 ? "" : html`<p class="small dupnote"><span class="badge exception">near duplicate</span> says nearly the same as ${
    twins.map((t, i) => html`${i > 0 ? "; " : ""}<a href="#p-${t.rule_id}">${shorten(t.statement, 90)}</a>`)
  } — compare them before you decide.</p>`}
  ${conflictNote(r, conflicts)}
  ${detailsLine([r.rule_id, `version ${r.version}`, `source ${r.source_id}`])}
</li>`
}

/**
 * The buttons of a scope's bulk form. The first submit button is a disabled one: Enter in the
 * reason field submits nothing (the default button is disabled), the person picks a button.
 */
const bulkActions = (s: ScopeSection, bulk: BulkState | null): Html => html`<fieldset class="bulk-actions">
  <legend>With the selected proposals of ${s.scope}</legend>
  <button type="submit" disabled hidden>Choose a button</button>
  <label for="bulk-reason-${s.scope}">Reason <span class="hint">(required to reject; a note to confirm)</span></label>
  <input id="bulk-reason-${s.scope}" type="text" name="reason" maxlength="1000" value="${bulk?.reason ?? ""}">
  <div class="buttons">
    <button type="submit" name="decision" value="confirm">Confirm selected</button>
    <button type="submit" name="decision" value="reject" class="danger">Reject selected</button>
  </div>
  <p class="small muted">Each selected proposal gets its own decision with your name. If one of them cannot be saved, none is, and the page names that one.</p>
</fieldset>`

/** The open proposals of a scope; for a person who may decide, inside the scope's one bulk form (viewer: its csrf token). */
const proposalList = (s: ScopeSection, c: Clockwork, bulk: BulkState | null, viewer: Viewer | null): Html => {
  const list = html`<ol class="list">${s.proposals.map((r) => proposalItem(r, c, (s.duplicates.get(r.rule_id) ?? []).flatMap((id) => s.proposals.filter((x) => x.rule_id === id)), s.conflicts.get(r.rule_id) ?? [], bulk, viewer !== null))}</ol>`
  if (viewer === null) return list
  return html`<form method="post" action="/v1/decisions" class="bulk" id="bulk-${s.scope}" aria-label="Decide several proposals of ${s.scope}">
  <input type="hidden" name="scope" value="${s.scope}"><input type="hidden" name="page" value="${s.page}">${csrfField(viewer)}
  <p class="small muted">Select proposals and decide them together with the buttons below the list, or open one to decide it on its own.</p>
  ${list}
  ${bulkActions(s, bulk)}
</form>`
}

const scopeSection = (s: ScopeSection, c: Clockwork, single: boolean, bulk: BulkState | null, viewer: Viewer | null): Html => {
  if (s.unavailable !== null) {
    return html`<section aria-labelledby="s-${s.scope}"><h2 id="s-${s.scope}">${s.scope}</h2><p class="notice warn">${s.unavailable}</p></section>`
  }
  const shownTo = (s.page - 1) * PAGE_SIZE + s.proposals.length
  const more = s.counts.proposed - shownTo
  const nav: Array<Html> = []
  if (s.page > 1) nav.push(html`<a href="/approval?scope=${s.scope}&amp;page=${s.page - 1}">← Newer</a>`)
  if (more > 0) nav.push(html`<a href="/approval?scope=${s.scope}&amp;page=${s.page + 1}">Older (${more} more) →</a>`)
  return html`<section aria-labelledby="s-${s.scope}">
  <h2 id="s-${s.scope}">${s.scope}${single ? "" : html` <a class="small" href="/approval?scope=${s.scope}">only this scope</a>`}</h2>
  <p class="counts small"><span>${plural(s.counts.proposed, "open proposal")}</span><span>${s.counts.confirmed} confirmed</span><span>${s.counts.superseded} superseded</span><span><a href="/approval/rejected?scope=${s.scope}">${s.counts.rejected} rejected</a></span>${
    s.adopted.length === 0 ? "" : html`<span>${plural(s.adopted.length, "rule")} adopted today</span>`
  }${s.due === 0 ? "" : html`<span><a href="${recheckPath(s.scope)}">${s.due} due for recheck</a></span>`}</p>
  ${s.adopted.length === 0 ? "" : html`<h3 id="adopted-${s.scope}">Adopted today without a person</h3>
  <p class="small muted">The approval policy adopted these; each stays retractable until a person confirms it. Open one to confirm or revoke it.</p>
  <ol class="list adopted">${s.adopted.map((r) => adoptedItem(r, c))}</ol>`}
  ${s.proposals.length === 0
    ? html`<p class="muted">Nothing to decide here.</p>`
    : html`<h3>Open proposals${s.page > 1 ? ` (page ${s.page})` : ""}</h3>${
      s.duplicates.size === 0 ? "" : html`<p class="small muted">${plural(s.duplicates.size, "proposal")} marked <b>near duplicate</b> say${s.duplicates.size === 1 ? "s" : ""} nearly the same as another one here.</p>`
    }${
      s.conflicts.size === 0 ? "" : html`<p class="small muted">${plural(s.conflicts.size, "proposal")} marked <b>conflict</b> say${s.conflicts.size === 1 ? "s" : ""} nearly the same as a confirmed rule or contradict${s.conflicts.size === 1 ? "s" : ""} one.</p>`
    }${proposalList(s, c, bulk, viewer)}`}
  ${nav.length === 0 ? "" : html`<p>${nav.map((n, i) => html`${i > 0 ? " · " : ""}${n}`)}</p>`}
  ${s.structure ?? ""}
</section>`
}

export const indexPage = (o: {
  readonly viewer: Viewer
  readonly sections: ReadonlyArray<ScopeSection>
  readonly clock: Clockwork
  readonly single: boolean
  /** the grant holds redact: the page links to /approval/redactions */
  readonly canRedact?: boolean
  /** the day the digest link starts (yesterday in config.zone) */
  readonly digestSince?: string
  /** the grant holds decide: each scope's proposals sit in its bulk form */
  readonly canDecide?: boolean
  /** what the person's last bulk post did */
  readonly outcome?: Outcome | null
  /** a refused bulk post of one scope: what was ticked and which one was refused */
  readonly bulk?: { readonly scope: string; readonly state: BulkState } | null
}): Html => {
  const open = o.sections.reduce((n, s) => n + s.counts.proposed, 0)
  const notice = o.outcome?.kind === "done" ? doneNotice(o.outcome) : o.outcome?.kind === "refused" ? refusedNotice(o.outcome) : ""
  const body = html`
${notice}
<h1>${open === 0 ? "Nothing waits for you" : `${plural(open, "open proposal")}`}</h1>
${o.single ? html`<p class="small"><a href="/approval">← All scopes</a></p>` : ""}
${o.digestSince === undefined ? "" : html`<p class="small" id="digest-links"><a href="/approval/digest?since=${o.digestSince}">Digest since yesterday</a> (adopted, waiting, due for recheck) · <a href="${recheckPath()}">Due for recheck</a></p>`}
${o.canRedact === true ? html`<p class="small"><a href="/approval/redactions" id="redactions-link">Erase personal data (erasure requests)</a></p>` : ""}
${o.sections.length === 0 ? html`<p class="muted">Your grant covers no scope.</p>` : o.sections.map((s) =>
    scopeSection(s, o.clock, o.single, o.bulk?.scope === s.scope ? o.bulk.state : null, o.canDecide === true ? o.viewer : null))}`
  return layout({ title: "Open proposals", viewer: o.viewer, body })
}
