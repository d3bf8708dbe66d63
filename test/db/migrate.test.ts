import { existsSync } from "node:fs"
import { join } from "node:path"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect, Exit } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { openConnection } from "../../src/db/connection.js"
import { createPrivateFile } from "../../src/db/files.js"
import { latestVersion, migrate, schemaVersion } from "../../src/db/migrate.js"
import { migration as m0001 } from "../../src/db/migrations/scope/0001-init.js"
import { SCOPE_MIGRATIONS } from "../../src/db/migrations/scope/index.js"
import { OPS_MIGRATIONS } from "../../src/db/migrations/ops/index.js"
import type { Migration } from "../../src/db/migrations/types.js"
import { tempDir } from "../support/env.js"
import { fileHash } from "../support/run.js"

/** The newest scope schema version this build knows. */
const LATEST = latestVersion(SCOPE_MIGRATIONS)

let dir: string
let cleanup: () => void
beforeEach(() => {
  ;({ dir, cleanup } = tempDir())
})
afterEach(() => cleanup())

const T = "2026-03-12T09:15:00Z"
const withFile = <A, E>(name: string, f: (sql: SqlClient, file: string) => Effect.Effect<A, E>) =>
  Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const file = join(dir, name)
    if (!existsSync(file)) createPrivateFile(file)
    const sql = yield* openConnection(file)
    return yield* f(sql, file)
  })) as Effect.Effect<A, unknown>)

/** The schema as SQLite stores it, without the table being named *_new while rebuilt. */
const schemaOf = (sql: SqlClient) =>
  sql<{ type: string; name: string; sql: string | null }>`SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name`

describe("pragmas", () => {
  it("every connection has WAL, busy_timeout 5000, synchronous NORMAL, foreign_keys and recursive_triggers on", async () => {
    const values = await withFile("p.sqlite", (sql) => Effect.all([
      sql<{ journal_mode: string }>`PRAGMA journal_mode`,
      sql<{ timeout: number }>`PRAGMA busy_timeout`,
      sql<{ synchronous: number }>`PRAGMA synchronous`,
      sql<{ foreign_keys: number }>`PRAGMA foreign_keys`,
      sql<{ recursive_triggers: number }>`PRAGMA recursive_triggers`
    ]))
    expect(values.map((r) => Object.values(r[0] ?? {})[0])).toEqual(["wal", 5000, 1, 1, 1])
  })
})

describe("migration runner", () => {
  it("brings a new scope file to the latest version, one transaction per migration", async () => {
    const v = await withFile("s.sqlite", (sql, file) =>
      Effect.zipRight(migrate(sql, file, SCOPE_MIGRATIONS, { scope: "sales", now: T }), schemaVersion(sql)))
    expect(v).toBe(LATEST)
    const ops = await withFile("o.sqlite", (sql, file) =>
      Effect.zipRight(migrate(sql, file, OPS_MIGRATIONS, { scope: null, now: T }), schemaVersion(sql)))
    expect(ops).toBe(latestVersion(OPS_MIGRATIONS))
  })

  it("0002-graph keeps search_log and feedback rows and the foreign key, and equals a fresh file's schema", async () => {
    const migrated = await withFile("old.sqlite", (sql, file) => Effect.gen(function*() {
      yield* migrate(sql, file, [m0001], { scope: "sales", now: T })
      yield* sql`INSERT INTO search_log VALUES ('s1', ${T}, 'person:1', 'api', 'search', 200, 0, '[]', '[]', '{}', '{}', 'abc')`.raw
      yield* sql`INSERT INTO feedback (search_id, ref, verdict, given_by, given_at) VALUES ('s1', 'rule/sales-0001@1', 'relevant', 'person:1', ${T})`.raw
      yield* migrate(sql, file, SCOPE_MIGRATIONS, { scope: "sales", now: T })
      const fk = yield* sql<{ table: string }>`SELECT "table" FROM pragma_foreign_key_list('feedback')`
      const rows = yield* sql<{ n: number }>`SELECT (SELECT count(*) FROM search_log) + (SELECT count(*) FROM feedback) AS n`
      const badFk = yield* Effect.exit(sql`INSERT INTO feedback (search_id, ref, verdict, given_by, given_at) VALUES ('nope', 'r', 'missing', 'p', ${T})`.raw)
      const graphOp = yield* Effect.exit(sql`INSERT INTO search_log VALUES ('s2', ${T}, 'p', 'mcp', 'resolve_entity', 200, 0, '[]', NULL, NULL, NULL, NULL)`.raw)
      return { fk, rows, badFk: Exit.isFailure(badFk), graphOp: Exit.isSuccess(graphOp), schema: yield* schemaOf(sql) }
    }))
    expect(migrated.fk.map((r) => r.table)).toEqual(["search_log"])
    expect(migrated.rows[0]?.n).toBe(2)
    expect(migrated.badFk).toBe(true)
    expect(migrated.graphOp).toBe(true)
    const fresh = await withFile("fresh.sqlite", (sql, file) =>
      Effect.zipRight(migrate(sql, file, SCOPE_MIGRATIONS, { scope: "sales", now: T }), schemaOf(sql)))
    const norm = (s: ReadonlyArray<{ type: string; name: string; sql: string | null }>) =>
      s.map((x) => ({ ...x, sql: (x.sql ?? "").replace(/"?search_log_new"?|"search_log"/g, "search_log").replace(/"?feedback_new"?|"feedback"/g, "feedback").replace(/\s+/g, " ") }))
    expect(norm(migrated.schema)).toEqual(norm(fresh))
  })

  it("a failing migration rolls back its transaction and keeps the version", async () => {
    const bad: Migration = {
      version: LATEST + 1, name: "9999-bad",
      statements: () => ["CREATE TABLE half_done (x INTEGER)", "INSERT INTO no_such_table VALUES (1)"]
    }
    const result = await withFile("b.sqlite", (sql, file) => Effect.gen(function*() {
      yield* migrate(sql, file, SCOPE_MIGRATIONS, { scope: "sales", now: T })
      const exit = yield* Effect.exit(migrate(sql, file, [...SCOPE_MIGRATIONS, bad], { scope: "sales", now: T }))
      const tables = yield* sql<{ n: number }>`SELECT count(*) AS n FROM sqlite_master WHERE name = 'half_done'`
      return { failed: Exit.isFailure(exit), version: yield* schemaVersion(sql), tables: tables[0]?.n }
    }))
    expect(result).toEqual({ failed: true, version: LATEST, tables: 0 })
  })

  it("an unknown higher schema_version refuses to open and changes nothing", async () => {
    await withFile("h.sqlite", (sql, file) => Effect.zipRight(
      migrate(sql, file, SCOPE_MIGRATIONS, { scope: "sales", now: T }),
      sql`UPDATE meta SET schema_version = 99`.raw
    ))
    const file = join(dir, "h.sqlite")
    const before = fileHash(file)
    const err = await withFile("h.sqlite", (sql, f) => Effect.flip(migrate(sql, f, SCOPE_MIGRATIONS, { scope: "sales", now: T })))
    expect(err).toMatchObject({ _tag: "UnknownSchemaVersion", found: 99, known: LATEST })
    expect(fileHash(file)).toBe(before)
  })
})
