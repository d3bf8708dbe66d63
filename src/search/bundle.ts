/**
 * Bundles (architecture.md §6.5, §8; graph.md §11): the matched rule version as the head, and
 * around it the groups a reader needs to judge it, in the fixed order source, thread,
 * attachment, entity, predecessor, successor, contradicts, same-relation. Empty groups are
 * omitted; entries = the newest 5, count = all, more = count − entries.length.
 *
 * The graph (graph.md §11) adds head.entities (≤ 10), the entity and contradicts groups and the
 * same-relation rules linked to the head's entities or their ancestors, all through counted links
 * (G5) open on the target day; their entries carry the origin of the link they hang on and
 * proposed while it is proposed and not confirmed. Computed entries (source, thread, attachment,
 * predecessor, successor, relation matches) carry origin "deterministic" and proposed false. A
 * bundle without graph data is the same as before: head.entities [], no entity or contradicts
 * group.
 *
 * Reads only: every query runs on the caller's connection (inside its read transaction).
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { Fragment } from "@effect/sql/Statement"
import { Effect, Option } from "effect"
import { AppConfig } from "../config/config.js"
import { attachmentRef, ruleRef, scopeOfRuleId, sourceRef } from "../contracts/ids.js"
import { formatTimestamp, shortExcerpt } from "../domain/provenance.js"
import { reviewFacts } from "../domain/adoption.js"
import { allVersions, type RuleVersionRow } from "../domain/rules.js"
import type { Relation } from "../contracts/schemas.js"
import type { Bundle, Entry, Group, GroupKind, Head } from "../domain/search-schemas.js"
import type { AttachmentRow, SourceRow } from "../domain/sources.js"
import { dayIn } from "../contracts/time.js"
import { type CountedLink, type CountOptions, countedLinksOf, entityLinksOfRule, type RuleEntity } from "../graph/counted.js"
import { endKindOf, entityEnd, ruleEnd, ruleIdOfEnd } from "../graph/link-types.js"
import { pathTitle } from "../graph/paths.js"
import { relationKey } from "./lexical/document.js"
import { bundleLine, GROUP_ORDER } from "./line.js"

/** Entries shown per group. */
export const GROUP_ENTRIES = 5

/** What the search knows about a head: the matched version and how it was found. */
export interface HeadInput {
  /** the matched rule version (never rejected) */
  readonly version: RuleVersionRow
  readonly scope: string
  readonly rank: Head["rank"]
  readonly found_via: ReadonlyArray<string>
  readonly coverage: number | null
  readonly matched_terms: number | null
}

export interface BundleOptions {
  /** config.zone */
  readonly zone: string
  /** config.file.recheck_after_days */
  readonly recheckAfterDays: number
  /** the injected clock's now (Clock.currentTimeMillis); age_days counts to today in zone */
  readonly nowMs: number
  /** as_of, else today in zone: the day the same-relation rules must be in force */
  readonly targetDay: string
  /** whether the search included proposals (same-relation shows them only then) */
  readonly includeProposals: boolean
  /**
   * config.graph.proposed_min_confidence for counted links (G5); left out, the running
   * AppConfig's value is read (null without one: only confirmed proposals count)
   */
  readonly minConfidence?: number | null
}

const NO_RANK: Head["rank"] = { a: null, b: null, rrf: null, reranker: null }

const utcDay = (day: string): number => {
  const [y, m, d] = day.split("-").map(Number)
  return Date.UTC(y ?? 0, (m ?? 1) - 1, d ?? 1)
}

/** Calendar days between two days YYYY-MM-DD (to − from). */
export const daysBetween = (from: string, to: string): number => Math.round((utcDay(to) - utcDay(from)) / 86_400_000)

/**
 * age_days: calendar days in `zone` from the day of last_reviewed_at to today; never negative
 * (a review "after" the clock counts as today).
 */
export const ageDays = (lastReviewedAt: string, zone: string, nowMs: number): number =>
  Math.max(0, daysBetween(dayIn(zone, Date.parse(lastReviewedAt)), dayIn(zone, nowMs)))

/** recheck = "still valid?" iff the head is confirmed and age_days > recheck_after_days. */
export const recheckOf = (status: Head["status"], age: number, recheckAfterDays: number): Head["recheck"] =>
  status === "confirmed" && age > recheckAfterDays ? "still valid?" : null

const sourceKindOf = (sourceId: string): Head["source"]["kind"] => {
  const kind = sourceId.slice(0, sourceId.indexOf(":"))
  return kind === "jamie" || kind === "mail" ? kind : "manual"
}

const parseRelations = (json: string): ReadonlyArray<Relation> => JSON.parse(json) as ReadonlyArray<Relation>

const computed = { origin: "deterministic", proposed: false } as const

/** origin and proposed of an entry: of the link it hangs on (graph.md §11). */
type Mark = Pick<Entry, "origin" | "proposed">

const group = (kind: GroupKind, count: number, entries: ReadonlyArray<Entry>): Group => {
  const shown = entries.slice(0, GROUP_ENTRIES)
  return { kind, count, entries: shown, more: count - shown.length }
}

/** A rule as a group entry: its current version (ref with @<n>), title = statement. */
const ruleEntry = (v: RuleVersionRow): Entry => ({
  ref: ruleRef(v.rule_id, v.version),
  kind: v.kind,
  date: v.said_at,
  title: v.statement,
  excerpt: shortExcerpt(v.quote),
  link: v.source_link,
  ...computed
})

/** The start of a jamie transcript: segment texts in n order, joined by a space. */
const transcriptStart = (sql: SqlClient, sourceId: string) =>
  Effect.map(
    // every segment text has ≥ 1 character, so 301 segments always exceed the 300-character cut
    sql<{ text: string }>`SELECT text FROM source_segment WHERE source_id = ${sourceId} ORDER BY n LIMIT 301`,
    (rows) => shortExcerpt(rows.map((r) => r.text).join(" "))
  )

/** source, thread and attachment groups, and the number of unread attachments. */
const sourceGroups = (sql: SqlClient, src: SourceRow) =>
  Effect.gen(function*() {
    const groups: Array<Group> = []
    if (src.kind === "manual") return { groups, unread: 0 }
    const date = src.occurred_at ?? src.fetched_at
    const excerpt = src.kind === "mail" ? shortExcerpt(src.excerpt) : yield* transcriptStart(sql, src.id)
    groups.push(group("source", 1, [{
      ref: sourceRef(src.id), kind: src.kind === "jamie" ? "meeting" : "mail", date, title: src.title ?? "", excerpt,
      link: src.link, ...computed
    }]))

    if (src.kind === "mail") {
      const root = src.thread ?? src.id
      const [counts, mails] = yield* Effect.all([
        sql<{ n: number }>`SELECT count(*) AS n FROM source
          WHERE kind = 'mail' AND id <> ${src.id} AND (thread = ${root} OR id = ${root})`,
        sql<SourceRow>`SELECT * FROM source
          WHERE kind = 'mail' AND id <> ${src.id} AND (thread = ${root} OR id = ${root})
          ORDER BY julianday(occurred_at) DESC, id LIMIT ${GROUP_ENTRIES}`
      ])
      const count = counts[0]?.n ?? 0
      if (count > 0) {
        groups.push(group("thread", count, mails.map((m): Entry => ({
          ref: sourceRef(m.id), kind: "mail", date: m.occurred_at ?? m.fetched_at, title: m.title ?? "",
          excerpt: shortExcerpt(m.excerpt), link: m.link, ...computed
        }))))
      }
    }

    const [stats, attachments] = yield* Effect.all([
      sql<{ n: number; unread: number | null }>`SELECT count(*) AS n, sum(text_origin = 'none') AS unread
        FROM source_attachment WHERE source_id = ${src.id}`,
      // attachments share the source's date: the first 5 by position stand for the newest 5
      sql<AttachmentRow>`SELECT * FROM source_attachment WHERE source_id = ${src.id} ORDER BY n LIMIT ${GROUP_ENTRIES}`
    ])
    const count = stats[0]?.n ?? 0
    if (count > 0) {
      groups.push(group("attachment", count, attachments.map((a): Entry => ({
        ref: attachmentRef(a.source_id, a.n), kind: "attachment", date, title: a.filename,
        excerpt: shortExcerpt(a.text), link: null, ...computed
      }))))
    }
    return { groups, unread: stats[0]?.unread ?? 0 }
  })

const currentOf = (sql: SqlClient, ruleId: string) =>
  Effect.map(sql<RuleVersionRow>`SELECT * FROM current_version WHERE rule_id = ${ruleId}`, (rows) => rows[0])

/** predecessor / successor: the current version of the named rule (never a rejected one). */
const chainGroup = (sql: SqlClient, kind: "predecessor" | "successor", ruleId: string | null) =>
  Effect.gen(function*() {
    if (ruleId === null) return null
    const v = yield* currentOf(sql, ruleId)
    if (v === undefined || v.status === "rejected") return null
    return group(kind, 1, [ruleEntry(v)])
  })

// --- rule-set groups (same-relation; the graph adds its rule sets here) ----------------------

/**
 * The rules a rule-set group may show, as a SQL fragment of rows (seq, said_at) of rules of the
 * scope; duplicates are allowed (the group counts each rule once). The graph's same-relation
 * through entity_closure (graph.md §11) adds its rules as another fragment of the same shape.
 */
type RuleSet = Fragment

/**
 * The current version of every indexed rule (seq, rule_id, version, status, valid_from,
 * valid_until): lex_doc, maintained in every rule write; on a file whose lexical tables were
 * never built (a migrated file before its first search or write) the same rows from
 * current_version.
 */
const indexedDocs = (sql: SqlClient, built: boolean): Fragment =>
  built
    ? sql`lex_doc`
    : sql`(SELECT r.seq, v.rule_id, v.version, v.status, v.valid_from, v.valid_until
        FROM rule r JOIN current_version v ON v.rule_id = r.id WHERE v.status <> 'rejected')`

/** True when the lex_* tables (lex_relation included) were built on this file. */
const lexicalBuilt = (sql: SqlClient) =>
  Effect.map(sql<{ n: number }>`SELECT count(*) AS n FROM lex_meta WHERE key = 'build'`, (rows) => (rows[0]?.n ?? 0) > 0)

/**
 * A group of rules from a rule set: the other rules of the set passing the head filter on the
 * target day (confirmed or superseded and in force; proposals only when the search includes
 * them; rejected never, lex_doc holds none), count = all of them, entries = the newest 5 (said_at,
 * then the later rule). One statement: the count is a window over the filtered set, the rows of
 * rule_version are read for the 5 shown only. `marks` gives the origin and proposed mark of the
 * entries that hang on a stored link (by rule id); the others are computed.
 */
const ruleSetGroup = (
  sql: SqlClient,
  kind: GroupKind,
  rules: RuleSet,
  head: RuleVersionRow,
  docs: Fragment,
  opts: BundleOptions,
  marks: ReadonlyMap<string, Mark> = new Map()
) =>
  Effect.gen(function*() {
    const day = opts.targetDay
    const rows = yield* sql<RuleVersionRow & { readonly group_count: number }>`
      SELECT v.*, t.n AS group_count FROM (
        SELECT d.rule_id, d.version, c.seq, c.said_at, count(*) OVER () AS n
        FROM (SELECT DISTINCT seq, said_at FROM (${rules})) c JOIN ${docs} d ON d.seq = c.seq
        WHERE d.rule_id <> ${head.rule_id}
          AND ((d.status IN ('confirmed', 'superseded') AND d.valid_from <= ${day} AND ${day} < coalesce(d.valid_until, '9999-12-31'))
            OR (${opts.includeProposals ? 1 : 0} = 1 AND d.status = 'proposed'))
        ORDER BY julianday(c.said_at) DESC, c.seq DESC LIMIT ${GROUP_ENTRIES}) t
      JOIN rule_version v ON v.rule_id = t.rule_id AND v.version = t.version
      ORDER BY julianday(t.said_at) DESC, t.seq DESC`
    const count = rows[0]?.group_count ?? 0
    if (count === 0) return null
    return group(kind, count, rows.map(({ group_count: _, ...v }) => ({ ...ruleEntry(v), ...marks.get(v.rule_id) })))
  })

/**
 * same-relation: the rules with a relation of equal kind and case-insensitive name (Unicode
 * lower case). Built files look the keys up in lex_relation (an index on kind and name); a file
 * whose lexical tables were never built compares the relations of every current version.
 */
const sameRelationRules = (sql: SqlClient, relations: ReadonlyArray<Relation>, built: boolean) =>
  Effect.gen(function*() {
    const keys = JSON.stringify(relations.map(relationKey))
    if (built) {
      return sql`SELECT r.seq, r.said_at FROM json_each(${keys}) j
        JOIN lex_relation r ON r.kind = json_extract(j.value, '$.kind') AND r.name = json_extract(j.value, '$.name')`
    }
    const all = yield* sql<{ seq: number; said_at: string; relations: string }>`
      SELECT r.seq, v.said_at, v.relations FROM rule r JOIN current_version v ON v.rule_id = r.id
      WHERE v.status <> 'rejected' AND v.relations <> '[]'`
    const wanted = new Set(relations.map((r) => JSON.stringify(relationKey(r))))
    const matching = all.filter((v) => parseRelations(v.relations).some((o) => wanted.has(JSON.stringify(relationKey(o)))))
    return sql`SELECT json_extract(value, '$[0]') AS seq, json_extract(value, '$[1]') AS said_at
      FROM json_each(${JSON.stringify(matching.map((v) => [v.seq, v.said_at]))})`
  })

/**
 * same-relation: the rules sharing a relation (computed) and, from the graph, the rules with a
 * counted link to one of the head's entities or an ancestor of one (`viaEntities`, marked by
 * their link). A rule found both ways hangs on the computed match.
 */
const sameRelationGroup = (
  sql: SqlClient,
  head: RuleVersionRow,
  relations: ReadonlyArray<Relation>,
  opts: BundleOptions,
  viaEntities: ReadonlyMap<string, Mark> = new Map()
) =>
  Effect.gen(function*() {
    if (relations.length === 0 && viaEntities.size === 0) return null
    const built = yield* lexicalBuilt(sql)
    const docs = indexedDocs(sql, built)
    if (viaEntities.size === 0) return yield* ruleSetGroup(sql, "same-relation", yield* sameRelationRules(sql, relations, built), head, docs, opts)
    const byEntity = ruleSetOf(sql, [...viaEntities.keys()])
    if (relations.length === 0) return yield* ruleSetGroup(sql, "same-relation", byEntity, head, docs, opts, viaEntities)
    const byRelation = yield* sameRelationRules(sql, relations, built)
    const both = yield* sql<{ id: string }>`SELECT r.id FROM (${byEntity}) e JOIN rule r ON r.seq = e.seq
      WHERE e.seq IN (SELECT seq FROM (${byRelation}))`
    const marks = new Map(viaEntities)
    for (const r of both) marks.delete(r.id)
    const rules = sql`SELECT seq, said_at FROM (${byRelation}) UNION ALL SELECT seq, said_at FROM (${byEntity})`
    return yield* ruleSetGroup(sql, "same-relation", rules, head, docs, opts, marks)
  })

// --- graph (graph.md §11): head.entities, entity and contradicts groups, same-relation via entities

/** head.entities holds at most this many; the entity group counts them all. */
export const HEAD_ENTITIES = 10

/** The count options of a bundle: the given minimum confidence, else the running config's. */
const countOptionsOf = (opts: BundleOptions): Effect.Effect<CountOptions> =>
  opts.minConfidence !== undefined
    ? Effect.succeed({ zone: opts.zone, minConfidence: opts.minConfidence })
    : Effect.map(Effect.serviceOption(AppConfig), (config) => ({
      zone: opts.zone,
      minConfidence: Option.match(config, { onNone: () => null, onSome: (c) => c.file.graph.proposed_min_confidence })
    }))

/** a is the better mark for one entry than b: a link not marked proposed wins. */
const betterMark = (a: Mark, b: Mark | undefined): boolean => b === undefined || (b.proposed && !a.proposed)

const markOf = (l: CountedLink): Mark => ({ origin: l.origin, proposed: l.proposed })

/** (seq, said_at) of the current versions of the given rules, as a rule set. */
const ruleSetOf = (sql: SqlClient, ruleIds: ReadonlyArray<string>): RuleSet =>
  sql`SELECT r.seq, v.said_at FROM json_each(${JSON.stringify(ruleIds)}) j
    JOIN rule r ON r.id = j.value JOIN current_version v ON v.rule_id = r.id`

const headEntity = (e: RuleEntity): Head["entities"][number] => ({
  ref: entityEnd(e.entity_id),
  name: e.name,
  type: e.type,
  path: e.path.map((p) => ({ ref: entityEnd(p.id), name: p.name, type: p.type })),
  proposed: e.link.proposed
})

/** entity: every entity of the head (in head.entities' order), title = its path joined with ›. */
const entityGroup = (entities: ReadonlyArray<RuleEntity>): Group | null =>
  entities.length === 0 ? null : group("entity", entities.length, entities.map((e): Entry => ({
    ref: entityEnd(e.entity_id),
    kind: "entity",
    date: e.link.valid_from,
    title: pathTitle(e.path),
    excerpt: null,
    link: null,
    ...markOf(e.link)
  })))

/** contradicts: the rules a counted contradicts link ties to the head, either direction, passing the head filter. */
const contradictsGroup = (sql: SqlClient, head: RuleVersionRow, links: ReadonlyArray<CountedLink>, opts: BundleOptions) =>
  Effect.gen(function*() {
    const self = ruleEnd(head.rule_id)
    const marks = new Map<string, Mark>()
    for (const l of links) {
      if (l.type !== "contradicts") continue
      const other = l.from_ref === self ? l.to_ref : l.from_ref
      if (other === self || endKindOf(other) !== "rule") continue
      const id = ruleIdOfEnd(other)
      if (betterMark(markOf(l), marks.get(id))) marks.set(id, markOf(l))
    }
    if (marks.size === 0) return null
    const docs = indexedDocs(sql, yield* lexicalBuilt(sql))
    return yield* ruleSetGroup(sql, "contradicts", ruleSetOf(sql, [...marks.keys()]), head, docs, opts, marks)
  })

/**
 * The rules with a counted link to one of the head's entities or to an ancestor of one (G8, via
 * entity_closure), by rule id, each with the mark of its best link; proposed also when every
 * head link that reaches that entity is itself marked proposed.
 */
const entityRelatedRules = (
  sql: SqlClient,
  head: RuleVersionRow,
  entities: ReadonlyArray<RuleEntity>,
  day: string,
  count: CountOptions
) =>
  Effect.gen(function*() {
    const marks = new Map<string, Mark>()
    if (entities.length === 0) return marks
    const up = yield* sql<{ ancestor_id: string; descendant_id: string }>`
      SELECT ancestor_id, descendant_id FROM entity_closure WHERE descendant_id IN ${sql.in(entities.map((e) => e.entity_id))}`
    const headProposed = new Map(entities.map((e) => [e.entity_id, e.link.proposed]))
    /** entity end → whether it is reached only through head links marked proposed */
    const reached = new Map<string, boolean>()
    for (const r of up) {
      const end = entityEnd(r.ancestor_id)
      reached.set(end, (reached.get(end) ?? true) && (headProposed.get(r.descendant_id) ?? true))
    }
    const self = ruleEnd(head.rule_id)
    for (const l of yield* countedLinksOf(sql, [...reached.keys()], day, count)) {
      const [entity, other] = reached.has(l.to_ref) ? [l.to_ref, l.from_ref] : [l.from_ref, l.to_ref]
      if (other === self || endKindOf(other) !== "rule") continue
      const mark: Mark = { origin: l.origin, proposed: l.proposed || (reached.get(entity) ?? false) }
      const id = ruleIdOfEnd(other)
      if (betterMark(mark, marks.get(id))) marks.set(id, mark)
    }
    return marks
  })

/** The graph around a head rule on the target day: its entities (ordered), its counted links, the rules related via entities. */
const graphOf = (sql: SqlClient, v: RuleVersionRow, opts: BundleOptions) =>
  Effect.gen(function*() {
    const count = yield* countOptionsOf(opts)
    const entities = yield* entityLinksOfRule(sql, v.rule_id, opts.targetDay, count)
    const links = yield* countedLinksOf(sql, [ruleEnd(v.rule_id)], opts.targetDay, count)
    const related = yield* entityRelatedRules(sql, v, entities, opts.targetDay, count)
    return { entities, links, related }
  })

/** The head of a bundle from the matched version (architecture.md §8). */
const headOf = (sql: SqlClient, input: HeadInput, opts: BundleOptions) =>
  Effect.gen(function*() {
    const v = input.version
    if (v.status === "rejected") return yield* Effect.dieMessage(`bundle head ${v.rule_id}@${v.version} is rejected`)
    const facts = yield* reviewFacts(sql, v.rule_id)
    const reviewed = facts.lastReviewedAt
    if (reviewed === null) return yield* Effect.dieMessage(`bundle head ${v.rule_id} names a missing rule`)
    const age = ageDays(reviewed, opts.zone, opts.nowMs)
    const head: Head = {
      ref: ruleRef(v.rule_id, v.version),
      kind: v.kind,
      date: v.said_at,
      title: v.statement,
      excerpt: v.quote,
      link: v.source_link,
      scope: input.scope,
      status: v.status,
      unconfirmed: v.status === "proposed",
      valid_from: v.valid_from,
      valid_until: v.valid_until,
      superseded_by: v.superseded_by,
      last_reviewed_at: reviewed,
      adoption: facts.adoption,
      age_days: age,
      recheck: recheckOf(v.status, age, opts.recheckAfterDays),
      source: {
        kind: sourceKindOf(v.source_id),
        id: v.source_id,
        quote: v.quote,
        timestamp: v.timestamp_s === null ? null : formatTimestamp(v.timestamp_s),
        link: v.source_link
      },
      speaker: v.speaker,
      relations: parseRelations(v.relations),
      rank: input.rank,
      found_via: [...input.found_via],
      coverage: input.coverage,
      matched_terms: input.matched_terms,
      entities: []
    }
    return head
  })

/** The bundle of one head: head, groups in the fixed order, line. */
export const buildBundle = (sql: SqlClient, input: HeadInput, opts: BundleOptions): Effect.Effect<Bundle, SqlError> =>
  Effect.gen(function*() {
    const v = input.version
    const plain = yield* headOf(sql, input, opts)
    const graph = yield* graphOf(sql, v, opts)
    const head: Head = { ...plain, entities: graph.entities.slice(0, HEAD_ENTITIES).map(headEntity) }
    const sources = yield* sql<SourceRow>`SELECT * FROM source WHERE id = ${v.source_id}`
    const src = sources[0]
    if (src === undefined) return yield* Effect.dieMessage(`rule ${v.rule_id} names a missing source`)
    const { groups: fromSource, unread } = yield* sourceGroups(sql, src)
    const predecessor = yield* chainGroup(sql, "predecessor", v.supersedes)
    const successor = yield* chainGroup(sql, "successor", v.superseded_by)
    const contradicts = yield* contradictsGroup(sql, v, graph.links, opts)
    const related = yield* sameRelationGroup(sql, v, head.relations, opts, graph.related)
    const groups = [...fromSource, entityGroup(graph.entities), predecessor, successor, contradicts, related]
      .filter((g): g is Group => g !== null && g.count > 0)
      .sort((a, b) => GROUP_ORDER.indexOf(a.kind) - GROUP_ORDER.indexOf(b.kind))
    return { head, groups, line: bundleLine(head, groups, { zone: opts.zone, unreadAttachments: unread }) }
  })

/** In force on `day`: valid_from ≤ day < valid_until (open when null). */
const inForce = (validFrom: string, validUntil: string | null, day: string): boolean =>
  validFrom <= day && day < (validUntil ?? "9999-12-31")

/**
 * The version GET /v1/rules/:id shows: without as_of the current version; with as_of the newest
 * version in force that day. Only the last version of a rule can carry valid_until (superseded
 * is terminal), so an older version ends where the rule ended. Proposals only with
 * includeProposals; rejected never (a rule whose current version is rejected does not exist).
 */
export const chooseReadVersion = (
  versions: ReadonlyArray<RuleVersionRow>,
  asOf: string | null,
  includeProposals: boolean
): RuleVersionRow | undefined => {
  const current = versions[versions.length - 1]
  if (current === undefined || current.status === "rejected") return undefined
  const visible = (v: RuleVersionRow) => v.status !== "rejected" && (includeProposals || v.status !== "proposed")
  if (asOf === null) return visible(current) ? current : undefined
  return [...versions].reverse()
    .find((v) => visible(v) && inForce(v.valid_from, v.valid_until ?? current.valid_until, asOf))
}

export interface ReadOptions {
  readonly zone: string
  readonly recheckAfterDays: number
  readonly nowMs: number
  /** as_of of the request, or null for today */
  readonly asOf: string | null
  readonly includeProposals: boolean
  /** as BundleOptions.minConfidence: left out, the running config's */
  readonly minConfidence?: number | null
}

/**
 * The bundle of a rule for a read (GET /v1/rules/:id, read_rule): the version of
 * chooseReadVersion as the head with rank all null, found_via [], coverage and matched_terms
 * null; undefined when the rule does not exist for this read (unknown, rejected, a proposal
 * without includeProposals, nothing in force on as_of).
 */
export const readBundle = (sql: SqlClient, ruleId: string, opts: ReadOptions): Effect.Effect<Bundle | undefined, SqlError> =>
  Effect.gen(function*() {
    const versions = yield* allVersions(sql, ruleId)
    const version = chooseReadVersion(versions, opts.asOf, opts.includeProposals)
    if (version === undefined) return undefined
    return yield* buildBundle(sql, {
      version, scope: scopeOfRuleId(ruleId), rank: NO_RANK, found_via: [], coverage: null, matched_terms: null
    }, {
      zone: opts.zone,
      recheckAfterDays: opts.recheckAfterDays,
      nowMs: opts.nowMs,
      targetDay: opts.asOf ?? dayIn(opts.zone, opts.nowMs),
      includeProposals: opts.includeProposals,
      ...(opts.minConfidence === undefined ? {} : { minConfidence: opts.minConfidence })
    })
  })
