/** POST /v1/search and its feedback over real HTTP: the full response, search_log rows, feedback rules. */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { decide } from "../../src/decision/decide.js"
import { propose } from "../../src/domain/proposals.js"
import { storeSource } from "../../src/domain/sources.js"
import { createEntity } from "../../src/graph/entities.js"
import { proposeLink } from "../../src/graph/links.js"
import { applyReview } from "../../src/structure/review.js"
import { tempDir, testConfig } from "../support/env.js"
import { mailProposal, mailSource, manualProposal } from "../support/fixtures.js"
import { sqlOf } from "../support/run.js"
import { startServer, type TestServer } from "../support/server.js"

let server: TestServer
let cleanup: () => void
const tokens = { a: "", b: "" }
const entities = { parent: "", child: "" }

const post = async (path: string, token: string, body: unknown) => {
  const res = await fetch(`${server.url}${path}`, {
    method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body)
  })
  const text = await res.text()
  return { status: res.status, text, json: JSON.parse(text) as Record<string, unknown> }
}

beforeAll(async () => {
  const t = tempDir()
  cleanup = t.cleanup
  server = await startServer(testConfig(t.dir))
  await server.run(Effect.gen(function*() {
    const ops = yield* OpsStore
    const store = yield* ScopeStore
    yield* store.create("sales")
    yield* store.create("ops")
    const a = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: ["sales", "ops"], rights: ["read", "propose"] })
    const b = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: ["sales", "ops"], rights: ["read"] })
    tokens.a = "token" in a ? a.token : ""
    tokens.b = "token" in b ? b.token : ""
    yield* storeSource(mailSource(), a.id)
    const by = { grantId: a.id, channel: "api" as const }
    const person = { grantId: "person:9", identity: "p@example.com" }
    yield* propose(mailProposal(), by)
    yield* decide("sales-0001", { decision: "confirm", version: 1 }, person)
    yield* propose(manualProposal("Ops asks the carrier for the delivery time of pallets", { scope: "ops", keywords: ["Lieferzeit"], relations: [] }), by)
    yield* decide("ops-0001", { decision: "confirm", version: 1 }, person)
    // Vertrieb › Nord; sales-0001 concerns Nord (proposed, confirmed by a person)
    const parent = yield* createEntity({ scope: "sales", type: "department", name: "Vertrieb", parent_id: null }, by)
    const child = yield* createEntity({ scope: "sales", type: "department", name: "Nord", parent_id: parent.id }, by)
    entities.parent = parent.id
    entities.child = child.id
    const l = yield* proposeLink({ scope: "sales", from_ref: "rule/sales-0001", to_ref: `entity/${child.id}`, type: "concerns", confidence: 0.8, reason: "the mail names it" }, { grantId: a.id })
    yield* applyReview({ target: `link/${l.link.id ?? ""}`, verdict: "confirm" }, person)
  }))
})
afterAll(async () => {
  await server.close()
  cleanup()
})

describe("POST /v1/search", () => {
  it("answers the full SearchResponse and logs one row per scope with terms, variants, stages and the head refs", async () => {
    const r = await post("/v1/search", tokens.a, { scopes: ["sales", "ops"], cross_scope: true, text: "Lieferzeiten Hakenleiste" })
    expect(r.status).toBe(200)
    const body = r.json as { search_id: string; bundles: Array<{ head: { ref: string; found_via: Array<string> }; line: string }>; query: { terms: Array<string> } }
    // a version 7 UUID (ids.ts requestIdAt)
    expect(body.search_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(body.bundles.map((b) => b.head.ref)).toEqual(["rule/sales-0001@2", "rule/ops-0001@2"])
    expect(body.query.terms.length).toBeGreaterThan(0)
    for (const [scope, ref] of [["sales", "rule/sales-0001@2"], ["ops", "rule/ops-0001@2"]] as const) {
      const rows = await server.run(Effect.flatMap(sqlOf(scope), (sql) => sql<{ refs: string; terms: string; variants: string; stages: string; cross_scope: number; input_sha256: string }>`
        SELECT * FROM search_log WHERE id = ${body.search_id}`))
      expect(rows.length).toBe(1)
      expect(JSON.parse(rows[0]?.refs ?? "")).toEqual([ref])
      expect(JSON.parse(rows[0]?.stages ?? "{}")).toMatchObject({ b: { state: "off" } })
      expect(rows[0]?.cross_scope).toBe(1)
      expect(JSON.stringify(rows)).not.toContain("Lieferzeiten Hakenleiste")
    }
  })
  it("gives search ids in time order: search_log's rows sorted by id are in the order they were written", async () => {
    const ids: Array<string> = []
    for (const text of ["Lieferzeit", "Hakenleiste", "Paletten"]) {
      ids.push((await post("/v1/search", tokens.a, { scopes: ["sales"], text })).json.search_id as string)
      await new Promise((r) => setTimeout(r, 3))
    }
    expect([...ids].sort()).toEqual(ids)
    const rows = await server.run(Effect.flatMap(sqlOf("sales"), (sql) => sql<{ id: string }>`
      SELECT id FROM search_log WHERE id IN (${ids[0] ?? ""}, ${ids[1] ?? ""}, ${ids[2] ?? ""}) ORDER BY id`))
    expect(rows.map((r) => r.id)).toEqual(ids)
  })
  it("two scopes without cross_scope → 400; a text-less, term-less request → 400", async () => {
    expect((await post("/v1/search", tokens.a, { scopes: ["sales", "ops"], text: "x" })).json).toMatchObject({ error: "multiple-scopes-without-flag" })
    expect((await post("/v1/search", tokens.a, { scopes: ["sales"] })).json).toMatchObject({ error: "validation-failed" })
    expect((await post("/v1/search", tokens.a, { scopes: ["sales"], text: "x", entity: "ops-e0001" })).json).toMatchObject({ error: "validation-failed" })
  })
})

describe("POST /v1/search with entity", () => {
  it("keeps the heads linked to the entity or one of its ancestors, each with head.entities; an unknown entity of the scope finds nothing", async () => {
    // sales-0001 is linked to Nord (under Vertrieb): found under Nord, not under its parent Vertrieb
    const above = await post("/v1/search", tokens.a, { scopes: ["sales"], text: "Lieferzeit", entity: entities.parent })
    expect([above.status, above.json.bundles]).toEqual([200, []])
    const r = await post("/v1/search", tokens.a, { scopes: ["sales"], text: "Lieferzeit", entity: entities.child })
    expect(r.status).toBe(200)
    const body = r.json as { bundles: Array<{ head: { ref: string; entities: Array<{ ref: string; path: Array<{ name: string }> }> }; groups: Array<{ kind: string; entries: Array<{ title: string }> }>; line: string }> }
    expect(body.bundles.map((b) => b.head.ref)).toEqual(["rule/sales-0001@2"])
    expect(body.bundles[0]?.head.entities.map((e) => [e.ref, e.path.map((p) => p.name)])).toEqual([[`entity/${entities.child}`, ["Vertrieb", "Nord"]]])
    expect(body.bundles[0]?.groups.find((g) => g.kind === "entity")?.entries.map((e) => e.title)).toEqual(["Vertrieb › Nord"])
    expect(body.bundles[0]?.line).toContain(", 1 entity; ")
    const unknown = await post("/v1/search", tokens.a, { scopes: ["sales"], text: "Lieferzeit", entity: "sales-e0099" })
    expect([unknown.status, unknown.json.bundles, (unknown.json.abstained as { reason: string }).reason]).toEqual([200, [], "no-candidate"])
    const logged = await server.run(Effect.flatMap(sqlOf("sales"), (sql) => sql<{ refs: string; outcome: number }>`
      SELECT refs, outcome FROM search_log WHERE id = ${unknown.json.search_id as string}`))
    expect(logged).toEqual([{ refs: "[]", outcome: 200 }])
  })
})

describe("POST /v1/search/:search_id/feedback", () => {
  it("records one row per item for the searching grant; another grant or an unknown id gets the same 404", async () => {
    const s = await post("/v1/search", tokens.a, { scopes: ["sales"], text: "Lieferzeit" })
    const id = (s.json as { search_id: string }).search_id
    const ok = await post(`/v1/search/${id}/feedback`, tokens.a, { bundles: [{ ref: "rule/sales-0001@2", verdict: "relevant" }], missing: ["rule/sales-0009@1"] })
    expect([ok.status, ok.json]).toEqual([200, { recorded: 2 }])
    const rows = await server.run(Effect.flatMap(sqlOf("sales"), (sql) => sql<{ ref: string; verdict: string }>`SELECT ref, verdict FROM feedback WHERE search_id = ${id} ORDER BY id`))
    expect(rows).toEqual([{ ref: "rule/sales-0001@2", verdict: "relevant" }, { ref: "rule/sales-0009", verdict: "missing" }])
    const other = await post(`/v1/search/${id}/feedback`, tokens.b, { bundles: [{ ref: "rule/sales-0001@2", verdict: "irrelevant" }], missing: [] })
    const unknown = await post("/v1/search/00000000-0000-4000-8000-000000000000/feedback", tokens.a, { bundles: [{ ref: "rule/sales-0001@2", verdict: "irrelevant" }], missing: [] })
    expect(other.status).toBe(404)
    expect(other.text).toBe(unknown.text)
    const wrongScope = await post(`/v1/search/${id}/feedback`, tokens.a, { bundles: [{ ref: "rule/ops-0001@2", verdict: "relevant" }], missing: [] })
    expect(wrongScope.text).toBe(unknown.text)
  })
  it("an id that cannot be a search id is the same 404 as an unknown one, and logged like it in the scope of its refs (§5.2 step 6)", async () => {
    const notFound = () => server.run(Effect.flatMap(sqlOf("sales"), (sql) => sql<{ n: number }>`
      SELECT count(*) AS n FROM search_log WHERE operation = 'feedback' AND outcome = 404`))
    const before = (await notFound())[0]?.n ?? 0
    const body = { bundles: [{ ref: "rule/sales-0001@2", verdict: "irrelevant" }], missing: [] }
    const unknown = await post("/v1/search/00000000-0000-4000-8000-000000000000/feedback", tokens.a, body)
    const malformed = await post("/v1/search/not-a-uuid/feedback", tokens.a, body)
    expect(malformed.status).toBe(404)
    expect(malformed.text).toBe(unknown.text)
    expect((await notFound())[0]?.n).toBe(before + 2)
  })
})
