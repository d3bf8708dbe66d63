/**
 * Entity writers (graph.md §4) on real scope files: create, move and update, every refusal in
 * the contract's order with its body fields, and nothing written on any refusal.
 */
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { ScopeStore } from "../../src/db/scope-store.js"
import { todayIn } from "../../src/contracts/time.js"
import { computeClosure, storedClosure } from "../../src/graph/closure.js"
import { mapTrigger } from "../../src/graph/entities.js"
import { type GraphRefusal, graphErrorBody } from "../../src/contracts/errors.js"
import { resolve } from "../../src/graph/resolve.js"
import { tempDir, testConfig } from "../support/env.js"
import { run, runFail, sqlOf, type Stores } from "../support/run.js"
import { create, MCP, move, personVersion, snapshot, update } from "./entity-helpers.js"

let cleanup: (() => void) | undefined
let config: ReturnType<typeof testConfig>

/** A fresh data dir with the scopes sales and ops (the one before removed: a test may set up again with its own graph config). */
const setup = async (graph: Record<string, unknown> = {}) => {
  cleanup?.()
  const t = tempDir()
  cleanup = t.cleanup
  config = testConfig(t.dir, { graph })
  await run(config, Effect.gen(function*() {
    const store = yield* ScopeStore
    yield* store.create("sales")
    yield* store.create("ops")
  }))
}
beforeEach(() => setup())
afterEach(() => {
  cleanup?.()
  cleanup = undefined
})

const sales = sqlOf("sales")

/** Runs a refused write: its GraphErrorBody, and the graph tables unchanged. */
const refused = async <A, E>(effect: Effect.Effect<A, E, Stores>) => {
  const before = await run(config, Effect.flatMap(sales, snapshot))
  const e = (await runFail(config, effect)) as unknown as GraphRefusal
  expect(e._tag).toBe("GraphRefusal")
  const after = await run(config, Effect.flatMap(sales, snapshot))
  expect(after).toEqual(before)
  return graphErrorBody(e)
}

const ok = <A, E>(effect: Effect.Effect<A, E, Stores>) => run(config, effect)

describe("create", () => {
  it("writes head, version 1 unconfirmed with today in the zone, closure and FTS in one go", async () => {
    const root = await ok(create({ name: "Acme GmbH", type: "organisation", aliases: ["ACME", "ACME"], evidence: "mail:<a@x>" }))
    const today = await ok(todayIn(config.file.zone))
    expect(root).toMatchObject({
      created: true, ref: "entity/sales-e0001", id: "sales-e0001", scope: "sales", type: "organisation", name: "Acme GmbH",
      aliases: ["ACME"], status: "unconfirmed", parent_id: null, valid_from: today, valid_to: null, children: 0, pending: true,
      approval_url: "http://127.0.0.1:8787/approval/structure?scope=sales#sales-e0001", version: 1,
      path: [{ id: "sales-e0001", name: "Acme GmbH", type: "organisation" }]
    })
    expect(root.next.map((n) => n.tool)).toEqual(["link_propose", "entity_tree"])
    const child = await ok(create({ name: "Vertrieb Nord", parent_id: root.id }, MCP))
    expect(child.path.map((p) => p.name)).toEqual(["Acme GmbH", "Vertrieb Nord"])
    const rows = await ok(Effect.gen(function*() {
      const sql = yield* sales
      return {
        heads: yield* sql`SELECT id, scope, created_by FROM entity ORDER BY seq`,
        versions: yield* sql`SELECT id, version, status, change, channel, changed_by, reason, evidence FROM entity_version ORDER BY id`,
        closure: yield* storedClosure(sql),
        expected: yield* computeClosure(sql),
        fts: yield* sql`SELECT rowid, name, aliases FROM entity_fts ORDER BY rowid`
      }
    }))
    expect(rows.heads).toEqual([
      { id: "sales-e0001", scope: "sales", created_by: "import" },
      { id: "sales-e0002", scope: "sales", created_by: "agent" }
    ])
    expect(rows.versions).toEqual([
      { id: "sales-e0001", version: 1, status: "unconfirmed", change: "create", channel: "api", changed_by: "service:1", reason: "created via api", evidence: "mail:<a@x>" },
      { id: "sales-e0002", version: 1, status: "unconfirmed", change: "create", channel: "mcp", changed_by: "person:1", reason: "created via mcp", evidence: null }
    ])
    expect(rows.closure).toEqual(rows.expected)
    expect(rows.closure).toHaveLength(3)
    expect(rows.fts).toEqual([{ rowid: 1, name: "acme", aliases: "acme" }, { rowid: 2, name: "vertrieb nord", aliases: "" }])
    const again = await ok(Effect.flatMap(sales, (sql) => resolve(sql, { q: "Vertrieb Nord" })))
    expect(again[0]).toMatchObject({ id: "sales-e0002", match: "exact", path: ["Acme GmbH", "Vertrieb Nord"] })
  })

  it("refuses in the contract's order: type before parent, parent before depth, depth before duplicates", async () => {
    await setup({ max_depth: 2 })
    const root = await ok(create({ name: "Acme", type: "organisation" }))
    const mid = await ok(create({ name: "Vertrieb", parent_id: root.id }))
    // 1. type (400 validation-failed) although the parent is unknown too
    const type = await refused(create({ name: "X", type: "planet", parent_id: "sales-e0099" }))
    expect(type).toMatchObject({ error: "validation-failed", issues: [{ path: "type" }], next: [] })
    expect(type.remedy).toContain("organisation")
    // 2a. a parent of another scope: scope-mismatch, decided on the id (that entity does not exist)
    const foreign = await refused(create({ name: "X", parent_id: "ops-e0001" }))
    expect(foreign).toMatchObject({ error: "scope-mismatch" })
    expect(foreign.remedy.length).toBeGreaterThan(0)
    // 2b. unknown parent
    expect(await refused(create({ name: "X", parent_id: "sales-e0099" }))).toMatchObject({ error: "reference-unknown" })
    // 3. depth: level 3 under a 2-level limit, although the name duplicates nothing
    const depth = await refused(create({ name: "Team", parent_id: mid.id }))
    expect(depth).toMatchObject({ error: "depth-limit", limit: 2 })
    expect(depth.next.length).toBeLessThanOrEqual(3)
    // 4. literal duplicate (case-insensitive, same parent, same type), force does not override
    const literal = await refused(create({ name: "VERTRIEB", parent_id: root.id, force: true, reason: "really" }))
    expect(literal).toMatchObject({ error: "duplicate-candidate", candidates: [{ id: mid.id, name: "Vertrieb", match: "exact", path: ["Acme", "Vertrieb"] }] })
    expect(literal.next).toEqual([{ tool: "entity_path", why: expect.stringContaining(mid.id) }])
    // another type under the same parent is neither a literal nor (type-filtered) a similar duplicate
    expect((await ok(create({ name: "Vertrieb", type: "project", parent_id: root.id }))).created).toBe(true)
  })

  it("parent-archived", async () => {
    const root = await ok(create({ name: "Acme", type: "organisation" }))
    await ok(Effect.flatMap(sales, (sql) => personVersion(sql, root.id, "archive")))
    const body = await refused(create({ name: "Vertrieb", parent_id: root.id }))
    expect(body).toMatchObject({ error: "parent-archived" })
    expect(body.next[0]?.tool).toBe("entity_tree")
  })

  it("similar duplicate ≥ 0.85 by name or alias, same type: candidates; force needs a reason", async () => {
    const root = await ok(create({ name: "Acme", type: "organisation" }))
    const nord = await ok(create({ name: "Vertrieb Nord", parent_id: root.id, aliases: ["VN"] }))
    const other = await ok(create({ name: "Einkauf", parent_id: root.id }))
    // under another parent: no literal duplicate, but a typo of the name
    const typo = await refused(create({ name: "Vetrieb Nord", parent_id: other.id }))
    expect(typo.error).toBe("duplicate-candidate")
    expect(typo.candidates?.[0]).toMatchObject({ id: nord.id, match: "typo", path: ["Acme", "Vertrieb Nord"] })
    expect(typo.candidates?.every((c) => c.score >= 0.85)).toBe(true)
    expect(typo.next).toEqual([{ tool: "entity_path", why: expect.stringContaining(nord.id) }])
    // by an alias
    const byAlias = await refused(create({ name: "Nordvertrieb", aliases: ["Vertrieb Nord"], parent_id: other.id }))
    expect(byAlias.candidates?.map((c) => c.id)).toEqual([nord.id])
    // another type: no candidate
    const project = await ok(create({ name: "Vetrieb Nord", type: "project", parent_id: other.id }))
    expect(project.created).toBe(true)
    // force without a reason
    const missing = await refused(create({ name: "Vetrieb Nord", parent_id: other.id, force: true }))
    expect(missing).toMatchObject({ error: "reason-missing" })
    // force with a reason: created, the reason kept
    const forced = await ok(create({ name: "Vetrieb Nord", parent_id: other.id, force: true, reason: "the person says this is the purchasing team" }))
    const reason = await ok(Effect.flatMap(sales, (sql) => sql<{ reason: string }>`SELECT reason FROM entity_version WHERE id = ${forced.id}`))
    expect(reason[0]?.reason).toBe("the person says this is the purchasing team")
  })

  it("Nord vs Nordwest stays below 0.85: no refusal", async () => {
    await ok(create({ name: "Nordwest" }))
    expect((await ok(create({ name: "Nord" }))).created).toBe(true)
  })
})

describe("move", () => {
  const tree = async () => {
    const a = await ok(create({ name: "Acme", type: "organisation" }))
    const b = await ok(create({ name: "Vertrieb", parent_id: a.id }))
    const c = await ok(create({ name: "Nord", parent_id: b.id }))
    const d = await ok(create({ name: "Einkauf", parent_id: a.id }))
    return { a, b, c, d }
  }

  it("writes a move version with status unchanged and moves the subtree in the closure", async () => {
    const { a, b, c, d } = await tree()
    await ok(Effect.flatMap(sales, (sql) => personVersion(sql, b.id, "confirm")))
    const moved = await ok(move(b.id, d.id, { reason: "reorganised" }))
    expect(moved).toMatchObject({ moved: true, id: b.id, parent_id: d.id, status: "active", version: 3, pending: true })
    expect(moved.from_path.map((p) => p.name)).toEqual(["Acme", "Vertrieb"])
    expect(moved.path.map((p) => p.name)).toEqual(["Acme", "Einkauf", "Vertrieb"])
    expect(moved.next).toEqual([
      { tool: "link_propose", why: expect.stringContaining(b.id) },
      { tool: "entity_tree", why: expect.stringContaining(d.id) }
    ])
    const state = await ok(Effect.gen(function*() {
      const sql = yield* sales
      return {
        v: yield* sql`SELECT version, change, status, parent_id, channel, reason FROM entity_version WHERE id = ${b.id} ORDER BY version`,
        closure: yield* storedClosure(sql),
        expected: yield* computeClosure(sql),
        cDepth: yield* sql`SELECT ancestor_id, depth FROM entity_closure WHERE descendant_id = ${c.id} ORDER BY depth`
      }
    }))
    expect(state.v).toEqual([
      { version: 1, change: "create", status: "unconfirmed", parent_id: a.id, channel: "api", reason: "created via api" },
      { version: 2, change: "confirm", status: "active", parent_id: a.id, channel: "approval", reason: "checked by a person" },
      { version: 3, change: "move", status: "active", parent_id: d.id, channel: "api", reason: "reorganised" }
    ])
    expect(state.closure).toEqual(state.expected)
    expect(state.cDepth).toEqual([
      { ancestor_id: c.id, depth: 0 }, { ancestor_id: b.id, depth: 1 }, { ancestor_id: d.id, depth: 2 }, { ancestor_id: a.id, depth: 3 }
    ])
    // to the top level
    const top = await ok(move(c.id, null))
    expect(top.path.map((p) => p.name)).toEqual(["Nord"])
    const [stored, expected] = await ok(Effect.flatMap(sales, (sql) => Effect.all([storedClosure(sql), computeClosure(sql)])))
    expect(stored).toEqual(expected)
  })

  it("the same parent answers moved: false and writes nothing", async () => {
    const { a, b } = await tree()
    const before = await ok(Effect.flatMap(sales, snapshot))
    const same = await ok(move(b.id, a.id))
    expect(same).toMatchObject({ moved: false, id: b.id, parent_id: a.id, version: 1, next: [] })
    expect(await ok(Effect.flatMap(sales, snapshot))).toEqual(before)
  })

  it("a cycle is refused in code with both paths; moving under itself too", async () => {
    const { b, c } = await tree()
    const cycle = await refused(move(b.id, c.id))
    expect(cycle).toMatchObject({
      error: "cycle",
      paths: {
        entity: [{ name: "Acme" }, { name: "Vertrieb" }],
        target: [{ name: "Acme" }, { name: "Vertrieb" }, { name: "Nord" }]
      }
    })
    expect(cycle.next).toEqual([{ tool: "entity_path", why: expect.stringContaining(c.id) }])
    const self = await refused(move(b.id, b.id))
    expect(self).toMatchObject({ error: "cycle", paths: { entity: [{ id: expect.any(String) }, { id: b.id }], target: [{}, { id: b.id }] } })
  })

  it("refuses in order: entity, parent, cycle, depth of the deepest node, literal duplicate", async () => {
    await setup({ max_depth: 3 })
    const { a, b, c, d } = await tree()
    const nf = await refused(move("sales-e0099", a.id))
    expect(nf).toMatchObject({ error: "not-found", next: [{ tool: "entity_resolve" }] })
    // an id of another scope: the same body as an unknown one
    expect(await refused(move("ops-e0001", a.id))).toEqual(nf)
    expect(await refused(move(b.id, "ops-e0002"))).toMatchObject({ error: "scope-mismatch" })
    expect(await refused(move(b.id, "sales-e0099"))).toMatchObject({ error: "reference-unknown" })
    // b with its child c under d: c would sit on level 4 > 3
    expect(await refused(move(b.id, d.id))).toMatchObject({ error: "depth-limit", limit: 3 })
    // c under a, where a "nord" department would be a literal duplicate
    await ok(create({ name: "NORD", parent_id: a.id, force: true, reason: "another Nord" }))
    const literal = await refused(move(c.id, a.id, { reason: "x" }))
    expect(literal).toMatchObject({ error: "duplicate-candidate", candidates: [{ name: "NORD" }] })
  })

  it("an archived entity cannot move; an archived parent is refused", async () => {
    const { a, b, c, d } = await tree()
    await ok(Effect.flatMap(sales, (sql) => personVersion(sql, c.id, "archive")))
    expect(await refused(move(c.id, a.id))).toMatchObject({ error: "entity-archived" })
    expect(await refused(move(d.id, c.id))).toMatchObject({ error: "parent-archived" })
    // the archived entity's former siblings still move
    expect(await ok(move(d.id, b.id))).toMatchObject({ moved: true })
  })
})

describe("update", () => {
  it("renames and changes aliases as one version; FTS follows", async () => {
    const a = await ok(create({ name: "Acme", type: "organisation" }))
    const b = await ok(create({ name: "Vertrieb", parent_id: a.id, aliases: ["VT", "Sales"] }))
    const up = await ok(update(b.id, { name: "Vertrieb Süd", aliases_add: ["VS", "VT"], aliases_remove: ["Sales"] }, MCP))
    expect(up).toMatchObject({ updated: true, name: "Vertrieb Süd", aliases: ["VT", "VS"], version: 2, status: "unconfirmed" })
    expect(up.path.map((p) => p.name)).toEqual(["Acme", "Vertrieb Süd"])
    const state = await ok(Effect.gen(function*() {
      const sql = yield* sales
      return {
        v: yield* sql`SELECT version, change, channel, reason, parent_id FROM entity_version WHERE id = ${b.id} ORDER BY version`,
        fts: yield* sql`SELECT name, aliases FROM entity_fts WHERE rowid = 2`,
        found: yield* resolve(sql, { q: "Vertrieb Sued" })
      }
    }))
    expect(state.v).toEqual([
      { version: 1, change: "create", channel: "api", reason: "created via api", parent_id: a.id },
      { version: 2, change: "update", channel: "mcp", reason: "updated via mcp", parent_id: a.id }
    ])
    expect(state.fts).toEqual([{ name: "vertrieb sued", aliases: "vt|vs" }])
    expect(state.found[0]).toMatchObject({ id: b.id, match: "exact" })
  })

  it("nothing changed → updated: false, nothing written; an absent alias to remove → validation-failed", async () => {
    const b = await ok(create({ name: "Vertrieb", aliases: ["VT"] }))
    const before = await ok(Effect.flatMap(sales, snapshot))
    const same = await ok(update(b.id, { name: "Vertrieb", aliases_add: ["VT"] }))
    expect(same).toMatchObject({ updated: false, version: 1, next: [] })
    expect(await ok(Effect.flatMap(sales, snapshot))).toEqual(before)
    const absent = await refused(update(b.id, { name: "Other", aliases_remove: ["VT", "XX"] }))
    expect(absent).toMatchObject({ error: "validation-failed", issues: [{ path: "aliases_remove[1]" }] })
    expect(await refused(update(b.id, { aliases_add: ["VT"], aliases_remove: ["VT"] }))).toMatchObject({ error: "validation-failed" })
    const many = Array.from({ length: 20 }, (_, i) => `alias number ${i}`)
    expect(await refused(update(b.id, { aliases_add: many, force: true, reason: "r" }))).toMatchObject({ error: "validation-failed", issues: [{ path: "aliases_add" }] })
  })

  it("the new name and added aliases pass the duplicate checks, the entity itself excluded", async () => {
    const a = await ok(create({ name: "Acme", type: "organisation" }))
    const b = await ok(create({ name: "Vertrieb Nord", parent_id: a.id }))
    const c = await ok(create({ name: "Einkauf", parent_id: a.id }))
    // renaming to itself in another case is no duplicate of itself
    expect(await ok(update(b.id, { name: "Vertrieb NORD", force: true, reason: "case" }))).toMatchObject({ updated: true })
    // a sibling's name: literal, force does not help
    const literal = await refused(update(c.id, { name: "vertrieb nord", force: true, reason: "x" }))
    expect(literal).toMatchObject({ error: "duplicate-candidate", candidates: [{ id: b.id }] })
    // an added alias similar to another entity
    const similar = await refused(update(c.id, { aliases_add: ["Vetrieb Nord"] }))
    expect(similar).toMatchObject({ error: "duplicate-candidate", candidates: [{ id: b.id, match: "typo" }] })
    expect(await refused(update(c.id, { aliases_add: ["Vetrieb Nord"], force: true }))).toMatchObject({ error: "reason-missing" })
    expect(await ok(update(c.id, { aliases_add: ["Vetrieb Nord"], force: true, reason: "mails use this spelling" }))).toMatchObject({ updated: true })
    // removing only: no duplicate check
    expect(await ok(update(c.id, { aliases_remove: ["Vetrieb Nord"] }))).toMatchObject({ updated: true, aliases: [] })
  })

  it("an unknown, foreign or archived entity", async () => {
    const b = await ok(create({ name: "Vertrieb" }))
    expect(await refused(update("sales-e0042", { name: "x" }))).toMatchObject({ error: "not-found" })
    await ok(Effect.flatMap(sales, (sql) => personVersion(sql, b.id, "archive")))
    expect(await refused(update(b.id, { name: "Neu" }))).toMatchObject({ error: "entity-archived" })
  })
})

describe("trigger refusals as codes (the backstop behind the checks)", () => {
  it("cycle, parent-archived and terminal-state from raw SQL map to cycle (with both paths), parent-archived, entity-archived", async () => {
    const a = await ok(create({ name: "Acme", type: "organisation" }))
    const b = await ok(create({ name: "Vertrieb", parent_id: a.id }))
    const c = await ok(create({ name: "Alt" }))
    await ok(Effect.flatMap(sales, (sql) => personVersion(sql, c.id, "archive")))
    const mapped = await ok(Effect.gen(function*() {
      const sql = yield* sales
      const version = (id: string, v: number, parent: string | null) =>
        sql`INSERT INTO entity_version (id, version, type, name, aliases, parent_id, status, valid_from, change, channel, changed_by, changed_at, reason)
          VALUES (${id}, ${v}, 'department', 'x', '[]', ${parent}, 'unconfirmed', '2026-03-12', 'move', 'api', 'service:1', '2026-03-12T10:00:00Z', 'x')`
      const codeOf = (id: string, parent: string | null, v: number) =>
        version(id, v, parent).pipe(
          Effect.catchTag("SqlError", mapTrigger(sql, id, parent)),
          Effect.flip,
          Effect.map((e) => graphErrorBody(e as GraphRefusal))
        )
      return {
        cycle: yield* codeOf(a.id, b.id, 2),
        parent: yield* codeOf(b.id, c.id, 2),
        terminal: yield* codeOf(c.id, null, 3)
      }
    }))
    expect(mapped.cycle).toMatchObject({ error: "cycle", paths: { entity: [{ id: a.id }], target: [{ id: a.id }, { id: b.id }] } })
    expect(mapped.parent).toMatchObject({ error: "parent-archived" })
    expect(mapped.terminal).toMatchObject({ error: "entity-archived" })
  })
})
