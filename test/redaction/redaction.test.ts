import { copyFileSync, existsSync, readFileSync, rmSync } from "node:fs"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { REDACTED_MARKER } from "../../src/contracts/redaction.js"
import { scopeFile } from "../../src/db/scope-store.js"
import { storeSource } from "../../src/domain/sources.js"
import { syncRuleFts } from "../../src/db/fts.js"
import { RuleIndex } from "../../src/domain/rule-index.js"
import { applyPlaces, applyRedaction, checkpointAfterRedaction } from "../../src/redaction/apply.js"
import { findInText, normalizeTerm } from "../../src/redaction/match.js"
import { scopeColumns } from "../../src/redaction/places.js"
import { previewRedaction } from "../../src/redaction/preview.js"
import { tempDir, testConfig } from "../support/env.js"
import { mailSource } from "../support/fixtures.js"
import { run, runFail, sqlOf } from "../support/run.js"
import { PHONE, seedScope } from "./seed.js"

let dir: string
let cleanup: () => void
let config: ReturnType<typeof testConfig>
const AT = "2026-03-13T10:00:00Z"
const MANY = 45

beforeEach(async () => {
  ;({ dir, cleanup } = tempDir())
  config = testConfig(dir)
  await run(config, seedScope)
})
afterEach(() => cleanup())

const preview = (term: string) => Effect.flatMap(sqlOf("sales"), (sql) => previewRedaction(sql, "sales", term))
const apply = (term: string, digest: string) =>
  Effect.flatMap(sqlOf("sales"), (sql) =>
    applyRedaction(sql, { scope: "sales", term, reason: "erasure request 2026-17", preview: digest, requestedBy: "person:1", decidedBy: "dpo@example.com", at: AT }))

/** Every value of every column of every table, as text (blobs as UTF-8 and latin1), with where it is. */
const everyValue = (sql: SqlClient) =>
  Effect.gen(function*() {
    const tables = yield* sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '%_vocab' ORDER BY name`
    const out: Array<{ where: string; text: string }> = []
    for (const t of tables) {
      const rows = yield* sql.unsafe<Record<string, unknown>>(`SELECT * FROM "${t.name}"`)
      for (const r of rows) {
        for (const [c, v] of Object.entries(r)) {
          if (typeof v === "string") out.push({ where: `${t.name}.${c}`, text: v })
          else if (v instanceof Uint8Array) out.push({ where: `${t.name}.${c}`, text: Buffer.from(v).toString("utf8") + Buffer.from(v).toString("latin1") })
        }
      }
    }
    return out
  })

/** The places where a text form of the name is left: the folded match, and the lower-case and FTS token forms. */
const leftovers = (values: ReadonlyArray<{ where: string; text: string }>, forms: ReadonlyArray<string>, term: string) =>
  values.filter((v) => findInText(v.text, normalizeTerm(term)).length > 0 || forms.some((f) => v.text.toLowerCase().includes(f))).map((v) => v.where)

const rawBytesHold = (file: string, forms: ReadonlyArray<string>): Array<string> => {
  const found: Array<string> = []
  for (const f of [file, `${file}-wal`]) {
    if (!existsSync(f)) continue
    const bytes = readFileSync(f)
    const lower = Buffer.from(bytes.toString("latin1").toLowerCase(), "latin1")
    for (const form of forms) {
      if (lower.includes(Buffer.from(form, "utf8")) || bytes.includes(Buffer.from(form, "utf8"))) found.push(`${f}: ${form}`)
    }
  }
  return found
}

describe("previewRedaction", () => {
  it("finds the term in every listed place and names the rules whose text or evidence it touches", async () => {
    const p = await run(config, preview("Müller"))
    const kinds = [...new Set(p.places.map((x) => `${x.table}.${x.column}`))].sort()
    expect(kinds).toEqual([
      "classification.reasons", "decision.reason",
      "entity_override.aliases", "entity_override.name", "entity_override.path",
      "entity_version.aliases", "entity_version.evidence", "entity_version.name", "entity_version.reason",
      "link.evidence", "link.reason", "review.reason",
      "rule_version.keywords", "rule_version.quote", "rule_version.reason", "rule_version.relations", "rule_version.speaker",
      "rule_version.statement",
      "search_log.terms", "search_log.variants",
      "source.excerpt", "source.sender", "source.title",
      "source_attachment.filename", "source_attachment.text",
      "source_auth.authentication_results", "source_auth.mail_from",
      "source_segment.speaker", "source_segment.text"
    ])
    expect(p.body.total).toBe(p.places.reduce((n, x) => n + x.ranges.length, 0))
    expect(p.body.places.find((x) => x.table === "rule_version" && x.column === "statement" && x.key === "sales-0001/1")?.count).toBe(1)
    expect(p.body.places.find((x) => x.table === "search_log" && x.column === "variants")).toEqual({ table: "search_log", column: "variants", key: "req-1", count: 3 })
    // a variant of a matched term goes with it ("muller" does not fold to "mueller")
    expect(p.places.find((x) => x.table === "search_log" && x.column === "variants")?.ranges.length).toBe(3)
    // the versions whose text holds it and the current versions of the rules citing a touched source
    expect(p.body.rules).toEqual(["rule/sales-0001@1", "rule/sales-0001@2", "rule/sales-0002@1", "rule/sales-0002@2"])
    expect(p.body.preview).toMatch(/^[0-9a-f]{64}$/)
    expect(p.body.kept).toEqual([])
  })

  it("a term only inside identifiers: no place, and the identifier columns that keep it", async () => {
    const p = await run(config, preview("offer-2026"))
    expect(p.body.total).toBe(0)
    expect(p.body.places).toEqual([])
    expect(p.body.kept).toEqual([
      { table: "rule_version", column: "source_id", count: 4 },
      { table: "source", column: "id", count: 1 },
      { table: "source_attachment", column: "source_id", count: 1 },
      { table: "source_auth", column: "source_id", count: 1 }
    ])
  })

  it("a term under 3 characters, or only punctuation around 2, is validation-failed", async () => {
    for (const term of ["ab", "  ab ", "--a--", "a.b", ""]) {
      const e = await runFail(config, preview(term))
      expect(e._tag, term).toBe("ValidationFailed")
    }
    const e = await runFail(config, preview(`x ${REDACTED_MARKER}`))
    expect(e._tag).toBe("ValidationFailed")
  })
})

describe("applyRedaction", () => {
  it("replaces the term everywhere in place; ids, versions, statuses and times stay; the term is in no column and, after the checkpoint, in no byte", async () => {
    const forms = ["müller", "mueller", "muller", "5551234"]
    const out = await run(config, Effect.gen(function*() {
      const sql = yield* sqlOf("sales")
      const columns = yield* scopeColumns(sql)
      const ids = columns.filter((c) => c.kind === "identifier")
      const idSnapshot = () => Effect.forEach(ids, (c) => Effect.map(sql.unsafe(`SELECT "${c.column}" AS v FROM "${c.table}"`), (rows) => rows.map((r) => JSON.stringify(r)).sort()))
      const before = yield* idSnapshot()
      const countsBefore = yield* sql`SELECT (SELECT count(*) FROM rule_version) AS v, (SELECT count(*) FROM source_segment) AS s, (SELECT count(*) FROM rule_fts) AS f`
      const applied = []
      for (const term of ["Müller", PHONE, "Petra"]) {
        const p = yield* previewRedaction(sql, "sales", term)
        if (p.body.total === 0) continue
        applied.push(yield* applyRedaction(sql, { scope: "sales", term, reason: "erasure request 2026-17", preview: p.body.preview, requestedBy: "person:1", decidedBy: "dpo@example.com", at: AT }))
      }
      const completed = yield* checkpointAfterRedaction(sql)
      const values = yield* everyValue(sql)
      const bytes = rawBytesHold(scopeFile(dir, "sales"), forms)
      const after = yield* idSnapshot()
      const countsAfter = yield* sql`SELECT (SELECT count(*) FROM rule_version) AS v, (SELECT count(*) FROM source_segment) AS s, (SELECT count(*) FROM rule_fts) AS f`
      const rows = {
        redaction: yield* sql`SELECT * FROM redaction ORDER BY seq`,
        permit: yield* sql`SELECT * FROM redaction_permit`,
        places: yield* sql<{ tbl: string; key: string; col: string; offsets: string }>`SELECT * FROM redaction_place WHERE redaction_seq = 1 AND tbl = 'rule_version' AND col = 'statement' ORDER BY key`,
        statement: yield* sql<{ statement: string; status: string }>`SELECT statement, status FROM rule_version WHERE rule_id = 'sales-0001' ORDER BY version`,
        fts: yield* sql<{ statement: string }>`SELECT statement FROM rule_fts WHERE rowid = 1`,
        vectors: yield* sql`SELECT count(*) AS n FROM vec_rule`,
        wal: existsSync(`${scopeFile(dir, "sales")}-wal`) ? readFileSync(`${scopeFile(dir, "sales")}-wal`).length : 0
      }
      return { applied, completed, values, bytes, before, after, countsBefore, countsAfter, rows }
    }))
    expect(out.applied.map((a) => a.redaction.id)).toEqual(["sales-x0001", "sales-x0002", "sales-x0003"])
    expect(out.applied[0]!.redaction.term_sha256).toMatch(/^[0-9a-f]{64}$/)
    expect(out.rows.redaction.map((r) => JSON.stringify(r)).join("")).not.toMatch(/m(ü|ue|u)ller|petra/i)
    expect(out.rows.permit).toEqual([])
    expect(out.rows.places[0]).toMatchObject({ tbl: "rule_version", key: "[\"sales-0001\",1]", col: "statement", offsets: "[[6,12]]" })
    expect(out.rows.statement).toEqual([
      { statement: "[redacted] [redacted] approves every discount above ten percent", status: "proposed" },
      { statement: "[redacted] [redacted] approves every discount above ten percent", status: "confirmed" }
    ])
    expect(out.rows.fts[0]!.statement).toBe("[redacted] [redacted] approves every discount above ten percent")
    expect(out.completed).toBe(true)
    expect(out.rows.wal).toBe(0)
    expect(out.after).toEqual(out.before)
    expect(out.countsAfter).toEqual(out.countsBefore)
    expect(leftovers(out.values, forms, "Müller")).toEqual([])
    expect(leftovers(out.values, [], PHONE)).toEqual([])
    expect(out.bytes).toEqual([])
  })

  it("many touched rules at once: no column and no byte keeps the term either; secure-delete stays on", async () => {
    const out = await run(config, Effect.gen(function*() {
      const sql = yield* sqlOf("sales")
      const index = yield* RuleIndex
      yield* sql.withTransaction(Effect.gen(function*() {
        for (let seq = 20; seq < 20 + MANY; seq++) {
          const id = `sales-${String(seq).padStart(4, "0")}`
          yield* sql`INSERT INTO rule (seq, id, created_at, created_by) VALUES (${seq}, ${id}, ${AT}, 'person:1')`
          yield* sql`INSERT INTO rule_version (rule_id, version, kind, statement, source_id, quote, said_at, relations, keywords, valid_from, status, reason, changed_by, changed_at)
            VALUES (${id}, 1, 'rule', ${`Zoltan Kovács signs order ${seq} of the week`}, 'mail:<offer-2026@example.com>', 'ab sofort gibt Petra Müller jeden Rabatt', ${AT},
              ${JSON.stringify([{ kind: "customer", name: "Zoltan Kovács", ref: null }])}, ${JSON.stringify(["Zoltan Kovács"])}, '2026-03-12', 'proposed', 'x', 'person:1', ${AT})`
          yield* syncRuleFts(sql, id)
          yield* index.reindexRule(sql, id)
        }
      }))
      yield* sql`PRAGMA wal_checkpoint(TRUNCATE)`
      const p = yield* previewRedaction(sql, "sales", "Zoltan Kovács")
      yield* applyRedaction(sql, { scope: "sales", term: "Zoltan Kovács", reason: "erasure request 18", preview: p.body.preview, requestedBy: "person:1", decidedBy: "dpo@example.com", at: AT })
      yield* checkpointAfterRedaction(sql)
      const secure = yield* sql<{ v: number }>`SELECT v FROM lex_word_config WHERE k = 'secure-delete'`
      return { values: yield* everyValue(sql), bytes: rawBytesHold(scopeFile(dir, "sales"), ["kovács", "kovacs", "zoltan"]), secure, rules: p.body.rules.length }
    }))
    expect(out.rules).toBe(MANY)
    expect(leftovers(out.values, ["kovács", "kovacs", "zoltan"], "Zoltan Kovács")).toEqual([])
    expect(out.bytes).toEqual([])
    // secure-delete is on again for every later write
    expect(out.secure).toEqual([{ v: 1 }])
  })

  it("a quote that would fall under its minimum is padded, a statement over 500 cut; both stay valid rows", async () => {
    const long = `${"Müller ".repeat(70)}ok`.slice(0, 490)
    await run(config, Effect.gen(function*() {
      const sql = yield* sqlOf("sales")
      yield* sql`INSERT INTO rule (seq, id, created_at, created_by) VALUES (9, 'sales-0009', ${AT}, 'person:1')`
      yield* sql`INSERT INTO rule_version (rule_id, version, kind, statement, source_id, quote, said_at, relations, keywords, valid_from, status, reason, changed_by, changed_at)
        VALUES ('sales-0009', 1, 'rule', ${long}, 'mail:<offer-2026@example.com>', 'Petra Müller, Petra Müller', ${AT}, '[]', '[]', '2026-03-12', 'proposed', 'x', 'person:1', ${AT})`
    }).pipe(Effect.orDie))
    const p = await run(config, preview("Petra Müller, Petra Müller"))
    await run(config, apply("Petra Müller, Petra Müller", p.body.preview))
    const p2 = await run(config, preview("Müller"))
    await run(config, apply("Müller", p2.body.preview))
    const row = await run(config, Effect.flatMap(sqlOf("sales"), (sql) =>
      sql<{ statement: string; quote: string }>`SELECT statement, quote FROM rule_version WHERE rule_id = 'sales-0009'`))
    expect(row[0]!.quote).toBe(`${REDACTED_MARKER}          `)
    expect([...row[0]!.statement].length).toBeLessThanOrEqual(500)
    expect([...row[0]!.statement].length).toBeGreaterThan(480)
    expect(row[0]!.statement.endsWith("…")).toBe(true)
    expect(row[0]!.statement.startsWith(`${REDACTED_MARKER} ${REDACTED_MARKER} `)).toBe(true)
    expect(row[0]!.statement).not.toMatch(/\[reda[a-z]*…/)
  })

  it("a preview whose places changed is preview-stale, nothing written, no permit left", async () => {
    const p = await run(config, preview("Müller"))
    await run(config, storeSource(mailSource({
      source: { kind: "mail", id: "mail:<later@example.com>", title: "Noch einmal Müller", occurred_at: "2026-03-13T09:15:00Z", sender: null, thread: null, link: null },
      text: "Bitte an Herrn Müller weiterleiten.", attachments: []
    }), "service:1"))
    const before = await run(config, Effect.flatMap(sqlOf("sales"), everyValue))
    const e = await runFail(config, apply("Müller", p.body.preview))
    expect(e._tag).toBe("PreviewStale")
    const after = await run(config, Effect.gen(function*() {
      const sql = yield* sqlOf("sales")
      return { values: yield* everyValue(sql), permit: yield* sql`SELECT * FROM redaction_permit`, redaction: yield* sql`SELECT * FROM redaction` }
    }))
    expect(after.values).toEqual(before)
    expect(after.permit).toEqual([])
    expect(after.redaction).toEqual([])
  })

  it("a term with no place is preview-stale (nothing to redact) and writes nothing", async () => {
    const p = await run(config, preview("Zacharias"))
    expect(p.body.total).toBe(0)
    const e = await runFail(config, apply("Zacharias", p.body.preview))
    expect(e._tag).toBe("PreviewStale")
    expect(await run(config, Effect.flatMap(sqlOf("sales"), (sql) => sql`SELECT count(*) AS n FROM redaction`))).toEqual([{ n: 0 }])
  })

  it("a term under 3 characters is validation-failed at apply too", async () => {
    expect((await runFail(config, apply("Mü", "x")))._tag).toBe("ValidationFailed")
  })
})

describe("applyPlaces", () => {
  it("an older copy of the file opens level (the ledger replays the redaction with applyPlaces) to the same text; places that do not fit are refused", async () => {
    const file = scopeFile(dir, "sales")
    const copy = `${dir}/older.sqlite`
    await run(config, Effect.flatMap(sqlOf("sales"), (sql) => sql`PRAGMA wal_checkpoint(TRUNCATE)`))
    copyFileSync(file, copy)
    const p = await run(config, preview("Müller"))
    const applied = await run(config, apply("Müller", p.body.preview))
    const live = await run(config, Effect.flatMap(sqlOf("sales"), everyValue))
    // the older copy in place of the live file: opening it replays the ledger's redaction
    copyFileSync(copy, file)
    for (const suffix of ["-wal", "-shm"]) rmSync(`${file}${suffix}`, { force: true })
    const replayed = await run(config, Effect.flatMap(sqlOf("sales"), everyValue))
    const content = (vs: ReadonlyArray<{ where: string; text: string }>) => vs.filter((v) => !/_fts_|^lex_(word|stem|tri)_|stamp/.test(v.where))
    expect(content(replayed)).toEqual(content(live))
    // a second replay of the same redaction: not the file's next one
    const again = await runFail(config, Effect.flatMap(sqlOf("sales"), (sql) => applyPlaces(sql, applied.redaction, applied.places)))
    expect(again).toMatchObject({ _tag: "PlacesDoNotFit" })
    // ranges beyond the text, a missing row
    const next = { ...applied.redaction, seq: 2, id: "sales-x0002" }
    const beyond = await runFail(config, Effect.flatMap(sqlOf("sales"), (sql) =>
      applyPlaces(sql, next, [{ table: "rule_version", column: "statement", key: ["sales-0001", 1], ranges: [[0, 900]] }])))
    expect(beyond).toMatchObject({ _tag: "PlacesDoNotFit" })
    const missing = await runFail(config, Effect.flatMap(sqlOf("sales"), (sql) =>
      applyPlaces(sql, next, [{ table: "rule_version", column: "statement", key: ["sales-0099", 1], ranges: [[0, 3]] }])))
    expect(missing).toMatchObject({ _tag: "PlacesDoNotFit" })
    const state = await run(config, Effect.flatMap(sqlOf("sales"), (sql) => sql`SELECT (SELECT count(*) FROM redaction) AS r, (SELECT count(*) FROM redaction_permit) AS p`))
    expect(state).toEqual([{ r: 1, p: 0 }])
  })
})

