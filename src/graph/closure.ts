/**
 * The closure table of the entity tree (graph.md §3.2): the only writer of entity_closure (AT5).
 * Maintained after the version insert, in the same transaction, with the contract's SQL;
 * rebuildClosure recomputes it from entity_current.parent_id with WITH RECURSIVE.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"

export interface ClosureRow {
  readonly ancestor_id: string
  readonly descendant_id: string
  readonly depth: number
}

/**
 * The closure from entity_current.parent_id: the current parents are read once (materialized,
 * with an automatic index), then each entity walks up to the top level. Depth is bounded by 64,
 * the largest graph.max_depth, so even a broken table cannot recurse without end.
 */
const RECURSIVE_CLOSURE = `WITH RECURSIVE cur(id, parent_id) AS MATERIALIZED (SELECT id, parent_id FROM entity_current),
  up(ancestor_id, descendant_id, depth) AS (
    SELECT id, id, 0 FROM cur
    UNION ALL
    SELECT k.parent_id, up.descendant_id, up.depth + 1 FROM up JOIN cur k ON k.id = up.ancestor_id
     WHERE k.parent_id IS NOT NULL AND up.depth < 64)`

/** Create: (X, X, 0) and one row per ancestor of the parent. */
export const closureOnCreate = Effect.fn("Closure.onCreate")(function*(sql: SqlClient, id: string, parentId: string | null) {
  yield* sql`INSERT INTO entity_closure (ancestor_id, descendant_id, depth) VALUES (${id}, ${id}, 0)`.raw
  if (parentId !== null) {
    yield* sql`INSERT INTO entity_closure (ancestor_id, descendant_id, depth)
      SELECT ancestor_id, ${id}, depth + 1 FROM entity_closure WHERE descendant_id = ${parentId}`.raw
  }
})

/** Move: cut the subtree of X from its old ancestors, then hang it under the new parent. */
export const closureOnMove = Effect.fn("Closure.onMove")(function*(sql: SqlClient, id: string, newParentId: string | null) {
  yield* sql`DELETE FROM entity_closure
    WHERE descendant_id IN (SELECT descendant_id FROM entity_closure WHERE ancestor_id = ${id})
      AND ancestor_id NOT IN (SELECT descendant_id FROM entity_closure WHERE ancestor_id = ${id})`.raw
  if (newParentId !== null) {
    yield* sql`INSERT INTO entity_closure (ancestor_id, descendant_id, depth)
      SELECT p.ancestor_id, s.descendant_id, p.depth + s.depth + 1
        FROM entity_closure p JOIN entity_closure s ON s.ancestor_id = ${id}
       WHERE p.descendant_id = ${newParentId}`.raw
  }
})

/** The closure as entity_current.parent_id defines it, computed with WITH RECURSIVE (read only). */
export const computeClosure = (sql: SqlClient): Effect.Effect<Array<ClosureRow>> =>
  sql<ClosureRow>`${sql.literal(RECURSIVE_CLOSURE)}
    SELECT ancestor_id, descendant_id, depth FROM up ORDER BY ancestor_id, descendant_id`.pipe(
    Effect.map((rows) => rows.map((r) => ({ ancestor_id: r.ancestor_id, descendant_id: r.descendant_id, depth: r.depth }))),
    Effect.orDie
  )

/** The stored closure, in the order of computeClosure. */
export const storedClosure = (sql: SqlClient): Effect.Effect<Array<ClosureRow>> =>
  sql<ClosureRow>`SELECT ancestor_id, descendant_id, depth FROM entity_closure ORDER BY ancestor_id, descendant_id`.pipe(
    Effect.map((rows) => rows.map((r) => ({ ancestor_id: r.ancestor_id, descendant_id: r.descendant_id, depth: r.depth }))),
    Effect.orDie
  )

/** Replaces entity_closure with the recomputed closure (repair; call inside a write transaction). */
export const rebuildClosure = Effect.fn("Closure.rebuild")(function*(sql: SqlClient) {
  yield* sql`DELETE FROM entity_closure`.raw
  yield* sql`INSERT INTO entity_closure (ancestor_id, descendant_id, depth)
    ${sql.literal(RECURSIVE_CLOSURE)}
    SELECT ancestor_id, descendant_id, depth FROM up`.raw
})
