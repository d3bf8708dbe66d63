/**
 * The entity routes of gaps.md §3 over real HTTP on a loopback port: resolve, create, read,
 * tree, move, update; refusals as GraphErrorBody; scope refusals identical for existing and
 * missing scopes; created_by import on the api channel; one search_log row per call.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { tempDir, testConfig } from "../support/env.js"
import { captureLogs } from "../support/logs.js"
import { sqlOf } from "../support/run.js"
import { startServer, type TestServer } from "../support/server.js"

let server: TestServer
let cleanup: () => void
const logs = captureLogs()
const tokens = { feeder: "", reader: "", other: "" }

/** The parts of answers and GraphErrorBody these tests read. */
interface Item { readonly id: string; readonly name: string; readonly path: string; readonly tool: string }
interface Json {
  readonly [k: string]: unknown
  readonly error?: string
  readonly message?: string
  readonly remedy?: string
  readonly id: string
  readonly limit?: number
  readonly next: Array<Item>
  readonly path: Array<Item>
  readonly from_path: Array<Item>
  readonly issues: Array<Item>
  readonly nodes: Array<Item>
  readonly versions: Array<unknown>
  readonly candidates: Array<unknown>
  readonly paths: { readonly entity: Array<Item>; readonly target: Array<Item> }
}

const req = async (method: string, path: string, opts: { token?: string; body?: unknown; raw?: string } = {}) => {
  const headers: Record<string, string> = {}
  if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`
  let body: string | undefined
  if (opts.raw !== undefined) {
    body = opts.raw
    headers["content-type"] = "application/json"
  } else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body)
    headers["content-type"] = "application/json"
  }
  const res = await fetch(`${server.url}${path}`, { method, headers, ...(body === undefined ? {} : { body }) })
  const text = await res.text()
  return { status: res.status, text, json: JSON.parse(text) as Json }
}

const expectGraphEnvelope = (body: Json, code: string) => {
  expect(body.error).toBe(code)
  expect(typeof body.message).toBe("string")
  expect(typeof body.remedy).toBe("string")
  expect(body.remedy?.length ?? 0).toBeGreaterThan(0)
  expect(Array.isArray(body.next)).toBe(true)
  expect(body.next.length).toBeLessThanOrEqual(3)
}

const rows = <A extends object>(scope: string, q: string) => server.run(Effect.flatMap(sqlOf(scope), (sql) => sql.unsafe<A>(q)))

beforeAll(async () => {
  const t = tempDir()
  cleanup = t.cleanup
  const cfg = testConfig(t.dir, { scopes: ["sales", "ops", "hr"].map((name) => ({ name, providers_allowed: [] })) })
  server = await startServer(cfg, { logs })
  await server.run(Effect.gen(function*() {
    const ops = yield* OpsStore
    const store = yield* ScopeStore
    yield* store.create("sales")
    yield* store.create("ops")
    yield* store.create("hr")
    const feeder = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: ["sales", "ops"], rights: ["read", "propose"], label: "feeder" })
    const reader = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: ["sales"], rights: ["read"], label: "reader" })
    const other = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: ["hr"], rights: ["read", "propose"], label: "other" })
    tokens.feeder = "token" in feeder ? feeder.token : ""
    tokens.reader = "token" in reader ? reader.token : ""
    tokens.other = "token" in other ? other.token : ""
  }))
  // hr has an entity, so that "exists" and "missing" differ in fact
  const hr = await req("POST", "/v1/entities", { token: tokens.other, body: { scope: "hr", type: "department", name: "Personal", parent_id: null } })
  expect(hr.status).toBe(201)
})
afterAll(async () => {
  await server.close()
  cleanup()
})

const post = (path: string, body: unknown, token = tokens.feeder) => req("POST", path, { token, body })
const get = (path: string, token = tokens.feeder) => req("GET", path, { token })

describe("create, resolve, read", () => {
  it("POST /v1/entities → 201 with EntityOut, path and next; created_by import; logged", async () => {
    const root = await post("/v1/entities", { scope: "sales", type: "organisation", name: "Acme GmbH", parent_id: null, aliases: ["ACME"] })
    expect(root.status).toBe(201)
    expect(root.json).toMatchObject({
      created: true, ref: "entity/sales-e0001", id: "sales-e0001", scope: "sales", status: "unconfirmed", pending: true,
      approval_url: "http://127.0.0.1:8787/approval/structure?scope=sales#sales-e0001",
      path: [{ id: "sales-e0001", name: "Acme GmbH", type: "organisation" }],
      next: [{ tool: "link_propose" }, { tool: "entity_tree" }]
    })
    const child = await post("/v1/entities", { scope: "sales", type: "department", name: "Vertrieb Nord", parent_id: "sales-e0001", evidence: "mail:<x@y>" })
    expect(child.status).toBe(201)
    expect(child.json.path.map((p) => p.name)).toEqual(["Acme GmbH", "Vertrieb Nord"])
    expect(await rows("sales", "SELECT id, created_by FROM entity ORDER BY seq")).toEqual([
      { id: "sales-e0001", created_by: "import" }, { id: "sales-e0002", created_by: "import" }
    ])
    const log = await rows<{ operation: string; outcome: number; refs: string }>("sales", "SELECT operation, outcome, refs FROM search_log WHERE operation = 'create_entity' ORDER BY at")
    expect(log.map((l) => [l.operation, l.outcome, JSON.parse(l.refs)])).toEqual([
      ["create_entity", 201, ["entity/sales-e0001"]], ["create_entity", 201, ["entity/sales-e0002"]]
    ])
  })

  it("refusals are GraphErrorBody with their status; nothing stored", async () => {
    const before = await rows("sales", "SELECT count(*) AS n FROM entity_version")
    const dup = await post("/v1/entities", { scope: "sales", type: "department", name: "Vetrieb Nord", parent_id: null })
    expect(dup.status).toBe(409)
    expectGraphEnvelope(dup.json, "duplicate-candidate")
    expect(dup.json.candidates[0]).toMatchObject({ id: "sales-e0002", match: "typo", path: ["Acme GmbH", "Vertrieb Nord"] })
    const noReason = await post("/v1/entities", { scope: "sales", type: "department", name: "Vetrieb Nord", parent_id: null, force: true })
    expect(noReason.status).toBe(400)
    expectGraphEnvelope(noReason.json, "reason-missing")
    const type = await post("/v1/entities", { scope: "sales", type: "planet", name: "Mars", parent_id: null })
    expect(type.status).toBe(400)
    expectGraphEnvelope(type.json, "validation-failed")
    // ops is in the feeder's grant: a parent there is scope-mismatch (one outside the grant is 403, below)
    const mismatch = await post("/v1/entities", { scope: "sales", type: "department", name: "X", parent_id: "ops-e0001" })
    expect(mismatch.status).toBe(422)
    expectGraphEnvelope(mismatch.json, "scope-mismatch")
    const unknown = await post("/v1/entities", { scope: "sales", type: "department", name: "X", parent_id: "sales-e0077" })
    expect(unknown.status).toBe(422)
    expectGraphEnvelope(unknown.json, "reference-unknown")
    // schema refusals carry the envelope too: unknown key, missing parent_id, the NFKC bound (one ligature → 18 letters)
    const bad = await post("/v1/entities", { scope: "sales", type: "department", name: "X", extra: 1 })
    expect(bad.status).toBe(400)
    expectGraphEnvelope(bad.json, "validation-failed")
    expect(bad.json.issues.map((i) => i.path).sort()).toEqual(["extra", "parent_id"])
    const expanded = await post("/v1/entities", { scope: "sales", type: "department", parent_id: null, name: `${"a".repeat(185)} \uFDFA` })
    expect(expanded.status).toBe(400)
    expect(expanded.json.issues[0]?.path).toBe("name")
    const notJson = await req("POST", "/v1/entities", { token: tokens.feeder, raw: "{nope" })
    expect(notJson.status).toBe(400)
    expectGraphEnvelope(notJson.json, "validation-failed")
    expect(await rows("sales", "SELECT count(*) AS n FROM entity_version")).toEqual(before)
  })

  it("GET /v1/entities/resolve: candidates with paths and next; a key empty after normalization → 400", async () => {
    const r = await get(`/v1/entities/resolve?scope=sales&q=${encodeURIComponent("Vetrieb Nord")}`)
    expect(r.status).toBe(200)
    expect(r.json).toMatchObject({
      scope: "sales", candidates: [{ id: "sales-e0002", match: "typo", path: ["Acme GmbH", "Vertrieb Nord"] }],
      path: [{ name: "Acme GmbH" }, { name: "Vertrieb Nord" }], next: [{ tool: "entity_path" }, { tool: "entity_create" }]
    })
    const alias = await get("/v1/entities/resolve?scope=sales&q=acme&type=organisation")
    expect(alias.json.candidates[0]).toMatchObject({ id: "sales-e0001", match: "exact" })
    expect(alias.json.next.map((n) => n.tool)).toEqual(["entity_path", "link_propose"])
    const none = await get("/v1/entities/resolve?scope=sales&q=Buchhaltung")
    expect(none.json).toMatchObject({ candidates: [], path: [], next: [{ tool: "entity_tree" }, { tool: "entity_create" }] })
    const empty = await get(`/v1/entities/resolve?scope=sales&q=${encodeURIComponent("-- !")}`)
    expect(empty.status).toBe(400)
    expectGraphEnvelope(empty.json, "validation-failed")
  })

  it("GET /v1/entities/:id: EntityOut + path + versions; unknown, malformed and foreign ids give one 404 body", async () => {
    const r = await get("/v1/entities/sales-e0002")
    expect(r.status).toBe(200)
    expect(r.json).toMatchObject({ id: "sales-e0002", pending: true, path: [{ name: "Acme GmbH" }, { name: "Vertrieb Nord" }] })
    expect(r.json.versions).toEqual([expect.objectContaining({ version: 1, change: "create", channel: "api", evidence: "mail:<x@y>" })])
    const unknown = await get("/v1/entities/sales-e0099")
    expect(unknown.status).toBe(404)
    expectGraphEnvelope(unknown.json, "not-found")
    const malformed = await get("/v1/entities/sales-x1")
    const foreign = await get("/v1/entities/sales-e0001?scope=ops")
    expect(malformed.text).toBe(unknown.text)
    expect(foreign.text).toBe(unknown.text)
  })
})

describe("tree, move, update", () => {
  it("GET /v1/entities: the top level, a subtree with depth, depth above 3 refused", async () => {
    const top = await get("/v1/entities?scope=sales")
    expect(top.status).toBe(200)
    expect(top.json).toMatchObject({ parent: null, depth: 1, page: 1, total: 1, next_page: null, path: [] })
    expect(top.json.nodes).toEqual([expect.objectContaining({ id: "sales-e0001", children: 1, hidden_children: 1 })])
    expect(top.json.next).toEqual([{ tool: "entity_tree", why: expect.stringContaining("sales-e0001") }])
    const sub = await get("/v1/entities?scope=sales&parent=sales-e0001&depth=3&page=1")
    expect(sub.json.nodes.map((n) => n.id)).toEqual(["sales-e0002"])
    const deep = await get("/v1/entities?scope=sales&depth=4")
    expect(deep.status).toBe(422)
    expectGraphEnvelope(deep.json, "depth-limit")
    expect(deep.json.limit).toBe(3)
    const zero = await get("/v1/entities?scope=sales&depth=0")
    expect(zero.status).toBe(400)
  })

  it("POST /v1/entities/:id/move: moved, moved: false, cycle with both paths", async () => {
    const einkauf = await post("/v1/entities", { scope: "sales", type: "department", name: "Einkauf", parent_id: "sales-e0001" })
    const id = einkauf.json.id
    const moved = await post(`/v1/entities/${id}/move`, { scope: "sales", parent_id: "sales-e0002", reason: "reorganised" })
    expect(moved.status).toBe(200)
    expect(moved.json).toMatchObject({ moved: true, version: 2, parent_id: "sales-e0002" })
    expect(moved.json.from_path.map((p) => p.name)).toEqual(["Acme GmbH", "Einkauf"])
    expect(moved.json.path.map((p) => p.name)).toEqual(["Acme GmbH", "Vertrieb Nord", "Einkauf"])
    const same = await post(`/v1/entities/${id}/move`, { scope: "sales", parent_id: "sales-e0002" })
    expect(same.json).toMatchObject({ moved: false, version: 2 })
    const cycle = await post("/v1/entities/sales-e0002/move", { scope: "sales", parent_id: id })
    expect(cycle.status).toBe(409)
    expectGraphEnvelope(cycle.json, "cycle")
    expect(cycle.json.paths.entity.map((p) => p.id)).toEqual(["sales-e0001", "sales-e0002"])
    expect(cycle.json.paths.target.map((p) => p.id)).toEqual(["sales-e0001", "sales-e0002", id])
    // an id of another scope of the grant is the same 404 as an unknown one (outside the grant: 403, below)
    const foreign = await post("/v1/entities/ops-e0001/move", { scope: "sales", parent_id: null })
    expect(foreign.status).toBe(404)
    expectGraphEnvelope(foreign.json, "not-found")
  })

  it("POST /v1/entities/:id/update: renamed, updated: false, absent alias", async () => {
    const up = await post("/v1/entities/sales-e0002/update", { scope: "sales", name: "Vertrieb Nord-Ost", aliases_add: ["VNO"] })
    expect(up.status).toBe(200)
    expect(up.json).toMatchObject({ updated: true, name: "Vertrieb Nord-Ost", aliases: ["VNO"], version: 2 })
    const same = await post("/v1/entities/sales-e0002/update", { scope: "sales", aliases_add: ["VNO"] })
    expect(same.json).toMatchObject({ updated: false, version: 2, next: [] })
    const absent = await post("/v1/entities/sales-e0002/update", { scope: "sales", aliases_remove: ["nope"] })
    expect(absent.status).toBe(400)
    expectGraphEnvelope(absent.json, "validation-failed")
    const log = await rows<{ operation: string; outcome: number }>("sales", "SELECT operation, outcome FROM search_log WHERE operation = 'update_entity' ORDER BY at")
    expect(log.map((l) => l.outcome)).toEqual([200, 200, 400])
  })
})

describe("scope refusals use the graph envelope and never tell whether a scope exists", () => {
  it("a scope outside the grant and a scope that does not exist get byte-identical bodies", async () => {
    const pairs: Array<[string, string, unknown?]> = [
      ["GET", "/v1/entities?scope=hr"], ["GET", "/v1/entities?scope=nowhere"],
      ["GET", "/v1/entities/resolve?scope=hr&q=Personal"], ["GET", "/v1/entities/resolve?scope=nowhere&q=Personal"],
      ["GET", "/v1/entities/hr-e0001"], ["GET", "/v1/entities/nowhere-e0001"],
      ["POST", "/v1/entities", { scope: "hr", type: "department", name: "X", parent_id: null }],
      ["POST", "/v1/entities", { scope: "nowhere", type: "department", name: "X", parent_id: null }],
      ["POST", "/v1/entities/hr-e0001/move", { scope: "hr", parent_id: null }],
      ["POST", "/v1/entities/nowhere-e0001/move", { scope: "nowhere", parent_id: null }],
      // an id (or a parent) of a scope outside the grant, under a scope of the grant (§5.2 step 2)
      ["GET", "/v1/entities/hr-e0001?scope=sales"], ["GET", "/v1/entities/nowhere-e0001?scope=sales"],
      ["GET", "/v1/entities?scope=sales&parent=hr-e0001"], ["GET", "/v1/entities?scope=sales&parent=nowhere-e0001"],
      ["POST", "/v1/entities", { scope: "sales", type: "department", name: "X", parent_id: "hr-e0001" }],
      ["POST", "/v1/entities", { scope: "sales", type: "department", name: "X", parent_id: "nowhere-e0001" }],
      ["POST", "/v1/entities/hr-e0001/move", { scope: "sales", parent_id: null }],
      ["POST", "/v1/entities/sales-e0001/move", { scope: "sales", parent_id: "hr-e0001" }],
      ["POST", "/v1/entities/hr-e0001/update", { scope: "sales", name: "Y" }],
      ["POST", "/v1/entities/nowhere-e0001/update", { scope: "sales", name: "Y" }]
    ]
    const texts: Array<string> = []
    for (const [method, path, body] of pairs) {
      const r = await req(method, path, { token: tokens.feeder, ...(body === undefined ? {} : { body }) })
      expect(r.status).toBe(403)
      expectGraphEnvelope(r.json, "scope-not-allowed")
      expect(r.json.next).toEqual([{ tool: "list_scopes", why: expect.any(String) }])
      texts.push(r.text)
    }
    expect(new Set(texts).size).toBe(1)
  })

  it("a read-only grant creating → 403 channel-not-allowed in the envelope; no credential → 401 in the envelope", async () => {
    const r = await post("/v1/entities", { scope: "sales", type: "department", name: "X", parent_id: null }, tokens.reader)
    expect(r.status).toBe(403)
    expectGraphEnvelope(r.json, "channel-not-allowed")
    const anon = await req("GET", "/v1/entities?scope=sales")
    expect(anon.status).toBe(401)
    expectGraphEnvelope(anon.json, "unauthorized")
    // other routes keep the plain ErrorBody
    const plain = await get("/v1/proposals?scope=hr")
    expect(plain.status).toBe(403)
    expect(plain.json.remedy).toBeUndefined()
  })
})
