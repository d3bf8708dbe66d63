/** Helpers for the entity tests: requests, snapshots of the graph tables, person versions by raw SQL. */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { closureOnCreate } from "../../src/graph/closure.js"
import { type Actor, createEntity, moveEntity, updateEntity } from "../../src/graph/entities.js"
import type { CreateEntityRequest, MoveEntityRequest, UpdateEntityRequest } from "../../src/graph/schemas.js"

export const API: Actor = { grantId: "service:1", channel: "api" }
export const MCP: Actor = { grantId: "person:1", channel: "mcp" }

export const create = (over: Partial<CreateEntityRequest> & { name: string }, by: Actor = API) =>
  createEntity({ scope: "sales", type: "department", parent_id: null, ...over }, by)

export const move = (id: string, parent: string | null, over: Partial<MoveEntityRequest> = {}, by: Actor = API) =>
  moveEntity(id, { scope: "sales", parent_id: parent, ...over }, by)

export const update = (id: string, over: Partial<UpdateEntityRequest>, by: Actor = API) =>
  updateEntity(id, { scope: "sales", ...over }, by)

const GRAPH_TABLES = [
  ["entity", "SELECT * FROM entity ORDER BY seq"],
  ["entity_version", "SELECT * FROM entity_version ORDER BY id, version"],
  ["entity_closure", "SELECT * FROM entity_closure ORDER BY ancestor_id, descendant_id"],
  ["entity_fts", "SELECT rowid, name, aliases FROM entity_fts ORDER BY rowid"],
  ["review", "SELECT * FROM review ORDER BY seq"]
] as const

/** Every row of the graph tables, to compare before and after a refused write. */
export const snapshot = (sql: SqlClient) =>
  Effect.gen(function*() {
    const out: Record<string, unknown> = {}
    for (const [t, q] of GRAPH_TABLES) out[t] = yield* sql.unsafe(q)
    return out
  }).pipe(Effect.orDie)

const AT = "2026-03-12T09:15:00Z"

/** A person's version (confirm or archive) written as src/structure would, by raw SQL. */
export const personVersion = (sql: SqlClient, id: string, change: "confirm" | "archive") =>
  Effect.gen(function*() {
    const rows = yield* sql<{ version: number; type: string; name: string; aliases: string; parent_id: string | null; valid_from: string; evidence: string | null }>`
      SELECT * FROM entity_current WHERE id = ${id}`
    const c = rows[0]!
    const status = change === "confirm" ? "active" : "archived"
    const validTo = change === "archive" ? "2099-12-31" : null
    yield* sql`INSERT INTO entity_version (id, version, type, name, aliases, parent_id, status, valid_from, valid_to, evidence,
        change, channel, changed_by, changed_at, reason)
      VALUES (${id}, ${c.version + 1}, ${c.type}, ${c.name}, ${c.aliases}, ${c.parent_id}, ${status}, ${c.valid_from}, ${validTo},
        ${c.evidence}, ${change}, 'approval', 'person:1', ${AT}, 'checked by a person')`
    return c.version + 1
  }).pipe(Effect.orDie)

/**
 * Seeds a tree quickly for read tests: head, version 1 and the closure (closure.ts) per node, by
 * raw SQL in one transaction. `nodes` are [name, parent index or null, status?]; returns the ids.
 */
export const seedTree = (
  sql: SqlClient,
  nodes: ReadonlyArray<readonly [string, number | null, "archived"?]>
) =>
  sql.withTransaction(Effect.gen(function*() {
    const ids: Array<string> = []
    for (const [i, [name, parent]] of nodes.entries()) {
      const seq = i + 1
      const id = `sales-e${String(seq).padStart(4, "0")}`
      const parentId = parent === null ? null : ids[parent]!
      yield* sql`INSERT INTO entity (seq, id, scope, created_at, created_by) VALUES (${seq}, ${id}, 'sales', ${AT}, 'import')`
      yield* sql`INSERT INTO entity_version (id, version, type, name, aliases, parent_id, status, valid_from, change, channel, changed_by, changed_at, reason)
        VALUES (${id}, 1, 'department', ${name}, '[]', ${parentId}, 'unconfirmed', '2026-03-12', 'create', 'api', 'service:1', ${AT}, 'seed')`
      yield* closureOnCreate(sql, id, parentId)
      ids.push(id)
    }
    for (const [i, [, , status]] of nodes.entries()) {
      if (status === "archived") yield* personVersion(sql, ids[i]!, "archive")
    }
    return ids
  })).pipe(Effect.orDie)
