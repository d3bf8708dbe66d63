/**
 * Approval sessions over real HTTP (architecture.md §5.3, dev-token mode): logout ends the
 * session, not only the browser's cookie. A copy of the cookie kept from before logout, with the
 * csrf token of its person, decides nothing afterwards (403 csrf-failed, nothing written) and
 * signs no page in, also after the service restarts on the same data dir; a fresh login works.
 */
import { existsSync } from "node:fs"
import { Effect, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { csrfToken } from "../../src/auth/csrf.js"
import { hmacBase64url } from "../../src/auth/tokens.js"
import { OPS_FILE, OpsStore } from "../../src/db/ops-store.js"
import { scopeFile, ScopeStore } from "../../src/db/scope-store.js"
import { propose } from "../../src/domain/proposals.js"
import { storeSource } from "../../src/domain/sources.js"
import { graphCounts, seedEntities } from "../graph/link-fixtures.js"
import { tempDir, testConfig } from "../support/env.js"
import { mailProposal, mailSource } from "../support/fixtures.js"
import { captureLogs } from "../support/logs.js"
import { counts, fileHash, sqlOf } from "../support/run.js"
import { startServer, type TestServer } from "../support/server.js"

const DEV_API = "p".repeat(40)
const APPROVAL = "a".repeat(40)
const SESSION = "s".repeat(40)
const ORIGIN = "http://127.0.0.1:8787"
const csrf = csrfToken(SESSION, "dev@example.com")

let server: TestServer
let dataDir = ""
let cleanup: () => void
let config: ReturnType<typeof testConfig>
const logs = captureLogs()
const rules: Array<string> = []
let entities: ReadonlyArray<string> = []
/** the cookie of the session that logout ends, kept as a copy */
let oldCookie = ""

const call = async (method: string, path: string, opts: { body?: unknown; form?: Record<string, string>; headers?: Record<string, string> } = {}) => {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) }
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

const login = async () => {
  const r = await call("POST", "/approval/login", { form: { token: APPROVAL }, headers: { origin: ORIGIN } })
  expect(r.status).toBe(303)
  return (r.headers.get("set-cookie") ?? "").split(";")[0] ?? ""
}

/** The files a write would change: both SQLite files and their WALs (the -shm index changes on reads). */
const fileHashes = () => {
  const out: Record<string, string> = {}
  for (const f of [scopeFile(dataDir, "sales"), `${dataDir}/${OPS_FILE}`]) {
    for (const file of [f, `${f}-wal`]) if (existsSync(file)) out[file] = fileHash(file)
  }
  return out
}

/** Everything a refused request must leave as it was (rows first: reading opens the files). */
const snapshot = async () => {
  const rows = {
    rules: await server.run(Effect.flatMap(sqlOf("sales"), counts)),
    graph: await server.run(graphCounts()),
    log: await server.run(Effect.flatMap(sqlOf("sales"), (sql) => sql<{ n: number }>`SELECT count(*) AS n FROM search_log`)),
    ended: await server.run(Effect.flatMap(OpsStore, (o) => o.sql<{ n: number }>`SELECT count(*) AS n FROM ended_session`))
  }
  return { ...rows, files: fileHashes() }
}

const ruleStatus = (id: string) =>
  server.run(Effect.flatMap(sqlOf("sales"), (sql) =>
    sql<{ status: string }>`SELECT status FROM rule_version WHERE rule_id = ${id} ORDER BY version DESC LIMIT 1`))

beforeAll(async () => {
  const t = tempDir()
  cleanup = t.cleanup
  dataDir = t.dir
  const base = testConfig(t.dir, { scopes: [{ name: "sales", providers_allowed: [] }] })
  config = { ...base, env: { ...base.env, devApiToken: Redacted.make(DEV_API), devApprovalToken: Redacted.make(APPROVAL), sessionSecret: Redacted.make(SESSION) } }
  server = await startServer(config, { logs })
  entities = await server.run(Effect.gen(function*() {
    yield* Effect.flatMap(ScopeStore, (s) => s.create("sales"))
    const ops = yield* OpsStore
    yield* ops.createGrant({ kind: "person", auth: "email", identity: "dev@example.com", scopes: ["sales"], rights: ["read", "propose", "decide"] })
    const feeder = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: ["sales"], rights: ["read", "propose"], label: "feeder" })
    yield* storeSource(mailSource(), feeder.id)
    const by = { grantId: feeder.id, channel: "api" as const }
    for (const statement of [
      "Ask the supplier for the delivery time before ordering black hook rails",
      "Always confirm the delivery time in writing before ordering",
      "Never order hook rails without a written delivery time"
    ]) {
      const created = yield* propose(mailProposal({ statement }), by)
      rules.push(created.ref.replace(/^rule\/|@\d+$/g, ""))
    }
    return yield* seedEntities([{ name: "Vertrieb", type: "department" }, { name: "Einkauf", type: "department" }])
  }))
})
afterAll(async () => {
  await server.close()
  cleanup()
})

describe("logout ends the approval session", () => {
  it("a signed-in person decides with the session's cookie and csrf token", async () => {
    oldCookie = await login()
    expect(oldCookie).toMatch(/^gn_session=[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/)
    const r = await call("POST", `/v1/rules/${rules[0]}/decision`, { body: { decision: "confirm", version: 1 }, headers: { cookie: oldCookie, origin: ORIGIN, csrf } })
    expect(r.status).toBe(200)
    expect(r.json()).toMatchObject({ current: `rule/${rules[0]}@2` })
    expect((await call("GET", "/approval", { headers: { cookie: oldCookie } })).status).toBe(200)
  })

  it("logout clears the cookie and records the session as ended in ops.sqlite", async () => {
    const r = await call("POST", "/approval/logout", { form: { csrf }, headers: { cookie: oldCookie, origin: ORIGIN } })
    expect(r.status).toBe(303)
    expect(r.headers.get("location")).toBe("/approval/login")
    expect(r.headers.get("set-cookie")).toMatch(/^gn_session=; .*Max-Age=0/)
    const payload = JSON.parse(Buffer.from(oldCookie.slice("gn_session=".length).split(".")[0] ?? "", "base64url").toString("utf8")) as { sid: string; exp: number }
    const rows = await server.run(Effect.flatMap(OpsStore, (o) => o.sql<{ sid: string; exp: number }>`SELECT sid, exp FROM ended_session`))
    expect(rows).toEqual([{ sid: payload.sid, exp: payload.exp }])
  })

  it("the kept cookie with its token: decision (JSON and form), review and archive (JSON and form), logout → 403 csrf-failed, nothing written", async () => {
    const before = await snapshot()
    const headers = { cookie: oldCookie, origin: ORIGIN, csrf }
    const replays = [
      await call("POST", `/v1/rules/${rules[1]}/decision`, { body: { decision: "confirm", version: 1 }, headers }),
      await call("POST", `/v1/rules/${rules[1]}/decision`, { form: { decision: "reject", version: "1", reason: "not like this", csrf }, headers: { cookie: oldCookie, origin: ORIGIN } }),
      await call("POST", "/v1/reviews", { body: { target: `entity/${entities[0]}@1`, verdict: "confirm" }, headers }),
      await call("POST", "/v1/reviews", { form: { target: `entity/${entities[0]}@1`, verdict: "confirm", csrf }, headers: { cookie: oldCookie, origin: ORIGIN } }),
      await call("POST", `/v1/entities/${entities[1]}/archive`, { body: { version: 1, reason: "gone" }, headers }),
      await call("POST", `/v1/entities/${entities[1]}/archive`, { form: { version: "1", csrf }, headers: { cookie: oldCookie, origin: ORIGIN } }),
      await call("POST", "/approval/logout", { form: { csrf }, headers: { cookie: oldCookie, origin: ORIGIN } })
    ]
    expect(replays.map((r) => r.status)).toEqual([403, 403, 403, 403, 403, 403, 403])
    // JSON stays JSON; a form post gets the refusal as a page
    for (const r of [replays[0], replays[2], replays[4], replays[6]]) expect(r?.json()).toMatchObject({ error: "csrf-failed" })
    for (const r of [replays[1], replays[3], replays[5]]) {
      expect(r?.headers.get("content-type")).toMatch(/^text\/html/)
      expect(r?.text).toContain("403 csrf-failed")
    }
    expect(await snapshot()).toEqual(before)
    expect(await ruleStatus(rules[1] ?? "")).toEqual([{ status: "proposed" }])
  })

  it("pages with the kept cookie are not signed in: to the login page; the login page shows its form", async () => {
    for (const path of ["/approval", `/approval/rules/${rules[0]}`, "/approval/structure?scope=sales", "/approval/rejected?scope=sales"]) {
      const r = await call("GET", path, { headers: { cookie: oldCookie } })
      // the login page comes back to the page asked for
      expect([path, r.status, r.headers.get("location")]).toEqual([path, 303, path === "/approval" ? "/approval/login" : `/approval/login?next=${encodeURIComponent(path)}`])
    }
    const loginPage = await call("GET", "/approval/login", { headers: { cookie: oldCookie } })
    expect(loginPage.status).toBe(200)
    expect(loginPage.text).toContain("name=\"token\"")
    // the approval reads on /v1 answer as without a session
    expect((await call("GET", "/v1/export/sales", { headers: { cookie: oldCookie } })).status).toBe(401)
    expect((await call("GET", "/v1/rejected?scope=sales", { headers: { cookie: oldCookie } })).status).toBe(401)
  })

  it("no cookie at all stays 401 (credential first); a forged cookie is no session either", async () => {
    const before = await snapshot()
    const none = await call("POST", `/v1/rules/${rules[1]}/decision`, { body: { decision: "confirm", version: 1 }, headers: { origin: ORIGIN, csrf } })
    expect(none.status).toBe(401)
    expect(none.json()).toMatchObject({ error: "unauthorized" })
    // the old cookie's MAC over a payload with another sid
    const [payload, mac] = oldCookie.slice("gn_session=".length).split(".") as [string, string]
    const parsed = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as Record<string, unknown>
    const otherSid = Buffer.from(JSON.stringify({ ...parsed, sid: "Z".repeat(22) })).toString("base64url")
    const forged = await call("POST", `/v1/rules/${rules[1]}/decision`, { body: { decision: "confirm", version: 1 }, headers: { cookie: `gn_session=${otherSid}.${mac}`, origin: ORIGIN, csrf } })
    expect(forged.status).toBe(401)
    expect((await call("POST", "/approval/logout", { form: { csrf }, headers: { origin: ORIGIN } })).status).toBe(401)
    expect(await snapshot()).toEqual(before)
    // a well-signed cookie of another secret is refused the same way
    const foreign = `gn_session=${payload}.${hmacBase64url("t".repeat(40), payload)}`
    expect((await call("GET", "/approval", { headers: { cookie: foreign } })).headers.get("location")).toBe("/approval/login")
  })

  it("after a restart on the same data dir the ended session is still refused; a fresh login decides", async () => {
    await server.close()
    server = await startServer(config, { logs })
    const before = await snapshot()
    const replay = await call("POST", `/v1/rules/${rules[1]}/decision`, { body: { decision: "confirm", version: 1 }, headers: { cookie: oldCookie, origin: ORIGIN, csrf } })
    expect(replay.status).toBe(403)
    expect(replay.json()).toMatchObject({ error: "csrf-failed" })
    const page = await call("GET", "/approval", { headers: { cookie: oldCookie } })
    expect([page.status, page.headers.get("location")]).toEqual([303, "/approval/login"])
    expect(await snapshot()).toEqual(before)

    const fresh = await login()
    expect(fresh).not.toBe(oldCookie)
    expect((await call("GET", "/approval", { headers: { cookie: fresh } })).status).toBe(200)
    const json = await call("POST", `/v1/rules/${rules[1]}/decision`, { body: { decision: "confirm", version: 1 }, headers: { cookie: fresh, origin: ORIGIN, csrf } })
    expect(json.status).toBe(200)
    const form = await call("POST", `/v1/rules/${rules[2]}/decision`, { form: { decision: "reject", version: "1", reason: "duplicate", csrf }, headers: { cookie: fresh, origin: ORIGIN } })
    expect(form.status).toBe(303)
    expect(form.headers.get("location")).toBe(`/approval/rules/${rules[2]}?done=reject&v=2#outcome`)
    expect(await ruleStatus(rules[2] ?? "")).toEqual([{ status: "rejected" }])
    // the same csrf token (per identity) does not revive the ended session
    expect((await call("POST", "/v1/reviews", { body: { target: `entity/${entities[0]}@1`, verdict: "confirm" }, headers: { cookie: oldCookie, origin: ORIGIN, csrf } })).status).toBe(403)
    const review = await call("POST", "/v1/reviews", { body: { target: `entity/${entities[0]}@1`, verdict: "confirm" }, headers: { cookie: fresh, origin: ORIGIN, csrf } })
    expect(review.status).toBe(200)
  })

  it("logs no cookie, token or session id", () => {
    const sid = (JSON.parse(Buffer.from(oldCookie.slice("gn_session=".length).split(".")[0] ?? "", "base64url").toString("utf8")) as { sid: string }).sid
    const text = logs.lines.map((l) => JSON.stringify(l)).join("\n")
    expect(text).toContain("session ended")
    for (const secret of [oldCookie.slice("gn_session=".length), sid, csrf, APPROVAL, SESSION]) expect(text).not.toContain(secret)
  })
})
