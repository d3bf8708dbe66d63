/**
 * link_list / GET /v1/links (graph.md §9.2, §6 "Everything about X"): the stored and computed
 * links of one item, 50 a page, newest first; with grouped: true on an entity, everything about
 * the entity and its descendants (entity_closure): the other ends of the counted links (G5)
 * resolved to entries and grouped by kind like a bundle, newest first. Reads only.
 */
import { linkAdoptions } from "./adoption.js"
import type { Adoption } from "../contracts/schemas.js"
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { AppConfig } from "../config/config.js"
import { ScopeStore } from "../db/scope-store.js"
import type { ScopeLocked } from "../contracts/errors.js"
import { ruleRef } from "../contracts/ids.js"
import { shortExcerpt } from "../domain/provenance.js"
import { redactedMark, redactedOf } from "../domain/redacted.js"
import type { RuleVersionRow } from "../domain/rules.js"
import type { Entry, EntryKind as EntryKindSchema } from "../domain/search-schemas.js"
import type { SourceRow } from "../domain/sources.js"
import { todayIn } from "../contracts/time.js"
import { type CountOptions, countedLinksOf, type CountedLink, linkOut, type LinkRow, linkStatus, openOn, reviewsOf } from "./counted.js"
import { type GraphRefusal, type Next, type PathItem, refuse } from "../contracts/errors.js"
import {
  computedLinksOf,
  type EndKind,
  endKindOf,
  entityEnd,
  entityIdOfEnd,
  linkRef,
  type LinkOut,
  type LinkType,
  parseAttachmentEnd,
  ruleIdOfEnd,
  scopeOfEndpoint
} from "./link-types.js"
import { pathOf, pathsOf, pathTitle } from "./paths.js"

export const LINK_PAGE_SIZE = 50

type EntryKind = typeof EntryKindSchema.Type

export interface ListLinksQuery {
  readonly scope: string
  /** an endpoint ref (graph.md §2) */
  readonly ref: string
  readonly grouped: boolean
  /** 1-based */
  readonly page: number
}

export interface LinksPage {
  readonly ref: string
  readonly scope: string
  readonly grouped: false
  readonly links: ReadonlyArray<LinkOut>
  readonly total: number
  readonly page: number
  readonly more: boolean
  readonly path: ReadonlyArray<PathItem>
  readonly next: ReadonlyArray<Next>
}

/** An entry of the grouped answer: a bundle Entry plus the link it hangs on and the entity of the subtree it touches. */
export interface AboutEntry extends Entry {
  readonly link_id: string
  readonly link_type: LinkType
  /** the entity of the subtree (the asked entity or a descendant) the link ends at */
  readonly entity_id: string
  /** a stored proposed link: who adopted it, the policy (auto-adopted) or a person (also: pending) */
  readonly link_adoption?: Adoption
}

export const ABOUT_KIND_ORDER: ReadonlyArray<EntryKind> = ["rule", "note", "mail", "meeting", "attachment", "entity"]

export interface AboutGroup {
  readonly kind: EntryKind
  /** entries of this kind on all pages */
  readonly count: number
  /** the entries of this kind on this page, newest first */
  readonly entries: ReadonlyArray<AboutEntry>
}

export interface EverythingAbout {
  readonly ref: string
  readonly scope: string
  readonly grouped: true
  readonly entity: { readonly id: string; readonly name: string; readonly type: string; readonly status: string }
  /** entities in the subtree, the entity included */
  readonly subtree: number
  readonly groups: ReadonlyArray<AboutGroup>
  readonly total: number
  readonly page: number
  readonly more: boolean
  readonly path: ReadonlyArray<PathItem>
  readonly next: ReadonlyArray<Next>
}

const FIND: Record<EndKind, ReadonlyArray<Next>> = {
  rule: [{ tool: "search_rules", why: "find the rule" }],
  entity: [{ tool: "entity_resolve", why: "find the entity by its name" }],
  source: [],
  attachment: []
}

/** The same body for an unknown item and a rejected rule (invariant 8). */
const notFound = (ref: string) =>
  refuse("not-found", {
    message: `no ${ref}`,
    remedy: "check the ref: rule/<id>, source/<source id>, attachment/<source id>#<n> or entity/<id> of this scope",
    next: FIND[endKindOf(ref) ?? "source"]
  })

/** Whether the item exists for a read outside the approval channel (a rejected rule does not). */
const itemExists = (sql: SqlClient, ref: string, kind: EndKind) =>
  Effect.gen(function*() {
    switch (kind) {
      case "rule":
        return (yield* sql<{ n: number }>`SELECT count(*) AS n FROM current_version WHERE rule_id = ${ruleIdOfEnd(ref)} AND status <> 'rejected'`)[0]?.n === 1
      case "entity":
        return (yield* sql<{ n: number }>`SELECT count(*) AS n FROM entity WHERE id = ${entityIdOfEnd(ref)}`)[0]?.n === 1
      case "source":
        return (yield* sql<{ n: number }>`SELECT count(*) AS n FROM source WHERE id = ${ref.slice("source/".length)}`)[0]?.n === 1
      case "attachment": {
        const { sourceId, n } = parseAttachmentEnd(ref)
        return (yield* sql<{ c: number }>`SELECT count(*) AS c FROM source_attachment WHERE source_id = ${sourceId} AND n = ${n}`)[0]?.c === 1
      }
    }
  })

const rejectedRuleEnds = (sql: SqlClient, refs: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const ids = [...new Set(refs.filter((r) => endKindOf(r) === "rule").map(ruleIdOfEnd))]
    if (ids.length === 0) return new Set<string>()
    const rows = yield* sql<{ rule_id: string }>`SELECT rule_id FROM current_version WHERE status = 'rejected' AND rule_id IN ${sql.in(ids)}`
    return new Set(rows.map((r) => `rule/${r.rule_id}`))
  })

/**
 * The links of one item: stored links open today (proposed ones with their confidence and status,
 * rejected ones marked rejected) and computed links, newest first (valid_from, then stored before
 * computed), 50 a page. Links whose other end is a rejected rule are left out (invariant 8).
 */
const listFlat = (sql: SqlClient, q: ListLinksQuery, kind: EndKind, opts: CountOptions, day: string) =>
  Effect.gen(function*() {
    const stored = (yield* sql<LinkRow>`SELECT * FROM link WHERE from_ref = ${q.ref} UNION SELECT * FROM link WHERE to_ref = ${q.ref}`)
      .filter((l) => openOn(l, day, opts.zone))
    const reviews = yield* reviewsOf(sql, stored.filter((l) => l.origin === "proposed").map((l) => l.id))
    const rejected = yield* rejectedRuleEnds(sql, stored.flatMap((l) => [l.from_ref, l.to_ref]))
    const marks = yield* redactedOf(sql)
    const adoptions = yield* linkAdoptions(sql, stored.filter((l) => l.origin === "proposed").map((l) => l.id))
    const storedOut = stored
      .filter((l) => !rejected.has(l.from_ref) && !rejected.has(l.to_ref))
      .map((l) => ({
        out: l.origin === "proposed"
          ? { ...linkOut(l, linkStatus(l, reviews.get(linkRef(l.id))), marks), adoption: adoptions.get(l.id) ?? { kind: "person" as const } }
          : linkOut(l, linkStatus(l, reviews.get(linkRef(l.id))), marks),
        seq: l.seq
      }))
    const computed = (yield* computedLinksOf(sql, q.ref)).map((out) => ({ out, seq: 0 }))
    const all = [...storedOut, ...computed].sort((a, b) =>
      b.out.valid_from.localeCompare(a.out.valid_from) || b.seq - a.seq ||
      a.out.type.localeCompare(b.out.type) || a.out.from_ref.localeCompare(b.out.from_ref) || a.out.to_ref.localeCompare(b.out.to_ref))
    const start = (q.page - 1) * LINK_PAGE_SIZE
    const links = all.slice(start, start + LINK_PAGE_SIZE).map((x) => x.out)
    const more = all.length > start + LINK_PAGE_SIZE
    const path = kind === "entity" ? yield* pathOf(sql, entityIdOfEnd(q.ref)) : []
    const next: Array<Next> = []
    if (more) next.push({ tool: "link_list", why: `page ${q.page + 1} of the links` })
    if (kind === "entity") next.push({ tool: "link_list", why: "grouped: true lists everything about the entity and its descendants" })
    const page: LinksPage = { ref: q.ref, scope: q.scope, grouped: false, links, total: all.length, page: q.page, more, path, next }
    return page
  })

interface Candidate {
  readonly ref: string
  readonly link: CountedLink
  readonly anchor: string
}

/** Excerpt of a jamie source: the start of its transcript (as the bundle's source entry). */
const transcriptStart = (sql: SqlClient, sourceId: string) =>
  Effect.map(
    sql<{ text: string }>`SELECT text FROM source_segment WHERE source_id = ${sourceId} ORDER BY n LIMIT 301`,
    (rows) => shortExcerpt(rows.map((r) => r.text).join(" "))
  )

/** Resolves the other ends to entries; ends that are not shown (rejected or proposed rules, archived entities) drop out. */
const resolveEntries = (sql: SqlClient, candidates: ReadonlyArray<Candidate>) =>
  Effect.gen(function*() {
    const refsOf = (k: EndKind) => [...new Set(candidates.filter((c) => endKindOf(c.ref) === k).map((c) => c.ref))]
    const ruleIds = refsOf("rule").map(ruleIdOfEnd)
    const sourceIds = refsOf("source").map((r) => r.slice("source/".length))
    const attachments = refsOf("attachment").map(parseAttachmentEnd)
    const entityIds = refsOf("entity").map(entityIdOfEnd)

    const rules = ruleIds.length === 0 ? [] : yield* sql<RuleVersionRow>`SELECT * FROM current_version
      WHERE status IN ('confirmed', 'superseded') AND rule_id IN ${sql.in(ruleIds)}`
    const sources = sourceIds.length === 0 ? [] : yield* sql<SourceRow>`SELECT * FROM source WHERE id IN ${sql.in(sourceIds)}`
    const attachmentRows = attachments.length === 0 ? [] : yield* sql<{ source_id: string; n: number; filename: string; text: string | null; at: string }>`
      SELECT a.source_id, a.n, a.filename, a.text, coalesce(s.occurred_at, s.fetched_at) AS at
      FROM source_attachment a JOIN source s ON s.id = a.source_id
      WHERE a.source_id IN ${sql.in([...new Set(attachments.map((a) => a.sourceId))])}`
    const entities = entityIds.length === 0 ? [] : yield* sql<{ id: string; version: number; name: string; type: string }>`
      SELECT id, version, name, type FROM entity_current WHERE status <> 'archived' AND id IN ${sql.in(entityIds)}`
    const paths = yield* pathsOf(sql, entities.map((e) => e.id))
    const marks = yield* redactedOf(sql)

    type Base = Omit<Entry, "origin" | "proposed">
    const base = new Map<string, Base>()
    for (const v of rules) {
      base.set(`rule/${v.rule_id}`, {
        ref: ruleRef(v.rule_id, v.version), kind: v.kind, date: v.said_at, title: v.statement, excerpt: shortExcerpt(v.quote), link: v.source_link,
        ...redactedMark(marks.row("rule_version", v.rule_id, v.version))
      })
    }
    const jamie: Array<string> = []
    for (const s of sources) {
      if (s.kind === "manual") continue
      if (s.kind === "jamie") jamie.push(s.id)
      base.set(`source/${s.id}`, {
        ref: `source/${s.id}`, kind: s.kind === "jamie" ? "meeting" : "mail", date: s.occurred_at ?? s.fetched_at,
        title: s.title ?? "", excerpt: s.kind === "mail" ? shortExcerpt(s.excerpt) : null, link: s.link,
        ...redactedMark(marks.source(s.id))
      })
    }
    for (const a of attachmentRows) {
      const ref = `attachment/${a.source_id}#${a.n}`
      base.set(ref, {
        ref, kind: "attachment", date: a.at, title: a.filename, excerpt: shortExcerpt(a.text), link: null,
        ...redactedMark(marks.row("source_attachment", a.source_id, a.n))
      })
    }
    const entityRows = new Map(entities.map((e) => [e.id, e]))
    const adoptions = yield* linkAdoptions(sql, candidates.filter((c) => c.link.origin === "proposed").map((c) => c.link.id))
    const out: Array<AboutEntry> = []
    for (const c of candidates) {
      const ends = c.link
      const extra = {
        origin: ends.origin, proposed: ends.proposed, link_id: ends.id, link_type: ends.type, entity_id: c.anchor,
        ...(ends.origin === "proposed" ? { link_adoption: adoptions.get(ends.id) ?? { kind: "person" as const } } : {})
      }
      if (endKindOf(c.ref) === "entity") {
        const id = entityIdOfEnd(c.ref)
        const e = entityRows.get(id)
        if (e === undefined) continue
        // entity entries as in the bundle's entity group: title = path joined with ›, date = link valid_from
        out.push({
          ref: c.ref, kind: "entity", date: c.link.valid_from, title: pathTitle(paths.get(id) ?? []), excerpt: null, link: null, ...extra,
          ...redactedMark(marks.row("entity_version", id, e.version))
        })
        continue
      }
      const b = base.get(c.ref)
      if (b !== undefined) out.push({ ...b, ...extra })
    }
    return { entries: out, jamie: new Set(jamie) }
  })

/** One entry per item: the link not marked proposed first, then the newest. */
const bestPerItem = (candidates: ReadonlyArray<Candidate>): Array<Candidate> => {
  const best = new Map<string, Candidate>()
  const sorted = [...candidates].sort((a, b) =>
    Number(a.link.proposed) - Number(b.link.proposed) || b.link.valid_from.localeCompare(a.link.valid_from) || b.link.seq - a.link.seq)
  for (const c of sorted) if (!best.has(c.ref)) best.set(c.ref, c)
  return [...best.values()]
}

/** Everything about entity `id` and its descendants (graph.md §6). */
const listAbout = (sql: SqlClient, q: ListLinksQuery, opts: CountOptions, day: string) =>
  Effect.gen(function*() {
    const id = entityIdOfEnd(q.ref)
    const current = (yield* sql<{ id: string; name: string; type: string; status: string }>`
      SELECT id, name, type, status FROM entity_current WHERE id = ${id}`)[0]
    if (current === undefined) return yield* notFound(q.ref)
    const subtree = (yield* sql<{ descendant_id: string }>`SELECT descendant_id FROM entity_closure WHERE ancestor_id = ${id}`)
      .map((r) => r.descendant_id)
    const inside = new Set((subtree.length === 0 ? [id] : subtree).map(entityEnd))
    const links = yield* countedLinksOf(sql, [...inside], day, opts)
    const candidates: Array<Candidate> = links.map((l) =>
      inside.has(l.to_ref)
        ? { ref: l.from_ref, link: l, anchor: entityIdOfEnd(l.to_ref) }
        : { ref: l.to_ref, link: l, anchor: entityIdOfEnd(l.from_ref) })
    const { entries, jamie } = yield* resolveEntries(sql, bestPerItem(candidates))
    const order = (k: EntryKind) => ABOUT_KIND_ORDER.indexOf(k)
    entries.sort((a, b) => order(a.kind) - order(b.kind) || b.date.localeCompare(a.date) || a.ref.localeCompare(b.ref))
    const start = (q.page - 1) * LINK_PAGE_SIZE
    const shown: Array<AboutEntry> = []
    for (const e of entries.slice(start, start + LINK_PAGE_SIZE)) {
      const sourceId = e.kind === "meeting" ? e.ref.slice("source/".length) : null
      shown.push(sourceId !== null && jamie.has(sourceId) ? { ...e, excerpt: yield* transcriptStart(sql, sourceId) } : e)
    }
    const groups: Array<AboutGroup> = ABOUT_KIND_ORDER.flatMap((kind) => {
      const count = entries.filter((e) => e.kind === kind).length
      return count === 0 ? [] : [{ kind, count, entries: shown.filter((e) => e.kind === kind) }]
    })
    const more = entries.length > start + LINK_PAGE_SIZE
    const next: Array<Next> = []
    if (more) next.push({ tool: "link_list", why: `page ${q.page + 1} of everything about the entity` })
    if (subtree.length > 1) next.push({ tool: "entity_tree", why: "see the descendants the entries hang on" })
    const about: EverythingAbout = {
      ref: q.ref,
      scope: q.scope,
      grouped: true,
      entity: current,
      subtree: Math.max(1, subtree.length),
      groups,
      total: entries.length,
      page: q.page,
      more,
      path: yield* pathOf(sql, id),
      next
    }
    return about
  })

/**
 * link_list. Refusals: a rule or entity ref of another scope → scope-mismatch; an unknown item,
 * and a rejected rule alike → not-found (invariant 8); grouped on anything but an entity →
 * validation-failed.
 */
export const listLinks = Effect.fn("Links.list")(function*(q: ListLinksQuery): Effect.fn.Return<
  LinksPage | EverythingAbout,
  GraphRefusal | ScopeLocked | SqlError,
  ScopeStore | AppConfig
> {
  const store = yield* ScopeStore
  const config = yield* AppConfig
  const kind = endKindOf(q.ref)
  if (kind === null) return yield* notFound(q.ref)
  const of = scopeOfEndpoint(q.ref)
  if (of !== null && of !== q.scope) {
    return yield* refuse("scope-mismatch", {
      message: `${q.ref} belongs to another scope than ${q.scope}`,
      remedy: `name the scope of the item: links exist only inside one scope`,
      issues: [{ path: "ref", message: `not an id of scope ${q.scope}` }]
    })
  }
  if (q.grouped && kind !== "entity") {
    return yield* refuse("validation-failed", {
      message: "grouped: true lists everything about an entity; this ref is not an entity",
      remedy: "leave grouped out for a rule, source or attachment, or pass an entity/<id>",
      issues: [{ path: "grouped", message: "only with an entity ref" }]
    })
  }
  const opts: CountOptions = { zone: config.file.zone, minConfidence: config.file.graph.proposed_min_confidence }
  const day = yield* todayIn(config.file.zone)
  return yield* store.read(q.scope, ({ sql }) =>
    Effect.gen(function*() {
      if (!(yield* itemExists(sql, q.ref, kind))) return yield* notFound(q.ref)
      return q.grouped ? yield* listAbout(sql, q, opts, day) : yield* listFlat(sql, q, kind, opts, day)
    }))
})

