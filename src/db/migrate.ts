/**
 * The migration runner: one transaction per migration, meta.schema_version records the last
 * one; an unknown higher version refuses to open and changes nothing.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { UnknownSchemaVersion } from "./errors.js"
import type { Migration, MigrationContext } from "./migrations/types.js"

/** meta.schema_version, or 0 for a file without a meta table. */
export const schemaVersion = (sql: SqlClient): Effect.Effect<number, SqlError> =>
  Effect.gen(function*() {
    const tables = yield* sql<{ n: number }>`SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'meta'`
    if ((tables[0]?.n ?? 0) === 0) return 0
    const rows = yield* sql<{ schema_version: number }>`SELECT schema_version FROM meta`
    return rows[0]?.schema_version ?? 0
  })

export const latestVersion = (migrations: ReadonlyArray<Migration>): number =>
  migrations.reduce((max, m) => Math.max(max, m.version), 0)

/** Refuses a file newer than this build without writing anything. */
export const checkKnownVersion = (
  sql: SqlClient,
  file: string,
  migrations: ReadonlyArray<Migration>
): Effect.Effect<number, SqlError | UnknownSchemaVersion> =>
  Effect.gen(function*() {
    const current = yield* schemaVersion(sql)
    const known = latestVersion(migrations)
    if (current > known) return yield* new UnknownSchemaVersion({ file, found: current, known })
    return current
  })

/**
 * The migrations a file at schema_version `current` still needs, in version order: every one
 * above it, and one at or below it whose presentIf query says it was never applied (a migration
 * numbered below one that shipped first, e.g. scope 0004-approval after 0005-vectors).
 */
export const pendingMigrations = (
  sql: SqlClient,
  current: number,
  migrations: ReadonlyArray<Migration>
): Effect.Effect<Array<Migration>, SqlError> =>
  Effect.gen(function*() {
    const pending: Array<Migration> = []
    for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
      if (m.version > current) pending.push(m)
      else if (current > 0 && m.presentIf !== undefined) {
        const rows = yield* sql.unsafe<{ n: number }>(m.presentIf)
        if ((rows[0]?.n ?? 0) === 0) pending.push(m)
      }
    }
    return pending
  })

/**
 * Applies every pending migration, each in its own transaction. Returns the new version; a late
 * migration never lowers schema_version.
 */
export const migrate = (
  sql: SqlClient,
  file: string,
  migrations: ReadonlyArray<Migration>,
  ctx: MigrationContext
): Effect.Effect<number, SqlError | UnknownSchemaVersion> =>
  Effect.gen(function*() {
    const current = yield* checkKnownVersion(sql, file, migrations)
    const pending = yield* pendingMigrations(sql, current, migrations)
    for (const m of pending) {
      yield* sql.withTransaction(Effect.gen(function*() {
        for (const st of m.statements(ctx)) {
          if (typeof st === "string") yield* sql.unsafe(st).raw
          else yield* sql.unsafe(st.sql, st.params ?? []).raw
        }
        yield* sql`UPDATE meta SET schema_version = max(schema_version, ${m.version})`.raw
      }))
    }
    return Math.max(current, latestVersion(pending))
  }).pipe(Effect.withSpan("db.migrate"))
