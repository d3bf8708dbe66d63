/**
 * The export's one read of a scope file: every table it renders, inside one read transaction (one
 * snapshot), each query ordered, so the same state gives the same rows.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"

/**
 * Append-only tables (invariant 1; classification, source_auth and secret_finding arrive with
 * migration 0004, entity_override with 0008) and the stored graph tables.
 */
export const COUNTED_TABLES = [
  "rule", "rule_version", "decision", "source", "source_attachment", "source_segment",
  "classification", "source_auth", "secret_finding",
  "entity", "entity_version", "entity_override", "link", "review"
] as const

export const STATUS_ORDER = ["proposed", "confirmed", "superseded", "rejected"] as const

export type Row = Readonly<Record<string, unknown>>

export const str = (row: Row, key: string): string => {
  const v = row[key]
  return v === null || v === undefined ? "" : String(v)
}
export const strOrNull = (row: Row, key: string): string | null => {
  const v = row[key]
  return v === null || v === undefined ? null : String(v)
}
export const numOrNull = (row: Row, key: string): number | null => {
  const v = row[key]
  return typeof v === "number" ? v : typeof v === "bigint" ? Number(v) : null
}

export interface Snapshot {
  readonly scope: string
  readonly schemaVersion: number
  readonly counts: ReadonlyArray<readonly [string, number]>
  readonly rules: ReadonlyArray<Row>
  readonly versions: ReadonlyArray<Row>
  readonly decisions: ReadonlyArray<Row>
  readonly sources: ReadonlyArray<Row>
  readonly attachments: ReadonlyArray<Row>
  readonly segments: ReadonlyArray<Row>
  readonly entities: ReadonlyArray<Row>
  readonly entityVersions: ReadonlyArray<Row>
  readonly links: ReadonlyArray<Row>
  readonly reviews: ReadonlyArray<Row>
}

export const readSnapshot = (sql: SqlClient): Effect.Effect<Snapshot, SqlError> =>
  Effect.gen(function*() {
    const meta = yield* sql<Row>`SELECT scope, schema_version FROM meta WHERE singleton = 1`
    const tables = yield* sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`
    const present = new Set(tables.map((t) => t.name))
    const counts: Array<readonly [string, number]> = []
    for (const table of COUNTED_TABLES) {
      if (!present.has(table)) continue
      const rows = yield* sql.unsafe<{ n: number }>(`SELECT count(*) AS n FROM "${table}"`)
      counts.push([table, Number(rows[0]?.n ?? 0)])
    }
    return {
      scope: str(meta[0] ?? {}, "scope"),
      schemaVersion: numOrNull(meta[0] ?? {}, "schema_version") ?? 0,
      counts,
      rules: yield* sql<Row>`SELECT * FROM rule ORDER BY seq`,
      versions: yield* sql<Row>`SELECT * FROM rule_version ORDER BY rule_id, version`,
      decisions: yield* sql<Row>`SELECT * FROM decision ORDER BY rule_id, id`,
      sources: yield* sql<Row>`SELECT * FROM source ORDER BY id`,
      attachments: yield* sql<Row>`SELECT * FROM source_attachment ORDER BY source_id, n`,
      segments: yield* sql<Row>`SELECT * FROM source_segment ORDER BY source_id, n`,
      entities: yield* sql<Row>`SELECT * FROM entity ORDER BY seq`,
      entityVersions: yield* sql<Row>`SELECT * FROM entity_version ORDER BY id, version`,
      links: yield* sql<Row>`SELECT * FROM link ORDER BY seq`,
      reviews: yield* sql<Row>`SELECT * FROM review ORDER BY seq`
    }
  })

/** Appends `value` to the list under `key`. */
export const push = <V>(map: Map<string, Array<V>>, key: string, value: V): void => {
  const list = map.get(key)
  if (list === undefined) map.set(key, [value])
  else list.push(value)
}

/** Rows grouped by one column, in row order (the rows come ordered by that column first). */
export const groupBy = (rows: ReadonlyArray<Row>, key: string): Map<string, Array<Row>> => {
  const groups = new Map<string, Array<Row>>()
  for (const row of rows) push(groups, str(row, key), row)
  return groups
}
