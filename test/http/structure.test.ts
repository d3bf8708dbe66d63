/**
 * GET /v1/structure, POST /v1/reviews and POST /v1/entities/:id/archive over real HTTP: reviews
 * and archives only on the approval channel (session + same origin + csrf in dev-token mode; a
 * service or a grant without decide → 403 in cloudflare-access mode), every refusal with nothing
 * written, search_log rows.
 */
import { Effect, Redacted } from "effect"
import { createLocalJWKSet, exportJWK, generateKeyPair, type JWK, SignJWT } from "jose"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { csrfToken } from "../../src/auth/csrf.js"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { tempDir, testConfig } from "../support/env.js"
import { captureLogs } from "../support/logs.js"
import { sqlOf } from "../support/run.js"
import { startServer, type TestServer } from "../support/server.js"
import { graphCounts, insertLinkRow, MAIL_REF, seedEntities, seedSourcesAndRules } from "../graph/link-fixtures.js"

const DEV_API = "p".repeat(40)
const APPROVAL = "a".repeat(40)
const SESSION = "s".repeat(40)
const ORIGIN = "http://127.0.0.1:8787"

let server: TestServer
let cleanup: () => void
const logs = captureLogs()
let ids: ReadonlyArray<string> = []
let link = ""
let cookie = ""
const csrf = csrfToken(SESSION, "dev@example.com")

const call = async (method: string, path: string, opts: { token?: string; body?: unknown; form?: Record<string, string>; headers?: Record<string, string> } = {}) => {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) }
  if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`
  let body: string | undefined
  if (opts.form !== undefined) {
    body = new URLSearchParams(opts.form).toString()
    headers["content-type"] = "application/x-www-form-urlencoded"
  } else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body)
    headers["content-type"] = "application/json"
  }
  const res = await fetch(`${server.url}${path}`, { method, headers, redirect: "manual", ...(body === undefined ? {} : { body }) })
  const text = await res.text()
  return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) as Record<string, unknown> }
}
const approved = { cookie: "", origin: ORIGIN, csrf }
const asPerson = (extra: Record<string, string> = {}) => ({ ...approved, cookie, ...extra })
const counts = () => server.run(graphCounts())
const logRows = () =>
  server.run(Effect.flatMap(sqlOf("sales"), (sql) =>
    sql<{ operation: string; outcome: number; refs: string; channel: string }>`SELECT operation, outcome, refs, channel FROM search_log ORDER BY at, rowid`))

beforeAll(async () => {
  const t = tempDir()
  cleanup = t.cleanup
  const base = testConfig(t.dir, { scopes: ["sales", "hr"].map((name) => ({ name, providers_allowed: [] })) })
  server = await startServer({
    ...base,
    env: { ...base.env, devApiToken: Redacted.make(DEV_API), devApprovalToken: Redacted.make(APPROVAL), sessionSecret: Redacted.make(SESSION) }
  }, { logs })
  ids = await server.run(Effect.gen(function*() {
    yield* Effect.flatMap(ScopeStore, (s) => s.create("sales"))
    yield* Effect.flatMap(OpsStore, (o) => o.createGrant({ kind: "person", auth: "email", identity: "dev@example.com", scopes: ["sales"], rights: ["read", "propose", "decide"] }))
    yield* seedSourcesAndRules
    return yield* seedEntities([
      { name: "Vertrieb", type: "department" }, // 0 pending create
      (x) => ({ name: "Nord", parent: x[0] ?? null }), // 1 pending create
      { name: "Einkauf", type: "department" } // 2 pending create
    ])
  }))
  link = await server.run(insertLinkRow("sales", { from_ref: MAIL_REF, to_ref: `entity/${ids[1]}`, type: "concerns", origin: "proposed", confidence: 0.7 }))
  const login = await call("POST", "/approval/login", { form: { token: APPROVAL }, headers: { origin: ORIGIN } })
  cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] ?? ""
})
afterAll(async () => {
  await server.close()
  cleanup()
})

describe("GET /v1/structure", () => {
  it("lists the pending entity versions and links, logged as list_structure", async () => {
    const r = await call("GET", "/v1/structure?scope=sales", { token: DEV_API })
    expect(r.status).toBe(200)
    const out = r.json() as { counts: unknown; pending: Array<{ ref: string; kind: string; id: string }>; approval_url: string; path: unknown; next: Array<{ tool: string; why: string }> }
    expect(out.counts).toEqual({ entities: 3, versions: 3, links: 1 })
    // the guidance of every graph answer (graph.md §8): the newest pending entity to look at
    const newest = out.pending.find((p) => p.kind === "entity")?.id ?? ""
    expect(out.path).toEqual([])
    expect(out.next).toEqual([{ tool: "entity_path", why: expect.stringContaining(newest) }])
    expect(out.pending.map((p) => p.ref).sort()).toEqual([...ids.map((id) => `entity/${id}@1`), `link/${link}`].sort())
    expect(out.approval_url).toBe(`${ORIGIN}/approval/structure?scope=sales`)
    expect((await logRows()).at(-1)).toMatchObject({ operation: "list_structure", outcome: 200, channel: "api" })
    expect((await call("GET", "/v1/structure?scope=hr", { token: DEV_API })).status).toBe(403)
    expect((await call("GET", "/v1/structure", { token: DEV_API })).status).toBe(400)
  })
})

describe("POST /v1/reviews", () => {
  it("not on the api channel: the api token is no approval credential (401), nothing written", async () => {
    const before = await counts()
    const r = await call("POST", "/v1/reviews", { token: DEV_API, body: { target: `entity/${ids[0]}@1`, verdict: "confirm" } })
    expect(r.status).toBe(401)
    expect(await counts()).toEqual(before)
  })

  it("without same origin or the csrf token → 403 csrf-failed, nothing written", async () => {
    const before = await counts()
    for (const headers of [{ cookie, csrf }, { cookie, csrf, origin: "http://evil.example" }, { cookie, origin: ORIGIN, csrf: "wrong" }, { cookie, origin: ORIGIN }]) {
      const r = await call("POST", "/v1/reviews", { body: { target: `entity/${ids[0]}@1`, verdict: "confirm" }, headers })
      expect(r.status).toBe(403)
      expect(r.json()).toMatchObject({ error: "csrf-failed" })
    }
    expect(await counts()).toEqual(before)
  })

  it("confirm: 200 with the review and the new current version; the review row names the person; logged", async () => {
    const r = await call("POST", "/v1/reviews", { body: { target: `entity/${ids[0]}@1`, verdict: "confirm" }, headers: asPerson() })
    expect(r.status).toBe(200)
    expect(r.json()).toMatchObject({
      current: `entity/${ids[0]}@2`, status: "active",
      review: { id: "sales-r0001", target: `entity/${ids[0]}@1`, verdict: "confirm", by: "person:1", new_version: 2 }
    })
    expect(r.text).not.toContain("dev@example.com")
    const rows = await server.run(Effect.flatMap(sqlOf("sales"), (sql) => sql`SELECT decided_by, decided_by_identity FROM review`))
    expect(rows).toEqual([{ decided_by: "person:1", decided_by_identity: "dev@example.com" }])
    const last = (await logRows()).at(-1)
    expect(last).toMatchObject({ operation: "review_structure", outcome: 200, channel: "approval" })
    expect(JSON.parse(last?.refs ?? "[]")).toEqual([`entity/${ids[0]}@1`, `entity/${ids[0]}@2`])
  })

  it("409 already-decided and version-outdated carry current; 400 reason-missing; 404 unknown; all logged, nothing written", async () => {
    const before = await counts()
    const again = await call("POST", "/v1/reviews", { body: { target: `entity/${ids[0]}@1`, verdict: "confirm" }, headers: asPerson() })
    expect(again.status).toBe(409)
    expect(again.json()).toMatchObject({ error: "already-decided", current: `entity/${ids[0]}@2`, remedy: expect.any(String) })
    const outdated = await call("POST", "/v1/reviews", { body: { target: `entity/${ids[1]}@2`, verdict: "confirm" }, headers: asPerson() })
    expect(outdated.status).toBe(409)
    expect(outdated.json()).toMatchObject({ error: "version-outdated", current: `entity/${ids[1]}@1` })
    const noReason = await call("POST", "/v1/reviews", { body: { target: `link/${link}`, verdict: "reject" }, headers: asPerson() })
    expect(noReason.status).toBe(400)
    expect(noReason.json()).toMatchObject({ error: "reason-missing" })
    expect((await call("POST", "/v1/reviews", { body: { target: "link/sales-l0099", verdict: "confirm" }, headers: asPerson() })).status).toBe(404)
    expect((await call("POST", "/v1/reviews", { body: { target: `entity/${ids[1]}@1`, verdict: "confirm", by: "x" }, headers: asPerson() })).status).toBe(400)
    expect(await counts()).toEqual(before)
    expect((await logRows()).slice(-3).map((l) => [l.operation, l.outcome])).toEqual([
      ["review_structure", 409], ["review_structure", 409], ["review_structure", 404]
    ])
  })

  it("a target in a scope outside the grant and in no scope → the same 403", async () => {
    const outside = await call("POST", "/v1/reviews", { body: { target: "entity/hr-e0001@1", verdict: "confirm" }, headers: asPerson() })
    const missing = await call("POST", "/v1/reviews", { body: { target: "entity/nowhere-e0001@1", verdict: "confirm" }, headers: asPerson() })
    expect(outside.status).toBe(403)
    expect(outside.text).toBe(missing.text)
  })

  it("a form post reviews and lands back on the structure page at the item", async () => {
    const r = await call("POST", "/v1/reviews", {
      form: { target: `link/${link}`, verdict: "reject", reason: "wrong project", csrf }, headers: { cookie, origin: ORIGIN }
    })
    expect(r.status).toBe(303)
    expect(r.headers.get("location")).toBe(`/approval/structure?scope=sales&done=structure-reject&target=${encodeURIComponent(`link/${link}`)}#${link}`)
    const rows = await server.run(Effect.flatMap(sqlOf("sales"), (sql) => sql`SELECT verdict, reason FROM review WHERE target = ${`link/${link}`}`))
    expect(rows).toEqual([{ verdict: "reject", reason: "wrong project" }])
  })
})

describe("POST /v1/entities/:id/archive", () => {
  it("has-children 409 naming the child, then bottom-up; version-outdated; form post; logged", async () => {
    const before = await counts()
    const parent = await call("POST", `/v1/entities/${ids[0]}/archive`, { body: { version: 2 }, headers: asPerson() })
    expect(parent.status).toBe(409)
    expect(parent.json()).toMatchObject({ error: "has-children", remedy: expect.stringContaining(ids[1] ?? "") })
    const outdated = await call("POST", `/v1/entities/${ids[1]}/archive`, { body: { version: 3 }, headers: asPerson() })
    expect(outdated.status).toBe(409)
    expect(outdated.json()).toMatchObject({ error: "version-outdated", current: `entity/${ids[1]}@1` })
    expect(await counts()).toEqual(before)
    const child = await call("POST", `/v1/entities/${ids[1]}/archive`, { body: { version: 1, reason: "project closed" }, headers: asPerson() })
    expect(child.status).toBe(200)
    expect(child.json()).toMatchObject({ archived: true, id: ids[1], version: 2, current: `entity/${ids[1]}@2` })
    const form = await call("POST", `/v1/entities/${ids[0]}/archive`, { form: { version: "2", csrf }, headers: { cookie, origin: ORIGIN } })
    expect(form.status).toBe(303)
    expect(form.headers.get("location")).toBe(`/approval/structure?scope=sales&done=archive&target=${encodeURIComponent(`entity/${ids[0]}@3`)}#${ids[0]}`)
    expect((await logRows()).slice(-4).map((l) => [l.operation, l.outcome])).toEqual([
      ["archive_entity", 409], ["archive_entity", 409], ["archive_entity", 200], ["archive_entity", 200]
    ])
  })

  it("the api token, a missing csrf, a malformed id", async () => {
    expect((await call("POST", `/v1/entities/${ids[2]}/archive`, { token: DEV_API, body: { version: 1 } })).status).toBe(401)
    expect((await call("POST", `/v1/entities/${ids[2]}/archive`, { body: { version: 1 }, headers: { cookie, origin: ORIGIN } })).status).toBe(403)
    expect((await call("POST", "/v1/entities/x/archive", { body: { version: 1 }, headers: asPerson() })).status).toBe(404)
    expect((await call("POST", `/v1/entities/${ids[2]}/archive`, { body: {}, headers: asPerson() })).status).toBe(400)
  })
})

describe("cloudflare-access mode: only a person with decide on the approval audience", () => {
  const TEAM = "https://acme.cloudflareaccess.com"
  const URL_ = "https://groundnote.acme.example"
  let access: TestServer
  let done: () => void
  let sign: (claims: Record<string, unknown>, aud: string) => Promise<string>
  let entity = ""

  beforeAll(async () => {
    const t = tempDir()
    done = t.cleanup
    const c = testConfig(t.dir, { public_url: URL_, access: { team_domain: TEAM, aud_mcp: "aud-mcp", aud_approval: "aud-approval", aud_api: "aud-api" } })
    const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true })
    const jwk: JWK = { ...(await exportJWK(publicKey)), kid: "k1", alg: "RS256" }
    sign = (claims, aud) => new SignJWT(claims).setProtectedHeader({ alg: "RS256", kid: "k1" })
      .setIssuer(TEAM).setAudience(aud).setIssuedAt().setExpirationTime("5m").sign(privateKey)
    access = await startServer(
      { ...c, env: { ...c.env, authMode: "cloudflare-access", devMcpToken: null, devApprovalToken: null, devEmail: null } },
      { keys: createLocalJWKSet({ keys: [jwk] }) }
    )
    entity = (await access.run(Effect.gen(function*() {
      const ops = yield* OpsStore
      yield* Effect.flatMap(ScopeStore, (s) => s.create("sales"))
      yield* ops.createGrant({ kind: "person", auth: "email", identity: "anna@acme.example", scopes: ["sales"], rights: ["read", "propose", "decide"] })
      yield* ops.createGrant({ kind: "person", auth: "email", identity: "ben@acme.example", scopes: ["sales"], rights: ["read", "propose"] })
      yield* ops.createGrant({ kind: "service", auth: "access-service", identity: "feeder.acme", scopes: ["sales"], rights: ["read", "propose"] })
      return yield* seedEntities([{ name: "Vertrieb" }])
    })))[0] ?? ""
  })
  afterAll(async () => {
    await access.close()
    done()
  })

  const post = async (path: string, jwt: string, body: unknown, who = "anna@acme.example") => {
    const r = await fetch(`${access.url}${path}`, {
      method: "POST",
      headers: { "cf-access-jwt-assertion": jwt, "content-type": "application/json", origin: URL_, csrf: csrfToken("s".repeat(40), who) },
      body: JSON.stringify(body)
    })
    return { status: r.status, json: await r.json() as Record<string, unknown> }
  }

  it("a service → 403 channel-not-allowed; the api audience → 401; a person without decide → 403; nothing written", async () => {
    const review = { target: `entity/${entity}@1`, verdict: "confirm" }
    const service = await post("/v1/reviews", await sign({ common_name: "feeder.acme" }, "aud-approval"), review)
    expect(service).toMatchObject({ status: 403, json: { error: "channel-not-allowed" } })
    expect((await post(`/v1/entities/${entity}/archive`, await sign({ common_name: "feeder.acme" }, "aud-approval"), { version: 1 })).status).toBe(403)
    expect((await post("/v1/reviews", await sign({ email: "anna@acme.example" }, "aud-api"), review)).status).toBe(401)
    const ben = await post("/v1/reviews", await sign({ email: "ben@acme.example" }, "aud-approval"), review, "ben@acme.example")
    expect(ben).toMatchObject({ status: 403, json: { error: "channel-not-allowed" } })
    expect(await access.run(graphCounts())).toMatchObject({ review: 0, entity_version: 1 })
    const anna = await post("/v1/reviews", await sign({ email: "anna@acme.example" }, "aud-approval"), review)
    expect(anna).toMatchObject({ status: 200, json: { status: "active", review: { by: "person:1" } } })
  })
})
