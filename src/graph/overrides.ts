/**
 * The duplicate candidates an entity version was forced past (graph.md §4, §12; scope migration
 * 0008): written in the create's or update's own transaction, read by the structure page, so
 * the page shows what the agent overrode then, not what a duplicate check would find today.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import type { Candidate } from "../contracts/errors.js"

/** Stores the candidates of a forced version in their answer order (n = 1 is the best). */
export const storeOverridden = (sql: SqlClient, id: string, version: number, candidates: ReadonlyArray<Candidate>) =>
  Effect.forEach(candidates, (c, i) =>
    sql`INSERT INTO entity_override (id, version, n, candidate_id, name, type, status, aliases, path, score, match)
      VALUES (${id}, ${version}, ${i + 1}, ${c.id}, ${c.name}, ${c.type}, ${c.status}, ${JSON.stringify(c.aliases)},
        ${JSON.stringify(c.path)}, ${c.score}, ${c.match})`.raw, { discard: true })

interface OverrideRow {
  readonly id: string
  readonly version: number
  readonly candidate_id: string
  readonly name: string
  readonly type: string
  readonly status: Candidate["status"]
  readonly aliases: string
  readonly path: string
  readonly score: number
  readonly match: Candidate["match"]
}

/** The stored candidates of the given entity versions, keyed by `entity/<id>@<version>`, in answer order. */
export const overriddenOf = (sql: SqlClient, versions: ReadonlyArray<{ readonly id: string; readonly version: number }>) =>
  Effect.gen(function*() {
    const out = new Map<string, Array<Candidate>>()
    if (versions.length === 0) return out
    const ids = [...new Set(versions.map((v) => v.id))]
    const rows = yield* sql<OverrideRow>`SELECT id, version, candidate_id, name, type, status, aliases, path, score, match
      FROM entity_override WHERE id IN ${sql.in(ids)} ORDER BY id, version, n`
    const wanted = new Set(versions.map((v) => `entity/${v.id}@${v.version}`))
    for (const r of rows) {
      const ref = `entity/${r.id}@${r.version}`
      if (!wanted.has(ref)) continue
      const list = out.get(ref) ?? []
      list.push({
        id: r.candidate_id, name: r.name, type: r.type, status: r.status,
        aliases: JSON.parse(r.aliases) as Array<string>, path: JSON.parse(r.path) as Array<string>, score: r.score, match: r.match
      })
      out.set(ref, list)
    }
    return out
  })
