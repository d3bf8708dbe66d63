/**
 * entity_fts (graph.md §3.2): rowid = entity.seq, the normalized name (§5.1) and the normalized
 * aliases joined by "|" of the entity's current version. This module is its only writer (AT5);
 * the entity writers call syncEntityFts in the transaction of every version they write.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { normalize } from "./normalize.js"

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

/** Replaces the entity_fts row of one entity (rowid = seq): the old row goes, the new one is inserted. */
export const syncEntityFts = Effect.fn("Graph.syncEntityFts")(function*(sql: SqlClient, entity: EntityFtsSource) {
  const c = entityFtsColumns(entity.name, entity.aliases)
  yield* sql`DELETE FROM entity_fts WHERE rowid = ${entity.seq}`.raw
  yield* sql`INSERT INTO entity_fts (rowid, name, aliases) VALUES (${entity.seq}, ${c.name}, ${c.aliases})`.raw
}, Effect.orDie)

/**
 * Rebuilds entity_fts from entity_current: one row per entity, archived ones included (as
 * syncEntityFts, which never sees a status, keeps them); resolve filters archived entities itself.
 * Returns the number of rows written; one transaction (a savepoint inside the caller's).
 */
export const rebuildEntityFts = Effect.fn("Graph.rebuildEntityFts")(function*(sql: SqlClient) {
  return yield* sql.withTransaction(rebuildRows(sql))
}, Effect.orDie)

const rebuildRows = (sql: SqlClient) => Effect.gen(function*() {
  const rows = yield* sql<{ seq: number; name: string; aliases: string }>`
    SELECT e.seq, c.name, c.aliases FROM entity e JOIN entity_current c ON c.id = e.id ORDER BY e.seq`
  yield* sql`DELETE FROM entity_fts`.raw
  for (const r of rows) {
    const c = entityFtsColumns(r.name, JSON.parse(r.aliases) as Array<string>)
    yield* sql`INSERT INTO entity_fts (rowid, name, aliases) VALUES (${r.seq}, ${c.name}, ${c.aliases})`.raw
  }
  return rows.length
})
