import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import fc from "fast-check"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { ScopeStore } from "../../src/db/scope-store.js"
import { DUPLICATE_SCORE } from "../../src/graph/config.js"
import { entityFtsKeys, rebuildEntityFts, syncEntityFts } from "../../src/graph/fts.js"
import { initialsOf, isInitialsKey, normalize } from "../../src/graph/normalize.js"
import { resolve, trigramQuery, type ResolveInput } from "../../src/graph/resolve.js"
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

interface Fixture {
  readonly name: string
  readonly aliases?: ReadonlyArray<string>
  readonly type?: string
  readonly parent?: string | null
  readonly status?: "active" | "unconfirmed" | "archived"
}

const AT = "2026-01-05T10:00:00Z"

/** Inserts one entity as the writers would (entity, versions, closure, FTS) with raw SQL; returns its id. */
const addEntity = (sql: SqlClient, f: Fixture) =>
  Effect.gen(function*() {
    const next = yield* sql<{ seq: number }>`SELECT coalesce(max(seq), 0) + 1 AS seq FROM entity`
    const seq = next[0]!.seq
    const id = `sales-e${String(seq).padStart(4, "0")}`
    const aliases = JSON.stringify(f.aliases ?? [])
    const type = f.type ?? "department"
    const parent = f.parent ?? null
    yield* sql`INSERT INTO entity (seq, id, scope, created_at, created_by) VALUES (${seq}, ${id}, 'sales', ${AT}, 'agent')`
    yield* sql`INSERT INTO entity_version (id, version, type, name, aliases, parent_id, status, valid_from, change, channel, changed_by, changed_at, reason)
      VALUES (${id}, 1, ${type}, ${f.name}, ${aliases}, ${parent}, 'unconfirmed', '2026-01-05', 'create', 'mcp', 'agent:1', ${AT}, 'created via mcp')`
    yield* sql`INSERT INTO entity_closure (ancestor_id, descendant_id, depth) VALUES (${id}, ${id}, 0)`
    if (parent !== null) {
      yield* sql`INSERT INTO entity_closure (ancestor_id, descendant_id, depth)
        SELECT ancestor_id, ${id}, depth + 1 FROM entity_closure WHERE descendant_id = ${parent}`
    }
    if (f.status === "active") {
      yield* sql`INSERT INTO entity_version (id, version, type, name, aliases, parent_id, status, valid_from, change, channel, changed_by, changed_at, reason)
        VALUES (${id}, 2, ${type}, ${f.name}, ${aliases}, ${parent}, 'active', '2026-01-05', 'confirm', 'approval', 'person:1', ${AT}, 'checked')`
    }
    if (f.status === "archived") {
      yield* sql`INSERT INTO entity_version (id, version, type, name, aliases, parent_id, status, valid_from, valid_to, change, channel, changed_by, changed_at, reason)
        VALUES (${id}, 2, ${type}, ${f.name}, ${aliases}, ${parent}, 'archived', '2026-01-05', '2026-01-06', 'archive', 'approval', 'person:1', ${AT}, 'gone')`
    }
    yield* syncEntityFts(sql, { seq, name: f.name, aliases: f.aliases ?? [] })
    return id
  })

/** Seeds fixtures in order; a parent given as "#n" is the id of the n-th fixture (0-based). */
const seed = (fixtures: ReadonlyArray<Fixture>): Promise<Array<string>> =>
  run(config, Effect.gen(function*() {
    const sql = yield* sqlOf("sales")
    const ids: Array<string> = []
    yield* sql.withTransaction(Effect.gen(function*() {
      for (const f of fixtures) {
        const parent = f.parent?.startsWith("#") === true ? ids[Number(f.parent.slice(1))]! : f.parent ?? null
        ids.push(yield* addEntity(sql, { ...f, parent }))
      }
    }))
    return ids
  }))

const find = (input: ResolveInput) => run(config, Effect.flatMap(sqlOf("sales"), (sql) => resolve(sql, input)))

describe("resolve: the graph.md §5.3 examples", () => {
  beforeEach(async () => {
    await seed([
      { name: "Acme GmbH", type: "organisation", status: "active" },
      { name: "Vertrieb Nord", parent: "#0", status: "active" },
      { name: "Müller", type: "customer", parent: "#0" },
      { name: "Nordwest", parent: "#0" },
      { name: "Einkauf", parent: "#0" }
    ])
  })

  it("Mueller GmbH = Müller (exact), with the full path root first", async () => {
    const [first] = await find({ q: "Mueller GmbH" })
    expect(first).toEqual({
      id: "sales-e0003", name: "Müller", type: "customer", status: "unconfirmed", aliases: [],
      path: ["Acme GmbH", "Müller"], score: 1, match: "exact"
    })
  })

  it("Vetrieb Nord → Vertrieb Nord (typo)", async () => {
    const [first] = await find({ q: "Vetrieb Nord" })
    expect(first).toMatchObject({ id: "sales-e0002", name: "Vertrieb Nord", match: "typo", score: 0.923, path: ["Acme GmbH", "Vertrieb Nord"] })
  })

  it("VN → Vertrieb Nord without alias (initials)", async () => {
    const got = await find({ q: "VN" })
    expect(got.map((c) => [c.id, c.match, c.score])).toEqual([["sales-e0002", "initials", 0.8]])
  })

  it("Nord Vertrieb → Vertrieb Nord (tokens)", async () => {
    const [first] = await find({ q: "Nord Vertrieb" })
    expect(first).toMatchObject({ id: "sales-e0002", match: "tokens", score: 0.95 })
  })

  it("Nord vs Nordwest: below 0.85, so no duplicate refusal", async () => {
    const got = await find({ q: "Nord" })
    expect(got.every((c) => c.score < DUPLICATE_SCORE)).toBe(true)
    expect(got.find((c) => c.name === "Nordwest")?.score ?? 0).toBeLessThan(DUPLICATE_SCORE)
  })

  it("finds nothing for unrelated text or a key empty after normalization", async () => {
    expect(await find({ q: "Buchhaltung" })).toEqual([])
    expect(await find({ q: "-- !" })).toEqual([])
  })
})

describe("resolve: passes", () => {
  it("VN → alias VN (alias), found by the exact pass although the key has no trigram", async () => {
    await seed([{ name: "Vertrieb Nord", aliases: ["VN"] }, { name: "Verwaltung Nebenstelle" }])
    expect(trigramQuery("vn")).toBeNull()
    const got = await find({ q: "vn" })
    expect(got.map((c) => [c.name, c.match, c.score, c.aliases])).toEqual([
      ["Vertrieb Nord", "alias", 0.98, ["VN"]],
      ["Verwaltung Nebenstelle", "initials", 0.8, []]
    ])
  })

  it("a 2-character name is found exactly", async () => {
    await seed([{ name: "IT" }, { name: "Italien" }])
    const got = await find({ q: "it" })
    expect(got[0]).toMatchObject({ name: "IT", match: "exact", score: 1 })
  })

  it("an alias of 3 or more characters is found exactly through the index", async () => {
    await seed([{ name: "Vertrieb Nord", aliases: ["Sales North", "SN"] }])
    expect(await find({ q: "sales-north" })).toMatchObject([{ name: "Vertrieb Nord", match: "alias", score: 0.98 }])
  })

  it("initials of an alias count too", async () => {
    await seed([{ name: "VKN", aliases: ["Verkauf Nord"] }])
    expect(await find({ q: "vkn" })).toMatchObject([{ name: "VKN", match: "exact" }])
    expect(await find({ q: "vn" })).toMatchObject([{ name: "VKN", match: "initials", score: 0.8 }])
  })

  it("user text with FTS5 syntax never breaks the MATCH", async () => {
    await seed([{ name: "Vertrieb Nord" }, { name: "Near" }])
    for (const q of ["\"Vertrieb Nord", "Vertrieb* Nord", "name: Vertrieb Nord", "-Vertrieb -Nord", "(Vertrieb) (Nord)",
      "NEAR(Vertrieb Nord, 2)", "Vertrieb AND Nord", "Vertrieb OR", "^Vertrieb + Nord"]) {
      const got = await find({ q })
      expect(got.some((c) => c.name === "Vertrieb Nord"), q).toBe(true)
    }
    expect((await find({ q: "NEAR" }))[0]).toMatchObject({ name: "Near" })
    for (const q of ["\"", "*", "(", ")", ":", "-", "\"\"", "NOT"]) await find({ q })
  })

  it("the trigram query quotes every trigram, so even raw user text is a valid MATCH", async () => {
    await seed([{ name: "Vertrieb Nord" }])
    expect(trigramQuery("ab\"c")).toBe("\"ab\"\"\" OR \"b\"\"c\"")
    const rows = await run(config, Effect.gen(function*() {
      const sql = yield* sqlOf("sales")
      const out: Array<number> = []
      for (const raw of ["\"Vertrieb*", "NEAR(a b)", "x:y -z", "(OR)", "Vertrieb"]) {
        const r = yield* sql<{ n: number }>`SELECT count(*) AS n FROM entity_fts WHERE entity_fts MATCH ${trigramQuery(raw)!}`
        out.push(r[0]!.n)
      }
      return out
    }))
    expect(rows).toEqual([1, 0, 0, 0, 1])
  })

  it("the trigram pass recalls beyond exact and typo (similar)", async () => {
    await seed([{ name: "Vertriebsbüro Nord" }])
    const [first] = await find({ q: "Vertrieb Nord" })
    expect(first?.match).toBe("similar")
    expect(first?.score).toBeGreaterThanOrEqual(0.5)
  })
})

describe("resolve: filters and order", () => {
  it("never returns an archived entity", async () => {
    await seed([{ name: "Lager Ost", status: "archived" }, { name: "Lager Ost Neu" }])
    const got = await find({ q: "Lager Ost" })
    expect(got.map((c) => c.name)).toEqual(["Lager Ost Neu"])
    expect(await find({ q: "lager osst" })).toMatchObject([{ name: "Lager Ost Neu" }])
  })

  it("filters archived entities and other types before the trigram pass takes its 50 rows", async () => {
    await seed([
      ...Array.from({ length: 55 }, () => ({ name: "Lagerhalle Ost", status: "archived" as const })),
      ...Array.from({ length: 55 }, () => ({ name: "Lagerhalle Ost", type: "object" })),
      { name: "Lagerhalle Ost Nord" }
    ])
    expect(await find({ q: "Lagerhalle Ost", type: "department" })).toMatchObject([{ id: "sales-e0111", match: "similar" }])
  })

  it("filters by type", async () => {
    await seed([{ name: "Zentrale", type: "department" }, { name: "Zentrale", type: "object" }])
    expect((await find({ q: "Zentrale", type: "object" })).map((c) => [c.id, c.type])).toEqual([["sales-e0002", "object"]])
    expect((await find({ q: "Zentrale", type: "person" }))).toEqual([])
    expect((await find({ q: "Zentrale" })).length).toBe(2)
  })

  it("leaves excludeId out", async () => {
    await seed([{ name: "Zentrale" }, { name: "Zentrale" }])
    expect((await find({ q: "Zentrale", excludeId: "sales-e0001" })).map((c) => c.id)).toEqual(["sales-e0002"])
  })

  it("orders equal scores active before unconfirmed, then smaller depth, then id", async () => {
    const ids = await seed([
      { name: "Werk", type: "organisation", status: "active" }, // e1 depth 0 active
      { name: "Projekt Alpha", parent: "#0", status: "active" }, // e2 depth 1 active
      { name: "Projekt Alpha" }, // e3 depth 0 unconfirmed
      { name: "Projekt Alpha", status: "active" }, // e4 depth 0 active
      { name: "Projekt Alpha", status: "active" }, // e5 depth 0 active
      { name: "Projekt Alpha", parent: "#1" } // e6 depth 2 unconfirmed
    ])
    const got = await find({ q: "projekt alpha" })
    expect(got.map((c) => c.id)).toEqual([ids[3], ids[4], ids[1], ids[2], ids[5]])
    expect(got.map((c) => c.path)).toEqual([
      ["Projekt Alpha"], ["Projekt Alpha"], ["Werk", "Projekt Alpha"], ["Projekt Alpha"], ["Werk", "Projekt Alpha", "Projekt Alpha"]
    ])
  })

  it("orders by score first", async () => {
    await seed([{ name: "Vertriebsbüro Nord", status: "active" }, { name: "Vetrieb Nord" }, { name: "Vertrieb Nord" }])
    const got = await find({ q: "Vertrieb Nord" })
    expect(got.map((c) => c.match)).toEqual(["exact", "typo", "similar"])
    expect(got.map((c) => c.score)).toEqual([...got.map((c) => c.score)].sort((a, b) => b - a))
  })

  it("answers at most 5 candidates, fewer when limit says so", async () => {
    await seed(Array.from({ length: 7 }, () => ({ name: "Lager" })))
    expect((await find({ q: "Lager" })).map((c) => c.id)).toEqual(["sales-e0001", "sales-e0002", "sales-e0003", "sales-e0004", "sales-e0005"])
    expect((await find({ q: "Lager", limit: 50 })).length).toBe(5)
    expect((await find({ q: "Lager", limit: 2 })).length).toBe(2)
  })

  it("only candidates with score ≥ 0.50", async () => {
    await seed([{ name: "Nordwest" }])
    expect(await find({ q: "Nord" })).toEqual([]) // similar 0.45
  })
})

describe("entity_fts (src/graph/fts.ts)", () => {
  const ftsRows = () => run(config, Effect.flatMap(sqlOf("sales"), (sql) =>
    sql<{ rowid: number; name: string; aliases: string }>`SELECT rowid, name, aliases FROM entity_fts ORDER BY rowid`))

  it("stores normalize(name) and the normalized aliases joined by |, rowid = seq", async () => {
    await seed([{ name: "Müller GmbH", aliases: ["M. & Söhne", "MS"] }, { name: "Alt", status: "archived" }])
    expect(await ftsRows()).toEqual([
      { rowid: 1, name: "mueller", aliases: "m soehne|ms" },
      { rowid: 2, name: "alt", aliases: "" }
    ])
  })

  it("syncEntityFts replaces the row of the entity", async () => {
    await seed([{ name: "Vertrieb Nord" }, { name: "Einkauf" }])
    await run(config, Effect.flatMap(sqlOf("sales"), (sql) => syncEntityFts(sql, { seq: 1, name: "Vertrieb Nordost", aliases: ["VNO"] })))
    expect(await ftsRows()).toEqual([
      { rowid: 1, name: "vertrieb nordost", aliases: "vno" },
      { rowid: 2, name: "einkauf", aliases: "" }
    ])
  })

  it("rebuildEntityFts writes the same rows as the writers' syncs, archived included", async () => {
    await seed([{ name: "Acme AG", type: "organisation", status: "active" }, { name: "Alt", status: "archived", parent: "#0" },
      { name: "Straße 1", aliases: ["S1"], parent: "#0" }])
    const before = await ftsRows()
    await run(config, Effect.flatMap(sqlOf("sales"), (sql) => sql`DELETE FROM entity_fts WHERE rowid = 2`.raw))
    const written = await run(config, Effect.flatMap(sqlOf("sales"), (sql) => rebuildEntityFts(sql)))
    expect(written).toBe(3)
    expect(await ftsRows()).toEqual(before)
    expect(before.map((r) => r.name)).toEqual(["acme", "alt", "strasse 1"].map(normalize))
  })
})

describe("entity_fts_key (migration 0002-graph, src/graph/fts.ts)", () => {
  const keyRows = (sql: SqlClient) =>
    sql<{ kind: string; key: string; seq: number }>`SELECT kind, key, seq FROM entity_fts_key ORDER BY seq, kind, key`
  /** The rows entityFtsKeys gives for every entity_fts row, in the order of keyRows. */
  const expectedKeys = (sql: SqlClient) =>
    Effect.map(sql<{ rowid: number; name: string; aliases: string }>`SELECT rowid, name, aliases FROM entity_fts`, (rows) =>
      rows.flatMap((r) => entityFtsKeys(r).map((k) => ({ kind: k.kind, key: k.key, seq: r.rowid })))
        .sort((a, b) => a.seq - b.seq || a.kind.localeCompare(b.kind) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)))

  it("entityFtsKeys: the name and every alias exactly, their initials of 2–6 characters, each pair once", () => {
    expect(entityFtsKeys({ name: "vertrieb nord", aliases: "vn|sales north|vn" })).toEqual([
      { kind: "exact", key: "vertrieb nord" }, { kind: "initials", key: "vn" }, { kind: "exact", key: "vn" },
      { kind: "exact", key: "sales north" }, { kind: "initials", key: "sn" }
    ])
    expect(entityFtsKeys({ name: "it", aliases: "" })).toEqual([{ kind: "exact", key: "it" }])
    expect(entityFtsKeys({ name: "a b c d e f g", aliases: "" })).toEqual([{ kind: "exact", key: "a b c d e f g" }])
    expect(entityFtsKeys({ name: "", aliases: "|x" })).toEqual([{ kind: "exact", key: "x" }])
  })

  it("the writers keep it beside entity_fts; rebuildEntityFts writes the same rows", async () => {
    await seed([{ name: "Vertrieb Nord", aliases: ["VN", "Sales North"] }, { name: "Alt", status: "archived" }, { name: "IT" }])
    const rows = () => run(config, Effect.flatMap(sqlOf("sales"), (sql) => Effect.all([keyRows(sql), expectedKeys(sql)])))
    const [seeded, expected] = await rows()
    expect(seeded).toEqual([
      { kind: "exact", key: "sales north", seq: 1 }, { kind: "exact", key: "vertrieb nord", seq: 1 }, { kind: "exact", key: "vn", seq: 1 },
      { kind: "initials", key: "sn", seq: 1 }, { kind: "initials", key: "vn", seq: 1 },
      { kind: "exact", key: "alt", seq: 2 }, { kind: "exact", key: "it", seq: 3 }
    ])
    expect(seeded).toEqual(expected)
    // a sync replaces the keys of the entity: the old ones go
    await run(config, Effect.flatMap(sqlOf("sales"), (sql) => syncEntityFts(sql, { seq: 1, name: "Vertrieb Nordost", aliases: ["VNO"] })))
    const [synced, expectedSynced] = await rows()
    expect(synced.filter((r) => r.seq === 1)).toEqual([
      { kind: "exact", key: "vertrieb nordost", seq: 1 }, { kind: "exact", key: "vno", seq: 1 }, { kind: "initials", key: "vn", seq: 1 }
    ])
    expect(synced).toEqual(expectedSynced)
    // the rebuild reads entity_current (still "Vertrieb Nord") and restores a deleted row's keys
    await run(config, Effect.flatMap(sqlOf("sales"), (sql) => sql`DELETE FROM entity_fts_key WHERE seq = 2`.raw))
    await run(config, Effect.flatMap(sqlOf("sales"), (sql) => rebuildEntityFts(sql)))
    expect(await run(config, Effect.flatMap(sqlOf("sales"), keyRows))).toEqual(seeded)
  })

  it("property: the exact and initials passes recall what the full reads of entity_fts recall", async () => {
    const word = fc.constantFrom("vertrieb", "nord", "v", "n", "it", "müller", "straße", "ab", "a", "b", "ǆ", "日本", "k1", "gmbh", "x")
    const text = fc.array(word, { minLength: 1, maxLength: 4 }).map((ws) => ws.join(" "))
    const entity = fc.record({ name: text, aliases: fc.array(text, { maxLength: 3 }) })
    let hits = 0
    await fc.assert(fc.asyncProperty(fc.array(entity, { minLength: 1, maxLength: 12 }), fc.array(text, { minLength: 1, maxLength: 8 }), async (entities, keys) => {
      const t = tempDir()
      try {
        const cfg = testConfig(t.dir)
        await run(cfg, Effect.flatMap(ScopeStore, (s) => s.create("sales")))
        const result = await run(cfg, Effect.gen(function*() {
          const sql = yield* sqlOf("sales")
          for (const [i, e] of entities.entries()) yield* syncEntityFts(sql, { seq: i + 1, name: e.name, aliases: e.aliases })
          const out: Array<{ key: string; kind: string; viaKeys: Array<number>; viaScan: Array<number> }> = []
          for (const q of [...keys, ...entities.map((e) => e.name), ...entities.flatMap((e) => e.aliases)]) {
            const key = normalize(q)
            if (key.length === 0) continue
            // the reads of entity_fts before entity_fts_key (graph.md §5.2 passes 2 and 4, every row)
            const exactScan = yield* sql<{ seq: number }>`SELECT rowid AS seq FROM entity_fts
              WHERE name = ${key} OR instr('|' || aliases || '|', ${`|${key}|`}) > 0 ORDER BY rowid`
            const exactKeys = yield* sql<{ seq: number }>`SELECT seq FROM entity_fts_key WHERE kind = 'exact' AND key = ${key} ORDER BY seq`
            out.push({ key, kind: "exact", viaKeys: exactKeys.map((r) => r.seq), viaScan: exactScan.map((r) => r.seq) })
            if (isInitialsKey(key)) {
              const all = yield* sql<{ seq: number; name: string; aliases: string }>`SELECT rowid AS seq, name, aliases FROM entity_fts ORDER BY rowid`
              const initialsScan = all.filter((r) => [r.name, ...r.aliases.split("|")].some((s) => initialsOf(s) === key)).map((r) => r.seq)
              const initialsKeys = yield* sql<{ seq: number }>`SELECT seq FROM entity_fts_key WHERE kind = 'initials' AND key = ${key} ORDER BY seq`
              out.push({ key, kind: "initials", viaKeys: initialsKeys.map((r) => r.seq), viaScan: initialsScan })
            }
          }
          return out
        }))
        for (const r of result) expect(r.viaKeys, `${r.kind} ${r.key}`).toEqual(r.viaScan)
        hits += result.filter((r) => r.viaScan.length > 0).length
      } finally {
        t.cleanup()
      }
    }), { numRuns: 40 })
    expect(hits).toBeGreaterThan(40)
  })
})
