/**
 * The content stamp of a scope file (migration 0007-content-stamp): every table an
 * answer may read has the three triggers that bump it, so a held answer (src/search/search.ts) is
 * never older than the file; a table a later migration adds without them fails here. The logs,
 * which every search writes, leave it as it is.
 */
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { ScopeStore } from "../../src/db/scope-store.js"
import { writeSearchLog } from "../../src/db/search-log.js"
import { storeSource } from "../../src/domain/sources.js"
import { tempDir, testConfig } from "../support/env.js"
import { mailSource } from "../support/fixtures.js"
import { run, sqlOf } from "../support/run.js"

/** The tables without the triggers, each for its reason (0007-content-stamp.ts). */
const UNSTAMPED = [
  // the logs: no answer reads them; every search writes search_log, a refused secret secret_finding
  "search_log", "feedback", "secret_finding",
  // the lexical index, under index_stamp (0006)
  "index_stamp", "lex_doc", "lex_meta", "lex_relation",
  "content_stamp",
  // the salt of the redaction hashes (written once) and the permit a redaction holds inside its own
  // transaction, which changes stamped tables anyway (0009-redaction)
  "redaction_salt", "redaction_permit"
]

let dir: string
let cleanup: () => void
let config: ReturnType<typeof testConfig>
beforeEach(async () => {
  ;({ dir, cleanup } = tempDir())
  config = testConfig(dir)
  await run(config, Effect.flatMap(ScopeStore, (s) => s.create("sales")))
})
afterEach(() => cleanup())

const stamp = Effect.flatMap(sqlOf("sales"), (sql) => Effect.map(sql<{ seq: number }>`SELECT seq FROM content_stamp WHERE id = 1`, (r) => r[0]?.seq))

describe("the content stamp", () => {
  it("every table of a scope file but the logs and the lexical index has its insert, update and delete trigger", async () => {
    const { tables, triggers } = await run(config, Effect.gen(function*() {
      const sql = yield* sqlOf("sales")
      const all = yield* sql<{ name: string; sql: string }>`SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`
      const virtual = all.filter((t) => /^CREATE VIRTUAL TABLE/i.test(t.sql)).map((t) => t.name)
      // a virtual table's shadow tables (<name>_data, …) are written by it alone
      const tables = all.map((t) => t.name).filter((n) => !virtual.includes(n) && !virtual.some((v) => n.startsWith(`${v}_`)))
      const triggers = yield* sql<{ name: string; tbl_name: string; sql: string }>`
        SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'content_stamp_%'`
      return { tables, triggers }
    }))
    const stamped = tables.filter((t) => !UNSTAMPED.includes(t))
    expect(stamped).toEqual(expect.arrayContaining(["rule", "rule_version", "decision", "review", "link", "entity", "source", "source_attachment"]))
    for (const table of stamped) {
      for (const event of ["INSERT", "UPDATE", "DELETE"]) {
        const t = triggers.find((x) => x.tbl_name === table && x.sql.includes(`AFTER ${event} ON ${table} `))
        expect(t?.sql, `${table} ${event}`).toContain("UPDATE content_stamp SET seq = seq + 1, nonce = random()")
      }
    }
    // and none on a table left out
    expect(triggers.filter((t) => UNSTAMPED.includes(t.tbl_name))).toEqual([])
  })

  it("a stored source moves it; a search_log row does not", async () => {
    const seqs = await run(config, Effect.gen(function*() {
      const start = yield* stamp
      yield* storeSource(mailSource(), "service:1")
      const afterSource = yield* stamp
      yield* (yield* ScopeStore).append("sales", ({ sql }) => writeSearchLog(sql, {
        id: "00000000-0000-4000-8000-00000000000a", at: "2026-03-12T09:15:00.000Z", grantId: "service:1", channel: "api",
        operation: "search", outcome: 200, crossScope: false, refs: [], terms: [], variants: {}, stages: {}, inputSha256: null
      }))
      return { start, afterSource, afterLog: yield* stamp }
    }))
    expect(seqs.afterSource).toBeGreaterThan(seqs.start ?? Number.NaN)
    expect(seqs.afterLog).toBe(seqs.afterSource)
  })
})
