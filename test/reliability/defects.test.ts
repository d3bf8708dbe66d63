/**
 * The defects under bad input (docs/reliability.md), each reproduced over real HTTP on 127.0.0.1 (raw node:http, so every
 * byte and every dropped connection is seen): deep JSON nesting, lone surrogates, oversized
 * values echoed in error bodies, chunked bodies over the limit, malformed path parameters, and
 * the login's missing same-origin check.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { csrfToken } from "../../src/auth/csrf.js"
import { mailSource, manualProposal } from "../support/fixtures.js"
import { captureLogs } from "../support/logs.js"
import { connect } from "../mcp/support.js"
import { approvalLogin, type Fixture, isErrorBody, jsonOf, MCP_TOKEN, nested, ORIGIN, raw, type RawAnswer, SESSION_SECRET, startFixture } from "./support.js"

const logs = captureLogs()
let f: Fixture
let cookie = ""
const CSRF = csrfToken(SESSION_SECRET, "dev@example.com")

beforeAll(async () => {
  f = await startFixture({ logs })
  cookie = await approvalLogin(f.url)
}, 60_000)
afterAll(async () => {
  // nothing above was an unexpected failure of the service
  expect(logs.lines.filter((l) => l.message === "internal error" || l.level === "ERROR")).toEqual([])
  await f.close()
})

const bearer = () => ({ authorization: `Bearer ${f.feeder}` })
const approval = () => ({ cookie, origin: ORIGIN, csrf: CSRF })
const mcpHeaders = { authorization: `Bearer ${MCP_TOKEN}`, accept: "application/json, text/event-stream" }

/** Every JSON route with a body, with the credential it needs to get past step 1. */
const jsonRoutes = (): ReadonlyArray<{ readonly path: string; readonly headers: Record<string, string> }> => [
  { path: "/v1/sources", headers: bearer() },
  { path: "/v1/proposals", headers: bearer() },
  { path: "/v1/search", headers: bearer() },
  { path: "/v1/search/00000000-0000-4000-8000-000000000000/feedback", headers: bearer() },
  { path: `/v1/rules/${f.rule}/retract`, headers: bearer() },
  { path: "/v1/entities", headers: bearer() },
  { path: "/v1/entities/ent-0001/move", headers: bearer() },
  { path: "/v1/entities/ent-0001/update", headers: bearer() },
  { path: "/v1/links", headers: bearer() },
  { path: `/v1/rules/${f.rule}/decision`, headers: approval() },
  { path: "/v1/reviews", headers: approval() },
  { path: "/v1/entities/ent-0001/archive", headers: approval() },
  { path: "/mcp", headers: mcpHeaders }
]

const post = (path: string, headers: Record<string, string>, body: string | Buffer | { chunked: ReadonlyArray<Buffer | string> }) =>
  raw(f.url, { method: "POST", path, headers: { "content-type": "application/json", ...headers }, body })

const errorOf = (a: RawAnswer) => jsonOf(a) as { error: string; message?: string; issues?: Array<{ path: string; message: string }> }

describe("1. deep JSON nesting", () => {
  it("2,200 nested arrays or objects: 400 validation-failed on every JSON route, not 500", async () => {
    for (const { path, headers } of jsonRoutes()) {
      for (const body of [nested(2200), nested(2200, "object"), `{"scope":"sales","q":${nested(5000)}}`]) {
        const a = await post(path, headers, body)
        expect([path, a.status, errorOf(a).error]).toEqual([path, 400, "validation-failed"])
        expect(isErrorBody(a)).toBe(true)
        expect(errorOf(a).message).toMatch(/nested more than 64 levels/)
      }
    }
  })
  it("64 levels are still decoded (the limit refuses nothing shallower)", async () => {
    // an object holding 63 nested arrays: 64 levels, decoded (and refused by the schema, not the limit)
    const a = await post("/v1/search", bearer(), `{"scopes":["sales"],"terms":${nested(63)}}`)
    expect(a.status).toBe(400)
    expect(isErrorBody(a)).toBe(true)
    expect(errorOf(a).message).not.toMatch(/nested more than/)
    const b = await post("/v1/search", bearer(), `{"scopes":["sales"],"terms":${nested(64)}}`)
    expect(errorOf(b).message).toMatch(/nested more than 64 levels/)
    // brackets inside strings are not nesting
    const c = await post("/v1/search", bearer(), JSON.stringify({ scopes: ["sales"], text: `${"[".repeat(5000)}\\"{` }))
    expect(c.status).toBe(200)
  })
})

describe("3. error bodies quote at most ~100 characters of a value", () => {
  it("a 1 MB title and a 1 MB sender: a 400 body of a few KB", async () => {
    const big = "x".repeat(1024 * 1024)
    for (const source of [{ ...mailSource().source, title: big }, { ...mailSource().source, sender: big }, { ...mailSource().source, kind: big }]) {
      const a = await post("/v1/sources", bearer(), JSON.stringify({ ...mailSource(), source }))
      expect(a.status).toBe(400)
      expect(isErrorBody(a)).toBe(true)
      expect(a.bytes).toBeLessThan(4096)
      for (const issue of errorOf(a).issues ?? []) expect(issue.message.length).toBeLessThan(300)
    }
  })
  it("a 200 KB unknown key and a 200 KB search query: bodies of a few KB", async () => {
    const key = "k".repeat(200_000)
    for (const [path, body] of [
      ["/v1/search", { scopes: ["sales"], text: "q".repeat(200_000) }],
      ["/v1/search", { scopes: ["sales"], text: "x", [key]: 1 }],
      ["/v1/search", Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`unknown_key_${String(i)}`, i]))],
      ["/v1/proposals", { scope: "sales", statement: "s".repeat(200_000) }]
    ] as const) {
      const a = await post(path, bearer(), JSON.stringify(body))
      expect(a.status).toBe(400)
      expect(isErrorBody(a)).toBe(true)
      expect(a.bytes).toBeLessThan(4096)
    }
  })
})

describe("4. chunked bodies over the limit", () => {
  it("256 KiB + 1 chunked on every 256 KiB route: 413 payload-too-large with its JSON body", async () => {
    const chunk = Buffer.alloc(16 * 1024, 0x20)
    const over = [...Array.from({ length: 16 }, () => chunk), Buffer.from(" ")]
    for (const { path, headers } of jsonRoutes().filter((r) => r.path !== "/v1/sources")) {
      const a = await post(path, headers, { chunked: over })
      expect([path, a.status]).toEqual([path, 413])
      expect(isErrorBody(a)).toBe(true)
      expect(errorOf(a).error).toBe("payload-too-large")
    }
  })
  it("10 MiB + 1 chunked on /v1/sources: 413; exactly 256 KiB chunked elsewhere: read", async () => {
    const mib = Buffer.alloc(1024 * 1024, 0x20)
    const a = await post("/v1/sources", bearer(), { chunked: [...Array.from({ length: 10 }, () => mib), Buffer.from(" ")] })
    expect(a.status).toBe(413)
    expect(errorOf(a).error).toBe("payload-too-large")
    const body = JSON.stringify({ scopes: ["sales"], text: "Lieferzeit" })
    const exact = Buffer.concat([Buffer.from(body), Buffer.alloc(256 * 1024 - body.length, 0x20)])
    const b = await post("/v1/search", bearer(), { chunked: [exact] })
    expect(b.status).toBe(200)
  })
  it("without a credential, a chunked body over the limit is still answered (401 or 413), never dropped", async () => {
    const a = await post("/v1/search", {}, { chunked: [Buffer.alloc(300 * 1024, 0x20)] })
    expect([401, 413]).toContain(a.status)
    expect(isErrorBody(a)).toBe(true)
  })
})

describe("5. malformed path parameters", () => {
  const BAD = ["%ZZ", "%", "%FF%FE", "%ED%A0%80", "%C0%AE", "a".repeat(101), "%E0%A4%A", "%00", "..%2F..%2Fetc"]
  const templates = [
    (p: string) => ({ method: "GET", path: `/v1/rules/${p}` }),
    (p: string) => ({ method: "GET", path: `/v1/rules/${p}/versions` }),
    (p: string) => ({ method: "GET", path: `/v1/rules/${p}/provenance` }),
    (p: string) => ({ method: "GET", path: `/v1/sources/${p}?scope=sales` }),
    (p: string) => ({ method: "GET", path: `/v1/entities/${p}` }),
    (p: string) => ({ method: "GET", path: `/v1/export/${p}` }),
    (p: string) => ({ method: "POST", path: `/v1/rules/${p}/retract` }),
    (p: string) => ({ method: "POST", path: `/v1/search/${p}/feedback` }),
    (p: string) => ({ method: "POST", path: `/v1/entities/${p}/move` })
  ]
  it("every one answers a JSON ErrorBody with a content type (404 not-found or 400 validation-failed)", async () => {
    for (const bad of BAD) {
      for (const t of templates) {
        const { method, path } = t(bad)
        const a = await raw(f.url, { method, path, headers: bearer(), ...(method === "POST" ? { body: "{}" } : {}) })
        expect([path, String(a.headers["content-type"] ?? "")]).toEqual([path, expect.stringMatching(/^application\/json/)])
        expect([path, isErrorBody(a)]).toEqual([path, true])
        expect([path, [400, 401, 403, 404].includes(a.status)]).toEqual([path, true])
      }
    }
  })
  it("a path that cannot be decoded is 400 validation-failed anywhere (a page under /approval); one too long for any route 404", async () => {
    for (const [path, status] of [
      ["/v1/%ZZ", 400], ["/%", 400], ["/v1/rules/%ED%A0%80/x/y", 400], ["/mcp%C0%AE", 400], ["/approval/rules/%ZZ", 400],
      [`/v1/rules/${"a".repeat(101)}/x`, 404], [`/approval/rules/${"a".repeat(300)}`, 404]
    ] as const) {
      const a = await raw(f.url, { method: "GET", path, headers: bearer() })
      expect([path, a.status]).toEqual([path, status])
      if (path.startsWith("/approval")) expect(String(a.headers["content-type"])).toMatch(/^text\/html/)
      else expect([path, isErrorBody(a), errorOf(a).error]).toEqual([path, true, status === 400 ? "validation-failed" : "not-found"])
    }
  })
})

describe("2. lone surrogates are refused, naming the field; well-formed text is stored as sent", () => {
  const titled = (title: string, id: string) => {
    const s = mailSource({}, id)
    return JSON.stringify({ ...s, source: { ...s.source, title } })
  }
  it("a lone high or low surrogate in a value: 400 validation-failed naming it, the identical retry too, nothing stored", async () => {
    for (const [title, n] of [["Lieferzeit \ud800 Hakenleisten", 1], ["Lieferzeit \udc00", 2], ["end \ud83d", 3]] as const) {
      const body = titled(title, `mail:<surrogate-${String(n)}@example.com>`)
      expect(body).toMatch(/\\ud8|\\udc/) // JSON.stringify writes the lone surrogate as an escape
      for (const attempt of [1, 2]) {
        const a = await post("/v1/sources", bearer(), body)
        expect([attempt, a.status, errorOf(a).error]).toEqual([attempt, 400, "validation-failed"])
        expect(errorOf(a).issues?.[0]?.path).toBe("source.title")
        expect(errorOf(a).message).toMatch(/lone UTF-16 surrogate/)
      }
      const read = await raw(f.url, { method: "GET", path: `/v1/sources/${encodeURIComponent(`mail:<surrogate-${String(n)}@example.com>`)}?scope=sales`, headers: bearer() })
      expect(read.status).toBe(404)
    }
  })
  it("in a key, an array element and a search text: refused naming the path", async () => {
    const a = await post("/v1/search", bearer(), JSON.stringify({ scopes: ["sales"], terms: ["ok", "bad \udfff"] }))
    expect([a.status, errorOf(a).issues?.[0]?.path]).toEqual([400, "terms[1]"])
    const b = await post("/v1/search", bearer(), JSON.stringify({ scopes: ["sales"], text: "x", "k\ud800": 1 }))
    expect([b.status, errorOf(b).error]).toEqual([400, "validation-failed"])
    expect(errorOf(b).issues?.[0]?.message).toMatch(/^key contains a lone/)
  })
  it("a well-formed pair (an emoji) is stored as sent: 201, the identical retry 200 created: false", async () => {
    const body = titled("Lieferzeit \ud83d\ude9a Hakenleisten", "mail:<emoji@example.com>")
    const first = await post("/v1/sources", bearer(), body)
    expect(first.status).toBe(201)
    const second = await post("/v1/sources", bearer(), body)
    expect(second.status).toBe(200)
    expect(jsonOf(second)).toMatchObject({ created: false })
  })
  it("ill-formed UTF-8 bytes in a body: 400 validation-failed (never replaced by U+FFFD)", async () => {
    const body = Buffer.from(titled("Lieferzeit ", "mail:<bytes@example.com>"))
    const at = body.indexOf("Lieferzeit ") + "Lieferzeit ".length
    const bad = Buffer.concat([body.subarray(0, at), Buffer.from([0xed, 0xa0, 0x80]), body.subarray(at)])
    for (const attempt of [1, 2]) {
      const a = await post("/v1/sources", bearer(), bad)
      expect([attempt, a.status, errorOf(a).error, errorOf(a).issues?.[0]?.path]).toEqual([attempt, 400, "validation-failed", "(body)"])
    }
  })
})

describe("7. POST /approval/login needs the same origin", () => {
  const form = new URLSearchParams({ token: "a".repeat(40) }).toString()
  const login = (headers: Record<string, string>) =>
    raw(f.url, { method: "POST", path: "/approval/login", body: form, headers: { "content-type": "application/x-www-form-urlencoded", ...headers } })
  it("a foreign Origin with the right token: 403 csrf-failed as a page naming public_url, no cookie", async () => {
    for (const headers of [{ origin: "https://evil.example" }, { origin: "null" }, { "sec-fetch-site": "cross-site" }, {}, { origin: "http://127.0.0.1:8788" }]) {
      const a = await login(headers)
      expect([JSON.stringify(headers), a.status]).toEqual([JSON.stringify(headers), 403])
      expect(String(a.headers["content-type"])).toMatch(/^text\/html/)
      expect(a.text).toContain("403 csrf-failed")
      expect(a.text).toContain(ORIGIN)
      expect(a.headers["set-cookie"]).toBeUndefined()
    }
  })
  it("the same origin (Origin, or Sec-Fetch-Site: same-origin) with the right token: 303 and the session cookie", async () => {
    for (const headers of [{ origin: ORIGIN }, { "sec-fetch-site": "same-origin" }]) {
      const a = await login(headers)
      expect(a.status).toBe(303)
      expect(String(a.headers["set-cookie"])).toMatch(/^gn_session=/)
    }
  })
  it("a login form over 256 KiB: 413 payload-too-large (chunked too), not read to the end", async () => {
    const a = await raw(f.url, { method: "POST", path: "/approval/login", headers: { "content-type": "application/x-www-form-urlencoded", origin: ORIGIN }, body: { chunked: [Buffer.from("token="), Buffer.alloc(300 * 1024, 0x61)] } })
    expect(a.status).toBe(413)
    expect(errorOf(a).error).toBe("payload-too-large")
  })
})

describe("the same refusals through the official MCP client", () => {
  it("a lone surrogate in a tool argument: isError validation-failed; an argument 60 deep: refused by the schema, not internal; 100 deep: the door’s 400", async () => {
    const mcp = await connect(f.url, { authorization: `Bearer ${MCP_TOKEN}` })
    try {
      const lone = await mcp.call("propose_rule", { ...manualProposal("Lieferzeit \ud800 immer schriftlich bestätigen") })
      expect(lone.isError).toBe(true)
      expect(lone.structuredContent ?? JSON.parse((lone.content[0] as { text: string }).text)).toMatchObject({ error: "validation-failed" })
      const deep = await mcp.call("search_rules", { scopes: ["sales"], text: "x", terms: JSON.parse(nested(60)) as unknown })
      expect(deep.isError).toBe(true)
      expect(JSON.stringify(deep)).not.toMatch(/internal/)
      await expect(mcp.call("search_rules", { scopes: ["sales"], text: "x", terms: JSON.parse(nested(100)) as unknown })).rejects.toThrow(/nested more than 64 levels/)
    } finally {
      await mcp.close()
    }
  })
})
