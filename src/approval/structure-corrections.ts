/**
 * The structure page's corrections (gaps.md §13, graph.md §15 Q2/Q3): a person creates an entity
 * or a link directly (born confirmed), closes a confirmed link, unarchives an entity; each form
 * with a reason and the csrf token. What a refused form sent comes back into it.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import type { PathItem } from "../contracts/errors.js"
import { pathsOf } from "../graph/paths.js"
import { endKindOf, entityIdOfEnd, PROPOSABLE_TYPES, ruleIdOfEnd } from "../graph/link-types.js"
import { type Clockwork, when } from "./format.js"
import { type Html, html, segment } from "./html.js"
import { csrfField, type Viewer } from "./layout.js"
import type { Outcome } from "./outcome.js"

/** At most this many closable links and archived entities are listed, newest first. */
export const CORRECTION_LIST_LIMIT = 50

export interface ClosableLink {
  readonly id: string
  readonly type: string
  readonly from: string
  readonly to: string
  readonly since: string
}

export interface ArchivedEntity {
  readonly id: string
  readonly version: number
  readonly name: string
  readonly type: string
  readonly path: ReadonlyArray<PathItem>
  readonly since: string
}

export interface CorrectionsData {
  readonly entityTypes: ReadonlyArray<string>
  /** current entities (not archived) to pick as a parent or a link end: id and path */
  readonly entities: ReadonlyArray<{ readonly id: string; readonly path: ReadonlyArray<PathItem> }>
  readonly closable: ReadonlyArray<ClosableLink>
  readonly archived: ReadonlyArray<ArchivedEntity>
}

const pathWords = (path: ReadonlyArray<PathItem>): string => path.map((p) => p.name).join(" › ")

/** What the page shows of the scope for the corrections: the entities to pick, the confirmed open links, the archived entities. */
export const loadCorrections = (sql: SqlClient, entityTypes: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const current = yield* sql<{ id: string }>`SELECT id FROM entity_current WHERE status <> 'archived' ORDER BY lower(name), id LIMIT 500`
    const links = yield* sql<{ id: string; type: string; from_ref: string; to_ref: string; valid_from: string }>`
      SELECT l.id, l.type, l.from_ref, l.to_ref, l.valid_from FROM link l
      WHERE l.valid_to IS NULL AND l.origin <> 'deterministic'
        AND EXISTS (SELECT 1 FROM review r WHERE r.target = 'link/' || l.id AND r.verdict = 'confirm')
        AND NOT EXISTS (SELECT 1 FROM review r WHERE r.target = 'link/' || l.id AND r.verdict IN ('reject','close','retract'))
      ORDER BY l.seq DESC LIMIT ${CORRECTION_LIST_LIMIT}`
    const archived = yield* sql<{ id: string; version: number; name: string; type: string; valid_to: string }>`
      SELECT id, version, name, type, valid_to FROM entity_current WHERE status = 'archived'
      ORDER BY changed_at DESC, id LIMIT ${CORRECTION_LIST_LIMIT}`
    const endEntities = links.flatMap((l) => [l.from_ref, l.to_ref]).filter((r) => endKindOf(r) === "entity").map(entityIdOfEnd)
    const paths = yield* pathsOf(sql, [...new Set([...current.map((c) => c.id), ...endEntities, ...archived.map((a) => a.id)])])
    const ruleIds = links.flatMap((l) => [l.from_ref, l.to_ref]).filter((r) => endKindOf(r) === "rule").map(ruleIdOfEnd)
    const rules = new Map(ruleIds.length === 0 ? [] : (yield* sql<{ rule_id: string; statement: string }>`
      SELECT rule_id, statement FROM current_version WHERE rule_id IN ${sql.in(ruleIds)}`).map((r) => [`rule/${r.rule_id}`, r.statement]))
    const describe = (ref: string): string => {
      switch (endKindOf(ref)) {
        case "entity":
          return pathWords(paths.get(entityIdOfEnd(ref)) ?? []) || ref
        case "rule":
          return `rule “${rules.get(ref) ?? ref}”`
        default:
          return ref
      }
    }
    const data: CorrectionsData = {
      entityTypes,
      entities: current.map((c) => ({ id: c.id, path: paths.get(c.id) ?? [] })),
      closable: links.map((l) => ({ id: l.id, type: l.type, from: describe(l.from_ref), to: describe(l.to_ref), since: l.valid_from })),
      archived: archived.map((a) => ({ ...a, path: paths.get(a.id) ?? [], since: a.valid_to }))
    }
    return data
  })

/** What a refused correction form sent, to put back into it (nothing of another form). */
const sentOf = (outcome: Outcome | null, kind: string): Readonly<Record<string, string>> =>
  outcome?.kind === "refused" && outcome.sent.correction === kind ? outcome.sent : {}

const options = (values: ReadonlyArray<string>, chosen: string | undefined): Html =>
  html`${values.map((v) => html`<option value="${v}"${v === chosen ? html` selected` : ""}>${v}</option>`)}`

const entityForm = (viewer: Viewer, scope: string, d: CorrectionsData, sent: Readonly<Record<string, string>>): Html => html`
<form method="post" action="/v1/structure/entities" class="decide" aria-label="Create an entity">
  <h3>Create an entity</h3>
  <p class="small muted">It is confirmed at once: agents find it and may file things under it.</p>
  <input type="hidden" name="scope" value="${scope}">${csrfField(viewer)}
  <label for="ce-type">Type</label>
  <select id="ce-type" name="type">${options(d.entityTypes, sent.type)}</select>
  <label for="ce-name">Name</label>
  <input id="ce-name" type="text" name="name" maxlength="200" value="${sent.name ?? ""}">
  <label for="ce-parent">Parent</label>
  <select id="ce-parent" name="parent_id"><option value="">(the top level)</option>${
    d.entities.map((e) => html`<option value="${e.id}"${e.id === sent.parent_id ? html` selected` : ""}>${pathWords(e.path) || e.id}</option>`)
  }</select>
  <label for="ce-aliases">Other names <span class="hint">(optional, separated by commas)</span></label>
  <input id="ce-aliases" type="text" name="aliases" value="${sent.aliases ?? ""}">
  <label for="ce-evidence">Evidence <span class="hint">(optional: where this comes from)</span></label>
  <input id="ce-evidence" type="text" name="evidence" maxlength="1000" value="${sent.evidence ?? ""}">
  <label><input type="checkbox" name="force" value="true"${sent.force === "true" ? html` checked` : ""}> It is a different one than the similar entities shown <span class="hint">(only after a refusal named them)</span></label>
  <label for="ce-reason">Reason <span class="hint">(required)</span></label>
  <input id="ce-reason" type="text" name="reason" maxlength="1000" value="${sent.reason ?? ""}">
  <button type="submit">Create entity</button>
</form>`

const linkForm = (viewer: Viewer, scope: string, sent: Readonly<Record<string, string>>): Html => html`
<form method="post" action="/v1/structure/links" class="decide" aria-label="Create a link">
  <h3>Create a link</h3>
  <p class="small muted">It is confirmed at once. Write each end as entity/…, rule/…, source/… or attachment/…#n with its id (the entity ids are listed below the form).</p>
  <input type="hidden" name="scope" value="${scope}">${csrfField(viewer)}
  <label for="cl-from">From</label>
  <input id="cl-from" type="text" name="from_ref" value="${sent.from_ref ?? ""}">
  <label for="cl-type">Type</label>
  <select id="cl-type" name="type">${options(PROPOSABLE_TYPES, sent.type)}</select>
  <label for="cl-to">To</label>
  <input id="cl-to" type="text" name="to_ref" value="${sent.to_ref ?? ""}">
  <label for="cl-evidence">Evidence <span class="hint">(optional)</span></label>
  <input id="cl-evidence" type="text" name="evidence" maxlength="1000" value="${sent.evidence ?? ""}">
  <label for="cl-reason">Reason <span class="hint">(required)</span></label>
  <input id="cl-reason" type="text" name="reason" maxlength="1000" value="${sent.reason ?? ""}">
  <button type="submit">Create link</button>
</form>`

const entityIds = (d: CorrectionsData): Html => html`<details><summary>Entity ids in this scope</summary>
<dl class="facts small">${d.entities.map((e) => html`<dt>entity/${e.id}</dt><dd>${pathWords(e.path)}</dd>`)}</dl></details>`

const closeList = (viewer: Viewer, d: CorrectionsData, sent: Readonly<Record<string, string>>, clock: Clockwork): Html => html`
<h3>Close a link</h3>
<p class="small muted">A closed link no longer holds from today; its history stays.${d.closable.length >= CORRECTION_LIST_LIMIT ? ` The newest ${CORRECTION_LIST_LIMIT} confirmed links are listed.` : ""}</p>
${d.closable.length === 0 ? html`<p class="muted">No confirmed link is open.</p>` : html`<ul class="list">${d.closable.map((l) => html`<li id="close-${l.id}">
  <div><b>${l.type}</b>: ${l.from} → ${l.to} <span class="muted small">since ${when(l.since, clock, true)}</span></div>
  <details${sent.link === l.id ? html` open` : ""}><summary>Close this link</summary>
  <form method="post" action="/v1/links/${segment(l.id)}/close" class="decide" aria-label="Close ${l.id}">
    ${csrfField(viewer)}
    <label for="cx-${l.id}">Reason <span class="hint">(required)</span></label>
    <input id="cx-${l.id}" type="text" name="reason" maxlength="1000" value="${sent.link === l.id ? (sent.reason ?? "") : ""}">
    <button type="submit" class="danger">Close link</button>
  </form></details>
</li>`)}</ul>`}`

const unarchiveList = (viewer: Viewer, d: CorrectionsData, sent: Readonly<Record<string, string>>): Html => html`
<h3>Unarchive an entity</h3>
<p class="small muted">It comes back where it was, with its name and other names; its parent must not be archived.${d.archived.length >= CORRECTION_LIST_LIMIT ? ` The ${CORRECTION_LIST_LIMIT} most recently archived are listed.` : ""}</p>
${d.archived.length === 0 ? html`<p class="muted">No entity is archived.</p>` : html`<ul class="list">${d.archived.map((a) => html`<li id="unarchive-${a.id}">
  <div>${pathWords(a.path) || a.name} <span class="muted small">(${a.type}, archived since ${a.since})</span></div>
  <details${sent.entity === a.id ? html` open` : ""}><summary>Unarchive ${a.name}</summary>
  <form method="post" action="/v1/entities/${segment(a.id)}/unarchive" class="decide" aria-label="Unarchive ${a.id}">
    <input type="hidden" name="version" value="${a.version}">${csrfField(viewer)}
    <label for="ua-${a.id}">Reason <span class="hint">(required)</span></label>
    <input id="ua-${a.id}" type="text" name="reason" maxlength="1000" value="${sent.entity === a.id ? (sent.reason ?? "") : ""}">
    <button type="submit">Unarchive</button>
  </form></details>
</li>`)}</ul>`}`

/** The section "Correct the structure" (a person with decide only). */
export const correctionsSection = (o: {
  readonly scope: string
  readonly viewer: Viewer
  readonly data: CorrectionsData
  readonly outcome: Outcome | null
  readonly clock: Clockwork
}): Html => html`
<section id="corrections" aria-labelledby="corrections-h">
<h2 id="corrections-h">Correct the structure</h2>
<p class="small muted">What you do here is saved as yours, with your reason, and takes effect at once.</p>
${entityForm(o.viewer, o.scope, o.data, sentOf(o.outcome, "entity"))}
${linkForm(o.viewer, o.scope, sentOf(o.outcome, "link"))}
${entityIds(o.data)}
${closeList(o.viewer, o.data, sentOf(o.outcome, "close"), o.clock)}
${unarchiveList(o.viewer, o.data, sentOf(o.outcome, "unarchive"))}
</section>`
