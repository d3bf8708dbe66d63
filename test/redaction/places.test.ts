import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { ScopeStore } from "../../src/db/scope-store.js"
import { scopeColumns, TARGETS } from "../../src/redaction/places.js"
import { tempDir, testConfig } from "../support/env.js"
import { run, sqlOf } from "../support/run.js"

let dir: string
let cleanup: () => void
let config: ReturnType<typeof testConfig>

beforeEach(async () => {
  ;({ dir, cleanup } = tempDir())
  config = testConfig(dir)
  await run(config, Effect.flatMap(ScopeStore, (s) => s.create("sales")))
})
afterEach(() => cleanup())

const columnsOf = () => run(config, Effect.flatMap(sqlOf("sales"), scopeColumns))

describe("the catalogue of places", () => {
  it("classifies every TEXT column of every table of a migrated scope file", async () => {
    const columns = await columnsOf()
    expect(columns.length).toBeGreaterThan(100)
    expect(columns.filter((c) => c.kind === null).map((c) => `${c.table}.${c.column}`)).toEqual([])
  })

  it("every target of the catalogue is a column of the file, with its primary key", async () => {
    const columns = await columnsOf()
    for (const [table, cols] of Object.entries(TARGETS)) {
      for (const column of Object.keys(cols)) {
        const c = columns.find((x) => x.table === table && x.column === column)
        expect(c?.kind, `${table}.${column}`).toBe("target")
        expect(c?.pk.length, `${table} has a primary key`).toBeGreaterThan(0)
        expect(c?.pk).not.toEqual(["rowid"])
      }
    }
  })

  it("full-text tables, their shadow tables, lex_*, the keys, vectors and stamps are derived; redaction* is own", async () => {
    const columns = await columnsOf()
    const kind = (t: string) => [...new Set(columns.filter((c) => c.table === t).map((c) => c.kind))]
    for (const t of ["rule_fts", "rule_fts_content", "entity_fts", "entity_fts_idx", "lex_word", "lex_word_vocab", "lex_doc",
      "lex_relation", "entity_fts_key", "vec_rule"]) expect(kind(t), t).toEqual(["derived"])
    for (const t of ["redaction", "redaction_place", "redaction_salt"]) expect(kind(t), t).toEqual(["own"])
  })

  it("a TEXT column a later migration adds is unclassified until the catalogue names it", async () => {
    await run(config, Effect.flatMap(sqlOf("sales"), (sql) => sql`ALTER TABLE source ADD COLUMN note TEXT`))
    const columns = await columnsOf()
    expect(columns.filter((c) => c.kind === null).map((c) => `${c.table}.${c.column}`)).toEqual(["source.note"])
  })

  it("the targets of every append-only table are exactly migration 0009's redactable columns", async () => {
    const rows = await run(config, Effect.flatMap(sqlOf("sales"), (sql) =>
      sql<{ name: string; sql: string }>`SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND (name GLOB '*_no_update' OR name = 'link_end_once')`))
    const columns = await columnsOf()
    const checked: Array<string> = []
    for (const r of rows) {
      const table = r.name === "link_end_once" ? "link" : r.name.slice(0, -"_no_update".length)
      const permitted = /EXISTS \(SELECT 1 FROM redaction_permit\) AND (.*?)\)\s*BEGIN/s.exec(r.sql)
      if (permitted === null) continue
      // the exemption names every column that must stay; the others of the table are the redactable ones
      const kept = [...permitted[1]!.matchAll(/NEW\.(\w+) IS OLD\.\w+/g)].map((m) => m[1]!)
      const all = columns.filter((c) => c.table === table).map((c) => c.column)
      const textNotKept = all.filter((c) => !kept.includes(c)).sort()
      const targets = columns.filter((c) => c.table === table && c.kind === "target").map((c) => c.column).sort()
      expect(targets, table).toEqual(textNotKept)
      checked.push(table)
    }
    expect(checked.sort()).toEqual(["classification", "decision", "entity_override", "entity_version", "link", "review", "rule_version",
      "source", "source_attachment", "source_auth", "source_segment"])
    // every append-only table with targets has the exemption (search_log has no triggers at all)
    expect(Object.keys(TARGETS).filter((t) => !checked.includes(t))).toEqual(["search_log"])
  })
})
