/**
 * Read side (graph.md §6, §8, §12): the tree with pages of 50, levels node by node up to 200
 * nodes, children and hidden_children, the depth limit; the entity with path and versions; the
 * pending flag.
 */
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { ScopeStore } from "../../src/db/scope-store.js"
import { type GraphRefusal, graphErrorBody } from "../../src/graph/errors.js"
import { entityTree, pendingVersions, readEntity } from "../../src/graph/queries.js"
import { tempDir, testConfig } from "../support/env.js"
import { run, runFail, sqlOf, type Stores } from "../support/run.js"
import { create, MCP, move, personVersion, seedTree } from "./entity-helpers.js"

let cleanup: () => void
let config: ReturnType<typeof testConfig>

beforeEach(async () => {
  const t = tempDir()
  cleanup = t.cleanup
  config = testConfig(t.dir)
  await run(config, Effect.flatMap(ScopeStore, (s) => s.create("sales")))
})
afterEach(() => cleanup())

const sales = sqlOf("sales")
const ok = <A, E>(effect: Effect.Effect<A, E, Stores>) => run(config, effect)
const seed = (nodes: Parameters<typeof seedTree>[1]) => ok(Effect.flatMap(sales, (sql) => seedTree(sql, nodes)))
const tree = (parent: string | null, depth?: number, page?: number) =>
  Effect.flatMap(sales, (sql) => entityTree(sql, { scope: "sales", parent, depth, page }))

const pad = (n: number) => String(n).padStart(3, "0")

describe("tree", () => {
  it("the top level in pages of 50, ordered by name; archived entities left out", async () => {
    // names in reverse so that the order by name differs from the order of ids
    const nodes = Array.from({ length: 60 }, (_, i) => [`Node ${pad(59 - i)}`, null] as const)
    await seed([...nodes, ["Gone", null, "archived"]])
    const p1 = await ok(tree(null))
    expect(p1).toMatchObject({ scope: "sales", parent: null, depth: 1, page: 1, total: 60, next_page: 2, path: [], levels: [{ level: 1, count: 60 }] })
    expect(p1.nodes).toHaveLength(50)
    expect(p1.nodes[0]).toEqual({ id: "sales-e0060", name: "Node 000", type: "department", status: "unconfirmed", parent_id: null, level: 1, children: 0, hidden_children: 0 })
    expect(p1.nodes.map((n) => n.name)).toEqual([...p1.nodes.map((n) => n.name)].sort())
    expect(p1.next).toEqual([{ tool: "entity_tree", why: expect.stringContaining("page 2") }])
    const p2 = await ok(tree(null, 1, 2))
    expect(p2.nodes.map((n) => n.name)).toEqual(Array.from({ length: 10 }, (_, i) => `Node ${pad(50 + i)}`))
    expect(p2).toMatchObject({ next_page: null, next: [] })
    expect((await ok(tree(null, 1, 3))).nodes).toEqual([])
  })

  it("levels node by node: up to 50 children each; children and hidden_children per node", async () => {
    const nodes: Array<readonly [string, number | null]> = [["Root", null], ["A", 0], ["B", 0], ["C", 0]]
    for (let i = 0; i < 60; i++) nodes.push([`A ${pad(i)}`, 1])
    nodes.push(["B 1", 2], ["B 2", 2])
    nodes.push(["A 000 x", 4])
    await seed(nodes)
    const root = "sales-e0001"
    const t = await ok(tree(root, 2))
    expect(t.path).toEqual([{ id: root, name: "Root", type: "department" }])
    expect(t.levels).toEqual([{ level: 1, count: 3 }, { level: 2, count: 62 }])
    const level1 = t.nodes.filter((n) => n.level === 1)
    expect(level1.map((n) => [n.name, n.children, n.hidden_children])).toEqual([["A", 60, 10], ["B", 2, 0], ["C", 0, 0]])
    const level2 = t.nodes.filter((n) => n.level === 2)
    expect(level2).toHaveLength(52)
    // in order: A's first 50 by name, then B's
    expect(level2.slice(0, 50).every((n) => n.parent_id === "sales-e0002")).toBe(true)
    expect(level2.slice(50).map((n) => n.name)).toEqual(["B 1", "B 2"])
    // the last level shows none of its own children
    expect(level2.find((n) => n.name === "A 000")).toMatchObject({ children: 1, hidden_children: 1 })
    // next: the first node with hidden children
    expect(t.next).toEqual([{ tool: "entity_tree", why: expect.stringContaining("sales-e0002") }])
    // depth 3 adds the grandchild
    const deep = await ok(tree(root, 3))
    expect(deep.nodes.filter((n) => n.level === 3).map((n) => n.name)).toEqual(["A 000 x"])
    expect(deep.nodes.find((n) => n.name === "A 000")).toMatchObject({ hidden_children: 0 })
  })

  it("stops at 200 nodes", async () => {
    const nodes: Array<readonly [string, number | null]> = [["Root", null]]
    for (let k = 0; k < 5; k++) nodes.push([`K${k}`, 0])
    for (let k = 0; k < 5; k++) for (let i = 0; i < 50; i++) nodes.push([`K${k} ${pad(i)}`, 1 + k])
    await seed(nodes)
    const t = await ok(tree("sales-e0001", 3))
    expect(t.nodes).toHaveLength(200)
    expect(t.nodes.filter((n) => n.level === 2)).toHaveLength(195)
    expect(t.nodes.filter((n) => n.level === 1).map((n) => [n.name, n.hidden_children])).toEqual([
      ["K0", 0], ["K1", 0], ["K2", 0], ["K3", 5], ["K4", 50]
    ])
    expect(t.next[0]?.why).toContain("sales-e0005")
    // from the top level the root counts as a node too
    const top = await ok(tree(null, 2))
    expect(top.nodes).toHaveLength(6)
    expect(top.levels).toEqual([{ level: 1, count: 1 }, { level: 2, count: 5 }])
  })

  it("depth above 3 is refused with the remedy and limit 3; an unknown parent is the one 404", async () => {
    await seed([["Root", null]])
    const e = graphErrorBody((await runFail(config, tree("sales-e0001", 4))) as GraphRefusal)
    expect(e).toMatchObject({ error: "depth-limit", limit: 3 })
    expect(e.remedy).toContain("3")
    expect(e.next.length).toBeGreaterThan(0)
    expect(e.next.length).toBeLessThanOrEqual(3)
    const nf = graphErrorBody((await runFail(config, tree("sales-e0099"))) as GraphRefusal)
    expect(nf).toMatchObject({ error: "not-found", next: [{ tool: "entity_resolve" }] })
  })
})

describe("read entity and pending", () => {
  it("EntityOut, the full path, every version including moves with the parent's path", async () => {
    const a = await ok(create({ name: "Acme", type: "organisation" }))
    const b = await ok(create({ name: "Einkauf", parent_id: a.id }))
    const c = await ok(create({ name: "Nord", parent_id: a.id }, MCP))
    await ok(Effect.flatMap(sales, (sql) => personVersion(sql, c.id, "confirm")))
    await ok(move(c.id, b.id, { reason: "belongs to purchasing" }, MCP))
    const read = await ok(Effect.flatMap(sales, (sql) => readEntity(sql, c.id, config.file.public_url)))
    expect(read).toMatchObject({
      ref: `entity/${c.id}`, id: c.id, status: "active", parent_id: b.id, version: 3, pending: true, children: 0,
      approval_url: `http://127.0.0.1:8787/approval/structure?scope=sales#${c.id}`,
      path: [{ name: "Acme" }, { name: "Einkauf" }, { name: "Nord" }], next: []
    })
    expect(read.versions.map((v) => [v.version, v.change, v.status, v.parent_id, v.parent_path.map((p) => p.name), v.channel, v.reason])).toEqual([
      [1, "create", "unconfirmed", a.id, ["Acme"], "mcp", "created via mcp"],
      [2, "confirm", "active", a.id, ["Acme"], "approval", "checked by a person"],
      [3, "move", "active", b.id, ["Acme", "Einkauf"], "mcp", "belongs to purchasing"]
    ])
    const parent = await ok(Effect.flatMap(sales, (sql) => readEntity(sql, a.id, config.file.public_url)))
    expect(parent.children).toBe(1) // Einkauf; Nord moved below it
    const nf = graphErrorBody((await runFail(config, Effect.flatMap(sales, (sql) => readEntity(sql, "sales-e0042", "")))) as GraphRefusal)
    expect(nf.error).toBe("not-found")
  })

  it("pending: agent versions after the latest approval version without a review", async () => {
    const a = await ok(create({ name: "Acme" }, MCP))
    const pending = () => ok(Effect.flatMap(sales, (sql) => pendingVersions(sql, [a.id])))
    expect(await pending()).toEqual(new Map([[a.id, [1]]]))
    await ok(Effect.flatMap(sales, (sql) => personVersion(sql, a.id, "confirm")))
    expect(await pending()).toEqual(new Map())
    await ok(move(a.id, null))
    const b = await ok(create({ name: "Holding" }))
    await ok(move(a.id, b.id))
    expect(await pending()).toEqual(new Map([[a.id, [3]]]))
    // a review of that version (as src/structure writes it) ends pending
    await ok(Effect.flatMap(sales, (sql) => sql`INSERT INTO review (seq, id, target, verdict, decided_by, decided_by_identity, decided_at, reason, new_version)
      VALUES (1, 'sales-r0001', ${`entity/${a.id}@3`}, 'revert', 'person:1', 'p@example.com', '2026-03-12T10:00:00Z', 'no', NULL)`))
    expect(await pending()).toEqual(new Map())
    const out = await ok(Effect.flatMap(sales, (sql) => readEntity(sql, a.id, config.file.public_url)))
    expect(out).toMatchObject({ pending: false, approval_url: null })
  })
})
