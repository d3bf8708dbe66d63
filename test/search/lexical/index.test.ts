/**
 * The lex_* tables on real scope files: what the writers keep in them, the build check and the
 * rebuild, and (property) that any sequence of writes leaves them equal to a full rebuild.
 */
import { join } from "node:path"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import fc from "fast-check"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import type { AppConfigShape } from "../../../src/config/config.js"
import { openConnection } from "../../../src/db/connection.js"
import { createPrivateFile, ensurePrivateDir } from "../../../src/db/files.js"
import { latestVersion, migrate } from "../../../src/db/migrate.js"
import { migration as m0001 } from "../../../src/db/migrations/scope/0001-init.js"
import { migration as m0002 } from "../../../src/db/migrations/scope/0002-graph.js"
import { SCOPE_MIGRATIONS } from "../../../src/db/migrations/scope/index.js"
import { ScopeStore, scopeFile } from "../../../src/db/scope-store.js"
import { decide } from "../../../src/decision/decide.js"
import { propose } from "../../../src/domain/proposals.js"
import { storeSource } from "../../../src/domain/sources.js"
import { LexicalIndex } from "../../../src/search/lexical/index.js"
import { migration as lexicalMigration } from "../../../src/db/migrations/scope/0003-lexical.js"
import { tempDir } from "../../support/env.js"
import { mailSource } from "../../support/fixtures.js"
import { run, sqlOf } from "../../support/run.js"
import { agent, lexConfig, person, ruleReq, search, seed, withSql } from "./support.js"

let dir: string
let cleanup: () => void
beforeEach(() => {
  ;({ dir, cleanup } = tempDir())
})
afterEach(() => cleanup())

/** Every row of every lex_* table (and the vocabularies derived from them). */
const snapshot = (sql: SqlClient) =>
  Effect.all({
    word: sql`SELECT rowid, * FROM lex_word ORDER BY rowid`,
    stem: sql`SELECT rowid, * FROM lex_stem ORDER BY rowid`,
    tri: sql`SELECT rowid, * FROM lex_tri ORDER BY rowid`,
    doc: sql`SELECT * FROM lex_doc ORDER BY seq`,
    relation: sql`SELECT * FROM lex_relation ORDER BY kind, name, seq`,
    meta: sql`SELECT * FROM lex_meta ORDER BY key`,
    wordVocab: sql`SELECT term, doc, cnt FROM lex_word_vocab ORDER BY term`,
    stemVocab: sql`SELECT term, doc, cnt FROM lex_stem_vocab ORDER BY term`
  })

const rebuildNow = (sql: SqlClient) => Effect.flatMap(LexicalIndex, (lex) => lex.rebuild(sql))

describe("schema", () => {
  it("0003-lexical creates the contract's tables with its own SQL", async () => {
    const config = lexConfig(dir)
    await seed(config, [])
    const tables = await withSql(config, (sql) =>
      sql<{ name: string; sql: string }>`SELECT name, sql FROM sqlite_master WHERE name LIKE 'lex_%' AND name NOT LIKE '%_data'
        AND name NOT LIKE '%_idx' AND name NOT LIKE '%_content' AND name NOT LIKE '%_docsize' AND name NOT LIKE '%_config' ORDER BY name`)
    expect(tables.map((t) => t.name)).toEqual([
      "lex_doc", "lex_meta", "lex_relation", "lex_relation_seq", "lex_stem", "lex_stem_vocab", "lex_tri", "lex_word", "lex_word_vocab"
    ])
    for (const t of tables) {
      const statements = lexicalMigration.statements({ scope: null, now: "" }).map((s) => (typeof s === "string" ? s : s.sql))
      expect(statements.some((s) => s.replace(/\s+/g, " ") === t.sql.replace(/\s+/g, " ")), t.name).toBe(true)
    }
  })
})

describe("the writers keep the lex_* rows", () => {
  it("proposal, confirm incl. the superseded predecessor, reject, revoke, review with new keywords", async () => {
    const config = lexConfig(dir)
    await seed(config, [ruleReq("Lieferzeit der Hakenleisten telefonisch erfragen", ["Lieferzeit"])], "none")
    const doc = () => withSql(config, (sql) => sql<Record<string, unknown>>`SELECT * FROM lex_doc ORDER BY seq`)
    const keywords = (seq: number) => withSql(config, (sql) => sql<{ keywords: string }>`SELECT keywords FROM lex_word WHERE rowid = ${seq}`)
    expect(await doc()).toEqual([{ seq: 1, rule_id: "sales-0001", version: 1, status: "proposed", valid_from: "2026-01-01", valid_until: null }])
    await run(config, decide("sales-0001", { decision: "confirm", version: 1 }, person))
    await run(config, propose(ruleReq("Lieferzeit der Hakenleisten per Mail erfragen", ["Lieferzeit"], { supersedes: "sales-0001", valid_from: "2026-04-01" }), agent))
    await run(config, decide("sales-0002", { decision: "confirm", version: 1 }, person))
    expect(await doc()).toEqual([
      { seq: 1, rule_id: "sales-0001", version: 3, status: "superseded", valid_from: "2026-01-01", valid_until: "2026-04-01" },
      { seq: 2, rule_id: "sales-0002", version: 2, status: "confirmed", valid_from: "2026-04-01", valid_until: null }
    ])
    await run(config, decide("sales-0002", { decision: "review", version: 2, change: { keywords: ["RAL 9005", "Lieferfrist"] } }, person))
    expect(await keywords(2)).toEqual([{ keywords: "ral 9005 lieferfrist ral9005" }])
    await run(config, decide("sales-0002", { decision: "revoke", version: 3, reason: "outdated", valid_until: "2026-06-30" }, person))
    expect((await doc())[1]).toMatchObject({ version: 4, status: "superseded", valid_until: "2026-06-30" })
    await run(config, propose(ruleReq("Dieser Vorschlag wird abgelehnt werden", ["Ablehnung"]), agent))
    expect((await doc()).map((d) => d.rule_id)).toContain("sales-0003")
    await run(config, decide("sales-0003", { decision: "reject", version: 1, reason: "no" }, person))
    expect((await doc()).map((d) => d.rule_id)).toEqual(["sales-0001", "sales-0002"])
    expect(await keywords(3)).toEqual([])
    expect((await search(config, { text: "Ablehnung Vorschlag" }, { includeProposals: true })).ids).toEqual([])
  })

  it("a failed write leaves the lex_* rows as they were (same transaction)", async () => {
    const config = lexConfig(dir)
    await seed(config, [ruleReq("Lieferzeit der Hakenleisten telefonisch erfragen", ["Lieferzeit"])], "none")
    const before = await withSql(config, snapshot)
    const exit = await run(config, Effect.either(Effect.gen(function*() {
      const store = yield* ScopeStore
      const lex = yield* LexicalIndex
      return yield* store.write("sales", ({ sql }) => Effect.gen(function*() {
        yield* sql`INSERT INTO rule_version SELECT rule_id, 2, kind, 'Ganz anderer Text über Paletten', source_id, quote, timestamp_s,
          source_link, said_at, speaker, relations, keywords, valid_from, valid_until, supersedes, superseded_by, 'confirmed', reason,
          changed_by, changed_at FROM rule_version WHERE rule_id = 'sales-0001'`.raw
        yield* lex.reindexRule(sql, "sales-0001")
        const mid = yield* sql<{ statement: string }>`SELECT statement FROM lex_word WHERE rowid = 1`
        if (mid[0]?.statement.includes("paletten") === true) return yield* Effect.fail("boom" as const)
        return "not reindexed" as const
      }))
    })))
    expect(exit).toMatchObject({ _tag: "Left", left: "boom" })
    expect(await withSql(config, snapshot)).toEqual(before)
  })
})

describe("lex_meta.build", () => {
  it("a file migrated to 0003 with existing rules is rebuilt on the first search", async () => {
    const config = lexConfig(dir)
    // a scope file at schema 2 with one confirmed rule, written before the lexical tables existed
    await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      ensurePrivateDir(join(dir, "scopes"))
      const file = scopeFile(dir, "sales")
      createPrivateFile(file)
      const sql = yield* openConnection(file)
      const T = "2026-03-12T09:15:00Z"
      yield* migrate(sql, file, [m0001, m0002], { scope: "sales", now: T })
      yield* sql`INSERT INTO source (id, kind, fetched_at, feeder) VALUES ('manual:person:1', 'manual', ${T}, 'person:1')`.raw
      yield* sql`INSERT INTO rule (seq, id, created_at, created_by) VALUES (1, 'sales-0001', ${T}, 'person:1')`.raw
      for (const [version, status] of [[1, "proposed"], [2, "confirmed"]] as const) {
        yield* sql`INSERT INTO rule_version (rule_id, version, kind, statement, source_id, quote, said_at, relations, keywords,
            valid_from, status, reason, changed_by, changed_at)
          VALUES ('sales-0001', ${version}, 'rule', 'Rechnungen der Müller GmbH gehen an die Buchhaltung', 'manual:person:1',
            'said', ${T}, '[]', '["Rechnung"]', '2026-01-01', ${status}, 'x', 'person:1', ${T})`.raw
      }
    })))
    const migrated = await withSql(config, (sql) => Effect.all({
      version: sql<{ schema_version: number }>`SELECT schema_version FROM meta`,
      meta: sql`SELECT * FROM lex_meta`,
      doc: sql`SELECT * FROM lex_doc`
    }))
    expect(migrated).toEqual({ version: [{ schema_version: latestVersion(SCOPE_MIGRATIONS) }], meta: [], doc: [] })
    const r = await search(config, { text: "Rechnung Müller" })
    expect(r.ids).toEqual(["sales-0001"])
    const built = await withSql(config, (sql) => sql<{ value: string }>`SELECT value FROM lex_meta WHERE key = 'build'`)
    expect(built).toEqual([{ value: "gn-lex-1;stem=1;decompound=1;normalize=1;trigram=0;languages=de,en" }])
  })

  it("a change of stem, decompound, normalize, trigram or languages rebuilds on the next search or write", async () => {
    const config = lexConfig(dir)
    await seed(config, [ruleReq("Hakenleisten in RAL 9005 bestellen", ["Hakenleiste"])])
    const state = (c: AppConfigShape) => withSql(c, (sql) => Effect.all({
      meta: sql<{ value: string }>`SELECT value FROM lex_meta WHERE key = 'build'`,
      tri: sql<{ n: number }>`SELECT count(*) AS n FROM lex_tri`,
      stem: sql<{ stem: string }>`SELECT statement AS stem FROM lex_stem`
    }))
    expect((await state(config)).tri).toEqual([{ n: 0 }])
    const tri = lexConfig(dir, { lexical: { features: { trigram: true } } })
    await search(tri, { text: "Hakenleiste" })
    expect(await state(tri)).toMatchObject({ meta: [{ value: expect.stringContaining("trigram=1") }], tri: [{ n: 1 }] })
    // a write rebuilds too (languages: en only, no German stems and tails)
    const en = lexConfig(dir, { languages: ["en"] })
    await run(en, propose(ruleReq("Hook rails are ordered on Mondays", ["hook rail"]), agent))
    const s = await state(en)
    expect(s.meta[0]?.value).toContain("languages=en")
    expect(s.tri).toEqual([{ n: 0 }])
    expect(s.stem[0]?.stem).not.toContain("_leist")
    // options that change no stored row do not rebuild
    const before = await withSql(en, snapshot)
    await search(lexConfig(dir, { languages: ["en"], lexical: { features: { fuzzy: false, prf: true }, fusion: "rrf" } }), { text: "hook" })
    expect(await withSql(en, snapshot)).toEqual(before)
  })
})

// --- property: any sequence of writes leaves the tables equal to a full rebuild --------------

const WORDS = [
  "Lieferzeit", "Lieferzeiten", "Hakenleisten", "Hakenleiste", "RAL 9005", "RAL-9005", "Müller", "Mueller", "Straße",
  "30 Tage", "30 days", "2,5 %", "Rechnung", "Zahlungsziel", "invoice", "payment terms", "Bestellung", "orders",
  "schwarze", "Palette", "Edelstahl", "Kunde", "customer", "Muster", "sample", "ﬁnal", "„Zitat“", "NEAR", "\"x\"", "*", "-"
]
const text = fc.array(fc.constantFrom(...WORDS), { minLength: 3, maxLength: 12 }).map((ws) => `Regel: ${ws.join(" ")}`)
const keywords = fc.array(fc.constantFrom(...WORDS), { maxLength: 4 }).map((ws) => [...new Set(ws)])
/** relations that share keys in other cases (lex_relation holds one row per kind and lower-case name) */
const RELATIONS = [
  { kind: "customer", name: "Müller GmbH" }, { kind: "customer", name: "MÜLLER GMBH" }, { kind: "supplier", name: "Müller GmbH" },
  { kind: "product", name: "Hakenleiste schwarz" }, { kind: "product", name: "hakenleiste SCHWARZ" }, { kind: "supplier", name: "Straße & Co" }
] as const
const relations = fc.array(fc.constantFrom(...RELATIONS), { maxLength: 3 }).map((rs) => rs.map((r) => ({ ...r, ref: null })))
const saidAt = fc.constantFrom("2026-02-01T08:00:00Z", "2026-03-12T09:15:00.5Z", "2026-04-30T23:59:59Z")

type Relations = Array<{ kind: "customer" | "supplier" | "product"; name: string; ref: null }>
type Op =
  | {
    readonly kind: "propose"; readonly statement: string; readonly keywords: Array<string>; readonly supersedes: number | null
    readonly relations?: Relations; readonly said_at?: string
  }
  | { readonly kind: "confirm"; readonly pick: number; readonly keywords: Array<string> | null; readonly relations?: Relations | null; readonly said_at?: string | null }
  | { readonly kind: "reject" | "revoke"; readonly pick: number }
  | { readonly kind: "review"; readonly pick: number; readonly keywords: Array<string> }

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ kind: fc.constant("propose" as const), statement: text, keywords, supersedes: fc.option(fc.nat(), { nil: null }), relations, said_at: saidAt })
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("confirm" as const), pick: fc.nat(), keywords: fc.option(keywords, { nil: null }),
      relations: fc.option(relations, { nil: null }), said_at: fc.option(saidAt, { nil: null })
    })
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom("reject" as const, "revoke" as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("review" as const), pick: fc.nat(), keywords }) }
)

/** Applies the ops through the real writers; refused ones (typed failures) change nothing. */
const apply = (ops: ReadonlyArray<Op>) =>
  Effect.gen(function*() {
    const ids: Array<string> = []
    const current = (id: string) =>
      Effect.flatMap(sqlOf("sales"), (sql) => Effect.map(sql<{ version: number }>`SELECT max(version) AS version FROM rule_version WHERE rule_id = ${id}`, (r) => r[0]?.version ?? 1))
    for (const o of ops) {
      if (o.kind === "propose") {
        const supersedes = o.supersedes === null || ids.length === 0 ? null : ids[o.supersedes % ids.length] ?? null
        const over = {
          ...(supersedes === null ? {} : { supersedes, valid_from: "2026-03-01" }),
          ...(o.relations === undefined ? {} : { relations: o.relations }),
          ...(o.said_at === undefined ? {} : { said_at: o.said_at })
        }
        const created = yield* Effect.either(propose(ruleReq(o.statement, o.keywords, over), agent))
        if (created._tag === "Right") ids.push(created.right.ref.slice(5, created.right.ref.indexOf("@")))
        continue
      }
      const id = ids[o.pick % Math.max(1, ids.length)]
      if (id === undefined) continue
      const version = yield* current(id)
      const change = o.kind === "confirm"
        ? {
          ...(o.keywords === null ? {} : { keywords: o.keywords }),
          ...(o.relations === null || o.relations === undefined ? {} : { relations: o.relations }),
          ...(o.said_at === null || o.said_at === undefined ? {} : { said_at: o.said_at })
        }
        : {}
      const req = o.kind === "confirm"
        ? { decision: "confirm", version, ...(Object.keys(change).length === 0 ? {} : { change }) }
        : o.kind === "review" ? { decision: "review", version, change: { keywords: o.keywords } }
        : o.kind === "revoke" ? { decision: "revoke", version, reason: "outdated", valid_until: "2026-06-30" }
        : { decision: "reject", version, reason: "no" }
      yield* Effect.either(decide(id, req, person))
    }
  })

/** One sequence that surely holds every kind of write (fast-check runs it first). */
const EVERY_WRITE: Array<Op> = [
  {
    kind: "propose", statement: "Regel: Lieferzeit Hakenleisten RAL 9005", keywords: ["Lieferzeit"], supersedes: null,
    relations: [{ kind: "product", name: "Hakenleiste schwarz", ref: null }, { kind: "product", name: "hakenleiste SCHWARZ", ref: null }]
  },
  { kind: "confirm", pick: 0, keywords: null },
  {
    kind: "propose", statement: "Regel: Lieferzeiten Müller 30 Tage", keywords: ["Kunde"], supersedes: 0,
    relations: [{ kind: "customer", name: "Müller GmbH", ref: null }]
  },
  { kind: "confirm", pick: 1, keywords: ["Zahlungsziel", "RAL-9005"], relations: [{ kind: "customer", name: "MÜLLER GMBH", ref: null }], said_at: "2026-04-30T23:59:59Z" },
  { kind: "propose", statement: "Regel: Palette Edelstahl Muster", keywords: [], supersedes: null },
  { kind: "reject", pick: 2 },
  { kind: "propose", statement: "Regel: invoice payment terms customer", keywords: ["invoice"], supersedes: null },
  { kind: "confirm", pick: 3, keywords: null },
  { kind: "review", pick: 3, keywords: ["sample", "orders"] },
  { kind: "revoke", pick: 3 }
]

describe("property", () => {
  for (const [name, searchConfig] of [
    ["default switches", {}],
    ["trigram on, stem off", { lexical: { features: { trigram: true, stem: false } } }]
  ] as const) {
    it(`after any sequence of writes the lex_* tables equal a full rebuild (${name})`, async () => {
      await fc.assert(fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 18 }), async (ops) => {
        const t = tempDir("gn-lex-prop-")
        try {
          const config = lexConfig(t.dir, searchConfig)
          const [incremental, rebuilt] = await run(config, Effect.gen(function*() {
            const store = yield* ScopeStore
            yield* store.create("sales")
            yield* storeSource(mailSource(), "service:1")
            yield* apply(ops)
            const sql = yield* sqlOf("sales")
            const a = yield* snapshot(sql)
            yield* rebuildNow(sql)
            return [a, yield* snapshot(sql)] as const
          }))
          // lex_meta.build is written by the first write (or search); with no write it is still absent
          if (incremental.meta.length > 0) expect(incremental.meta).toEqual(rebuilt.meta)
          expect({ ...incremental, meta: rebuilt.meta }).toEqual(rebuilt)
          // and the index holds exactly the rules whose current version is not rejected
          const expected = await withSql(config, (sql) => sql<{ rule_id: string }>`SELECT rule_id FROM current_version WHERE status <> 'rejected' ORDER BY rule_id`)
          expect((incremental.doc as ReadonlyArray<{ rule_id: string }>).map((d) => d.rule_id).sort()).toEqual(expected.map((r) => r.rule_id))
          if (ops === EVERY_WRITE) {
            const kinds = await withSql(config, (sql) => sql<{ kind: string; n: number }>`
              SELECT kind || CASE WHEN new_version IS NULL THEN '-' ELSE '' END AS kind, count(*) AS n FROM decision GROUP BY 1 ORDER BY 1`)
            expect(kinds).toEqual([{ kind: "confirm", n: 3 }, { kind: "reject", n: 1 }, { kind: "review", n: 1 }, { kind: "revoke", n: 1 }])
            expect(incremental.relation).toEqual([
              { kind: "customer", name: "müller gmbh", seq: 2, said_at: "2026-04-30T23:59:59Z" },
              { kind: "product", name: "hakenleiste schwarz", seq: 1, said_at: "2026-03-12T09:15:00Z" }
            ])
            expect(incremental.doc).toEqual([
              expect.objectContaining({ rule_id: "sales-0001", status: "superseded", valid_until: "2026-03-01" }),
              expect.objectContaining({ rule_id: "sales-0002", status: "confirmed" }),
              expect.objectContaining({ rule_id: "sales-0004", status: "superseded", valid_until: "2026-06-30" })
            ])
          }
        } finally {
          t.cleanup()
        }
      }), { numRuns: 15, examples: [[EVERY_WRITE]] })
    }, 120_000)
  }
})
