/**
 * entity_fts (graph.md §3.2): rowid = entity.seq, the normalized name (§5.1) and the normalized
 * aliases joined by "|" of the entity's current version. This module is its only writer (AT5);
 * the entity writers call syncEntityFts in the transaction of every version they write.
 *
 * Beside it, entity_fts_key (migration 0002-graph) holds the lookup keys of each row for the exact and
 * initials passes of resolve: written here only, always together with the entity_fts row.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { charLength, initialsOf, normalize } from "./normalize.js"

export interface EntityFtsSource {
  readonly seq: number
  readonly name: string
  readonly aliases: ReadonlyArray<string>
}

/** The columns stored for one entity: normalize(name) and the normalized aliases joined by "|". */
export const entityFtsColumns = (name: string, aliases: ReadonlyArray<string>): { name: string; aliases: string } => ({
  name: normalize(name),
  aliases: aliases.map(normalize).join("|")
})

export type EntityKeyKind = "exact" | "initials"

/**
 * The entity_fts_key rows of one entity_fts row: kind "exact" with the stored name and every
 * stored alias, kind "initials" with their initials (initialsOf) when those have 2–6 characters,
 * each distinct pair once. Resolve asks for exact keys equal to the normalized key and, for an
 * initials key (one token of 2–6 letters), for initials equal to it: the same rows the passes of
 * graph.md §5.2 find by reading entity_fts.
 */
export const entityFtsKeys = (columns: { readonly name: string; readonly aliases: string }): Array<{ kind: EntityKeyKind; key: string }> => {
  const out = new Map<string, { kind: EntityKeyKind; key: string }>()
  for (const s of [columns.name, ...columns.aliases.split("|")]) {
    if (s.length === 0) continue
    out.set(`exact\u0000${s}`, { kind: "exact", key: s })
    const initials = initialsOf(s)
    const n = charLength(initials)
    if (n >= 2 && n <= 6) out.set(`initials\u0000${initials}`, { kind: "initials", key: initials })
  }
  return [...out.values()]
}

/** Rows per INSERT statement of a rebuild (three or four bound values each). */
const BATCH = 500

/** Inserts entity_fts rows and their keys, a batch of rows per statement. */
const insertRows = (sql: SqlClient, rows: ReadonlyArray<{ readonly seq: number; readonly name: string; readonly aliases: string }>) =>
  Effect.gen(function*() {
    for (let i = 0; i < rows.length; i += BATCH) {
      const batch = rows.slice(i, i + BATCH)
      yield* sql`INSERT INTO entity_fts ${sql.insert(batch.map((r) => ({ rowid: r.seq, name: r.name, aliases: r.aliases })))}`.raw
    }
    const keys = rows.flatMap((r) => entityFtsKeys(r).map((k) => ({ kind: k.kind, key: k.key, seq: r.seq })))
    for (let i = 0; i < keys.length; i += BATCH) {
      yield* sql`INSERT INTO entity_fts_key ${sql.insert(keys.slice(i, i + BATCH))}`.raw
    }
  })

/** Replaces the entity_fts row of one entity (rowid = seq) and its keys: the old rows go, the new ones are inserted. */
export const syncEntityFts = Effect.fn("Graph.syncEntityFts")(function*(sql: SqlClient, entity: EntityFtsSource) {
  const c = entityFtsColumns(entity.name, entity.aliases)
  yield* sql`DELETE FROM entity_fts WHERE rowid = ${entity.seq}`.raw
  yield* sql`DELETE FROM entity_fts_key WHERE seq = ${entity.seq}`.raw
  yield* insertRows(sql, [{ seq: entity.seq, ...c }])
}, Effect.orDie)

/**
 * Rebuilds entity_fts and entity_fts_key from entity_current: one row per entity, archived ones
 * included (as syncEntityFts, which never sees a status, keeps them); resolve filters archived
 * entities itself. Returns the number of rows written; one transaction (a savepoint inside the
 * caller's).
 */
export const rebuildEntityFts = Effect.fn("Graph.rebuildEntityFts")(function*(sql: SqlClient) {
  return yield* sql.withTransaction(rebuildRows(sql))
}, Effect.orDie)

const rebuildRows = (sql: SqlClient) => Effect.gen(function*() {
  const rows = yield* sql<{ seq: number; name: string; aliases: string }>`
    SELECT e.seq, c.name, c.aliases FROM entity e JOIN entity_current c ON c.id = e.id ORDER BY e.seq`
  yield* sql`DELETE FROM entity_fts`.raw
  yield* sql`DELETE FROM entity_fts_key`.raw
  yield* insertRows(sql, rows.map((r) => ({ seq: r.seq, ...entityFtsColumns(r.name, JSON.parse(r.aliases) as Array<string>) })))
  return rows.length
})
