/**
 * Storage hygiene (gaps.md §12, R1): every kind of connection the service opens to one of its files
 * runs secure_delete = ON (1) and temp_store = MEMORY (2) — the writer of a scope file, the ops
 * store's connection, the read pool's read-only connection, the backup worker's read-only
 * connection (snapshot, inspect, digest, archive, probe, verify, restore) and the quick check's
 * thread — each read back from the connection itself on real files. And no file of src/ opens
 * SQLite without that one list.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { withReadOnly } from "../../src/backup/jobs.js"
import { openConnection } from "../../src/db/connection.js"
import { OPS_FILE } from "../../src/db/ops-store.js"
import { pragmaOnThread } from "../../src/db/quick-check.js"
import { ScopeStore, scopeFile } from "../../src/db/scope-store.js"
import { makeJobRunner, plainEnv } from "../../src/read-pool/jobs.js"
import { tempDir, testConfig } from "../support/env.js"
import { run } from "../support/run.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))

const hygieneOf = (sql: SqlClient) =>
  Effect.gen(function*() {
    const sd = yield* sql<{ secure_delete: number }>`PRAGMA secure_delete`
    const ts = yield* sql<{ temp_store: number }>`PRAGMA temp_store`
    return { secure_delete: sd[0]?.secure_delete, temp_store: ts[0]?.temp_store }
  })

const R1 = { secure_delete: 1, temp_store: 2 }

let dir: string
let cleanup: () => void
const config = () => testConfig(dir)

beforeAll(async () => {
  ;({ dir, cleanup } = tempDir("gn-hygiene-"))
  // a real data dir: ops.sqlite and a migrated scope file, as the service leaves them
  await run(config(), Effect.flatMap(ScopeStore, (s) => s.create("sales")))
})
afterAll(() => cleanup())

describe("every connection runs secure_delete = ON and temp_store = MEMORY", () => {
  it("the writer of a scope file (ScopeStore)", async () => {
    const got = await run(config(), Effect.gen(function*() {
      const { sql } = yield* Effect.flatMap(ScopeStore, (s) => s.use("sales"))
      return yield* hygieneOf(sql)
    }))
    expect(got).toEqual(R1)
  })

  it("the ops store's connection and a read-only connection (openConnection, as OpsStore and the read pool open them)", async () => {
    const got = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const ops = yield* hygieneOf(yield* openConnection(join(dir, OPS_FILE)))
      const readOnly = yield* hygieneOf(yield* openConnection(scopeFile(dir, "sales"), { readonly: true }))
      return { ops, readOnly }
    })))
    expect(got).toEqual({ ops: R1, readOnly: R1 })
  })

  it("the read pool worker's own connection (its job runner)", async () => {
    const runner = makeJobRunner({ file: config().file, env: plainEnv(config().env), nice: 0, lexicon: null })
    try {
      const got = await Effect.runPromise(Effect.flatMap(runner.connection(scopeFile(dir, "sales")), hygieneOf))
      expect(got).toEqual(R1)
    } finally {
      await Effect.runPromise(runner.close)
    }
  })

  it("the backup worker's read-only connection (every backup, probe, verify and restore job)", async () => {
    const scope = await Effect.runPromise(withReadOnly(scopeFile(dir, "sales"), hygieneOf))
    const ops = await Effect.runPromise(withReadOnly(join(dir, OPS_FILE), hygieneOf))
    expect({ scope, ops }).toEqual({ scope: R1, ops: R1 })
  })

  it("the quick check's thread", async () => {
    const file = scopeFile(dir, "sales")
    const got = await Effect.runPromise(Effect.all([pragmaOnThread(file, "secure_delete"), pragmaOnThread(file, "temp_store")]))
    expect(got).toEqual([["1"], ["2"]])
  })
})

/** Every .ts file under a folder of the repository. */
const sources = (folder: string): ReadonlyArray<string> =>
  readdirSync(join(ROOT, folder)).flatMap((name) => {
    const rel = `${folder}/${name}`
    if (statSync(join(ROOT, rel)).isDirectory()) return sources(rel)
    return name.endsWith(".ts") ? [rel] : []
  })

describe("no other way into SQLite", () => {
  it("every file of src/ that opens SQLite (better-sqlite3 or SqliteClient.make) runs the hygiene list", () => {
    const OPENS = /new Database\(|SqliteClient\.make\(|require\("better-sqlite3"\)|from "better-sqlite3"/
    const openers = sources("src").filter((f) => OPENS.test(readFileSync(join(ROOT, f), "utf8")))
    // the ones known today: if a new one appears, it must run HYGIENE_PRAGMAS (or PRAGMAS) too
    expect(openers).toEqual(expect.arrayContaining(["src/backup/jobs.ts", "src/db/connection.ts", "src/db/quick-check.ts"]))
    for (const f of openers) expect(readFileSync(join(ROOT, f), "utf8"), f).toMatch(/\bHYGIENE_PRAGMAS\b/)
  })
})
