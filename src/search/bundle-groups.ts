/**
 * The groups of bundles read for many heads at once (bundle.ts builds the bundles): one read per
 * table, or per kind of group, for all heads, never one per head. Each reader gives, per head or
 * per source, exactly what the group of one head alone would be (architecture.md §8, graph.md
 * §11): entries = the newest 5, count = all, more = count − entries.length.
 *
 * Reads only: every query runs on the caller's connection (inside its read transaction). Lists
 * travel as one JSON parameter (json_each), so each statement's text is the same for any number
 * of heads and its prepared statement is reused.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { Fragment } from "@effect/sql/Statement"
import { Effect } from "effect"
import { rowsOf } from "../db/held-connection.js"
import { attachmentRef, ruleRef, sourceRef } from "../contracts/ids.js"
import { shortExcerpt } from "../domain/provenance.js"
import type { RuleVersionRow } from "../domain/rules.js"
import type { Relation } from "../contracts/schemas.js"
import type { Entry, Group, GroupKind } from "../domain/search-schemas.js"
import type { AttachmentRow, SourceRow } from "../domain/sources.js"
import { relationKey } from "./lexical/document.js"
import { boundedPart, refreshStampCache } from "./lexical/stamp-cache.js"

/** Entries shown per group. */
export const GROUP_ENTRIES = 5

export const computed = { origin: "deterministic", proposed: false } as const

/** origin and proposed of an entry: of the link it hangs on (graph.md §11). */
export type Mark = Pick<Entry, "origin" | "proposed">

export const group = (kind: GroupKind, count: number, entries: ReadonlyArray<Entry>): Group => {
  const shown = entries.slice(0, GROUP_ENTRIES)
  return { kind, count, entries: shown, more: count - shown.length }
}

/** A rule as a group entry: its current version (ref with @<n>), title = statement. */
export const ruleEntry = (v: RuleVersionRow): Entry => ({
  ref: ruleRef(v.rule_id, v.version),
  kind: v.kind,
  date: v.said_at,
  title: v.statement,
  excerpt: shortExcerpt(v.quote),
  link: v.source_link,
  ...computed
})

export const parseRelations = (json: string): ReadonlyArray<Relation> => JSON.parse(json) as ReadonlyArray<Relation>

const json = (x: unknown): string => JSON.stringify(x)

/** Rows grouped by a key, in row order. */
const byKey = <A, K>(rows: ReadonlyArray<A>, key: (a: A) => K): Map<K, Array<A>> => {
  const out = new Map<K, Array<A>>()
  for (const r of rows) {
    const list = out.get(key(r))
    if (list === undefined) out.set(key(r), [r])
    else list.push(r)
  }
  return out
}

// --- sources: source, thread and attachment groups -----------------------------------------

/** The source rows of the given ids, keyed by id (a missing one is absent). */
export const sourcesOf = (sql: SqlClient, ids: ReadonlyArray<string>) =>
  Effect.map(
    rowsOf(sql, sql<SourceRow>`SELECT s.* FROM json_each(${json([...new Set(ids)])}) j JOIN source s ON s.id = j.value`),
    (rows) => new Map(rows.map((s) => [s.id, s]))
  )

/** The start of each jamie transcript: segment texts in n order, joined by a space, cut. */
const transcriptStarts = (sql: SqlClient, ids: ReadonlyArray<string>) =>
  ids.length === 0 ? Effect.succeed(new Map<string, string | null>()) : Effect.map(
    // every segment text has ≥ 1 character, so 301 segments always exceed the 300-character cut
    rowsOf(sql, sql<{ id: string; texts: string }>`SELECT j.value AS id,
        (SELECT json_group_array(s.text ORDER BY s.n) FROM (
          SELECT text, n FROM source_segment WHERE source_id = j.value ORDER BY n LIMIT 301) s) AS texts
      FROM json_each(${json(ids)}) j`),
    (rows) => new Map(rows.map((r) => [r.id, shortExcerpt((JSON.parse(r.texts) as Array<string>).join(" "))]))
  )

/** The other mails of each mail's thread (root included): the newest 5 and the count, by mail id. */
const threadsOf = (sql: SqlClient, mails: ReadonlyArray<SourceRow>) =>
  mails.length === 0 ? Effect.succeed(new Map<string, Array<SourceRow & { group_count: number }>>()) : Effect.map(
    rowsOf(sql, sql<SourceRow & { of_source: string; group_count: number }>`
      SELECT m.*, t.of_source, t.group_count FROM (
        SELECT json_extract(j.value, '$[0]') AS of_source, s.id,
          count(*) OVER (PARTITION BY j.key) AS group_count,
          row_number() OVER (PARTITION BY j.key ORDER BY julianday(s.occurred_at) DESC, s.id) AS k
        FROM json_each(${json(mails.map((m) => [m.id, m.thread ?? m.id]))}) j
        JOIN source s ON s.kind = 'mail' AND s.id <> json_extract(j.value, '$[0]')
          AND (s.thread = json_extract(j.value, '$[1]') OR s.id = json_extract(j.value, '$[1]'))) t
      JOIN source m ON m.id = t.id
      WHERE t.k <= ${GROUP_ENTRIES}
      ORDER BY t.of_source, t.k`),
    (rows) => byKey(rows, (r) => r.of_source)
  )

/** The first 5 attachments by position of each source, with the count and the unread, by source id. */
const attachmentsOf = (sql: SqlClient, ids: ReadonlyArray<string>) =>
  ids.length === 0
    ? Effect.succeed(new Map<string, Array<AttachmentRow & { group_count: number; group_unread: number | null }>>())
    : Effect.map(
      rowsOf(sql, sql<AttachmentRow & { group_count: number; group_unread: number | null }>`
        SELECT * FROM (
          SELECT a.*, count(*) OVER w AS group_count, sum(a.text_origin = 'none') OVER w AS group_unread,
            row_number() OVER (PARTITION BY a.source_id ORDER BY a.n) AS group_k
          FROM source_attachment a WHERE a.source_id IN (SELECT value FROM json_each(${json(ids)}))
          WINDOW w AS (PARTITION BY a.source_id))
        WHERE group_k <= ${GROUP_ENTRIES}
        ORDER BY source_id, n`),
      (rows) => byKey(rows, (r) => r.source_id)
    )

export interface SourceGroups {
  readonly groups: ReadonlyArray<Group>
  /** attachments with text_origin none, all of them */
  readonly unread: number
}

/** source, thread and attachment groups and the number of unread attachments, by source id. */
export const sourceGroupsOf = (sql: SqlClient, sources: ReadonlyArray<SourceRow>): Effect.Effect<Map<string, SourceGroups>, SqlError> =>
  Effect.gen(function*() {
    const read = [...new Map(sources.filter((s) => s.kind !== "manual").map((s) => [s.id, s])).values()]
    const starts = yield* transcriptStarts(sql, read.filter((s) => s.kind === "jamie").map((s) => s.id))
    const threads = yield* threadsOf(sql, read.filter((s) => s.kind === "mail"))
    const attachments = yield* attachmentsOf(sql, read.map((s) => s.id))
    const out = new Map<string, SourceGroups>()
    for (const src of sources) {
      if (src.kind === "manual") {
        out.set(src.id, { groups: [], unread: 0 })
        continue
      }
      const groups: Array<Group> = []
      const date = src.occurred_at ?? src.fetched_at
      const excerpt = src.kind === "mail" ? shortExcerpt(src.excerpt) : starts.get(src.id) ?? shortExcerpt("")
      groups.push(group("source", 1, [{
        ref: sourceRef(src.id), kind: src.kind === "jamie" ? "meeting" : "mail", date, title: src.title ?? "", excerpt,
        link: src.link, ...computed
      }]))
      const mails = threads.get(src.id) ?? []
      const threadCount = mails[0]?.group_count ?? 0
      if (threadCount > 0) {
        groups.push(group("thread", threadCount, mails.map((m): Entry => ({
          ref: sourceRef(m.id), kind: "mail", date: m.occurred_at ?? m.fetched_at, title: m.title ?? "",
          excerpt: shortExcerpt(m.excerpt), link: m.link, ...computed
        }))))
      }
      // attachments share the source's date: the first 5 by position stand for the newest 5
      const files = attachments.get(src.id) ?? []
      const count = files[0]?.group_count ?? 0
      if (count > 0) {
        groups.push(group("attachment", count, files.map((a): Entry => ({
          ref: attachmentRef(a.source_id, a.n), kind: "attachment", date, title: a.filename,
          excerpt: shortExcerpt(a.text), link: null, ...computed
        }))))
      }
      out.set(src.id, { groups, unread: files[0]?.group_unread ?? 0 })
    }
    return out
  })

// --- predecessor / successor ---------------------------------------------------------------------

/** The current versions of the given rules, keyed by rule id. */
export const currentVersionsOf = (sql: SqlClient, ruleIds: ReadonlyArray<string>) =>
  ruleIds.length === 0 ? Effect.succeed(new Map<string, RuleVersionRow>()) : Effect.map(
    sql<RuleVersionRow>`SELECT * FROM current_version WHERE rule_id IN (SELECT value FROM json_each(${json([...new Set(ruleIds)])}))`,
    (rows) => new Map(rows.map((v) => [v.rule_id, v]))
  )

/** predecessor / successor: the current version of the named rule (never a rejected one). */
export const chainGroup = (kind: "predecessor" | "successor", v: RuleVersionRow | undefined): Group | null =>
  v === undefined || v.status === "rejected" ? null : group(kind, 1, [ruleEntry(v)])

// --- rule-set groups: same-relation and contradicts -----------------------------------------------

/**
 * What one rule-set group may show: the rules sharing one of `relations` with the head (computed;
 * same-relation only) and the rules of `linked` (by rule id, each with the mark of the link it
 * hangs on). A rule found both ways hangs on the computed match.
 */
export interface RuleSetRequest {
  readonly kind: "same-relation" | "contradicts"
  readonly head: RuleVersionRow
  readonly relations: ReadonlyArray<Relation>
  readonly linked: ReadonlyMap<string, Mark>
}

export interface RuleSetOptions {
  /** the day the rules must be in force */
  readonly targetDay: string
  /** whether proposals are shown */
  readonly includeProposals: boolean
}

/** True when the lex_* tables (lex_relation included) were built on this file. */
const lexicalBuilt = (sql: SqlClient) =>
  Effect.map(rowsOf(sql, sql<{ n: number }>`SELECT count(*) AS n FROM lex_meta WHERE key = 'build'`), (rows) => (rows[0]?.n ?? 0) > 0)

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

/**
 * The relation matches of every group, as rows (g, head rule id, seq, said_at, computed = 1): the rules with a
 * relation of equal kind and case-insensitive name (Unicode lower case). Built files look the
 * keys up in lex_relation (an index on kind and name); a file whose lexical tables were never
 * built compares the relations of every current version.
 */
const relationRows = (sql: SqlClient, reqs: ReadonlyArray<RuleSetRequest>, built: boolean) =>
  Effect.gen(function*() {
    const keys = reqs.flatMap((r, g) => r.relations.map((rel) => ({ g, head: r.head.rule_id, ...relationKey(rel) })))
    if (built) {
      // the keys taken apart once (not once per matching rule: a relation may be shared by hundreds)
      return sql`SELECT * FROM (WITH k AS MATERIALIZED (SELECT json_extract(value, '$[0]') AS g, json_extract(value, '$[1]') AS head,
          json_extract(value, '$[2]') AS kind, json_extract(value, '$[3]') AS name FROM json_each(${json(keys.map((k) => [k.g, k.head, k.kind, k.name]))}))
        SELECT k.g, k.head, r.seq, r.said_at, 1 AS computed FROM k JOIN lex_relation r ON r.kind = k.kind AND r.name = k.name)`
    }
    const all = keys.length === 0 ? [] : yield* sql<{ seq: number; said_at: string; relations: string }>`
      SELECT r.seq, v.said_at, v.relations FROM rule r JOIN current_version v ON v.rule_id = r.id
      WHERE v.status <> 'rejected' AND v.relations <> '[]'`
    const keysOf = all.map((v) => new Set(parseRelations(v.relations).map((o) => json(relationKey(o)))))
    const matching = reqs.flatMap((r, g) => {
      const wanted = r.relations.map((rel) => json(relationKey(rel)))
      return all.flatMap((v, i) => (wanted.some((w) => keysOf[i]?.has(w)) ? [[g, r.head.rule_id, v.seq, v.said_at]] : []))
    })
    return sql`SELECT json_extract(value, '$[0]') AS g, json_extract(value, '$[1]') AS head, json_extract(value, '$[2]') AS seq,
      json_extract(value, '$[3]') AS said_at, 1 AS computed FROM json_each(${json(matching)})`
  })

/** The linked rules of every group, as rows (g, head, seq, said_at of the current version, computed = 0). */
const linkedRows = (sql: SqlClient, reqs: ReadonlyArray<RuleSetRequest>): Fragment =>
  sql`SELECT json_extract(j.value, '$[0]') AS g, json_extract(j.value, '$[1]') AS head, r.seq, v.said_at, 0 AS computed
    FROM json_each(${json(reqs.flatMap((r, g) => [...r.linked.keys()].map((id) => [g, r.head.rule_id, id])))}) j
    JOIN rule r ON r.id = json_extract(j.value, '$[2]') JOIN current_version v ON v.rule_id = r.id`

/**
 * The rule-set groups of many heads in one statement, in the order of `reqs` (null where a group
 * is empty). Each group holds the other rules of its set passing the head filter on the target
 * day (confirmed or superseded and in force; proposals only when included; rejected never,
 * lex_doc holds none), count = all of them (each rule once), entries = the newest 5 (said_at,
 * then the later rule). The count and the row number are windows partitioned by group; the
 * rows of rule_version are read for the 5 shown only. Entries hanging on a stored link carry
 * its mark; the others are computed.
 */
const readRuleSetGroups = (
  sql: SqlClient,
  reqs: ReadonlyArray<RuleSetRequest>,
  opts: RuleSetOptions,
  built: boolean
): Effect.Effect<Array<Group | null>, SqlError> =>
  Effect.gen(function*() {
    if (reqs.every((r) => r.relations.length === 0 && r.linked.size === 0)) return reqs.map(() => null)
    const byRelation = yield* relationRows(sql, reqs, built)
    const day = opts.targetDay
    const rows = yield* rowsOf(sql, sql<RuleVersionRow & { readonly group_id: number; readonly group_count: number; readonly group_computed: number }>`
      SELECT v.*, t.g AS group_id, t.n AS group_count, t.computed AS group_computed FROM (
        SELECT c.g, d.rule_id, d.version, c.seq, c.said_at, c.computed,
          count(*) OVER (PARTITION BY c.g) AS n,
          row_number() OVER (PARTITION BY c.g ORDER BY julianday(c.said_at) DESC, c.seq DESC) AS k
        FROM (SELECT g, head, seq, said_at, max(computed) AS computed
          FROM (${byRelation} UNION ALL ${linkedRows(sql, reqs)}) GROUP BY g, seq) c
        JOIN ${indexedDocs(sql, built)} d ON d.seq = c.seq
        WHERE d.rule_id <> c.head
          AND ((d.status IN ('confirmed', 'superseded') AND d.valid_from <= ${day} AND ${day} < coalesce(d.valid_until, '9999-12-31'))
            OR (${opts.includeProposals ? 1 : 0} = 1 AND d.status = 'proposed'))) t
      JOIN rule_version v ON v.rule_id = t.rule_id AND v.version = t.version
      WHERE t.k <= ${GROUP_ENTRIES}
      ORDER BY t.g, t.k`)
    const byGroup = byKey(rows, (r) => r.group_id)
    return reqs.map((req, g) => {
      const shown = byGroup.get(g) ?? []
      const count = shown[0]?.group_count ?? 0
      if (count === 0) return null
      return group(req.kind, count, shown.map(({ group_id: _g, group_count: _n, group_computed: fromRelation, ...v }) => ({
        ...ruleEntry(v),
        ...(fromRelation === 1 ? {} : req.linked.get(v.rule_id))
      })))
    })
  })

const GROUPS_PART = "rule-set-groups"
/** groups held per connection and stamp before the part starts again */
const MAX_GROUPS = 20_000

interface GroupsPart {
  readonly groups: Map<string, Group | null>
}

/**
 * The key of a group that only writes to the index change, or null: a group of relations alone
 * (no stored link: links are not behind the stamp) on a built file — lex_relation and lex_doc
 * change only with the stamp, and a rule_version row never changes.
 */
const groupKey = (r: RuleSetRequest, opts: RuleSetOptions): string | null =>
  r.linked.size > 0 || r.relations.length === 0
    ? null
    : json([r.kind, r.head.rule_id, r.relations.map((rel) => relationKey(rel)), opts.targetDay, opts.includeProposals])

/**
 * The rule-set groups of many heads (readRuleSetGroups), those of relations alone kept in the
 * connection's stamp cache (stamp-cache.ts; the stamp read again here, in the bundles' own
 * transaction): a relation shared by hundreds of rules costs its statement once per stamp, not
 * on every search that shows one of them.
 */
export const ruleSetGroups = (
  sql: SqlClient,
  reqs: ReadonlyArray<RuleSetRequest>,
  opts: RuleSetOptions
): Effect.Effect<Array<Group | null>, SqlError> =>
  Effect.gen(function*() {
    if (reqs.every((r) => r.relations.length === 0 && r.linked.size === 0)) return reqs.map(() => null)
    const built = yield* lexicalBuilt(sql)
    const keys = reqs.map((r) => groupKey(r, opts))
    if (keys.every((k) => k === null) || !built) return yield* readRuleSetGroups(sql, reqs, opts, built)
    yield* refreshStampCache(sql)
    const held = boundedPart(sql, GROUPS_PART, (): GroupsPart => ({ groups: new Map() }), (p) => p.groups.size, MAX_GROUPS)?.groups
    const todo = reqs.flatMap((r, i) => {
      const k = keys[i]
      return k === null || k === undefined || held === undefined || !held.has(k) ? [i] : []
    })
    const read = todo.length === 0 ? [] : yield* readRuleSetGroups(sql, todo.map((i) => reqs[i] as RuleSetRequest), opts, built)
    const out = keys.map((k) => (k === null || k === undefined ? null : held?.get(k) ?? null))
    todo.forEach((i, j) => {
      const g = read[j] ?? null
      out[i] = g
      const k = keys[i]
      if (k !== null && k !== undefined) held?.set(k, g)
    })
    return out
  })
