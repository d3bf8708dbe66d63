/**
 * The scope-check pipeline over real HTTP on a loopback port (architecture.md §5.2, §5.3, §6).
 */
import { Effect, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { csrfToken } from "../../src/auth/csrf.js"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { storeSource } from "../../src/domain/sources.js"
import { tempDir, testConfig } from "../support/env.js"
import { mailProposal, mailSource } from "../support/fixtures.js"
import { captureLogs } from "../support/logs.js"
import { startServer, type TestServer } from "../support/server.js"
import { sqlOf } from "../support/run.js"

const DEV_API = "p".repeat(40)
const APPROVAL = "a".repeat(40)
const SESSION = "s".repeat(40)

let server: TestServer
let cleanup: () => void
const logs = captureLogs()
const tokens = { feeder: "", reader: "", other: "" }
/** the approval session's cookie (set by the login test, used by later describes too) */
let cookie = ""
const bodies: Array<string> = []

const req = async (method: string, path: string, opts: { token?: string; body?: unknown; headers?: Record<string, string>; raw?: string } = {}) => {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) }
  if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`
  let body: string | undefined
  if (opts.raw !== undefined) body = opts.raw
  else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body)
    headers["content-type"] = "application/json"
  }
  if (body !== undefined && body.length < 100_000) bodies.push(body)
  const res = await fetch(`${server.url}${path}`, { method, headers, ...(body === undefined ? {} : { body }), redirect: "manual" })
  const text = await res.text()
  return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) as Record<string, unknown> }
}

const logRows = (scope: string) =>
  server.run(Effect.flatMap(sqlOf(scope), (sql) => sql<{ id: string; operation: string; outcome: number; grant_id: string; refs: string; input_sha256: string | null }>`SELECT * FROM search_log ORDER BY at, rowid`))

beforeAll(async () => {
  const t = tempDir()
  cleanup = t.cleanup
  const base = testConfig(t.dir, { scopes: [{ name: "sales", providers_allowed: [] }, { name: "ops", providers_allowed: [] }, { name: "hr", providers_allowed: [] }] })
  const cfg = { ...base, env: { ...base.env, devApiToken: Redacted.make(DEV_API), devApprovalToken: Redacted.make(APPROVAL), sessionSecret: Redacted.make(SESSION) } }
  server = await startServer(cfg, { logs })
  await server.run(Effect.gen(function*() {
    const ops = yield* OpsStore
    const store = yield* ScopeStore
    yield* store.create("sales")
    yield* store.create("ops")
    // hr is configured but has no file: 503 scope-locked
    yield* ops.createGrant({ kind: "person", auth: "email", identity: "dev@example.com", scopes: ["sales", "ops", "hr"], rights: ["read", "propose", "decide"] })
    const feeder = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: ["sales", "ops"], rights: ["read", "propose"], label: "feeder" })
    const reader = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: ["sales"], rights: ["read"], label: "reader" })
    const other = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: ["ops"], rights: ["read", "propose"], label: "other" })
    tokens.feeder = "token" in feeder ? feeder.token : ""
    tokens.reader = "token" in reader ? reader.token : ""
    tokens.other = "token" in other ? other.token : ""
    yield* storeSource(mailSource(), feeder.id)
  }))
})
afterAll(async () => {
  await server.close()
  cleanup()
})

describe("step 1: credential → grant", () => {
  it("401 without a credential, with WWW-Authenticate on /v1", async () => {
    const r = await req("GET", "/v1/status")
    expect(r.status).toBe(401)
    expect(r.json()).toMatchObject({ error: "unauthorized" })
    expect(r.headers.get("www-authenticate")).toBe(`Bearer resource_metadata="http://127.0.0.1:8787/.well-known/oauth-protected-resource"`)
  })
  it("401 for an unknown bearer, a malformed header, and a JWT plus a bearer", async () => {
    expect((await req("GET", "/v1/status", { token: `gn_${"x".repeat(43)}` })).status).toBe(401)
    expect((await req("GET", "/v1/status", { headers: { authorization: "Basic abc" } })).status).toBe(401)
    expect((await req("GET", "/v1/status", { token: tokens.feeder, headers: { "cf-access-jwt-assertion": "a.b.c" } })).status).toBe(401)
  })
  it("the dev API token is the dev person; a service bearer is its service", async () => {
    expect((await req("GET", "/v1/status", { token: DEV_API })).json()).toMatchObject({ grant: { id: "person:1", kind: "person" } })
    expect((await req("GET", "/v1/status", { token: tokens.feeder })).json()).toMatchObject({ grant: { id: "service:2", kind: "service" } })
  })
  it("a service cannot use the approval channel: its bearer there is 403 channel-not-allowed", async () => {
    const r = await req("POST", "/v1/rules/sales-0001/decision", { token: tokens.feeder, body: { decision: "confirm", version: 1 } })
    expect(r.status).toBe(403)
    expect(r.json()).toMatchObject({ error: "channel-not-allowed" })
  })
})

describe("steps 2–5", () => {
  it("a scope outside the grant and a scope that does not exist get byte-identical 403 bodies", async () => {
    const outside = await req("GET", "/v1/proposals?scope=hr", { token: tokens.feeder })
    const missing = await req("GET", "/v1/proposals?scope=nowhere", { token: tokens.feeder })
    expect(outside.status).toBe(403)
    expect(outside.text).toBe(missing.text)
    expect(outside.json()).toMatchObject({ error: "scope-not-allowed" })
  })
  it("two scopes without cross_scope → 400 multiple-scopes-without-flag", async () => {
    const r = await req("POST", "/v1/proposals", { token: tokens.feeder, body: mailProposal({ supersedes: "ops-0001" }) })
    expect(r.status).toBe(400)
    expect(r.json()).toMatchObject({ error: "multiple-scopes-without-flag" })
  })
  it("the scope of an `after` id counts too: outside the grant 403 (the same body as a missing scope), another granted scope 400", async () => {
    for (const path of ["/v1/rules", "/v1/proposals"]) {
      const outside = await req("GET", `${path}?scope=sales&after=hr-0001`, { token: tokens.feeder })
      const missing = await req("GET", `${path}?scope=sales&after=nowhere-0001`, { token: tokens.feeder })
      expect(outside.status).toBe(403)
      expect(outside.json()).toMatchObject({ error: "scope-not-allowed" })
      expect(outside.text).toBe(missing.text)
      const other = await req("GET", `${path}?scope=sales&after=ops-0001`, { token: tokens.feeder })
      expect(other.status).toBe(400)
      expect(other.json()).toMatchObject({ error: "multiple-scopes-without-flag" })
      expect((await req("GET", `${path}?scope=sales&after=sales-0001`, { token: tokens.feeder })).status).toBe(200)
    }
  })
  it("a read-only grant proposing → 403 channel-not-allowed", async () => {
    const r = await req("POST", "/v1/proposals", { token: tokens.reader, body: mailProposal() })
    expect(r.status).toBe(403)
    expect(r.json()).toMatchObject({ error: "channel-not-allowed" })
  })
  it("bad input → 400 validation-failed naming the path, nothing stored", async () => {
    const r = await req("POST", "/v1/proposals", { token: tokens.feeder, body: { ...mailProposal(), extra: 1, statement: "short" } })
    expect(r.status).toBe(400)
    const body = r.json() as { error: string; issues: Array<{ path: string }> }
    expect(body.error).toBe("validation-failed")
    expect(body.issues.map((i) => i.path).sort()).toEqual(["extra", "statement"])
    expect((await req("POST", "/v1/proposals", { token: tokens.feeder, raw: "{not json", headers: { "content-type": "application/json" } })).json()).toMatchObject({ error: "validation-failed" })
  })
  it("a NUL character in statement, quote or speaker → 400 validation-failed, not a 500", async () => {
    const base = mailProposal()
    const cases = [
      { ...base, statement: "Ask\u0000 the supplier for the delivery time" },
      { ...base, source: { ...base.source, quote: "Vor\u0000 jeder Bestellung schwarzer Hakenleisten" } },
      { ...base, speaker: "Ma\u0000ria" }
    ]
    for (const body of cases) {
      const r = await req("POST", "/v1/proposals", { token: tokens.feeder, body })
      expect(r.status).toBe(400)
      expect(r.json()).toMatchObject({ error: "validation-failed" })
      expect(r.text).toContain("NUL")
    }
  })
  it("a configured scope without a file → 503 scope-locked", async () => {
    const r = await req("GET", "/v1/proposals?scope=hr", { token: DEV_API })
    expect(r.status).toBe(503)
    expect(r.json()).toMatchObject({ error: "scope-locked" })
  })
  it("bodies over 256 KiB → 413; /v1/sources takes up to 10 MiB", async () => {
    expect((await req("POST", "/v1/proposals", { token: tokens.feeder, raw: "x".repeat(256 * 1024 + 1), headers: { "content-type": "application/json" } })).status).toBe(413)
    const big = mailSource({ text: "Lieferzeit ".repeat(100_000) }, "mail:<big@example.com>")
    expect((await req("POST", "/v1/sources", { token: tokens.feeder, body: big })).status).toBe(201)
    expect((await req("POST", "/v1/sources", { token: tokens.feeder, raw: "x".repeat(10 * 1024 * 1024 + 1), headers: { "content-type": "application/json" } })).status).toBe(413)
  })
  it("a body over the limit without a credential is 401 with WWW-Authenticate (step 1 comes first), not 413", async () => {
    const r = await req("POST", "/v1/proposals", { raw: "x".repeat(300 * 1024), headers: { "content-type": "application/json" } })
    expect(r.status).toBe(401)
    expect(r.json()).toMatchObject({ error: "unauthorized" })
    expect(r.headers.get("www-authenticate")).toBe(`Bearer resource_metadata="http://127.0.0.1:8787/.well-known/oauth-protected-resource"`)
  })
  it("a query parameter on a route that takes none (body or path input) → 400 validation-failed naming it, nothing stored", async () => {
    const count = () => server.run(Effect.flatMap(sqlOf("sales"), (sql) => sql<{ n: number }>`SELECT count(*) AS n FROM source`))
    const before = await count()
    const stored = await req("POST", "/v1/sources?scope=ops", { token: tokens.feeder, body: mailSource({}, "mail:<query@example.com>") })
    expect(stored.status).toBe(400)
    expect(stored.json()).toMatchObject({ error: "validation-failed", issues: [{ path: "scope", message: "unknown query parameter (remove it)" }] })
    expect(await count()).toEqual(before)
    expect((await req("POST", "/v1/sources", { token: tokens.feeder, body: mailSource({}, "mail:<query@example.com>") })).status).toBe(201)
    const status = await req("GET", "/v1/status?scope=hr", { token: tokens.feeder })
    expect(status.status).toBe(400)
    expect(status.json()).toMatchObject({ error: "validation-failed", issues: [{ path: "scope" }] })
    expect((await req("GET", "/v1/status", { token: tokens.feeder })).status).toBe(200)
  })
})

describe("step 6: search_log", () => {
  it("one row per touched scope for 201 and 422, none for denials; the text is never stored", async () => {
    const before = (await logRows("sales")).length
    const created = await req("POST", "/v1/proposals", { token: tokens.feeder, body: mailProposal() })
    expect(created.status).toBe(201)
    const bad = await req("POST", "/v1/proposals", { token: tokens.feeder, body: mailProposal({ source: { kind: "mail", id: "mail:<order-rule@example.com>", quote: "this sentence is not in the mail at all", link: null } }) })
    expect(bad.status).toBe(422)
    expect(bad.json()).toMatchObject({ error: "quote-not-found" })
    await req("POST", "/v1/proposals", { token: tokens.reader, body: mailProposal() })
    await req("GET", "/v1/proposals?scope=nowhere", { token: tokens.feeder })
    const rows = (await logRows("sales")).slice(before)
    expect(rows.map((r) => [r.operation, r.outcome, r.grant_id])).toEqual([["propose", 201, "service:2"], ["propose", 422, "service:2"]])
    expect(JSON.parse(rows[0]?.refs ?? "[]")).toEqual([(created.json() as { ref: string }).ref])
    expect(rows[0]?.input_sha256).toMatch(/^[0-9a-f]{64}$/)
    const all = await server.run(Effect.flatMap(sqlOf("sales"), (sql) => sql<Record<string, unknown>>`SELECT * FROM search_log`))
    expect(JSON.stringify(all)).not.toContain("Vor jeder Bestellung")
  })
  it("store_source answers 201, then 200 created:false for the identical repeat, 409 for another grant", async () => {
    const src = mailSource({}, "mail:<repeat@example.com>")
    expect((await req("POST", "/v1/sources", { token: tokens.feeder, body: src })).status).toBe(201)
    const again = await req("POST", "/v1/sources", { token: tokens.feeder, body: src })
    expect([again.status, again.json()]).toEqual([200, { created: false, id: "mail:<repeat@example.com>" }])
    const other = await req("POST", "/v1/sources", { token: DEV_API, body: src })
    expect(other.status).toBe(409)
    expect(other.json()).toEqual({ error: "source-conflict", message: expect.any(String) })
  })
  it("GET /v1/sources/:id reads back the caller's own source; every other case is the same 404", async () => {
    const id = encodeURIComponent("mail:<repeat@example.com>")
    const own = await req("GET", `/v1/sources/${id}?scope=sales&include=text`, { token: tokens.feeder })
    expect(own.status).toBe(200)
    expect(own.json()).toMatchObject({ id: "mail:<repeat@example.com>", kind: "mail", scope: "sales" })
    const foreign = await req("GET", `/v1/sources/${id}?scope=sales`, { token: DEV_API })
    const unknown = await req("GET", `/v1/sources/${encodeURIComponent("mail:<nope@x>")}?scope=sales`, { token: tokens.feeder })
    const otherScope = await req("GET", `/v1/sources/${id}?scope=ops`, { token: tokens.feeder })
    expect(foreign.status).toBe(404)
    expect(foreign.text).toBe(unknown.text)
    expect(otherScope.text).toBe(unknown.text)
  })
  it("GET /v1/sources/:id leaves one search_log row (read_source) in the scope it names, for the 200 and for every 404", async () => {
    const id = "mail:<repeat@example.com>"
    const before = { sales: (await logRows("sales")).length, ops: (await logRows("ops")).length }
    expect((await req("GET", `/v1/sources/${encodeURIComponent(id)}?scope=sales`, { token: tokens.feeder })).status).toBe(200)
    expect((await req("GET", `/v1/sources/${encodeURIComponent(id)}?scope=sales`, { token: DEV_API })).status).toBe(404)
    expect((await req("GET", `/v1/sources/${encodeURIComponent("mail:<nope@x>")}?scope=sales`, { token: tokens.feeder })).status).toBe(404)
    expect((await req("GET", `/v1/sources/${encodeURIComponent(id)}?scope=ops`, { token: tokens.feeder })).status).toBe(404)
    // a denial of steps 1–4 (a reader lacks propose) goes to the process log only
    expect((await req("GET", `/v1/sources/${encodeURIComponent(id)}?scope=sales`, { token: tokens.reader })).status).toBe(403)
    const sales = (await logRows("sales")).slice(before.sales)
    const ops = (await logRows("ops")).slice(before.ops)
    expect(sales.map((r) => [r.operation, r.outcome, r.grant_id, JSON.parse(r.refs) as unknown])).toEqual([
      ["read_source", 200, "service:2", [`source/${id}`]],
      ["read_source", 404, "person:1", [`source/${id}`]],
      ["read_source", 404, "service:2", ["source/mail:<nope@x>"]]
    ])
    expect(ops.map((r) => [r.operation, r.outcome, r.grant_id, JSON.parse(r.refs) as unknown])).toEqual([["read_source", 404, "service:2", [`source/${id}`]]])
    for (const r of [...sales, ...ops]) expect(r.input_sha256).toBeNull()
  })
})

describe("approval session, CSRF and the decision route", () => {
  const csrf = csrfToken(SESSION, "dev@example.com")
  it("login with the dev approval token sets an HttpOnly SameSite=Strict session cookie", async () => {
    const wrong = await req("POST", "/approval/login", { raw: "token=wrong", headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" } })
    expect(wrong.status).toBe(401)
    const r = await req("POST", "/approval/login", { raw: `token=${APPROVAL}`, headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" } })
    expect(r.status).toBe(303)
    const set = r.headers.get("set-cookie") ?? ""
    expect(set).toMatch(/^gn_session=[^;]+; HttpOnly; SameSite=Strict; Path=\/; Max-Age=28800$/)
    cookie = set.split(";")[0] ?? ""
  })
  const decide = (body: unknown, headers: Record<string, string>) =>
    req("POST", "/v1/rules/sales-0001/decision", { body, headers: { cookie, ...headers } })

  it("a decision without Origin and Sec-Fetch-Site, with a foreign Origin, or with a wrong token → 403 csrf-failed, nothing written", async () => {
    const body = { decision: "confirm", version: 1 }
    const cases = [
      { csrf },
      { csrf, origin: "http://evil.example" },
      { csrf: "wrong", origin: "http://127.0.0.1:8787" },
      { origin: "http://127.0.0.1:8787" },
      { csrf, "sec-fetch-site": "cross-site" }
    ]
    for (const headers of cases) {
      const r = await decide(body, headers)
      expect(r.status).toBe(403)
      expect(r.json()).toMatchObject({ error: "csrf-failed" })
    }
    const versions = await server.run(Effect.flatMap(sqlOf("sales"), (sql) => sql<{ n: number }>`SELECT count(*) AS n FROM rule_version WHERE rule_id = 'sales-0001'`))
    expect(versions[0]?.n).toBe(1)
  })
  it("a confirm whose change supersedes a rule of a scope outside the grant → 403, of another granted scope → 400; nothing written", async () => {
    const headers = { csrf, origin: "http://127.0.0.1:8787" }
    const outside = await decide({ decision: "confirm", version: 1, change: { supersedes: "nowhere-0001" } }, headers)
    expect(outside.status).toBe(403)
    expect(outside.json()).toMatchObject({ error: "scope-not-allowed" })
    const other = await decide({ decision: "confirm", version: 1, change: { supersedes: "ops-0001" } }, headers)
    expect(other.status).toBe(400)
    expect(other.json()).toMatchObject({ error: "multiple-scopes-without-flag" })
    const versions = await server.run(Effect.flatMap(sqlOf("sales"), (sql) => sql<{ n: number }>`SELECT count(*) AS n FROM rule_version WHERE rule_id = 'sales-0001'`))
    expect(versions[0]?.n).toBe(1)
  })
  it("same origin (or Sec-Fetch-Site: same-origin) with the token decides; a 409 carries current", async () => {
    const ok = await decide({ decision: "confirm", version: 1 }, { csrf, "sec-fetch-site": "same-origin" })
    expect(ok.status).toBe(200)
    expect(ok.json()).toMatchObject({ current: "rule/sales-0001@2", decision: { kind: "confirm", decided_by: "person:1" } })
    const again = await decide({ decision: "confirm", version: 2 }, { csrf, origin: "http://127.0.0.1:8787" })
    expect(again.status).toBe(409)
    expect(again.json()).toMatchObject({ error: "already-decided", current: "rule/sales-0001@2" })
  })
  it("a form post decides and redirects to the approval page", async () => {
    const created = await req("POST", "/v1/proposals", { token: tokens.feeder, body: mailProposal({ statement: "A second rule from the same mail here" }) })
    const id = ((created.json() as { ref: string }).ref.match(/rule\/(.+)@/) ?? [])[1] ?? ""
    const r = await req("POST", `/v1/rules/${id}/decision`, {
      raw: new URLSearchParams({ decision: "reject", version: "1", reason: "duplicate", csrf }).toString(),
      headers: { cookie, origin: "http://127.0.0.1:8787", "content-type": "application/x-www-form-urlencoded" }
    })
    expect(r.status).toBe(303)
    expect(r.headers.get("location")).toBe(`/approval/rules/${id}?done=reject&v=2#outcome`)
    expect((await req("GET", `/v1/rules/${id}`, { token: DEV_API })).status).toBe(404)
    const rejected = await req("GET", "/v1/rejected?scope=sales", { headers: { cookie } })
    expect((rejected.json() as { rules: Array<{ rule_id: string }> }).rules.map((x) => x.rule_id)).toContain(id)
  })
  it("the export is a tar.gz for a person with decide on the approval channel", async () => {
    const r = await fetch(`${server.url}/v1/export/sales`, { headers: { cookie } })
    expect(r.status).toBe(200)
    expect(r.headers.get("content-type")).toBe("application/gzip")
    const bytes = new Uint8Array(await r.arrayBuffer())
    expect([bytes[0], bytes[1]]).toEqual([0x1f, 0x8b])
    expect((await req("GET", "/v1/export/sales", { token: DEV_API })).status).toBe(401)
  })
  it("a service's bearer on the approval channel is 403 channel-not-allowed (§4.4: services get 403); an unknown one 401", async () => {
    for (const [method, path] of [["GET", "/v1/export/sales"], ["GET", "/v1/rejected?scope=sales"], ["POST", "/v1/rules/sales-0001/decision"]] as const) {
      const r = await req(method, path, { token: tokens.feeder, ...(method === "POST" ? { body: { decision: "review", version: 2 } } : {}) })
      expect(r.status, path).toBe(403)
      expect(r.json(), path).toMatchObject({ error: "channel-not-allowed" })
      const unknown = await req(method, path, { token: `gn_${"x".repeat(43)}`, ...(method === "POST" ? { body: { decision: "review", version: 2 } } : {}) })
      expect(unknown.status, path).toBe(401)
    }
  })
  it("the export with ?recipient=age1… is age-encrypted to it (the Decrypter opens it to the tar.gz); a bad recipient is 400", async () => {
    const { Decrypter } = await import("age-encryption")
    const { makeKeyPair } = await import("../../src/keys/keypair.js")
    const pair = await Effect.runPromise(makeKeyPair)
    const r = await fetch(`${server.url}/v1/export/sales?recipient=${pair.recipient}`, { headers: { cookie } })
    expect(r.status).toBe(200)
    expect(r.headers.get("content-type")).toBe("application/octet-stream")
    expect(r.headers.get("content-disposition")).toMatch(/\.tar\.gz\.age"?$/)
    const sealed = new Uint8Array(await r.arrayBuffer())
    expect(Buffer.from(sealed.subarray(0, 22)).toString("latin1")).toBe("age-encryption.org/v1\n")
    const d = new Decrypter()
    d.addIdentity(pair.identity)
    const clear = await d.decrypt(sealed)
    expect([clear[0], clear[1]]).toEqual([0x1f, 0x8b])
    const bad = await fetch(`${server.url}/v1/export/sales?recipient=age1notakey`, { headers: { cookie } })
    expect(bad.status).toBe(400)
    expect(await bad.json()).toMatchObject({ error: "validation-failed" })
    const stray = await fetch(`${server.url}/v1/export/sales?other=1`, { headers: { cookie } })
    expect(stray.status).toBe(400)
  })
  it("logout needs the csrf token too", async () => {
    expect((await req("POST", "/approval/logout", { headers: { cookie, origin: "http://127.0.0.1:8787" } })).status).toBe(403)
    const r = await req("POST", "/approval/logout", { headers: { cookie, origin: "http://127.0.0.1:8787", csrf } })
    expect(r.status).toBe(303)
    expect(r.headers.get("set-cookie")).toMatch(/^gn_session=; .*Max-Age=0/)
  })
})

describe("reads", () => {
  it("rules: list, read, versions, provenance; rejected rules do not exist outside approval", async () => {
    const list = await req("GET", "/v1/rules?scope=sales&status=confirmed", { token: tokens.feeder })
    expect((list.json() as { rules: Array<{ ref: string }> }).rules.map((r) => r.ref)).toEqual(["rule/sales-0001@2"])
    expect((await req("GET", "/v1/rules?scope=sales&relation=product:hakenleiste%20SCHWARZ", { token: tokens.feeder })).json()).toMatchObject({ rules: [{ rule_id: "sales-0001" }] })
    expect((await req("GET", "/v1/rules/sales-0001", { token: tokens.feeder })).json()).toMatchObject({
      head: { ref: "rule/sales-0001@2", status: "confirmed", scope: "sales", source: { kind: "mail" } },
      groups: [{ kind: "source", count: 1 }, { kind: "attachment", count: 2 }],
      line: expect.stringMatching(/^Rule from 2026-03-12: .* — with 1 mail, 2 attachments \(1 unread\); last reviewed 0 days ago$/)
    })
    const versions = await req("GET", "/v1/rules/sales-0001/versions", { token: tokens.feeder })
    expect(versions.json()).toMatchObject({ current: "rule/sales-0001@2", decisions: [{ kind: "confirm" }] })
    expect(versions.text).not.toContain("dev@example.com")
    const prov = await req("GET", "/v1/rules/sales-0001/provenance", { token: tokens.feeder })
    expect(prov.json()).toMatchObject({ ref: "rule/sales-0001@2", source: { id: "mail:<order-rule@example.com>" }, segments: null })
    expect((await req("GET", "/v1/rules/sales-9999", { token: tokens.feeder })).status).toBe(404)
    expect((await req("GET", "/v1/rules/not-an-id", { token: tokens.feeder })).status).toBe(404)
  })
  it("a rule that exists only as a proposal: 404 that says to read it with include_proposals (a rejected one says nothing)", async () => {
    const created = await req("POST", "/v1/proposals", { token: tokens.feeder, body: mailProposal({ statement: "Proposals are read with include_proposals only" }) })
    const id = (created.json() as { ref: string }).ref.replace(/^rule\//, "").replace(/@\d+$/, "")
    const plain = await req("GET", `/v1/rules/${id}`, { token: tokens.feeder })
    expect(plain.status).toBe(404)
    expect(plain.json()).toEqual({ error: "not-found", message: `${id} is a proposal a person has not confirmed yet`, remedy: expect.stringContaining("include_proposals: true") })
    expect((await req("GET", `/v1/rules/${id}?include_proposals=true`, { token: tokens.feeder })).status).toBe(200)
  })
  it("/openapi.json and the protected-resource document need no credential", async () => {
    const api = await req("GET", "/openapi.json")
    expect(api.status).toBe(200)
    expect(Object.keys((api.json() as { paths: Record<string, unknown> }).paths)).toContain("/v1/proposals")
    expect((await req("GET", "/.well-known/oauth-protected-resource")).json()).toEqual({ resource: "http://127.0.0.1:8787/mcp", authorization_servers: [] })
  })
})

describe("limits", () => {
  it("the 61st request of a grant within a minute → 429 with Retry-After in whole seconds", async () => {
    // the bucket holds 60 and refills one a second: a slow machine may earn a refill per elapsed second
    const started = performance.now()
    let last = await req("GET", "/v1/status", { token: tokens.other })
    let n = 1
    while (last.status === 200 && n < 200) {
      last = await req("GET", "/v1/status", { token: tokens.other })
      n += 1
    }
    const refills = Math.floor((performance.now() - started) / 1000)
    expect(n).toBeGreaterThanOrEqual(61)
    expect(n).toBeLessThanOrEqual(61 + refills)
    expect(last.status).toBe(429)
    expect(last.json()).toMatchObject({ error: "rate-limited" })
    expect(last.headers.get("retry-after")).toMatch(/^[1-9]\d*$/)
  })
})

describe("login attempts", () => {
  it("are limited per client address: at most 5 a minute, then 429 with Retry-After", async () => {
    const statuses: Array<number> = []
    for (let i = 0; i < 7; i++) {
      const r = await req("POST", "/approval/login", { raw: "token=wrong", headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" } })
      statuses.push(r.status)
      if (r.status === 429) {
        expect(r.headers.get("retry-after")).toMatch(/^[1-9]\d*$/)
        break
      }
    }
    // two attempts were made by the session tests above from the same address
    expect(statuses).toEqual([401, 401, 401, 429])
  })
})

describe("the process log", () => {
  it("contains no token, cookie, JWT or request body", () => {
    const text = logs.lines.map((l) => JSON.stringify(l)).join("\n")
    expect(logs.lines.length).toBeGreaterThan(5)
    for (const secret of [tokens.feeder, tokens.reader, tokens.other, DEV_API, APPROVAL, SESSION]) {
      expect(secret?.length ?? 0).toBeGreaterThan(30)
      expect(text).not.toContain(secret)
    }
    expect(text).not.toContain("gn_session=")
    for (const body of bodies) if (body.length > 40) expect(text).not.toContain(body)
    expect(text).not.toContain("Vor jeder Bestellung")
  })
})

