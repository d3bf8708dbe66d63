/**
 * /approval/redactions (gaps.md §12): a person with `redact` erases a term from a scope. The start
 * page has the form for the term and the scope and, per scope, the past redactions (when, who,
 * why, how many places — never the term). The preview page lists every place (table, column,
 * row, count), the identifiers that keep the term, the rules whose text or evidence it touches,
 * and the confirmation with its required reason. Every form carries the csrf token; the term
 * travels only in POST bodies, never in an address.
 */
import type { RedactionPreviewOut } from "../contracts/redaction.js"
import { plural } from "../contracts/words.js"
import { type Clockwork, detailsLine, when } from "./format.js"
import { type Html, html } from "./html.js"
import { csrfField, layout, type Viewer } from "./layout.js"
import type { PastRedaction } from "./redactions-queries.js"
import { ruleLink } from "./rule-page.js"

export const REDACTIONS_PATH = "/approval/redactions"
export const PAST_SHOWN = 100

export const redactionsPath = (scope: string | null): string => (scope === null ? REDACTIONS_PATH : `${REDACTIONS_PATH}?scope=${encodeURIComponent(scope)}`)

/** The scope's past redactions, or why the scope cannot be read now. */
export interface PastSection {
  readonly scope: string
  readonly unavailable: string | null
  readonly rows: ReadonlyArray<PastRedaction>
}

/** A refusal shown at the top of a page: plain words, the code and status on the details line. */
export interface Refusal {
  readonly status: number
  readonly code: string
  readonly message: string
}

const REFUSED_TEXT: Readonly<Record<string, string>> = {
  "preview-stale": "the places changed since your preview",
  "validation-failed": "a field needs correcting",
  "backup-running": "a backup is running; try again in a moment",
  "rate-limited": "too many at once; wait a moment"
}

const refusedNotice = (r: Refusal): Html => html`
<div class="notice ${r.status === 409 ? "warn" : "error"}" role="alert" id="outcome">
  <h2>Nothing erased: ${REFUSED_TEXT[r.code] ?? r.code}</h2>
  <p>${r.message}</p>
  ${r.code === "preview-stale" ? html`<p>Below is the preview as the scope stands now. Check it and confirm again.</p>` : ""}
  <p class="details">Details: ${r.code} (${r.status})</p>
</div>`

/** The notice after a redaction (after the redirect: its id from the query). */
const erasedNotice = (id: string, walHeld: boolean): Html => html`
<div class="notice ${walHeld ? "warn" : "ok"}" role="status" id="outcome">
  <h2>Erased${walHeld ? " — but the old text is still in the file's write-ahead log" : "."}</h2>
  <p>Every place of the preview now reads [redacted]; searches and answers no longer find the term. The list below keeps who erased it, when and why — never the term.</p>
  ${walHeld ? html`<p id="wal-held">Another process (usually Litestream) holds the scope's file open, so the checkpoint that clears the write-ahead log (the file beside it ending in -wal) could not complete: the erased text is still in that file and in what Litestream copies from it. Stop Litestream now; the service finishes the checkpoint at the next redaction or when it restarts. Then start Litestream again and run <code>groundnote backup run</code>, which replaces the replica with a clean one (docs/redaction.md).</p>` : ""}
  <p class="details">Details: ${id}${walHeld ? " · checkpoint incomplete" : ""}</p>
</div>`

/** Table and column as a person reads them. */
const COLUMN_LABEL: Readonly<Record<string, string>> = {
  "source.title": "Source title", "source.sender": "Source sender", "source.excerpt": "Source text",
  "source_segment.text": "Meeting transcript line", "source_segment.speaker": "Meeting speaker",
  "source_attachment.filename": "Attachment name", "source_attachment.text": "Attachment text",
  "source_auth.mail_from": "Mail sender address", "source_auth.authentication_results": "Mail authentication header",
  "rule_version.statement": "Rule statement", "rule_version.quote": "Rule quote", "rule_version.speaker": "Rule speaker",
  "rule_version.relations": "Rule relations", "rule_version.keywords": "Rule keywords", "rule_version.reason": "Rule version reason",
  "decision.reason": "Decision reason", "review.reason": "Review reason",
  "entity_version.name": "Entity name", "entity_version.aliases": "Entity aliases", "entity_version.evidence": "Entity evidence",
  "entity_version.reason": "Entity reason", "link.reason": "Link reason", "link.evidence": "Link evidence",
  "classification.reasons": "Approval policy reasons", "search_log.terms": "Search terms", "search_log.variants": "Search variants"
}

const columnLabel = (table: string, column: string): string => COLUMN_LABEL[`${table}.${column}`] ?? `${table}.${column}`

const scopeSelect = (scopes: ReadonlyArray<string>, selected: string | null): Html =>
  html`<select id="r-scope" name="scope" required>${scopes.map((s) => html`<option value="${s}"${s === selected ? " selected" : ""}>${s}</option>`)}</select>`

/** The form that asks for a preview: the term and the scope. */
const termForm = (o: { readonly viewer: Viewer; readonly scopes: ReadonlyArray<string>; readonly scope: string | null; readonly term: string }): Html => html`
<form class="decide" method="post" action="/v1/redactions/preview" id="preview-form">
  ${csrfField(o.viewer)}
  <h2>Erase a term</h2>
  <p class="small muted">A name, an address, a phone number — any literal text of at least 3 characters. The next page shows every place it occurs before anything changes.</p>
  <label for="r-term">Term <span class="hint">(matched regardless of case, umlauts and spacing)</span></label>
  <input type="text" id="r-term" name="term" required minlength="3" maxlength="200" autocomplete="off" value="${o.term}">
  <label for="r-scope">Scope</label>
  ${scopeSelect(o.scopes, o.scope)}
  <button type="submit">Show every place</button>
</form>`

const pastTable = (s: PastSection, clock: Clockwork): Html => {
  if (s.unavailable !== null) return html`<p class="notice warn">${s.unavailable}</p>`
  if (s.rows.length === 0) return html`<p class="muted">No redaction yet.</p>`
  return html`<table class="past">
  <thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">Why</th><th scope="col">Places</th></tr></thead>
  <tbody>${s.rows.map((r) => html`<tr id="${r.id}">
    <td>${when(r.at, clock)}</td>
    <td>${r.decided_by}</td>
    <td>${r.reason}</td>
    <td>${r.places}<div class="details">${r.id}</div></td>
  </tr>`)}</tbody>
</table>`
}

/** GET /approval/redactions: the term form and the past redactions of each scope. */
export const redactionsPage = (o: {
  readonly viewer: Viewer
  readonly scopes: ReadonlyArray<string>
  readonly scope: string | null
  readonly past: ReadonlyArray<PastSection>
  readonly clock: Clockwork
  readonly erased: string | null
  readonly walHeld?: boolean
  readonly refusal?: Refusal | null
  readonly term?: string
}): Html => {
  const body = html`
<p class="small"><a href="/approval">← Open proposals</a></p>
<h1>Erase personal data</h1>
${o.erased === null ? "" : erasedNotice(o.erased, o.walHeld === true)}
${o.refusal === undefined || o.refusal === null ? "" : refusedNotice(o.refusal)}
<p class="muted">For an erasure request: every place a term occurs in a scope is replaced by [redacted]. Rules keep their status and history; ids, message ids, dates and counts stay. This cannot be undone.</p>
${termForm({ viewer: o.viewer, scopes: o.scopes, scope: o.scope, term: o.term ?? "" })}
<h2>Past redactions</h2>
<p class="small muted">When, who, why and how many places. The term itself is never kept.</p>
${o.past.map((s) => html`<section aria-labelledby="past-${s.scope}"><h3 id="past-${s.scope}">${s.scope}</h3>${pastTable(s, o.clock)}</section>`)}`
  return layout({ title: "Erase personal data", viewer: o.viewer, body })
}

const ruleIdOfRef = (ref: string): string => ref.replace(/^rule\//, "").replace(/@\d+$/, "")

/** The preview of a term: every place, the identifiers that keep it, the rules it touches, and the confirmation. */
export const previewPage = (o: {
  readonly viewer: Viewer
  readonly scopes: ReadonlyArray<string>
  readonly term: string
  readonly preview: RedactionPreviewOut
  readonly refusal?: Refusal | null
  readonly reason?: string
}): Html => {
  const p = o.preview
  const kept = p.kept ?? []
  const body = html`
<p class="small"><a href="${redactionsPath(p.scope)}">← Erase personal data</a></p>
<h1>${p.total === 0 ? "Nothing to erase" : `Erase ${plural(p.total, "occurrence")} in ${plural(p.places.length, "place")}?`}</h1>
${o.refusal === undefined || o.refusal === null ? "" : refusedNotice(o.refusal)}
<dl class="facts"><dt>Term</dt><dd><b>${o.term}</b></dd><dt>Scope</dt><dd>${p.scope}</dd></dl>
${p.total === 0
    ? html`<p class="notice warn" id="nothing">The term occurs nowhere in ${p.scope} (outside identifiers). Nothing is erased.</p>`
    : html`<h2 id="places-h">Every place</h2>
<table class="places">
  <thead><tr><th scope="col">Where</th><th scope="col">Table</th><th scope="col">Column</th><th scope="col">Row</th><th scope="col">Count</th></tr></thead>
  <tbody>${p.places.map((pl) => html`<tr><td>${columnLabel(pl.table, pl.column)}</td><td><code>${pl.table}</code></td><td><code>${pl.column}</code></td><td><code>${pl.key}</code></td><td>${pl.count}</td></tr>`)}</tbody>
</table>`}
${kept.length === 0 ? "" : html`<h2 id="kept-h">Stays as it is</h2>
<p class="small muted">These identifiers hold the term too. Ids, message ids, refs and dates identify records and stay unchanged.</p>
<table class="kept">
  <thead><tr><th scope="col">Table</th><th scope="col">Column</th><th scope="col">Count</th></tr></thead>
  <tbody>${kept.map((k) => html`<tr><td><code>${k.table}</code></td><td><code>${k.column}</code></td><td>${k.count}</td></tr>`)}</tbody>
</table>`}
${p.rules.length === 0 ? "" : html`<h2 id="rules-h">Rules whose text or evidence it touches</h2>
<p class="small muted">They keep their status and history; their text shows [redacted] where the term stood.</p>
<ul class="rules">${p.rules.map((ref) => html`<li>${ruleLink(ruleIdOfRef(ref), ref)}</li>`)}</ul>`}
${p.total === 0 ? "" : html`<form class="decide" method="post" action="/v1/redactions" id="confirm-form">
  ${csrfField(o.viewer)}
  <input type="hidden" name="scope" value="${p.scope}">
  <input type="hidden" name="term" value="${o.term}">
  <input type="hidden" name="preview" value="${p.preview}">
  <h2>Confirm</h2>
  <label for="r-reason">Reason <span class="hint">(required, e.g. the request's number; kept with the redaction)</span></label>
  <textarea id="r-reason" name="reason" required maxlength="500">${o.reason ?? ""}</textarea>
  <button type="submit" class="danger">Erase ${plural(p.total, "occurrence")} for good</button>
</form>`}
${detailsLine([`preview ${p.preview.slice(0, 12)}`])}
${termForm({ viewer: o.viewer, scopes: o.scopes, scope: p.scope, term: o.term })}`
  return layout({ title: "Erase personal data: preview", viewer: o.viewer, body })
}
