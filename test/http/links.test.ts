/**
 * POST /v1/links and GET /v1/links over real HTTP (gaps.md §3): the pipeline (grant scopes of
 * the ends, rights), GraphErrorBody refusals, search_log rows.
 */
import { Effect, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { tempDir, testConfig } from "../support/env.js"
import { captureLogs } from "../support/logs.js"
import { sqlOf } from "../support/run.js"
import { startServer, type TestServer } from "../support/server.js"
import { MAIL_ID, MAIL_REF, seedEntities, seedSourcesAndRules } from "../graph/link-fixtures.js"

const DEV_API = "p".repeat(40)

let server: TestServer
let cleanup: () => void
const logs = captureLogs()
const tokens = { feeder: "", reader: "" }
let ids: ReadonlyArray<string> = []

const req = async (method: string, path: string, opts: { token?: string; body?: unknown } = {}) => {
  const headers: Record<string, string> = {}
  if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`
  if (opts.body !== undefined) headers["content-type"] = "application/json"
  const res = await fetch(`${server.url}${path}`, { method, headers, ...(opts.body === undefined ? {} : { body: JSON.stringify(opts.body) }) })
  const text = await res.text()
  return { status: res.status, text, json: () => JSON.parse(text) as Record<string, unknown> }
}

const logRows = () =>
  server.run(Effect.flatMap(sqlOf("sales"), (sql) =>
    sql<{ operation: string; outcome: number; refs: string; grant_id: string }>`SELECT operation, outcome, refs, grant_id FROM search_log ORDER BY at, rowid`))
const linkCount = () => server.run(Effect.flatMap(sqlOf("sales"), (sql) => sql<{ n: number }>`SELECT count(*) AS n FROM link`)).then((r) => r[0]?.n)

beforeAll(async () => {
  const t = tempDir()
  cleanup = t.cleanup
  const base = testConfig(t.dir, { scopes: ["sales", "ops", "hr"].map((name) => ({ name, providers_allowed: [] })) })
  server = await startServer({ ...base, env: { ...base.env, devApiToken: Redacted.make(DEV_API) } }, { logs })
  ids = await server.run(Effect.gen(function*() {
    const ops = yield* OpsStore
    const store = yield* ScopeStore
    yield* store.create("sales")
    yield* store.create("ops")
    yield* ops.createGrant({ kind: "person", auth: "email", identity: "dev@example.com", scopes: ["sales", "ops"], rights: ["read", "propose", "decide"] })
    const feeder = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: ["sales", "ops"], rights: ["read", "propose"], label: "feeder" })
    const reader = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: ["sales"], rights: ["read"], label: "reader" })
    tokens.feeder = "token" in feeder ? feeder.token : ""
    tokens.reader = "token" in reader ? reader.token : ""
    yield* seedSourcesAndRules
    return yield* seedEntities([
      { name: "Vertrieb", type: "department", status: "active" },
      (x) => ({ name: "Nord", parent: x[0] ?? null }),
      { name: "Alt", status: "archived" }
    ])
  }))
})
afterAll(async () => {
  await server.close()
  cleanup()
})

const body = (over: Record<string, unknown> = {}) => ({
  scope: "sales", from_ref: MAIL_REF, to_ref: `entity/${ids[1]}`, type: "concerns", confidence: 0.8, reason: "the subject names the project", ...over
})

describe("POST /v1/links", () => {
  it("201 with the link, its path and the approval url; the same link again → 200 created: false", async () => {
    const r = await req("POST", "/v1/links", { token: tokens.feeder, body: body({ evidence: "subject" }) })
    expect(r.status).toBe(201)
    const out = r.json()
    expect(out).toMatchObject({
      created: true, status: "proposed",
      link: { id: "sales-l0001", origin: "proposed", confidence: 0.8, status: "proposed", evidence: "subject" },
      approval_url: "http://127.0.0.1:8787/approval/structure?scope=sales#sales-l0001"
    })
    expect((out.path as Array<{ name: string }>).map((p) => p.name)).toEqual(["Vertrieb", "Nord"])
    const again = await req("POST", "/v1/links", { token: DEV_API, body: body() })
    expect(again.status).toBe(200)
    expect(again.json()).toMatchObject({ created: false, status: "proposed", link: { id: "sales-l0001" } })
    expect(await linkCount()).toBe(1)
    const rows = (await logRows()).filter((l) => l.operation === "propose_link")
    expect(rows.map((l) => [l.outcome, JSON.parse(l.refs)])).toEqual([[201, ["link/sales-l0001"]], [200, ["link/sales-l0001"]]])
    expect(rows[0]?.grant_id).toBe("service:2")
  })

  it("an end in a scope outside the grant and one in a scope that does not exist → the same 403 body, nothing written", async () => {
    const outside = await req("POST", "/v1/links", { token: tokens.feeder, body: body({ to_ref: "entity/hr-e0001" }) })
    const missing = await req("POST", "/v1/links", { token: tokens.feeder, body: body({ to_ref: "entity/nowhere-e0001" }) })
    expect(outside.status).toBe(403)
    expect(outside.text).toBe(missing.text)
    expect(outside.json()).toMatchObject({ error: "scope-not-allowed", remedy: expect.any(String) })
  })

  it("an end of another scope of the grant → 422 scope-mismatch, GraphErrorBody, logged with both refs", async () => {
    const before = await linkCount()
    const r = await req("POST", "/v1/links", { token: tokens.feeder, body: body({ from_ref: "rule/ops-0001" }) })
    expect(r.status).toBe(422)
    expect(r.json()).toMatchObject({ error: "scope-mismatch", remedy: expect.stringMatching(/one scope/), next: [] })
    expect(await linkCount()).toBe(before)
    const last = (await logRows()).at(-1)
    expect(last).toMatchObject({ operation: "propose_link", outcome: 422 })
    expect(JSON.parse(last?.refs ?? "[]")).toEqual(["rule/ops-0001", `entity/${ids[1]}`])
  })

  it("unknown end 422, rejected rule 404, archived end 422 naming it archived, computed type 400", async () => {
    const unknown = await req("POST", "/v1/links", { token: tokens.feeder, body: body({ to_ref: "entity/sales-e0099" }) })
    expect(unknown.status).toBe(422)
    expect(unknown.json()).toMatchObject({ error: "reference-unknown", next: [{ tool: "entity_resolve" }] })
    const rejected = await req("POST", "/v1/links", { token: tokens.feeder, body: body({ from_ref: "rule/sales-0003" }) })
    expect(rejected.status).toBe(404)
    expect(rejected.json()).toMatchObject({ error: "not-found" })
    const archived = await req("POST", "/v1/links", { token: tokens.feeder, body: body({ to_ref: `entity/${ids[2]}` }) })
    expect(archived.status).toBe(422)
    expect(archived.json()).toMatchObject({ error: "reference-unknown", remedy: expect.stringMatching(/archived/) })
    const computed = await req("POST", "/v1/links", { token: tokens.feeder, body: body({ type: "attachment_of", from_ref: `attachment/${MAIL_ID}#1`, to_ref: MAIL_REF }) })
    expect(computed.status).toBe(400)
    expect(computed.json()).toMatchObject({ error: "validation-failed", issues: [{ path: "type" }] })
    expect(await linkCount()).toBe(1)
  })

  it("the schema: confidence and reason required, unknown keys and versioned refs refused (400 naming the paths)", async () => {
    const { confidence: _c, reason: _r, ...rest } = body()
    const r = await req("POST", "/v1/links", { token: tokens.feeder, body: { ...rest, extra: 1, from_ref: "rule/sales-0001@1" } })
    expect(r.status).toBe(400)
    const b = r.json() as { error: string; issues: Array<{ path: string }>; remedy: string }
    expect(b.error).toBe("validation-failed")
    expect(b.issues.map((i) => i.path).sort()).toEqual(["confidence", "extra", "from_ref", "reason"])
    expect((await req("POST", "/v1/links", { token: tokens.feeder, body: body({ confidence: 1.5 }) })).status).toBe(400)
    expect((await req("POST", "/v1/links", { token: tokens.feeder, body: body({ reason: "   " }) })).status).toBe(400)
    expect((await req("POST", "/v1/links", { token: tokens.feeder, body: body({ to_ref: MAIL_REF }) })).status).toBe(400)
  })

  it("a read-only grant → 403 channel-not-allowed", async () => {
    const r = await req("POST", "/v1/links", { token: tokens.reader, body: body() })
    expect(r.status).toBe(403)
    expect(r.json()).toMatchObject({ error: "channel-not-allowed" })
  })
})

describe("GET /v1/links", () => {
  it("the links of a source with computed ones (id null), logged as list_links", async () => {
    const r = await req("GET", `/v1/links?scope=sales&ref=${encodeURIComponent(MAIL_REF)}`, { token: tokens.reader })
    expect(r.status).toBe(200)
    const out = r.json() as { links: Array<{ id: string | null; type: string }>; total: number; page: number }
    expect(out.links.filter((l) => l.id === null).map((l) => l.type).sort())
      .toEqual(["attachment_of", "attachment_of", "replies_to", "sourced_from", "sourced_from"])
    expect(out.links.filter((l) => l.id !== null).map((l) => l.id)).toEqual(["sales-l0001"])
    const last = (await logRows()).at(-1)
    expect(last).toMatchObject({ operation: "list_links", outcome: 200 })
    expect(JSON.parse(last?.refs ?? "[]")).toEqual([MAIL_REF, "link/sales-l0001"])
  })

  it("grouped=true on an entity: everything about it (the proposed link does not count yet)", async () => {
    const r = await req("GET", `/v1/links?scope=sales&ref=entity/${ids[0]}&grouped=true`, { token: tokens.reader })
    expect(r.status).toBe(200)
    expect(r.json()).toMatchObject({ grouped: true, entity: { id: ids[0] }, groups: [], total: 0, subtree: 2 })
  })

  it("refusals: grouped on a source 400, a rejected rule 404, another scope 422, a bad page 400, a foreign scope 403", async () => {
    expect((await req("GET", `/v1/links?scope=sales&ref=${encodeURIComponent(MAIL_REF)}&grouped=true`, { token: tokens.reader })).status).toBe(400)
    const rejected = await req("GET", "/v1/links?scope=sales&ref=rule/sales-0003", { token: tokens.reader })
    expect(rejected.status).toBe(404)
    const unknown = await req("GET", "/v1/links?scope=sales&ref=rule/sales-0099", { token: tokens.reader })
    expect(rejected.text.replace("sales-0003", "sales-0099")).toBe(unknown.text)
    expect((await req("GET", "/v1/links?scope=sales&ref=rule/ops-0001", { token: tokens.feeder })).status).toBe(422)
    expect((await req("GET", "/v1/links?scope=sales&ref=rule/ops-0001", { token: tokens.reader })).status).toBe(403)
    expect((await req("GET", `/v1/links?scope=sales&ref=entity/${ids[0]}&page=0`, { token: tokens.reader })).status).toBe(400)
    expect((await req("GET", "/v1/links?scope=sales", { token: tokens.reader })).status).toBe(400)
  })
})

describe("openapi", () => {
  it("/openapi.json names the link and structure routes", async () => {
    const r = await req("GET", "/openapi.json")
    expect(r.status).toBe(200)
    const paths = Object.keys((r.json() as { paths: Record<string, unknown> }).paths)
    for (const p of ["/v1/links", "/v1/structure", "/v1/reviews", "/v1/entities/{id}/archive"]) expect(paths).toContain(p)
  })
})
