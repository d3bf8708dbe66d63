/**
 * Migration 0004-approval on a file written by the current release (0.1.0, schema_version 5:
 * 0001–0003 and 0005-vectors): test/db/fixtures/release-0.1.0-sales.sqlite.gz was written by that
 * release's own writers (sources with segments and attachments, a thread, proposals confirmed,
 * reviewed, rejected, revoked and superseded, a manual proposal, entities created, moved, updated
 * and confirmed, a confirmed link, search_log and feedback rows, a stage b vector) and compacted
 * with VACUUM INTO. Opening it with this build applies 0004 late, in place: every row of every
 * table stays (decision rows gain origin grant), the new tables are empty, the append-only
 * triggers are back, and the schema equals a fresh file's.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { gunzipSync } from "node:zlib"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect, Exit } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { openConnection } from "../../src/db/connection.js"
import { createPrivateFile } from "../../src/db/files.js"
import { latestVersion, migrate, pendingMigrations, schemaVersion } from "../../src/db/migrate.js"
import { migration as m0001 } from "../../src/db/migrations/scope/0001-init.js"
import { migration as m0002 } from "../../src/db/migrations/scope/0002-graph.js"
import { migration as m0003 } from "../../src/db/migrations/scope/0003-lexical.js"
import { migration as m0005 } from "../../src/db/migrations/scope/0005-vectors.js"
import { SCOPE_MIGRATIONS } from "../../src/db/migrations/scope/index.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { tempDir, testConfig } from "../support/env.js"
import { run, sqlOf } from "../support/run.js"

const FIXTURE = fileURLToPath(new URL("./fixtures/release-0.1.0-sales.sqlite.gz", import.meta.url))
const T = "2026-03-12T09:15:00Z"
const NEW_TABLES = ["classification", "source_auth", "secret_finding"]

let dir: string
let cleanup: () => void
beforeEach(() => {
  ;({ dir, cleanup } = tempDir())
})
afterEach(() => cleanup())

type Rows = Record<string, ReadonlyArray<Record<string, unknown>>>

/** Every row of every table (ordinary, virtual and shadow tables alike), in a stable order. */
const allRows = (sql: SqlClient) =>
  Effect.gen(function*() {
    const tables = yield* sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`
    const out: Record<string, Array<Record<string, unknown>>> = {}
    for (const { name } of tables) {
      const rows = yield* sql.unsafe<Record<string, unknown>>(`SELECT * FROM "${name}"`)
      out[name] = rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, v instanceof Uint8Array ? Buffer.from(v).toString("hex") : v])))
        .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))
    }
    return out as Rows
  })

const schemaOf = (sql: SqlClient) =>
  Effect.map(
    sql<{ type: string; name: string; sql: string | null }>`SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name`,
    (rows) => rows.map((r) => `${r.type} ${r.name}: ${(r.sql ?? "").replace(/\s+/g, " ")}`)
  )

const withFile = <A, E>(file: string, f: (sql: SqlClient) => Effect.Effect<A, E>) =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(openConnection(file), f)) as Effect.Effect<A, unknown>)

/** The release file in a data dir as scopes/sales.sqlite. */
const releaseDataDir = (): string => {
  mkdirSync(join(dir, "scopes"), { recursive: true, mode: 0o700 })
  const file = join(dir, "scopes", "sales.sqlite")
  writeFileSync(file, gunzipSync(readFileSync(FIXTURE)), { mode: 0o600 })
  return file
}

describe("0004-approval on a file of the current release", () => {
  it("the fixture is a release file: schema_version 5, no approval tables, data in every table of the release", async () => {
    const file = releaseDataDir()
    const facts = await withFile(file, (sql) => Effect.all({ version: schemaVersion(sql), rows: allRows(sql) }))
    expect(facts.version).toBe(5)
    for (const t of NEW_TABLES) expect(facts.rows[t]).toBeUndefined()
    const empty = Object.entries(facts.rows).filter(([, rows]) => rows.length === 0).map(([t]) => t)
    // lex_tri (and its shadow tables) is filled only with search.features.trigram
    expect(empty.filter((t) => !t.startsWith("lex_tri"))).toEqual([])
  })

  it("opening it migrates in place: every row kept, decisions gain origin grant, new tables empty, version becomes the latest (0006-index-stamp to 0011-structure-adoption follow)", async () => {
    const file = releaseDataDir()
    const before = await withFile(file, allRows)
    const config = testConfig(dir, { scopes: [{ name: "sales", providers_allowed: [] }] })
    const after = await run(config, Effect.gen(function*() {
      yield* (yield* ScopeStore).use("sales")
      const sql = yield* sqlOf("sales")
      return { rows: yield* allRows(sql), version: yield* schemaVersion(sql), pending: yield* pendingMigrations(sql, latestVersion(SCOPE_MIGRATIONS), SCOPE_MIGRATIONS) }
    }))
    expect(after.version).toBe(latestVersion(SCOPE_MIGRATIONS))
    expect(after.pending).toEqual([])
    for (const [table, rows] of Object.entries(before)) {
      if (table === "decision") continue
      // every review gains origin grant (0011-structure-adoption)
      if (table === "review") {
        expect(rows.length, table).toBeGreaterThan(0)
        expect(after.rows[table], table).toEqual(rows.map((r) => ({ ...r, origin: "grant" })))
        continue
      }
      // meta: only schema_version moves (to the latest migration's)
      if (table === "meta") {
        expect(after.rows[table], table).toEqual(rows.map((r) => ({ ...r, schema_version: latestVersion(SCOPE_MIGRATIONS) })))
        continue
      }
      // every FTS5 table gains its secure-delete option (0009-redaction)
      if (table.endsWith("_config")) {
        expect(after.rows[table], table).toEqual(expect.arrayContaining([...rows, { k: "secure-delete", v: 1 }]))
        expect(after.rows[table]?.length, table).toBe(rows.length + 1)
        continue
      }
      // …and so its index's structure record carries a new config cookie; the segments stay
      if (table.endsWith("_data")) {
        expect(after.rows[table]?.filter((r) => r.id !== 10), table).toEqual(rows.filter((r) => r.id !== 10))
        continue
      }
      expect(after.rows[table], table).toEqual(rows)
    }
    const decisions = before.decision ?? []
    expect(decisions.length).toBeGreaterThan(4)
    expect(after.rows.decision).toEqual(decisions.map((d) => ({ ...d, origin: "grant", mode: null, classification_id: null }))
      .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))))
    for (const t of NEW_TABLES) expect(after.rows[t], t).toEqual([])
  })

  it("the migrated file has the schema of a fresh file, and its append-only triggers", async () => {
    releaseDataDir()
    const config = testConfig(dir, { scopes: [{ name: "sales", providers_allowed: [] }] })
    const migrated = await run(config, Effect.gen(function*() {
      const sql = yield* sqlOf("sales")
      const update = yield* Effect.exit(sql`UPDATE decision SET reason = 'x'`.raw)
      const del = yield* Effect.exit(sql`DELETE FROM decision`.raw)
      return { schema: yield* schemaOf(sql), update: Exit.isFailure(update), del: Exit.isFailure(del) }
    }))
    expect(migrated.update && migrated.del).toBe(true)
    const fresh = join(dir, "fresh.sqlite")
    createPrivateFile(fresh)
    const freshSchema = await withFile(fresh, (sql) => Effect.zipRight(migrate(sql, fresh, SCOPE_MIGRATIONS, { scope: "sales", now: T }), schemaOf(sql)))
    expect(migrated.schema).toEqual(freshSchema)
  })

  it("a file at 0003 (before stage b) gets 0004 and then 0005 in order; a file at 5 without 0004 gets it late", async () => {
    const f3 = join(dir, "v3.sqlite")
    createPrivateFile(f3)
    const v3 = await withFile(f3, (sql) => Effect.gen(function*() {
      yield* migrate(sql, f3, [m0001, m0002, m0003], { scope: "sales", now: T })
      const pending = (yield* pendingMigrations(sql, 3, SCOPE_MIGRATIONS)).map((m) => m.name)
      const v = yield* migrate(sql, f3, SCOPE_MIGRATIONS, { scope: "sales", now: T })
      return { pending, v, after: yield* schemaVersion(sql) }
    }))
    expect(v3).toEqual({ pending: ["0004-approval", "0005-vectors", "0006-index-stamp", "0007-content-stamp", "0008-entity-override", "0009-redaction", "0010-redaction-rowid", "0011-structure-adoption", "0012-proposal-neighbour", "0013-repeat-lookup"], v: 13, after: 13 })
    const f5 = join(dir, "v5.sqlite")
    createPrivateFile(f5)
    const v5 = await withFile(f5, (sql) => Effect.gen(function*() {
      yield* migrate(sql, f5, [m0001, m0002, m0003, m0005], { scope: "sales", now: T })
      const pending = (yield* pendingMigrations(sql, 5, SCOPE_MIGRATIONS)).map((m) => m.name)
      const v = yield* migrate(sql, f5, SCOPE_MIGRATIONS, { scope: "sales", now: T })
      const again = (yield* pendingMigrations(sql, 13, SCOPE_MIGRATIONS)).map((m) => m.name)
      return { pending, v, after: yield* schemaVersion(sql), again }
    }))
    expect(v5).toEqual({ pending: ["0004-approval", "0006-index-stamp", "0007-content-stamp", "0008-entity-override", "0009-redaction", "0010-redaction-rowid", "0011-structure-adoption", "0012-proposal-neighbour", "0013-repeat-lookup"], v: 13, after: 13, again: [] })
  })

  it("a copy of the release file migrated twice ends identical (the late migration runs once)", async () => {
    const file = releaseDataDir()
    const copy = join(dir, "copy.sqlite")
    copyFileSync(file, copy)
    const once = await withFile(copy, (sql) => Effect.gen(function*() {
      yield* migrate(sql, copy, SCOPE_MIGRATIONS, { scope: "sales", now: T })
      yield* migrate(sql, copy, SCOPE_MIGRATIONS, { scope: "sales", now: T })
      return yield* allRows(sql)
    }))
    expect(once.decision?.every((d) => d.origin === "grant")).toBe(true)
  })
})
