/**
 * The duplicate and conflict marks of open proposals, read from what their checks stored
 * (proposal_neighbour, written with each proposal: src/domain/neighbours.ts) and from the
 * contradicts links, never from stage a at render (gaps.md §13 "Conflict view"):
 *  - near duplicates among listed proposals, in both directions (either one's check found the other);
 *  - conflicts: a confirmed rule a proposal nearly duplicates (either check found the other) or an
 *    open contradicts link ties to it (a link a person rejected does not count).
 * Proposals made before migration 0012 have no stored marks: the index leaves them unmarked, and
 * their rule page adds what its own live check finds (docs/decisions.md, «Conflicts: stored marks»).
 * Reads only, inside the caller's read transaction.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import type { RuleVersionRow } from "../domain/rules.js"

/** Why a proposal is shown beside a confirmed rule. */
export type ConflictKind = "near-duplicate" | "contradicts"

export interface ConflictMark {
  readonly rule_id: string
  readonly statement: string
  readonly why: ReadonlyArray<ConflictKind>
}

interface Pair {
  readonly a: string
  readonly b: string
}

/** The near pairs stored for any of `ids`, each as (listed, other). */
const nearPairs = (sql: SqlClient, ids: ReadonlyArray<string>) =>
  Effect.map(
    sql<{ rule_id: string; other_id: string }>`
      SELECT rule_id, other_id FROM proposal_neighbour WHERE near = 1 AND rule_id IN ${sql.in(ids)}
      UNION SELECT rule_id, other_id FROM proposal_neighbour WHERE near = 1 AND other_id IN ${sql.in(ids)}`,
    (rows) => {
      const listed = new Set(ids)
      const out: Array<Pair> = []
      for (const r of rows) {
        if (listed.has(r.rule_id)) out.push({ a: r.rule_id, b: r.other_id })
        if (listed.has(r.other_id)) out.push({ a: r.other_id, b: r.rule_id })
      }
      return out
    }
  )

/** The rules an open, not rejected contradicts link ties to any of `ids`, each as (listed, other). */
const contradictsPairs = (sql: SqlClient, ids: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const refs = ids.map((id) => `rule/${id}`)
    const rows = yield* sql<{ from_ref: string; to_ref: string }>`
      SELECT l.from_ref, l.to_ref FROM link l
      WHERE l.type = 'contradicts' AND l.valid_to IS NULL AND (l.from_ref IN ${sql.in(refs)} OR l.to_ref IN ${sql.in(refs)})
        AND NOT EXISTS (SELECT 1 FROM review w WHERE w.target = 'link/' || l.id AND w.verdict = 'reject')
      ORDER BY l.seq`
    const listed = new Set(ids)
    const out: Array<Pair> = []
    for (const r of rows) {
      const from = r.from_ref.replace(/^rule\//, "")
      const to = r.to_ref.replace(/^rule\//, "")
      if (!r.to_ref.startsWith("rule/") || !r.from_ref.startsWith("rule/")) continue
      if (listed.has(from)) out.push({ a: from, b: to })
      if (listed.has(to)) out.push({ a: to, b: from })
    }
    return out
  })

/** The confirmed rules among `ids` with their current statements. */
const confirmedAmong = (sql: SqlClient, ids: ReadonlyArray<string>) =>
  ids.length === 0
    ? Effect.succeed(new Map<string, string>())
    : Effect.map(
      sql<{ rule_id: string; statement: string }>`
        SELECT rule_id, statement FROM current_version WHERE rule_id IN ${sql.in([...new Set(ids)])} AND status = 'confirmed'`,
      (rows) => new Map(rows.map((r) => [r.rule_id, r.statement] as const))
    )

/** Adds a pair's kind to a proposal's conflicts, one mark per confirmed rule. */
const addConflict = (into: Map<string, Array<ConflictMark>>, p: Pair, statement: string, why: ConflictKind) => {
  const list = into.get(p.a) ?? []
  const seen = list.find((m) => m.rule_id === p.b)
  const next = seen === undefined
    ? [...list, { rule_id: p.b, statement, why: [why] }]
    : list.map((m) => (m === seen && !m.why.includes(why) ? { ...m, why: [...m.why, why] } : m))
  into.set(p.a, next)
}

export interface IndexMarks {
  /** per listed proposal, the other listed proposals it nearly duplicates, in list order */
  readonly duplicates: ReadonlyMap<string, ReadonlyArray<string>>
  /** per listed proposal, the confirmed rules it conflicts with */
  readonly conflicts: ReadonlyMap<string, ReadonlyArray<ConflictMark>>
}

/** The marks of the listed proposals (ids in list order): three reads, whatever the number listed. */
export const indexMarks = (sql: SqlClient, ids: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const none: IndexMarks = { duplicates: new Map(), conflicts: new Map() }
    if (ids.length === 0) return none
    const near = yield* nearPairs(sql, ids)
    const contra = yield* contradictsPairs(sql, ids)
    const listed = new Set(ids)
    const pairs = new Map<string, Set<string>>()
    for (const p of near) if (listed.has(p.b) && p.b !== p.a) pairs.set(p.a, (pairs.get(p.a) ?? new Set()).add(p.b))
    const duplicates = new Map([...pairs].map(([k, v]) => [k, ids.filter((id) => v.has(id))] as const))
    const confirmed = yield* confirmedAmong(sql, [...near, ...contra].map((p) => p.b))
    const conflicts = new Map<string, Array<ConflictMark>>()
    for (const p of near) {
      const s = confirmed.get(p.b)
      if (s !== undefined) addConflict(conflicts, p, s, "near-duplicate")
    }
    for (const p of contra) {
      const s = confirmed.get(p.b)
      if (s !== undefined) addConflict(conflicts, p, s, "contradicts")
    }
    const marks: IndexMarks = { duplicates, conflicts }
    return marks
  })

/** A confirmed rule shown beside a proposal: its current version, its source's title and why. */
export interface Conflict {
  readonly rule: RuleVersionRow
  readonly source_title: string | null
  readonly source_kind: string | null
  readonly why: ReadonlyArray<ConflictKind>
}

/**
 * The confirmed rules proposal `ruleId` conflicts with: its stored marks and contradicts links
 * (as on the index) and `liveNear`, the near duplicates its rule page's own check found now.
 */
export const conflictsOf = (sql: SqlClient, ruleId: string, liveNear: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const marks = (yield* indexMarks(sql, [ruleId])).conflicts.get(ruleId) ?? []
    const live = yield* confirmedAmong(sql, liveNear.filter((id) => id !== ruleId))
    const all = new Map<string, Array<ConflictKind>>(marks.map((m) => [m.rule_id, [...m.why]] as const))
    for (const id of live.keys()) {
      const why = all.get(id) ?? []
      if (!why.includes("near-duplicate")) all.set(id, ["near-duplicate", ...why])
    }
    if (all.size === 0) return [] as Array<Conflict>
    const rows = yield* sql<RuleVersionRow & { source_title: string | null; source_kind: string | null }>`
      SELECT v.*, s.title AS source_title, s.kind AS source_kind FROM current_version v LEFT JOIN source s ON s.id = v.source_id
      WHERE v.rule_id IN ${sql.in([...all.keys()])} AND v.status = 'confirmed' ORDER BY v.rule_id`
    return rows.map(({ source_title, source_kind, ...rule }): Conflict => ({
      rule, source_title, source_kind, why: all.get(rule.rule_id) ?? []
    }))
  })
