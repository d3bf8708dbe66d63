/**
 * FTS5 secure-delete (gaps.md §12, R1; scope migration 0009): a row the service deletes or replaces
 * in an FTS5 table leaves no token in the index segments, so once the rows that hold a word are
 * rewritten (as a redaction rewrites them) and the WAL is checkpointed, the word is in no byte
 * of the scope file. Driven on real files: rules and an entity written by the service's own
 * writers, a rule rejected (rule_fts → rejected_fts) and one confirmed, the entity renamed
 * (entity_fts replaced), then the text rewritten under the redaction permit and every derived row
 * replaced by the writers the service uses on a supersede, a reject or a rename. The same steps on
 * a file whose FTS5 tables run without secure-delete, or on a connection without the
 * secure_delete pragma, leave the word behind: the check sees what it looks for, and each of
 * the two settings is needed. And every FTS5 table of a fresh scope file has secure-delete = 1 in its
 * _config, so a later migration that adds one without it fails here.
 */
import { existsSync, readFileSync } from "node:fs"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { ScopeStore, scopeFile } from "../../src/db/scope-store.js"
import { ftsColumns, syncRuleFts } from "../../src/db/fts.js"
import { decide } from "../../src/decision/decide.js"
import { propose } from "../../src/domain/proposals.js"
import { storeSource } from "../../src/domain/sources.js"
import { createEntity, updateEntity } from "../../src/graph/entities.js"
import { LexicalIndex } from "../../src/search/lexical/index.js"
import { tempDir, testConfig } from "../support/env.js"
import { mailProposal, mailSource } from "../support/fixtures.js"
import { run } from "../support/run.js"

/** A word found nowhere else: with an umlaut, so its folded token forms differ from its text. */
const WORD = "Quörzelbrunft"
/**
 * The word as the file may hold it: the text (UTF-8, NFC and NFD), lowercased, with the umlaut
 * folded (unicode61 remove_diacritics, the graph's normalize), and the tail every one of them ends
 * with — an FTS5 leaf stores a term after the prefix it shares with the term before it.
 */
const FORMS = [WORD, WORD.normalize("NFD"), WORD.toLowerCase(), "quorzelbrunft", "quoerzelbrunft", "rzelbrun"]

const agent = { grantId: "person:1", channel: "mcp" as const }
const person = { grantId: "person:2", identity: "anna@example.com" }
const by = { grantId: "service:1", channel: "api" as const }

let dir: string
let cleanup: () => void
beforeEach(() => {
  ;({ dir, cleanup } = tempDir("gn-fts-sd-"))
})
afterEach(() => cleanup())

/** The FTS5 tables of a file, from its schema. */
const fts5Tables = (sql: SqlClient) =>
  Effect.map(
    sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table' AND lower(sql) LIKE 'create virtual table%using fts5(%' ORDER BY name`,
    (rows) => rows.map((r) => r.name)
  )

const secureDeleteOf = (sql: SqlClient, table: string) =>
  Effect.map(sql.unsafe<{ v: number }>(`SELECT v FROM "${table}_config" WHERE k = 'secure-delete'`), (rows) => rows[0]?.v ?? null)

/** The text columns a redaction rewrites, as far as this scenario writes the word into them. */
const TEXT_COLUMNS: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
  ["rule_version", ["statement", "quote", "speaker", "relations", "keywords", "reason"]],
  ["decision", ["reason"]],
  ["entity_version", ["name", "aliases", "evidence", "reason"]],
  ["entity_override", ["name", "aliases", "path"]],
  ["classification", ["reasons"]]
]

/**
 * Rules and an entity carrying WORD through the service's writers, then the word rewritten as a
 * redaction rewrites it, the derived rows replaced, the WAL checkpointed. Answers the forms of
 * WORD found in the file's bytes, and what a search row still says.
 */
const scenario = ({ ftsSecureDelete, pragma }: { readonly ftsSecureDelete: boolean; readonly pragma: boolean }) => {
  const config = testConfig(dir)
  return run(config, Effect.gen(function*() {
    const store = yield* ScopeStore
    yield* store.create("sales")
    const { sql } = yield* store.use("sales")
    if (!pragma) yield* sql`PRAGMA secure_delete = OFF`.raw
    if (!ftsSecureDelete) {
      for (const t of yield* fts5Tables(sql)) yield* sql.unsafe(`INSERT INTO "${t}"("${t}", rank) VALUES ('secure-delete', 0)`).raw
    }
    yield* storeSource(mailSource(), "service:1")
    const relations = [{ kind: "supplier" as const, name: `${WORD} GmbH`, ref: null }]
    // sales-0001 rejected: its rule_fts row goes, a rejected_fts row comes (decide.ts)
    yield* propose(mailProposal({ statement: `Ask ${WORD} for the delivery time before ordering hook rails`, keywords: [WORD, "Lieferzeit"], relations }), agent)
    yield* decide("sales-0001", { decision: "reject", version: 1, reason: "not a rule of ours" }, person)
    // sales-0002 confirmed: its rule_fts row and lexical rows replaced by version 2
    yield* propose(mailProposal({ statement: `Order black hook rails from ${WORD} only after asking`, keywords: [WORD], relations }), agent)
    yield* decide("sales-0002", { decision: "confirm", version: 1 }, person)
    // an entity named after the word, renamed: its entity_fts row and keys replaced (graph/fts.ts)
    const entity = yield* createEntity({ scope: "sales", type: "department", name: `${WORD} Handel`, parent_id: null }, by)
    yield* updateEntity(entity.id, { scope: "sales", name: "Nordhandel" }, by)

    // the word rewritten in the rows that keep it, under the permit, as a redaction does; then
    // every derived row of the touched rules replaced by the service's own writers
    const index = yield* LexicalIndex
    yield* store.write("sales", ({ sql: w }) =>
      Effect.gen(function*() {
        yield* w`INSERT INTO redaction_permit (redaction_seq) VALUES (1)`.raw
        yield* w`INSERT INTO redaction (seq, id, term_sha256, places, requested_by, decided_by, reason, at)
          VALUES (1, 'sales-x0001', ${"0".repeat(64)}, 1, 'person:2', 'anna@example.com', 'erasure request 1', '2026-03-12T09:15:00Z')`.raw
        for (const [table, columns] of TEXT_COLUMNS) {
          for (const c of columns) {
            yield* w.unsafe(`UPDATE ${table} SET ${c} = replace(${c}, ?, '[redacted]') WHERE instr(${c}, ?) > 0`, [WORD, WORD]).raw
          }
        }
        for (const ruleId of ["sales-0001", "sales-0002"]) {
          yield* syncRuleFts(w, ruleId)
          yield* index.reindexRule(w, ruleId)
        }
        const rejected = yield* w<{ seq: number; keywords: string; statement: string; relations: string; quote: string }>`
          SELECT r.seq, v.keywords, v.statement, v.relations, v.quote FROM rule r
          JOIN rule_version v ON v.rule_id = r.id AND v.version = 1 WHERE r.id = 'sales-0001'`
        for (const row of rejected) {
          const c = ftsColumns(row)
          yield* w`DELETE FROM rejected_fts WHERE rowid = ${row.seq}`.raw
          yield* w`INSERT INTO rejected_fts (rowid, keywords, statement, relations, quote)
            VALUES (${row.seq}, ${c.keywords}, ${c.statement}, ${c.relations}, ${c.quote})`.raw
        }
        yield* w`DELETE FROM redaction_permit`.raw
      })
    )
    yield* sql`PRAGMA wal_checkpoint(TRUNCATE)`.raw
    const hits = yield* sql<{ n: number }>`SELECT count(*) AS n FROM rule_fts WHERE rule_fts MATCH ${"quorzelbrunft"}`
    return { searchHits: hits[0]?.n ?? -1 }
  })).then((answer) => {
    const file = scopeFile(dir, "sales")
    const bytes = Buffer.concat([readFileSync(file), ...(existsSync(`${file}-wal`) ? [readFileSync(`${file}-wal`)] : [])])
    const found = FORMS.filter((f) => bytes.includes(Buffer.from(f, "utf8")))
    return { ...answer, found }
  })
}

describe("FTS5 secure-delete", () => {
  it("a word rewritten out of every row and index is in no byte of the scope file (UTF-8 and its FTS token forms)", async () => {
    const out = await scenario({ ftsSecureDelete: true, pragma: true })
    expect(out).toEqual({ searchHits: 0, found: [] })
  })

  it("without secure-delete on the FTS5 tables the same steps leave the word's tokens in the file", async () => {
    const out = await scenario({ ftsSecureDelete: false, pragma: true })
    expect(out.searchHits).toBe(0)
    expect(out.found.length).toBeGreaterThan(0)
  })

  it("without secure_delete on the connection the freed and rewritten pages keep the word", async () => {
    const out = await scenario({ ftsSecureDelete: true, pragma: false })
    expect(out.searchHits).toBe(0)
    expect(out.found.length).toBeGreaterThan(0)
  })

  it("every FTS5 table of a fresh scope file has secure-delete = 1 in its _config", async () => {
    const got = await run(testConfig(dir), Effect.gen(function*() {
      const store = yield* ScopeStore
      yield* store.create("sales")
      const { sql } = yield* store.use("sales")
      const tables = yield* fts5Tables(sql)
      return yield* Effect.forEach(tables, (t) => Effect.map(secureDeleteOf(sql, t), (v) => [t, v] as const))
    }))
    expect(got.map(([t]) => t)).toEqual(expect.arrayContaining(["entity_fts", "lex_stem", "lex_tri", "lex_word", "rejected_fts", "rule_fts"]))
    expect(got.filter(([, v]) => v !== 1)).toEqual([])
  })
})
