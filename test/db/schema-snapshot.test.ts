/**
 * Frozen migrations (a shipped migration never changes and never imports live code): the schema
 * a fresh file has after each migration is compared with the snapshot committed for it in
 * test/db/schema/. A new migration adds a snapshot (UPDATE_SCHEMA_SNAPSHOTS=1 writes the missing
 * ones); an edit to a shipped migration, or to live code it once imported, fails here.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { openConnection } from "../../src/db/connection.js"
import { createPrivateFile } from "../../src/db/files.js"
import { migrate } from "../../src/db/migrate.js"
import { OPS_MIGRATIONS } from "../../src/db/migrations/ops/index.js"
import { SCOPE_MIGRATIONS } from "../../src/db/migrations/scope/index.js"
import type { Migration } from "../../src/db/migrations/types.js"
import { buildSourceGraph, importClosure } from "../arch/source-graph.js"
import { tempDir } from "../support/env.js"

const SNAPSHOTS = fileURLToPath(new URL("./schema/", import.meta.url))
const ROOT = fileURLToPath(new URL("../..", import.meta.url))

let dir: string
let cleanup: () => void
beforeEach(() => {
  ;({ dir, cleanup } = tempDir())
})
afterEach(() => cleanup())

/** The schema of a fresh file after the first `upTo` migrations, one normalised statement a line. */
const schemaAfter = (kind: string, migrations: ReadonlyArray<Migration>, upTo: number) =>
  Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const file = join(dir, `${kind}-${upTo}.sqlite`)
    createPrivateFile(file)
    const sql = yield* openConnection(file)
    yield* migrate(sql, file, migrations.filter((m) => m.version <= upTo), { scope: kind === "scope" ? "sales" : null, now: "2026-03-12T09:15:00Z" })
    const rows = yield* sql<{ type: string; name: string; sql: string | null }>`
      SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name`
    return rows.map((r) => `${r.type} ${r.name}: ${(r.sql ?? "").replace(/\s+/g, " ").trim()}`).join("\n") + "\n"
  })))

const check = (kind: string, migrations: ReadonlyArray<Migration>) =>
  describe(`${kind} migrations`, () => {
    for (const m of migrations) {
      it(`the schema after ${m.name} equals its committed snapshot`, async () => {
        const actual = await schemaAfter(kind, migrations, m.version)
        const file = join(SNAPSHOTS, `${kind}-${m.name}.sql`)
        if (!existsSync(file) && process.env.UPDATE_SCHEMA_SNAPSHOTS === "1") writeFileSync(file, actual)
        expect(existsSync(file), `missing snapshot ${file}: run UPDATE_SCHEMA_SNAPSHOTS=1 for a NEW migration`).toBe(true)
        expect(actual).toBe(readFileSync(file, "utf8"))
      })
    }
  })

check("scope", SCOPE_MIGRATIONS)
check("ops", OPS_MIGRATIONS)

describe("migration modules", () => {
  it("import nothing outside src/db/migrations/ (no live code)", () => {
    const graph = buildSourceGraph(ROOT)
    const seeds = [...graph.files.keys()].filter((f) => f.startsWith("src/db/migrations/"))
    expect(seeds.length).toBeGreaterThan(4)
    const outside = [...importClosure(graph, seeds).keys()].filter((f) => !f.startsWith("src/db/migrations/"))
    expect(outside).toEqual([])
  })
})
