/**
 * The path (breadcrumb) of an entity, root first (graph.md §6), through entity_closure. Shared by
 * resolve, the entity answers, links and bundles.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import type { PathItem } from "../contracts/errors.js"

/** Full path of one entity from the top level down, the entity itself last; [] when unknown. */
export const pathOf = (sql: SqlClient, id: string): Effect.Effect<Array<PathItem>> =>
  sql<PathItem>`SELECT k.id, k.name, k.type FROM entity_closure c JOIN entity_current k ON k.id = c.ancestor_id
    WHERE c.descendant_id = ${id} ORDER BY c.depth DESC`.pipe(
    Effect.map((rows) => rows.map((r) => ({ id: r.id, name: r.name, type: r.type }))),
    Effect.orDie
  )

/** Paths of many entities in one query, keyed by entity id. */
export const pathsOf = (sql: SqlClient, ids: ReadonlyArray<string>): Effect.Effect<Map<string, Array<PathItem>>> =>
  ids.length === 0
    ? Effect.succeed(new Map())
    : sql<PathItem & { of: string }>`SELECT c.descendant_id AS "of", k.id, k.name, k.type FROM entity_closure c
        JOIN entity_current k ON k.id = c.ancestor_id
        WHERE c.descendant_id IN ${sql.in([...new Set(ids)])} ORDER BY c.descendant_id, c.depth DESC`.pipe(
        Effect.map((rows) => {
          const out = new Map<string, Array<PathItem>>()
          for (const r of rows) {
            const list = out.get(r.of) ?? []
            list.push({ id: r.id, name: r.name, type: r.type })
            out.set(r.of, list)
          }
          return out
        }),
        Effect.orDie
      )

/** The names of a path joined for titles and candidates (graph.md §11: joined with ›). */
export const pathTitle = (path: ReadonlyArray<PathItem>): string => path.map((p) => p.name).join(" › ")
