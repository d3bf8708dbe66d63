/**
 * The grant limits of architecture.md §3 on the real routes, over real HTTP: GET /v1/rejected
 * counts as a request like every /v1 route, decisions and exports have their own buckets, and on
 * /mcp every JSON-RPC message of a batch counts as one request. Each test runs its own server, so
 * every bucket starts full.
 */
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { csrfToken } from "../../src/auth/csrf.js"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { tempDir, testConfig } from "../support/env.js"
import { startServer, type TestServer } from "../support/server.js"

const MCP = "m".repeat(40)
const APPROVAL = "a".repeat(40)
const ORIGIN = "http://127.0.0.1:8787"

let server: TestServer | undefined
let cleanup: (() => void) | undefined
afterEach(async () => {
  await server?.close()
  cleanup?.()
  server = undefined
})

const start = async (limits: Record<string, number>) => {
  const t = tempDir("gn-route-limits-")
  cleanup = t.cleanup
  const s = await startServer(testConfig(t.dir, { limits }))
  server = s
  await s.run(Effect.gen(function*() {
    yield* (yield* ScopeStore).create("sales")
    yield* (yield* OpsStore).createGrant({ kind: "person", auth: "email", identity: "dev@example.com", scopes: ["sales"], rights: ["read", "propose", "decide"] })
  }))
  return s
}

const login = async (s: TestServer): Promise<string> => {
  const r = await fetch(`${s.url}/approval/login`, {
    method: "POST", redirect: "manual", body: `token=${APPROVAL}`,
    headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" }
  })
  const cookie = (r.headers.get("set-cookie") ?? "").split(";")[0] ?? ""
  expect(cookie).toMatch(/^gn_session=./)
  return cookie
}

const get = async (s: TestServer, path: string, headers: Record<string, string>) => {
  const r = await fetch(`${s.url}${path}`, { headers })
  const text = await r.text()
  return { status: r.status, retryAfter: r.headers.get("retry-after"), text }
}

/** Statuses of `n` calls in a row. */
const statuses = async (n: number, one: () => Promise<{ status: number }>) => {
  const out: Array<number> = []
  for (let i = 0; i < n; i++) out.push((await one()).status)
  return out
}

describe("GET /v1/rejected", () => {
  it("counts against requests_per_minute: the 4th of a limit of 3 is 429 rate-limited with Retry-After", async () => {
    const s = await start({ requests_per_minute: 3 })
    const cookie = await login(s)
    expect(await statuses(3, () => get(s, "/v1/rejected?scope=sales", { cookie }))).toEqual([200, 200, 200])
    const over = await get(s, "/v1/rejected?scope=sales", { cookie })
    expect(over.status).toBe(429)
    expect(JSON.parse(over.text)).toMatchObject({ error: "rate-limited" })
    expect(over.retryAfter).toMatch(/^[1-9]\d*$/)
    // the approval pages are not /v1: they stay unlimited
    expect((await get(s, "/approval/rejected?scope=sales", { cookie })).status).toBe(200)
  })
})

describe("POST /v1/rules/:id/decision", () => {
  it("counts against decisions_per_minute, not requests: the 4th of 3 is 429 with Retry-After 20 s", async () => {
    const s = await start({ decisions_per_minute: 3, requests_per_minute: 2 })
    const cookie = await login(s)
    const decide = () => fetch(`${s.url}/v1/rules/sales-0042/decision`, {
      method: "POST",
      headers: { cookie, origin: ORIGIN, csrf: csrfToken("s".repeat(40), "dev@example.com"), "content-type": "application/json" },
      body: JSON.stringify({ decision: "confirm", version: 1 })
    })
    // the rule does not exist: each decision is counted before its rule is looked up
    expect(await statuses(3, decide)).toEqual([404, 404, 404])
    const over = await decide()
    expect(over.status).toBe(429)
    expect(await over.json()).toMatchObject({ error: "rate-limited", message: expect.stringContaining("3 per minute") })
    expect(over.headers.get("retry-after")).toBe("20")
    // the request bucket (2) is untouched by the decisions
    expect(await statuses(2, () => get(s, "/v1/rejected?scope=sales", { cookie }))).toEqual([200, 200])
  })
})

describe("GET /v1/export/:scope", () => {
  it("counts against exports_per_hour: the 3rd of 2 is 429 with Retry-After 1800 s", async () => {
    const s = await start({ exports_per_hour: 2 })
    const cookie = await login(s)
    expect(await statuses(2, () => get(s, "/v1/export/sales", { cookie }))).toEqual([200, 200])
    const over = await get(s, "/v1/export/sales", { cookie })
    expect(over.status).toBe(429)
    expect(JSON.parse(over.text)).toMatchObject({ error: "rate-limited", message: expect.stringContaining("2 per hour") })
    expect(over.retryAfter).toBe("1800")
    // exports do not use the request bucket
    expect((await get(s, "/v1/rejected?scope=sales", { cookie })).status).toBe(200)
  })
})

describe("POST /mcp with a JSON-RPC batch", () => {
  const post = (s: TestServer, body: unknown) =>
    fetch(`${s.url}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${MCP}`, "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" },
      body: JSON.stringify(body)
    })
  const batch = (from: number, n: number) =>
    Array.from({ length: n }, (_, i) => ({ jsonrpc: "2.0", id: from + i, method: "tools/call", params: { name: "list_scopes", arguments: {} } }))

  it("counts every message: with a limit of 5, a batch of 3 runs, the next batch of 3 is 429 and none of it runs", async () => {
    const s = await start({ requests_per_minute: 5 })
    const first = await post(s, batch(1, 3))
    expect(first.status).toBe(200)
    const answers = (await first.json()) as Array<{ id: number; result?: { isError?: boolean } }>
    expect(answers.map((a) => a.id).sort()).toEqual([1, 2, 3])
    for (const a of answers) expect(a.result?.isError).toBeFalsy()
    const second = await post(s, batch(4, 3))
    expect(second.status).toBe(429)
    expect(second.headers.get("retry-after")).toMatch(/^[1-9]\d*$/)
    expect(await second.json()).toMatchObject({ error: "rate-limited", message: expect.stringContaining("this batch counts 3") })
    // the two requests left are still there: nothing of the refused batch was taken
    expect((await post(s, batch(7, 2))).status).toBe(200)
    expect((await post(s, batch(9, 1))).status).toBe(429)
  })

  it("a batch of 100 messages counts 100: over a limit of 60 it is refused at once and says it can never pass", async () => {
    const s = await start({ requests_per_minute: 60 })
    const r = await post(s, batch(1, 100))
    expect(r.status).toBe(429)
    expect(await r.json()).toMatchObject({ error: "rate-limited", message: expect.stringContaining("send at most 60 at once") })
    // a single message still passes: the refused batch took nothing
    expect((await post(s, batch(200, 1))).status).toBe(200)
  })
})
