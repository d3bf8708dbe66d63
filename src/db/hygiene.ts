/**
 * What a file's storage hygiene is (gaps.md §12, R1), read from a connection: the connection's
 * secure_delete and temp_store, and the secure-delete option of every FTS5 table of the file
 * (from its schema, so a table a later migration adds is read too). doctor's `secure-delete`
 * reads it on a connection opened as the service opens its own.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"

export interface Hygiene {
  /** PRAGMA secure_delete of the connection: 1 when ON */
  readonly secureDelete: number
  /** PRAGMA temp_store of the connection: 2 when MEMORY */
  readonly tempStore: number
  /** the FTS5 tables of the file without secure-delete = 1 in their _config */
  readonly ftsWithout: ReadonlyArray<string>
  /** how many FTS5 tables the file has */
  readonly fts: number
}

const quote = (name: string): string => `"${name.replace(/"/g, "\"\"")}"`

export const hygieneOf = (sql: SqlClient): Effect.Effect<Hygiene, SqlError> =>
  Effect.gen(function*() {
    const sd = yield* sql<{ secure_delete: number }>`PRAGMA secure_delete`
    const ts = yield* sql<{ temp_store: number }>`PRAGMA temp_store`
    const virtual = yield* sql<{ name: string; sql: string }>`SELECT name, sql FROM sqlite_master
      WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name`
    // fts5 itself, not fts5vocab (a view over another table, with no options of its own)
    const tables = virtual.filter((t) => /\bUSING\s+fts5\s*\(/i.test(t.sql))
    const ftsWithout: Array<string> = []
    for (const { name } of tables) {
      const v = yield* sql.unsafe<{ v: unknown }>(`SELECT v FROM ${quote(`${name}_config`)} WHERE k = 'secure-delete'`)
      if (Number(v[0]?.v ?? 0) !== 1) ftsWithout.push(name)
    }
    return { secureDelete: Number(sd[0]?.secure_delete ?? 0), tempStore: Number(ts[0]?.temp_store ?? 0), ftsWithout, fts: tables.length }
  })
