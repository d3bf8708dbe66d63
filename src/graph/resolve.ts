/**
 * entity_resolve (graph.md §5.2, §5.3; gaps.md §7): three recall passes over entity_fts (exact,
 * trigram, initials; exact and initials through its key table entity_fts_key), the score of every
 * recalled entity against the normalized key, and at most five candidates with their full path.
 * Also the similar-duplicate check of entity_create/update (with excludeId and a type).
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { ftsLiteral } from "../db/fts.js"
import { RESOLVE_MAX_CANDIDATES, RESOLVE_MIN_SCORE } from "./config.js"
import type { Candidate } from "../contracts/errors.js"
import { isInitialsKey, normalize, scoreAgainst, trigrams } from "./normalize.js"
import { pathsOf } from "./paths.js"
import { redactedMark, redactedOf } from "../domain/redacted.js"

export interface ResolveInput {
  /** The text to resolve, as given (BoundedQuery); normalized here. */
  readonly q: string
  /** Only entities of this type. */
  readonly type?: string | null
  /** Leave this entity out (the duplicate check of an update excludes the entity itself). */
  readonly excludeId?: string | null
  /** At most this many candidates (1–5, default 5). */
  readonly limit?: number
}

/** The trigram pass reads at most this many rows, best rank first (graph.md §5.2). */
export const TRIGRAM_LIMIT = 50

/** The MATCH expression of the trigram pass: every trigram of the key a quoted phrase, joined by OR. */
export const trigramQuery = (key: string): string | null => {
  const grams = trigrams(key)
  return grams.length === 0 ? null : grams.map(ftsLiteral).join(" OR ")
}

interface Row {
  readonly seq: number
  readonly id: string
  readonly name: string
  readonly type: string
  readonly status: "active" | "unconfirmed" | "archived"
  readonly aliases: string
  readonly depth: number
  readonly version: number
}

const STATUS_ORDER: Record<string, number> = { active: 0, unconfirmed: 1, archived: 2 }

/**
 * Candidates for q: score ≥ 0.50, of `type` when given, never archived, never `excludeId`; ordered
 * by score desc, active before unconfirmed, smaller depth, id (the number of the id); at most 5.
 * An empty key (nothing left after normalization; the input schema refuses it first) finds nothing.
 */
export const resolve = Effect.fn("Graph.resolve")(function*(sql: SqlClient, input: ResolveInput) {
  const key = normalize(input.q)
  if (key.length === 0) return [] as Array<Candidate>
  const type = input.type ?? null
  const exclude = input.excludeId ?? null
  const limit = Math.max(1, Math.min(Math.trunc(input.limit ?? RESOLVE_MAX_CANDIDATES), RESOLVE_MAX_CANDIDATES))
  const seqs = new Set<number>()

  // 1. exact: the normalized name or a normalized alias equals the key, looked up in
  //    entity_fts_key (fts.ts writes it beside every entity_fts row), keys of any length
  const exact = yield* sql<{ seq: number }>`SELECT seq FROM entity_fts_key WHERE kind = 'exact' AND key = ${key}`
  for (const r of exact) seqs.add(r.seq)

  // 2. trigram: the 50 best-ranked rows among the current, non-archived entities of the type
  const match = trigramQuery(key)
  if (match !== null) {
    const rows = yield* sql<{ seq: number }>`SELECT f.rowid AS seq FROM entity_fts f
      JOIN entity e ON e.seq = f.rowid JOIN entity_current c ON c.id = e.id
      WHERE f.entity_fts MATCH ${match} AND c.status <> 'archived'
        AND (${type} IS NULL OR c.type = ${type}) AND (${exclude} IS NULL OR e.id <> ${exclude})
      ORDER BY f.rank LIMIT ${TRIGRAM_LIMIT}`
    for (const r of rows) seqs.add(r.seq)
  }

  // 3. initials: a key of one token of 2–6 letters equal to the initials of a name or an alias
  if (isInitialsKey(key)) {
    const rows = yield* sql<{ seq: number }>`SELECT seq FROM entity_fts_key WHERE kind = 'initials' AND key = ${key}`
    for (const r of rows) seqs.add(r.seq)
  }

  if (seqs.size === 0) return [] as Array<Candidate>
  const rows = yield* sql<Row>`SELECT e.seq, e.id, c.version, c.name, c.type, c.status, c.aliases,
      coalesce((SELECT max(k.depth) FROM entity_closure k WHERE k.descendant_id = e.id), 0) AS depth
    FROM entity e JOIN entity_current c ON c.id = e.id
    WHERE e.seq IN ${sql.in([...seqs])} AND c.status <> 'archived'
      AND (${type} IS NULL OR c.type = ${type}) AND (${exclude} IS NULL OR e.id <> ${exclude})`

  const scored = rows.flatMap((r) => {
    const aliases = JSON.parse(r.aliases) as Array<string>
    const s = scoreAgainst(key, r.name, aliases)
    return s === null || s.score < RESOLVE_MIN_SCORE ? [] : [{ row: r, aliases, ...s }]
  })
  scored.sort((a, b) =>
    b.score - a.score ||
    (STATUS_ORDER[a.row.status] ?? 9) - (STATUS_ORDER[b.row.status] ?? 9) ||
    a.row.depth - b.row.depth ||
    a.row.seq - b.row.seq
  )
  const top = scored.slice(0, limit)
  const paths = yield* pathsOf(sql, top.map((t) => t.row.id))
  const marks = yield* redactedOf(sql)
  return top.map((t): Candidate => ({
    id: t.row.id,
    name: t.row.name,
    type: t.row.type,
    status: t.row.status,
    aliases: t.aliases,
    path: (paths.get(t.row.id) ?? []).map((p) => p.name),
    score: t.score,
    match: t.match,
    ...redactedMark(marks.row("entity_version", t.row.id, t.row.version))
  }))
}, Effect.orDie)
