/**
 * GET /approval/structure?scope= (graph.md §12): every pending structure change of the scope,
 * newest first. An entity version with its path before and after (create: "new under …"; move:
 * old → new path and the subtree size; update: names and aliases before → after), who (grant,
 * channel), when, reason, evidence and the duplicate candidates a create or update was forced past
 * (as stored then); a proposed link with both ends (entity path, rule statement, source title,
 * attachment name), type, confidence and reason. Forms: confirm / revert (entity, target = the current version),
 * confirm / reject (link), archive (with the version); each with the csrf token.
 */
import type { Candidate, PathItem } from "../contracts/errors.js"
import type { PendingEnd, PendingEntityVersion, PendingItem, PendingLink } from "../graph/review-schemas.js"
import { plural } from "../contracts/words.js"
import { badge, type Clockwork, detailsLine, grantName, reasonText, when } from "./format.js"
import { type Html, html, join, safeHref, segment } from "./html.js"
import { csrfField, layout, type Viewer } from "./layout.js"
import { type BulkState, doneNotice, type Outcome, refusedNotice } from "./outcome.js"
import type { GrantNames } from "./queries.js"
import type { AdoptedItem } from "../structure/adopted.js"
import { ruleLink } from "./rule-page.js"

export const structurePath = (scope: string): string => `/approval/structure?scope=${encodeURIComponent(scope)}`

export const pathHtml = (path: ReadonlyArray<PathItem>): Html =>
  path.length === 0
    ? html`<span class="muted">top level</span>`
    : html`<span class="path">${join(path.slice(0, -1).map((p) => p.name), " › ")}${path.length > 1 ? " › " : ""}<b>${path[path.length - 1]?.name ?? ""}</b></span>`

const parentPath = (path: ReadonlyArray<PathItem>): Html =>
  path.length <= 1 ? html`<span class="muted">the top level</span>` : pathHtml(path.slice(0, -1))

const CHANNEL: Readonly<Record<string, string>> = { mcp: "an agent (MCP)", api: "the API" }

/** What kind of change an entity version is, in plain words. */
const CHANGE_WORD: Readonly<Record<string, string>> = { create: "new", move: "moved", update: "renamed or changed" }

/** The buttons of this page, one sentence each (shown above the list). */
export const ACTIONS_EXPLAINED: ReadonlyArray<readonly [string, string]> = [
  ["Confirm", "keeps the agent's change as it is and marks it checked by you."],
  ["Revert", "undoes the agent's change: a new entity is archived, a move or rename goes back to the last confirmed state."],
  ["Archive", "retires an entity for good: it leaves the tree and search, its history stays, and its children must be archived first."],
  ["Reject", "deletes a proposed link; the two things it connected stay as they are."]
]

/** Evidence as text, or a link when it is an http(s) URL. */
const evidenceHtml = (evidence: string | null): Html => {
  if (evidence === null) return html`<span class="muted">none given</span>`
  const href = safeHref(evidence)
  return href === null ? html`${evidence}` : html`<a href="${href}" rel="noreferrer noopener">${evidence}</a>`
}

const endHtml = (end: typeof PendingEnd.Type): Html => {
  switch (end.kind) {
    case "entity":
      return html`<span>entity ${pathHtml(end.path ?? [])}</span>`
    case "rule": {
      const id = end.ref.slice("rule/".length)
      return html`<span>rule ${ruleLink(id, end.title ?? id)}</span>`
    }
    case "source":
      return html`<span>${end.ref.startsWith("source/mail:") ? "mail" : "meeting"} <b>${end.title ?? end.ref}</b></span>`
    case "attachment":
      return html`<span>attachment <b>${end.title ?? end.ref}</b></span>`
  }
}

const hidden = (viewer: Viewer, fields: Readonly<Record<string, string | number>>): Html =>
  html`${Object.entries(fields).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`)}${csrfField(viewer)}`

/** Confirm and reject of one proposed link (also on the rule page, graph.md §12 G8). */
export const linkForms = (viewer: Viewer, link: { readonly id: string; readonly target: string }, ctx: FormContext): Html => html`<div class="actions">
<form method="post" action="/v1/reviews" class="decide" aria-label="Confirm ${link.id}">
  ${hidden(viewer, { target: link.target, verdict: "confirm", ...ctx.back })}
  <button type="submit">Confirm link</button>
</form>
<form method="post" action="/v1/reviews" class="decide" aria-label="Reject ${link.id}">
  ${hidden(viewer, { target: link.target, verdict: "reject", ...ctx.back })}
  <label for="rj-${link.id}">Reason <span class="hint">(required)</span></label>
  <input id="rj-${link.id}" type="text" name="reason" required maxlength="1000" value="${ctx.draft(link.target, "reject")}">
  <button type="submit" class="danger">Reject link</button>
</form></div>`

export interface FormContext {
  /** extra hidden fields saying where the person lands after the post (none: the structure page) */
  readonly back: Readonly<Record<string, string>>
  /** what the person typed into a refused form of this target and verdict */
  readonly draft: (target: string, verdict: string) => string
}

const entityForms = (viewer: Viewer, item: PendingEntityVersion, ctx: FormContext): Html => {
  const cur = Number(item.target.slice(item.target.lastIndexOf("@") + 1))
  return html`<div class="actions">
<form method="post" action="/v1/reviews" class="decide" aria-label="Confirm ${item.target}">
  ${hidden(viewer, { target: item.target, verdict: "confirm" })}
  <label for="cf-${item.id}">Note <span class="hint">(optional)</span></label>
  <input id="cf-${item.id}" type="text" name="reason" maxlength="1000" value="${ctx.draft(item.target, "confirm")}">
  <button type="submit">Confirm ${item.change === "create" ? "new entity" : item.change}</button>
</form>
<form method="post" action="/v1/reviews" class="decide" aria-label="Revert ${item.target}">
  ${hidden(viewer, { target: item.target, verdict: "revert" })}
  <label for="rv-${item.id}">Reason <span class="hint">(required; ${item.change === "create" ? "a reverted create is archived" : "restores the last confirmed state"})</span></label>
  <input id="rv-${item.id}" type="text" name="reason" required maxlength="1000" value="${ctx.draft(item.target, "revert")}">
  <button type="submit" class="danger">Revert</button>
</form></div>
<details><summary>Archive ${item.after[item.after.length - 1]?.name ?? item.id}</summary>
<form method="post" action="/v1/entities/${segment(item.id)}/archive" class="decide" aria-label="Archive ${item.id}">
  ${hidden(viewer, { version: cur })}
  <p class="small muted">Archived is final. Children must be archived first.</p>
  <label for="ar-${item.id}">Reason <span class="hint">(optional)</span></label>
  <input id="ar-${item.id}" type="text" name="reason" maxlength="1000" value="${ctx.draft(`archive/${item.id}`, "archive")}">
  <button type="submit" class="danger">Archive version ${cur}</button>
</form>
</details>`
}

const aliasesChange = (item: PendingEntityVersion): Html | string => {
  const after = item.aliases_after
  if (item.aliases_before === null) return after.length === 0 ? "" : html`<dt>Aliases</dt><dd>${join(after, ", ")}</dd>`
  const before = item.aliases_before
  const added = after.filter((a) => !before.includes(a))
  const removed = before.filter((a) => !after.includes(a))
  if (added.length === 0 && removed.length === 0) return ""
  return html`<dt>Aliases</dt><dd>${added.length === 0 ? "" : html`added: ${join(added, ", ")} `}${removed.length === 0 ? "" : html`removed: ${join(removed, ", ")}`}</dd>`
}

/** The form id of the page's bulk form: its checkboxes sit in the items (the form attribute), since each item has its own forms. */
export const BULK_FORM_ID = "bulk-structure"

/** The checkbox of an item in the bulk form: its name carries the target (the version seen). */
const pick = (target: string, label: string, o: StructurePageInput): Html => html`<label class="pick"><input type="checkbox" form="${BULK_FORM_ID}" name="item:${target}" value="1" aria-label="Select: ${label}"${
  o.bulk?.checked.has(target) === true ? html` checked` : ""
}> Select</label>`

/** A refused bulk post: the note on the item that refused it. */
const refusedNote = (target: string, o: StructurePageInput): Html | string =>
  o.bulk?.refused === target && o.bulk.note !== null ? html`<p class="small refused-note"><b>Not saved because of this one:</b> ${o.bulk.note}</p>` : ""

/**
 * The bulk form (after the list): confirm, or revert/reject, every selected item in one post. The
 * first submit button is a disabled one, so Enter in the reason field submits nothing.
 */
const bulkForm = (o: StructurePageInput): Html => html`<form method="post" action="/v1/reviews" id="${BULK_FORM_ID}" class="bulk" aria-label="Review several structure changes">
  <input type="hidden" name="bulk" value="1"><input type="hidden" name="scope" value="${o.scope}">${csrfField(o.viewer)}
  <fieldset class="bulk-actions">
  <legend>With the selected changes</legend>
  <button type="submit" disabled hidden>Choose a button</button>
  <label for="bulk-reason">Reason <span class="hint">(required to revert or reject; a note to confirm)</span></label>
  <input id="bulk-reason" type="text" name="reason" maxlength="1000" value="${o.bulk?.reason ?? ""}">
  <div class="buttons">
    <button type="submit" name="verdict" value="confirm">Confirm selected</button>
    <button type="submit" name="verdict" value="revert" class="danger">Revert or reject selected</button>
  </div>
  <p class="small muted">Revert undoes a selected entity change; a selected link is rejected. Each selected change gets its own review with your name. If one of them cannot be saved, none is, and the page names that one.</p>
  </fieldset>
</form>`

const entityItem = (item: PendingEntityVersion, o: StructurePageInput, anchor: string | null): Html => {
  const name = item.after[item.after.length - 1]
  const beforeName = item.before?.[item.before.length - 1]?.name
  const title = item.change === "create"
    ? html`New ${name?.type ?? "entity"} <b>${name?.name ?? item.id}</b> under ${parentPath(item.after)}`
    : item.change === "move"
      ? html`Moved <b>${name?.name ?? item.id}</b>`
      : html`Changed <b>${beforeName ?? item.id}</b>${beforeName !== undefined && beforeName !== name?.name ? html` → <b>${name?.name ?? ""}</b>` : ""}`
  const candidates = o.candidates.get(item.ref) ?? []
  const selectable = o.canDecide && item.current
  return html`<li${anchor === null ? "" : html` id="${anchor}"`}${o.bulk?.refused === item.target && item.current ? html` class="refused"` : ""}>
  ${selectable ? pick(item.target, `${CHANGE_WORD[item.change] ?? item.change} ${name?.name ?? item.id}`, o) : ""}
  ${selectable ? refusedNote(item.target, o) : ""}
  <div class="statement">${title}</div>
  <div class="meta">${badge(item.status)}<span>${CHANGE_WORD[item.change] ?? item.change}</span><span>${when(item.at, o.clock, true)}</span></div>
  <dl class="facts">
    ${item.before === null ? html`<dt>Path</dt><dd>${pathHtml(item.after)}</dd>` : html`<dt>Before</dt><dd>${pathHtml(item.before)}</dd><dt>After</dt><dd>${pathHtml(item.after)}</dd>`}
    ${item.change === "move" || item.subtree > 0 ? html`<dt>Subtree</dt><dd>${plural(item.subtree, "entity", "entities")} below${item.change === "move" ? " move along" : ""}</dd>` : ""}
    ${aliasesChange(item)}
    <dt>By</dt><dd>${grantName(o.names, item.by)} via ${CHANNEL[item.channel] ?? item.channel}</dd>
    <dt>When</dt><dd>${when(item.at, o.clock)}</dd>
    <dt>Reason</dt><dd>${reasonText(item.reason)}</dd>
    <dt>Evidence</dt><dd>${evidenceHtml(item.evidence)}</dd>
    ${candidates.length === 0 ? "" : html`<dt>Similar entities</dt><dd><p class="small">The agent ${item.change === "create" ? "created" : "changed"} it although these looked alike then (forced with its reason):</p><ul>${
      candidates.map((c: Candidate) => html`<li>${join(c.path, " › ")} <span class="muted small">(${c.type}, ${c.status})</span>${detailsLine([c.id, `${c.match} ${c.score.toFixed(2)}`])}</li>`)
    }</ul></dd>`}
  </dl>
  ${detailsLine([item.ref, `by ${item.by}`, `channel ${item.channel}`, `reason "${item.reason}"`])}
  ${!o.canDecide ? "" : item.current ? entityForms(o.viewer, item, o.forms) : html`<p class="small muted">A newer change of this entity is listed above; review that one (${item.target}).</p>`}
</li>`
}

const linkItem = (item: PendingLink, o: StructurePageInput): Html => html`<li id="${item.id}"${o.bulk?.refused === item.target ? html` class="refused"` : ""}>
  ${o.canDecide ? pick(item.target, `link ${item.type}`, o) : ""}
  ${o.canDecide ? refusedNote(item.target, o) : ""}
  <div class="statement">Link <b>${item.type}</b>: ${endHtml(item.from)} → ${endHtml(item.to)}</div>
  <div class="meta"><span class="badge proposed">proposed</span><span>the agent is ${Math.round(item.confidence * 100)} % sure</span><span>${when(item.at, o.clock, true)}</span></div>
  <dl class="facts">
    <dt>From</dt><dd>${endHtml(item.from)}</dd>
    <dt>To</dt><dd>${endHtml(item.to)}</dd>
    <dt>By</dt><dd>${grantName(o.names, item.by)}</dd>
    <dt>When</dt><dd>${when(item.at, o.clock)}</dd>
    <dt>Reason</dt><dd>${reasonText(item.reason)}</dd>
    <dt>Evidence</dt><dd>${evidenceHtml(item.evidence)}</dd>
  </dl>
  ${detailsLine([item.ref, `by ${item.by}`, `confidence ${item.confidence.toFixed(2)}`])}
  ${o.canDecide ? linkForms(o.viewer, item, o.forms) : ""}
</li>`

export interface StructurePageInput {
  readonly scope: string
  readonly viewer: Viewer
  readonly canDecide: boolean
  readonly items: ReadonlyArray<PendingItem>
  readonly candidates: ReadonlyMap<string, ReadonlyArray<Candidate>>
  readonly names: GrantNames
  readonly clock: Clockwork
  readonly outcome: Outcome | null
  /** refused post: the entity's versions after the one the person saw */
  readonly changed: Html | null
  readonly forms: FormContext
  /** a refused bulk post: what was selected and which one was refused */
  readonly bulk?: BulkState | null
  /** the section of a person's corrections (a person who may decide), after the list */
  readonly corrections?: Html
  /** what the policy adopted and no person decided on yet (modes A/B) */
  readonly adopted?: ReadonlyArray<AdoptedItem>
}

/** "Adopted by the policy": taken off the pending list, still open to a person's review. */
const adoptedSection = (items: ReadonlyArray<AdoptedItem>, clock: Clockwork): Html =>
  items.length === 0
    ? html``
    : html`<section aria-labelledby="adopted-h"><h2 id="adopted-h">Adopted by the policy</h2>
<p class="small muted">The approval policy adopted these agents' changes without a person (${plural(items.length, "change")}). The agent can retract one while no person decided on it.</p>
<ul class="list">${items.map((a) => html`<li id="adopted-${a.target.replace(/[^a-z0-9-]/g, "-")}">
  <div>${a.link === null ? pathHtml(a.path) : html`Link <b>${a.link.type}</b>: ${endHtml(a.link.from)} → ${endHtml(a.link.to)}`}</div>
  <div class="meta"><span class="badge">adopted by the policy</span><span>${a.target}</span><span>ruleset ${a.ruleset}</span><span>${when(a.at, clock, true)}</span></div>
</li>`)}</ul></section>`

export const countsOf = (items: ReadonlyArray<PendingItem>) => {
  const versions = items.filter((i) => i.kind === "entity")
  return { entities: new Set(versions.map((v) => v.id)).size, versions: versions.length, links: items.length - versions.length }
}

export const structurePage = (o: StructurePageInput): Html => {
  const c = countsOf(o.items)
  const seen = new Set<string>()
  const notice = o.outcome?.kind === "done" ? doneNotice(o.outcome) : o.outcome?.kind === "refused" ? refusedNotice(o.outcome, o.changed ?? "") : ""
  const body = html`
<p class="small"><a href="/approval">← Open proposals</a></p>
${notice}
<h1>Structure changes in ${o.scope}</h1>
<p class="counts"><span>${plural(c.entities, "entity", "entities")} with ${plural(c.versions, "pending version")}</span><span>${plural(c.links, "proposed link")}</span></p>
<p class="small muted">Agents' entities, moves and renames take effect at once; they stay unconfirmed until a person confirms them here.</p>
<dl class="facts explain small" aria-label="What the buttons do">${ACTIONS_EXPLAINED.map(([b, t]) => html`<dt>${b}</dt><dd>${t}</dd>`)}</dl>
${!o.canDecide ? html`<p class="notice warn">Your grant can read this scope but not decide in it.</p>` : ""}
${o.items.length === 0 ? html`<p class="muted">Nothing waits for review.</p>` : html`<ol class="list">${o.items.map((item) => {
    if (item.kind === "link") return linkItem(item, o)
    const first = !seen.has(item.id)
    seen.add(item.id)
    return entityItem(item, o, first ? item.id : null)
  })}</ol>${o.canDecide ? bulkForm(o) : ""}`}
${adoptedSection(o.adopted ?? [], o.clock)}
${o.corrections ?? ""}`
  return layout({ title: `Structure changes in ${o.scope}`, viewer: o.viewer, body })
}

/** One line of the index's "Structure changes" section. */
export const pendingLine = (scope: string, item: PendingItem, clock: Clockwork): Html => {
  if (item.kind === "link") {
    return html`<li><a href="${structurePath(scope)}#${segment(item.id)}">Link ${item.type}</a>: ${endHtml(item.from)} → ${endHtml(item.to)} <span class="muted small">${when(item.at, clock, true)}</span></li>`
  }
  const name = item.after[item.after.length - 1]
  const what = item.change === "create" ? "new" : item.change === "move" ? "moved" : "changed"
  return html`<li><a href="${structurePath(scope)}#${segment(item.id)}">${name?.name ?? item.id}</a> ${what}: ${pathHtml(item.after)} <span class="muted small">${when(item.at, clock, true)}</span></li>`
}

/** The index's "Structure changes" section of one scope: counts, the newest five, the page. */
export const structureSection = (scope: string, items: ReadonlyArray<PendingItem>, clock: Clockwork): Html => {
  const c = countsOf(items)
  return html`<h3>Structure changes</h3>
${items.length === 0 ? html`<p class="muted">None pending.</p>` : html`<p class="counts small"><span>${plural(c.entities, "entity", "entities")}, ${plural(c.versions, "version")}</span><span>${plural(c.links, "link")}</span></p>
<ul>${items.slice(0, 5).map((i) => pendingLine(scope, i, clock))}</ul>`}
<p><a href="${structurePath(scope)}">All structure changes in ${scope}${items.length > 5 ? ` (${items.length})` : ""} →</a></p>`
}
