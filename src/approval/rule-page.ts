/**
 * GET /approval/rules/:id: the current version and every version before it, every decision with
 * who (grant and identity e-mail, shown only here; the policy with its ruleset and mode) and
 * when, who adopted it (a person, or the approval policy: then it is retractable until a person
 * confirms or reviews it), the policy's classification (class, mode, outcome, mandatory
 * exceptions and the reasons), the quote highlighted in its source window (the jamie window with
 * timestamps, the mail text), thread and attachments, possible duplicates, previously rejected
 * similar rules, the rule's pending concerns links, and the decision forms for the version the
 * person sees (a proposal: confirm, reject; a confirmed rule: review, revoke; an auto-adopted rule
 * also confirm — never reject: a confirmed rule is revoked from a day, so its history stays).
 */
import { plural } from "../contracts/words.js"
import type { RuleVersionRow } from "../domain/rules.js"
import {
  ageDays, ageText, badge, bytes, type Clockwork, detailsLine, fileKind, grantName, localTime, reasonsList, reasonText, shorten,
  TEXT_ORIGIN, timestamp, when
} from "./format.js"
import { dayIn } from "../contracts/time.js"
import { conflictSection } from "./conflict-view.js"
import { locateQuote, marked, offsetsOf, within } from "./highlight.js"
import { type Html, html, join, safeHref, segment } from "./html.js"
import { csrfField, layout, type Viewer } from "./layout.js"
import { doneNotice, type Outcome, refusedNotice } from "./outcome.js"
import { MAX_RELATION_ROWS, postedRows, RELATION_KINDS } from "./relation-rows.js"
import type { DecisionRow, GrantNames, RuleDetail } from "./queries.js"

export interface RulePageInput {
  readonly detail: RuleDetail
  readonly ruleId: string
  readonly viewer: Viewer
  readonly canDecide: boolean
  /** the viewer's grant has the right redact (or decide): the page says which redactions touched the rule */
  readonly seesRedactions?: boolean
  readonly names: GrantNames
  readonly clock: Clockwork
  readonly outcome: Outcome | null
  /** the rule's pending concerns links with their forms (graph.md §12), once links exist */
  readonly pendingLinks?: Html
}

export const rulePath = (id: string): string => `/approval/rules/${segment(id)}`
export const ruleLink = (id: string, text: string): Html => html`<a href="${rulePath(id)}">${text}</a>`

export const who = (names: GrantNames, grantId: string): Html => {
  const name = names.get(grantId)
  return name === undefined || name === grantId ? html`<span>${grantId}</span>` : html`<span>${name} <span class="muted">(${grantId})</span></span>`
}

const parseList = <A>(json: string): Array<A> => {
  try {
    const v = JSON.parse(json) as unknown
    return Array.isArray(v) ? (v as Array<A>) : []
  } catch {
    return []
  }
}

interface RelationOut {
  readonly kind: string
  readonly name: string
  readonly ref: string | null
}

const relationsText = (json: string): Html => {
  const rs = parseList<RelationOut>(json)
  return rs.length === 0 ? html`<span class="muted">none</span>` : join(rs.map((r) => `${r.kind}: ${r.name}${r.ref === null ? "" : ` (${r.ref})`}`), "; ")
}
const keywordsText = (json: string): Html => {
  const ks = parseList<string>(json)
  return ks.length === 0 ? html`<span class="muted">none</span>` : join(ks, ", ")
}

/** The fields of a version in the order the page shows them, with how each is written. */
const FIELDS: ReadonlyArray<readonly [keyof RuleVersionRow, string, (v: RuleVersionRow, c: Clockwork) => Html | string]> = [
  ["statement", "Statement", (v) => v.statement],
  ["status", "Status", (v) => badge(v.status)],
  ["kind", "Kind", (v) => v.kind],
  ["keywords", "Keywords", (v) => keywordsText(v.keywords)],
  ["relations", "Relations", (v) => relationsText(v.relations)],
  ["valid_from", "Valid from", (v) => v.valid_from],
  ["valid_until", "Valid until", (v) => v.valid_until ?? html`<span class="muted">open</span>`],
  ["said_at", "Said at", (v, c) => html`<time datetime="${v.said_at}">${localTime(v.said_at, c)}</time>`],
  ["speaker", "Speaker", (v) => v.speaker ?? html`<span class="muted">unknown</span>`],
  ["supersedes", "Supersedes", (v) => (v.supersedes === null ? html`<span class="muted">—</span>` : ruleLink(v.supersedes, v.supersedes))],
  ["superseded_by", "Superseded by", (v) => (v.superseded_by === null ? html`<span class="muted">—</span>` : ruleLink(v.superseded_by, v.superseded_by))]
]

/** The names of the fields that differ between two versions. */
export const changedFields = (a: RuleVersionRow, b: RuleVersionRow): Array<keyof RuleVersionRow> =>
  FIELDS.map(([k]) => k).filter((k) => a[k] !== b[k])

/** "What changed" between the version the person saw and the current one: a two-column table. */
export const changeTable = (from: RuleVersionRow, to: RuleVersionRow, c: Clockwork): Html => {
  const fields = FIELDS.filter(([k]) => from[k] !== to[k])
  if (fields.length === 0) return html`<p>The fields are the same; only the status or the decisions changed.</p>`
  return html`<table><thead><tr><th scope="col">Field</th><th scope="col">You saw (version ${from.version})</th><th scope="col">Now (version ${to.version})</th></tr></thead><tbody>${
    fields.map(([, label, show]) => html`<tr><th scope="row">${label}</th><td>${show(from, c)}</td><td class="changed">${show(to, c)}</td></tr>`)
  }</tbody></table>`
}

const versionCard = (v: RuleVersionRow, prev: RuleVersionRow | undefined, current: boolean, p: RulePageInput): Html => {
  const changed = new Set(prev === undefined ? [] : changedFields(prev, v))
  return html`<li id="v${v.version}">
  <details${current ? " open" : ""}>
    <summary>Version ${v.version} ${badge(v.status)} <span class="muted small">${when(v.changed_at, p.clock)} · ${grantName(p.names, v.changed_by)}${
      prev === undefined ? "" : ` · ${changed.size === 0 ? "no field changed" : `changed: ${[...changed].join(", ")}`}`
    }</span></summary>
    <dl class="facts">
      ${FIELDS.map(([k, label, show]) => html`<dt>${label}</dt><dd${changed.has(k) ? html` class="changed"` : ""}>${show(v, p.clock)}</dd>`)}
      <dt>Reason</dt><dd>${reasonText(v.reason)}</dd>
    </dl>
    ${detailsLine([`by ${v.changed_by}`, `reason "${v.reason}"`])}
  </details>
</li>`
}

const DECISION_VERB: Readonly<Record<string, string>> = {
  confirm: "confirmed", reject: "rejected", revoke: "revoked", review: "reviewed", retract: "retracted"
}

const decisionsTable = (p: RulePageInput): Html => {
  const ds = p.detail.decisions
  if (ds.length === 0) return html`<p class="muted">No decision yet.</p>`
  return html`<table class="decisions"><thead><tr><th scope="col">When</th><th scope="col">Decision</th><th scope="col">Who</th><th scope="col">Note</th></tr></thead><tbody>${
    [...ds].reverse().map((d) => html`<tr>
      <td>${when(d.decided_at, p.clock)}</td>
      <td>${d.origin === "auto" ? html`adopted <span class="badge auto">auto</span>` : DECISION_VERB[d.kind] ?? d.kind}</td>
      <td>${d.origin === "auto" ? "the approval policy" : d.decided_by_identity}${
      detailsLine([d.decided_by, ...(d.origin === "auto" ? [`${d.mode ?? ""} mode`] : []), `saw version ${d.version}${d.new_version === null ? "" : ` → ${d.new_version}`}`])
    }</td>
      <td>${d.reason ?? html`<span class="muted">—</span>`}</td>
    </tr>`)
  }</tbody></table>`
}

const SOURCE_KIND: Readonly<Record<string, string>> = { jamie: "Meeting", mail: "Mail", manual: "Own words" }

/** Whether the approval policy adopted the rule and no person confirmed or reviewed it since. */
const retractable = (d: RuleDetail): boolean => d.current.status === "confirmed" && d.adoption.kind === "auto"

/** The newest decision of one of these kinds. */
const newest = (d: RuleDetail, kinds: ReadonlyArray<string>): DecisionRow | undefined => [...d.decisions].reverse().find((x) => kinds.includes(x.kind))

/** Who decided, in the words of the page: the approval policy, or the identity of the grant. */
const decider = (x: DecisionRow): string => (x.origin === "auto" ? "the approval policy" : x.decided_by_identity)

const becauseOf = (reason: string | null): Html | string => (reason === null ? "" : html` Reason: ${reason}.`)

/** How the rule came in force: the newest confirm (the policy's adoption or a person's confirm); "" when it never did. */
const cameInForce = (d: RuleDetail, c: Clockwork): Html | string => {
  const confirm = newest(d, ["confirm"])
  if (confirm === undefined) return ""
  return confirm.origin === "auto"
    ? html`The approval policy (ruleset ${confirm.decided_by.replace(/^policy@/, "")}) adopted it on ${when(confirm.decided_at, c)}.`
    : html`Confirmed by ${confirm.decided_by_identity} on ${when(confirm.decided_at, c)}.`
}

/**
 * Who brought the rule in force and who ended it, for every status: waiting; adopted by the policy
 * (still retractable); confirmed by a person; rejected; revoked, retracted or superseded by a successor.
 */
const adoptionStory = (p: RulePageInput): Html => {
  const d = p.detail
  const v = d.current
  if (v.status === "proposed") return html`<p>It waits for a person.</p>`
  if (retractable(d)) {
    return html`<p><span class="badge auto">auto-adopted</span> The approval policy (ruleset ${d.adoption.kind === "auto" ? d.adoption.ruleset : ""}) adopted this rule without a person. It stays retractable until a person confirms or reviews it; you can confirm, review or revoke it below.</p>`
  }
  const came = cameInForce(d, p.clock)
  if (v.status === "confirmed") return html`<p>${came}</p>`
  if (v.status === "rejected") {
    const rejected = newest(d, ["reject"])
    return html`<p>${rejected === undefined ? "Rejected." : html`Rejected by ${decider(rejected)} on ${when(rejected.decided_at, p.clock)}.${becauseOf(rejected.reason)}`} It never appears outside these pages.</p>`
  }
  const until = v.valid_until ?? ""
  const earlier = ` It applied until ${until} (not on that day); reads and searches of earlier days still show it.`
  const auto = d.adoption.kind === "auto" ? html`<span class="badge auto">auto-adopted</span> ` : ""
  if (v.superseded_by !== null) {
    return html`<p>${auto}${came} Superseded by ${ruleLink(v.superseded_by, v.superseded_by)} from ${until}.${earlier}</p>`
  }
  const ended = newest(d, ["revoke", "retract"])
  const verb = ended?.kind === "retract" ? "Retracted" : "Revoked"
  return html`<p>${auto}${came} ${ended === undefined ? "No longer in force." : html`${verb} by ${decider(ended)} on ${when(ended.decided_at, p.clock)}.${becauseOf(ended.reason)}`}${earlier}</p>`
}

/** Who adopted it and what the policy said of the proposal. */
const classificationSection = (p: RulePageInput): Html | string => {
  const c = p.detail.classification
  const who = adoptionStory(p)
  if (c === null) return html`<section aria-labelledby="class-h"><h2 id="class-h">Adoption</h2>${who}<p class="muted small">No classification (proposed before the approval modes).</p></section>`
  return html`<section aria-labelledby="class-h"><h2 id="class-h">Adoption</h2>${who}
    <dl class="facts">
      <dt>Class</dt><dd>${c.class}</dd>
      <dt>Mode</dt><dd>${c.mode}</dd>
      <dt>Outcome</dt><dd>${c.outcome === "auto" ? "adopted by the policy" : "a person decides"}</dd>
      <dt>Classified</dt><dd>${when(c.classified_at, p.clock)} <span class="muted small">(ruleset ${c.ruleset}, daily limit ${c.daily_limit})</span></dd>
    </dl>
    ${reasonsList(c.exceptions, c.reasons)}</section>`
}

const evidence = (p: RulePageInput): Html => {
  const prov = p.detail.provenance
  const v = p.detail.current
  const src = prov.source
  const link = safeHref(src.link)
  const at = safeHref(v.source_link)
  const head = html`<dl class="facts">
    <dt>Source</dt><dd>${SOURCE_KIND[src.kind] ?? src.kind}${src.title === null ? "" : html`: <b>${src.title}</b>`}</dd>
    ${src.sender === null ? "" : html`<dt>From</dt><dd>${src.sender}</dd>`}
    ${src.occurred_at === null ? "" : html`<dt>Date</dt><dd>${when(src.occurred_at, p.clock)}</dd>`}
    ${v.speaker === null ? "" : html`<dt>Speaker</dt><dd>${v.speaker}</dd>`}
    ${v.timestamp_s === null ? "" : html`<dt>At</dt><dd>${timestamp(v.timestamp_s)}</dd>`}
    <dt>Link</dt><dd>${at !== null ? html`<a href="${at}" rel="noreferrer noopener">${at}</a>` : link !== null ? html`<a href="${link}" rel="noreferrer noopener">${link}</a>` : (v.source_link ?? src.link ?? html`<span class="muted">none</span>`)}</dd>
    <dt>Quote check</dt><dd>${src.kind === "manual" ? "not checked (own words, no stored source)" : "checked against the stored source"}</dd>
  </dl>`
  let windowHtml: Html | string = ""
  if (src.kind === "jamie" && prov.segments !== null) {
    const texts = prov.segments.map((s) => s.text)
    const span = locateQuote(texts.join(" "), v.quote)
    const offsets = offsetsOf(texts)
    const first = offsets.findIndex((o) => within(span, o) !== null)
    windowHtml = html`<h3>Meeting window (±2 minutes around ${timestamp(v.timestamp_s)})</h3>
      ${span === null ? html`<p class="muted small">The quote could not be placed exactly in the window; it is shown above.</p>` : html`<p class="small"><a href="#quote">Show the quote in the transcript</a></p>`}
      <div class="window" aria-label="Transcript window">${prov.segments.map((s, i) => html`<p><span class="ts">[${timestamp(s.start_s)}]</span>${
        s.speaker === null ? "" : html`<span class="speaker">${s.speaker}:</span>`
      }${marked(s.text, within(span, offsets[i] ?? { start: 0, end: 0 }), i === first ? "quote" : undefined)}</p>`)}</div>`
  } else if (src.kind === "mail" && prov.excerpt !== null) {
    const span = locateQuote(prov.excerpt, v.quote)
    windowHtml = html`<h3>Mail text</h3>
      ${span === null ? html`<p class="muted small">The quote could not be placed exactly in the text; it is shown above.</p>` : html`<p class="small"><a href="#quote">Show the quote in the mail</a></p>`}
      <div class="window" aria-label="Mail text"><div class="mailtext">${marked(prov.excerpt, span, "quote")}</div></div>`
  }
  const thread = prov.thread.length === 0 ? "" : html`<h3>Thread (${prov.thread.length})</h3><ul class="list">${prov.thread.map((m) => html`<li>
    <div><b>${m.title}</b> <span class="muted small">${when(m.date, p.clock)}</span></div>
    ${m.excerpt === null ? "" : html`<div class="small">${m.excerpt}</div>`}</li>`)}</ul>`
  const attachments = prov.attachments.length === 0 ? "" : html`<h3>Attachments (${prov.attachments.length})</h3><ul class="list">${
    prov.attachments.map((a) => html`<li>
      <div><b>${a.filename}</b> <span class="muted small">${fileKind(a.media_type)} · ${bytes(a.size)}</span></div>
      ${a.text === null ? html`<div class="muted small">No text (unread).</div>` : html`<details><summary>Its text, ${TEXT_ORIGIN[a.text_origin ?? ""] ?? "as stored"}</summary><div class="mailtext small">${shorten(a.text, 20_000)}</div></details>`}
      ${detailsLine([a.media_type, ...(a.external === null ? [] : [a.external]), `text: ${a.text_origin ?? "none"}`])}
    </li>`)
  }</ul>`
  return html`<section aria-labelledby="evidence-h"><h2 id="evidence-h">Evidence</h2>
    <blockquote>${v.quote}</blockquote>
    ${head}${windowHtml}${thread}${attachments}</section>`
}

const draft = (p: RulePageInput, decision: string, field: string, fallback: string): string => {
  const o = p.outcome
  // a refused form of the conflict view (it sends `conflict`) fills its own form, not these
  if (o?.kind === "refused" && o.sent.decision === decision && o.sent.conflict === undefined && o.sent[field] !== undefined) return o.sent[field]
  return fallback
}

/** Blank rows the confirm form offers below the rule's relations (no script: a row per relation to add). */
const BLANK_RELATION_ROWS = 2

/**
 * The relations as rows of kind and name (a blank kind and name: the row is ignored); the
 * reference of an existing relation travels along hidden. After a refusal, the rows as sent.
 */
const relationEditor = (p: RulePageInput, current: ReadonlyArray<RelationOut>): Html => {
  const o = p.outcome
  const sent = o?.kind === "refused" && o.sent.decision === "confirm" && o.sent.relations_rows !== undefined ? postedRows(o.sent) : null
  const base = sent ?? current.map((r) => ({ kind: r.kind, name: r.name, ref: r.ref ?? "" }))
  const blanks = Math.max(0, Math.min(BLANK_RELATION_ROWS, MAX_RELATION_ROWS - base.length))
  const rows = sent ?? [...base, ...Array.from({ length: blanks }, () => ({ kind: "", name: "", ref: "" }))]
  return html`<div class="relations" role="group" aria-labelledby="c-relations-h">
    <p class="label" id="c-relations-h">Relations <span class="hint">(what the rule is about: a customer, product or supplier and its name; leave a row empty to remove it)</span></p>
    <input type="hidden" name="relations_rows" value="1">
    ${rows.map((r, i) => html`<div class="relrow">
      <select name="relation_kind_${i}" aria-label="Relation ${i + 1}: kind"><option value=""${r.kind === "" ? " selected" : ""}>—</option>${
      [...RELATION_KINDS, ...(r.kind !== "" && !(RELATION_KINDS as ReadonlyArray<string>).includes(r.kind) ? [r.kind] : [])].map((k) =>
        html`<option value="${k}"${r.kind === k ? " selected" : ""}>${k}</option>`)
    }</select>
      <input type="text" name="relation_name_${i}" aria-label="Relation ${i + 1}: name" maxlength="200" value="${r.name}">
      ${r.ref === "" ? "" : html`<input type="hidden" name="relation_ref_${i}" value="${r.ref}">`}
    </div>`)}
  </div>`
}

const decisionForms = (p: RulePageInput): Html => {
  const v = p.detail.current
  const action = `/v1/rules/${segment(p.ruleId)}/decision`
  const hidden = (decision: string) => html`<input type="hidden" name="decision" value="${decision}"><input type="hidden" name="version" value="${v.version}">${csrfField(p.viewer)}`
  if (!p.canDecide) return html`<p class="notice warn">Your grant can read this scope but not decide in it.</p>`
  const adopted = retractable(p.detail)
  if (v.status === "proposed" || adopted) {
    const kw = parseList<string>(v.keywords).join(", ")
    const confirm = html`
<form method="post" action="${action}" class="decide" aria-labelledby="confirm-h">
  <h3 id="confirm-h">Confirm</h3>
  ${adopted ? html`<p class="small muted">The policy adopted it; your confirmation makes it a person's decision, so it can no longer be retracted.</p>` : ""}
  ${hidden("confirm")}
  <label for="c-statement">Statement <span class="hint">(10–500 characters)</span></label>
  <textarea id="c-statement" name="statement" required minlength="10" maxlength="500">${draft(p, "confirm", "statement", v.statement)}</textarea>
  <label for="c-keywords">Keywords <span class="hint">(comma-separated, at most 30)</span></label>
  <input id="c-keywords" type="text" name="keywords" value="${draft(p, "confirm", "keywords", kw)}">
  <label for="c-valid-from">Valid from <span class="hint">(a day: YYYY-MM-DD)</span></label>
  <input id="c-valid-from" type="text" name="valid_from" required inputmode="numeric" pattern="[0-9]{4}-[0-9]{2}-[0-9]{2}" placeholder="YYYY-MM-DD" value="${draft(p, "confirm", "valid_from", v.valid_from)}">
  <details${p.outcome?.kind === "refused" && p.outcome.sent.decision === "confirm" && p.outcome.sent.conflict === undefined ? " open" : ""}><summary>More fields</summary>
    <label for="c-kind">Kind</label>
    <select id="c-kind" name="kind">${(["rule", "note"] as const).map((k) => html`<option value="${k}"${draft(p, "confirm", "kind", v.kind) === k ? " selected" : ""}>${k}</option>`)}</select>
    ${relationEditor(p, parseList<RelationOut>(v.relations))}
    <label for="c-said-at">Said at <span class="hint">(YYYY-MM-DD HH:MM, ${p.clock.zone})</span></label>
    <input id="c-said-at" type="text" name="said_at_local" value="${draft(p, "confirm", "said_at_local", localTime(v.said_at, p.clock))}">
    <input type="hidden" name="said_at_shown" value="${localTime(v.said_at, p.clock)}">
    <label for="c-speaker">Speaker <span class="hint">(empty: unchanged)</span></label>
    <input id="c-speaker" type="text" name="speaker" value="${draft(p, "confirm", "speaker", v.speaker ?? "")}">
    <label for="c-supersedes">Supersedes <span class="hint">(a confirmed rule id of this scope; empty: unchanged)</span></label>
    <input id="c-supersedes" type="text" name="supersedes" value="${draft(p, "confirm", "supersedes", v.supersedes ?? "")}">
  </details>
  <label for="c-reason">Note <span class="hint">(optional)</span></label>
  <input id="c-reason" type="text" name="reason" maxlength="1000" value="${draft(p, "confirm", "reason", "")}">
  <button type="submit">Confirm version ${v.version}</button>
</form>`
    // a confirmed rule (also one the policy adopted) is never rejected: agents may have read it; it is revoked from a day
    if (adopted) return html`${confirm}${reviewRevoke(p, action, hidden)}`
    return html`${confirm}
<form method="post" action="${action}" class="decide" aria-labelledby="reject-h">
  <h3 id="reject-h">Reject</h3>
  ${hidden("reject")}
  <label for="r-reason">Reason <span class="hint">(required)</span></label>
  <textarea id="r-reason" name="reason" required maxlength="1000">${draft(p, "reject", "reason", "")}</textarea>
  <button type="submit" class="danger">Reject version ${v.version}</button>
</form>`
  }
  if (v.status === "confirmed") return reviewRevoke(p, action, hidden)
  return html`<p class="notice">This rule is ${v.status}; there is nothing left to decide.</p>`
}

/** The review and revoke forms of a confirmed rule. */
const reviewRevoke = (p: RulePageInput, action: string, hidden: (decision: string) => Html): Html => {
  const v = p.detail.current
  const kw = parseList<string>(v.keywords).join(", ")
  return html`
<form method="post" action="${action}" class="decide" aria-labelledby="review-h">
  <h3 id="review-h">Review</h3>
  <p class="small muted">Still valid? A review records that you checked it; changed keywords make a new version.</p>
  ${hidden("review")}
  <label for="v-keywords">Keywords <span class="hint">(comma-separated)</span></label>
  <input id="v-keywords" type="text" name="keywords" value="${draft(p, "review", "keywords", kw)}">
  <label for="v-reason">Note <span class="hint">(optional)</span></label>
  <input id="v-reason" type="text" name="reason" maxlength="1000" value="${draft(p, "review", "reason", "")}">
  <button type="submit" class="secondary">Still valid: mark reviewed</button>
</form>
<form method="post" action="${action}" class="decide" aria-labelledby="revoke-h">
  <h3 id="revoke-h">Revoke</h3>
  <p class="small muted">No longer valid: it stops applying from the day you give. Searches and reads of the days before still show it, so what agents were told stays on record.</p>
  ${hidden("revoke")}
  <label for="k-valid-until">Valid until <span class="hint">(the first day it no longer applies, YYYY-MM-DD, not before ${v.valid_from})</span></label>
  <input id="k-valid-until" type="text" name="valid_until" required inputmode="numeric" pattern="[0-9]{4}-[0-9]{2}-[0-9]{2}" placeholder="YYYY-MM-DD" value="${draft(p, "revoke", "valid_until", dayIn(p.clock.zone, p.clock.nowMs))}">
  <label for="k-reason">Reason <span class="hint">(required)</span></label>
  <textarea id="k-reason" name="reason" required maxlength="1000">${draft(p, "revoke", "reason", "")}</textarea>
  <button type="submit" class="danger">Revoke version ${v.version}</button>
</form>`
}

const neighbours = (p: RulePageInput): Html => {
  const d = p.detail
  return html`
<section aria-labelledby="dups-h"><h2 id="dups-h">Similar rules</h2>${
    d.duplicates.length === 0
      ? html`<p class="muted">None found.</p>`
      : html`<p class="small muted">The closest rules of the scope by their words; one marked <b>near duplicate</b> says nearly the same.</p><ul class="list">${d.duplicates.map((n) => html`<li><div class="statement">${ruleLink(n.rule_id, n.statement)}</div><div class="meta">${badge(n.status)}${n.near ? html`<span class="badge exception">near duplicate</span>` : ""}</div>${detailsLine([n.rule_id, `version ${n.version}`])}</li>`)}</ul>`
  }</section>
<section aria-labelledby="rej-h"><h2 id="rej-h">Previously rejected similar</h2>${
    d.rejected.length === 0
      ? html`<p class="muted">None.</p>`
      : html`<ul class="list">${d.rejected.map((r) => html`<li><div class="statement">${ruleLink(r.rule_id, r.statement)}</div>
        <div class="meta">${badge("rejected")}${r.rejected_at === null ? "" : html`<span>${when(r.rejected_at, p.clock)}</span>`}${r.decided_by_identity === null ? "" : html`<span>by ${r.decided_by_identity}</span>`}</div>
        ${r.reason === null ? "" : html`<div class="small">Reason: ${r.reason}</div>`}${detailsLine([r.rule_id])}</li>`)}</ul>`
  }</section>`
}

/** "text redacted on <day>: <reason>" for each redaction that touched the rule, to persons with redact or decide. */
const redactionNotes = (p: RulePageInput): Html | string =>
  p.seesRedactions !== true || p.detail.redactions.length === 0
    ? ""
    : html`${p.detail.redactions.map((r) =>
      html`<p class="notice redaction" id="${r.id}">Text redacted on <time datetime="${r.at}">${dayIn(p.clock.zone, Date.parse(r.at))}</time>: ${r.reason}</p>`)}`

export const rulePage = (p: RulePageInput): Html => {
  const d = p.detail
  const v = d.current
  const scope = p.ruleId.replace(/-\d{4,}$/, "")
  const proposedAge = ageDays(d.head.created_at, p.clock.nowMs, p.clock.zone)
  const reviewedAge = d.reviewedAt === null ? null : ageDays(d.reviewedAt, p.clock.nowMs, p.clock.zone)
  const nextLink = d.nextProposal === null ? "" : html` <a href="${rulePath(d.nextProposal)}">Next open proposal →</a>`
  let notice: Html | string = ""
  if (p.outcome?.kind === "done") notice = doneNotice(p.outcome, html`<p>${nextLink === "" ? "" : html`${nextLink} · `}<a href="/approval">All open proposals</a></p>`)
  if (p.outcome?.kind === "refused") {
    const saw = Number(p.outcome.sent.version)
    const seen = d.versions.find((x) => x.version === saw)
    const last = d.decisions[d.decisions.length - 1]
    const changed = seen !== undefined && seen.version !== v.version
      ? html`<h3>What changed since version ${seen.version}</h3>${
        last === undefined ? "" : html`<p>Last decision: ${DECISION_VERB[last.kind] ?? last.kind} by ${last.decided_by_identity}, ${when(last.decided_at, p.clock)}${last.reason === null ? "" : html` (${last.reason})`}.</p>`
      }${changeTable(seen, v, p.clock)}<p>The forms below are for version ${v.version}.</p>`
      : ""
    // after the redirect of a stale decision the page names the current version itself
    const refused = p.outcome.current === null && p.outcome.code === "version-outdated" ? { ...p.outcome, current: `rule/${p.ruleId}@${v.version}` } : p.outcome
    notice = refusedNotice(refused, changed)
  }
  const rejected = v.status === "rejected" ? newest(d, ["reject"]) : undefined
  const status = v.status === "proposed"
    ? html`proposed <time datetime="${d.head.created_at}">${ageText(proposedAge)}</time>, not confirmed`
    : v.status === "rejected"
    ? html`rejected${rejected === undefined ? "" : html` by ${decider(rejected)} ${when(rejected.decided_at, p.clock, true)}`}`
    : v.status === "superseded"
    ? html`no longer in force from ${v.valid_until ?? ""}`
    : reviewedAge === null ? html`${v.status}` : html`${v.status}; last reviewed <time datetime="${d.reviewedAt ?? ""}">${ageText(reviewedAge)}</time>`
  // who wrote the current version, and as what: the decision that made it, else (a predecessor superseded by its successor's confirm) "changed"
  const made = d.decisions.find((x) => x.new_version === v.version)
  const madeBy = v.version === 1 ? [] : [`${made === undefined ? "changed" : DECISION_VERB[made.kind] ?? made.kind} by ${v.changed_by}`]
  const body = html`
<p class="small"><a href="/approval">← Open proposals</a> · <a href="/approval/rejected?scope=${scope}">Rejected in ${scope}</a>${nextLink === "" ? "" : html` ·${nextLink}`}</p>
${notice}
<h1>${v.statement}</h1>
<div class="meta">${badge(v.status)}${d.adoption.kind === "auto" ? html`<span class="badge auto">auto-adopted</span>` : ""}<span>${v.kind === "note" ? "a note" : "a rule"}</span><span>${status}</span>${
    d.versions.length > 1 ? html`<span>${plural(d.versions.length, "version")}</span>` : ""
  }</div>
${detailsLine([p.ruleId, `version ${v.version}`, `proposed by ${d.head.created_by}`, ...madeBy, `reason "${v.reason}"`])}
${redactionNotes(p)}
${d.successor === null ? "" : html`<p class="notice">Superseded by ${ruleLink(d.successor.rule_id, `${d.successor.rule_id}: ${d.successor.statement}`)}.</p>`}
${d.predecessor === null ? "" : html`<p class="small">Replaces ${ruleLink(d.predecessor.rule_id, `${d.predecessor.rule_id}: ${d.predecessor.statement}`)} (${d.predecessor.status}).</p>`}
${conflictSection({ ruleId: p.ruleId, current: v, conflicts: d.conflicts, viewer: p.viewer, canDecide: p.canDecide, outcome: p.outcome }, { kind: d.provenance.source.kind, title: d.provenance.source.title })}
<div class="grid">
  <div>
    ${evidence(p)}
    ${neighbours(p)}
  </div>
  <div>
    ${classificationSection(p)}
    <section aria-labelledby="decide-h"><h2 id="decide-h">Decide</h2>${decisionForms(p)}</section>
    ${p.pendingLinks ?? ""}
  </div>
</div>
<section aria-labelledby="versions-h"><h2 id="versions-h">Versions</h2>
<ol class="list versions" reversed>${[...d.versions].reverse().map((x) => versionCard(x, d.versions[x.version - 2], x.version === v.version, p))}</ol>
</section>
<section aria-labelledby="decisions-h"><h2 id="decisions-h">Decisions</h2>${decisionsTable(p)}</section>`
  return layout({ title: shorten(v.statement, 60), viewer: p.viewer, body })
}
