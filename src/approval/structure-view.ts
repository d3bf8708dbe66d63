/**
 * The structure side of the approval pages: loading the pending changes of a scope (with the
 * similar entities a create or update was forced past, as stored then), the structure page, and
 * the rule's pending concerns links.
 */
import { adoptedOf } from "../structure/adopted.js"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { AppConfig } from "../config/config.js"
import { ScopeStore } from "../db/scope-store.js"
import { pathsOf } from "../graph/paths.js"
import { overriddenOf } from "../graph/overrides.js"
import { entityIdOfVersionRef, type PendingItem, type PendingLink } from "../graph/review-schemas.js"
import { listPending } from "../structure/pending.js"
import { badge, type Clockwork, when } from "./format.js"
import { type Html, html } from "./html.js"
import type { Viewer } from "./layout.js"
import type { BulkState, Outcome } from "./outcome.js"
import { grantNames, type GrantNames } from "./queries.js"
import { type FormContext, linkForms, pathHtml, structurePage, structurePath } from "./structure-page.js"
import { rulePath, who } from "./rule-page.js"
import { clockwork } from "./context.js"
import { correctionsSection, loadCorrections } from "./structure-corrections.js"

/** Pending items of a scope as the approval channel sees them (rejected rule ends included). */
export const pendingOf = (sql: SqlClient, scope: string, publicUrl: string) => listPending(sql, { scope, publicUrl, approval: true })

/** How many structure changes of a scope wait for a person (pendingOf's length): the digest's count. */
export const structureWaiting = (sql: SqlClient, scope: string) =>
  Effect.flatMap(AppConfig, (config) => Effect.map(pendingOf(sql, scope, config.file.public_url), (p) => p.length))

/**
 * For each pending create or update: the similar entities its duplicate check found and force
 * overrode, as stored when it happened (graph.md §12), not what a check would find today.
 */
const overriddenFor = (sql: SqlClient, items: ReadonlyArray<PendingItem>) =>
  overriddenOf(sql, items.flatMap((item) => (item.kind === "entity" && item.change !== "move" ? [{ id: item.id, version: item.version }] : [])))

interface VersionFact {
  readonly version: number
  readonly change: string
  readonly name: string
  readonly parent_id: string | null
  readonly status: string
  readonly channel: string
  readonly changed_by: string
  readonly changed_at: string
  readonly reason: string
}

/** "What changed": the versions of the target entity after the one the person saw. */
const changedSince = (sql: SqlClient, target: string, names: GrantNames, clock: Clockwork) =>
  Effect.gen(function*() {
    const seen = entityIdOfVersionRef(target)
    if (seen === null) return null
    const rows = yield* sql<VersionFact>`SELECT version, change, name, parent_id, status, channel, changed_by, changed_at, reason
      FROM entity_version WHERE id = ${seen.id} AND version > ${seen.version} ORDER BY version`
    if (rows.length === 0) return null
    const paths = yield* pathsOf(sql, rows.flatMap((r) => (r.parent_id === null ? [] : [r.parent_id])))
    return html`<h3>What changed since version ${seen.version}</h3>
<table><thead><tr><th scope="col">Version</th><th scope="col">Change</th><th scope="col">Name and place</th><th scope="col">By</th><th scope="col">When</th><th scope="col">Reason</th></tr></thead><tbody>${
      rows.map((r) => html`<tr><td>${r.version} ${badge(r.status)}</td><td>${r.change}</td><td>${pathHtml([...(r.parent_id === null ? [] : paths.get(r.parent_id) ?? []), { id: "", name: r.name, type: "" }])}</td><td>${who(names, r.changed_by)} <span class="muted">(${r.channel})</span></td><td>${when(r.changed_at, clock)}</td><td>${r.reason}</td></tr>`)
    }</tbody></table>`
  })

const drafts = (outcome: Outcome | null) => (target: string, verdict: string): string => {
  if (outcome?.kind !== "refused") return ""
  const sentTarget = outcome.sent.target ?? (outcome.sent.archive === undefined ? undefined : `archive/${outcome.sent.archive}`)
  const sentVerdict = outcome.sent.verdict ?? "archive"
  return sentTarget === target && sentVerdict === verdict ? (outcome.sent.reason ?? "") : ""
}

/** The structure page of a scope. */
export const loadStructurePage = (
  scope: string,
  o: { readonly viewer: Viewer; readonly canDecide: boolean; readonly outcome: Outcome | null; readonly bulk?: BulkState | null }
) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const store = yield* ScopeStore
    const clock = yield* clockwork
    const names = yield* grantNames
    const sentTarget = o.outcome?.kind === "refused" ? (o.outcome.sent.target ?? null) : null
    const { items, candidates, changed, corrections, adopted } = yield* store.read(scope, ({ sql }) =>
      Effect.gen(function*() {
        const items = yield* pendingOf(sql, scope, config.file.public_url)
        const candidates = yield* overriddenFor(sql, items)
        const changed = sentTarget === null ? null : yield* changedSince(sql, sentTarget, names, clock)
        const corrections = o.canDecide ? yield* loadCorrections(sql, config.file.graph.entity_types) : null
        const adopted = yield* adoptedOf(sql)
        return { items, candidates, changed, corrections, adopted }
      }))
    return {
      items,
      page: structurePage({
        scope, viewer: o.viewer, canDecide: o.canDecide, items, candidates, names, clock, outcome: o.outcome, changed,
        forms: { back: {}, draft: drafts(o.outcome) }, bulk: o.bulk ?? null, adopted,
        ...(corrections === null ? {} : { corrections: correctionsSection({ scope, viewer: o.viewer, data: corrections, outcome: o.outcome, clock }) })
      })
    }
  })

/** The rule's pending concerns links with their own forms (graph.md §12, G8). */
export const ruleLinksSection = (viewer: Viewer, canDecide: boolean, ruleId: string, links: ReadonlyArray<PendingLink>, clock: Clockwork, outcome: Outcome | null): Html => {
  if (links.length === 0) return html``
  const forms: FormContext = { back: { back: rulePath(ruleId) }, draft: drafts(outcome) }
  return html`<section aria-labelledby="links-h"><h2 id="links-h">Proposed: concerns</h2>
<ul class="list">${links.map((l) => html`<li id="${l.id}">
  <div>Concerns ${l.to.kind === "entity" ? pathHtml(l.to.path ?? []) : html`<b>${l.to.title ?? l.to.ref}</b>`}</div>
  <div class="meta"><span class="badge proposed">proposed</span><span>${l.ref}</span><span>confidence ${l.confidence.toFixed(2)}</span><span>${when(l.at, clock, true)}</span></div>
  <div class="small">Reason: ${l.reason}</div>
  ${canDecide ? linkForms(viewer, l, forms) : ""}
</li>`)}</ul>
<p class="small"><a href="${structurePath(ruleId.replace(/-\d{4,}$/, ""))}">All structure changes of the scope</a></p>
</section>`
}

/** The pending concerns links of one rule, from the scope's pending list. */
export const pendingRuleLinks = (sql: SqlClient, ruleId: string, publicUrl: string) =>
  Effect.map(pendingOf(sql, ruleId.replace(/-\d{4,}$/, ""), publicUrl), (items) =>
    items.filter((i): i is PendingLink => i.kind === "link" && i.type === "concerns" && i.from.ref === `rule/${ruleId}`))

