/**
 * Searches keep being answered while a redaction is applied (gaps.md §12, "searches keep being
 * answered meanwhile"): the apply holds the scope's one writer connection for seconds. Over real
 * HTTP, with the read pool's workers up as in the service: a person confirms a redaction of a
 * term with 1,000 places while a feeder searches in a loop and a probe asks /healthz. Searches
 * and probes are answered while the write transaction holds the connection (seen from the
 * server's own thread after each answer), every search's search_log row is written once the
 * writer is free, and a search for the term itself during the apply is logged as the marker.
 */
import { Effect, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { seedConfirmedRules, seedManualSource } from "../../bench/support.js"
import { csrfToken } from "../../src/auth/csrf.js"
import { isWriting } from "../../src/db/connection.js"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { ReadPool } from "../../src/read-pool/pool.js"
import { LexicalIndex } from "../../src/search/lexical/index.js"
import { tempDir, testConfig } from "../support/env.js"
import { startServer, type TestServer } from "../support/server.js"

const APPROVAL = "a".repeat(40)
const SESSION = "s".repeat(40)
const ORIGIN = "http://127.0.0.1:8787"
const EMAIL = "dev@example.com"
const csrf = csrfToken(SESSION, EMAIL)
const NAME = "Petra Müller"
const RULES = 1_000
const NAMED = 500

let server: TestServer
let cleanup: () => void
let cookie = ""
let feederToken = ""

const post = async (path: string, body: unknown, headers: Record<string, string>) => {
  const res = await fetch(`${server.url}${path}`, {
    method: "POST", redirect: "manual", body: JSON.stringify(body), headers: { "content-type": "application/json", ...headers }
  })
  return { status: res.status, json: (await res.json()) as Record<string, unknown> }
}
const asPerson = (path: string, body: unknown) => post(path, body, { cookie, origin: ORIGIN, csrf })
const search = (text: string) => post("/v1/search", { scopes: ["bench"], text }, { authorization: `Bearer ${feederToken}` })

/** Whether a write transaction holds the scope's connection now, asked on the server's thread. */
const writing = () => server.run(Effect.map(Effect.flatMap(ScopeStore, (s) => s.use("bench")), (h) => isWriting(h.sql)))

const searchLogRows = () =>
  server.run(Effect.flatMap(Effect.flatMap(ScopeStore, (s) => s.use("bench")), ({ sql }) =>
    sql<{ id: string; terms: string | null }>`SELECT id, terms FROM search_log WHERE operation = 'search'`))

beforeAll(async () => {
  const t = tempDir()
  cleanup = t.cleanup
  const base = testConfig(t.dir, { scopes: [{ name: "bench", providers_allowed: [] }], limits: { requests_per_minute: 100_000, decisions_per_minute: 1000 } })
  const config = { ...base, env: { ...base.env, devApprovalToken: Redacted.make(APPROVAL), sessionSecret: Redacted.make(SESSION) } }
  server = await startServer(config)
  await server.run(Effect.gen(function*() {
    yield* Effect.flatMap(ScopeStore, (s) => s.create("bench"))
    const ops = yield* OpsStore
    yield* ops.createGrant({ kind: "person", auth: "email", identity: EMAIL, scopes: ["bench"], rights: ["read", "decide", "redact"] })
    const feeder = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: ["bench"], rights: ["read", "propose"], label: "feeder" })
    feederToken = "token" in feeder ? feeder.token : ""
    const { sql } = yield* Effect.flatMap(ScopeStore, (s) => s.use("bench"))
    yield* sql.withTransaction(Effect.gen(function*() {
      yield* seedManualSource(sql)
      yield* seedConfirmedRules(sql, 1, RULES, (seq) => ({
        statement: seq % (RULES / NAMED) === 0 ? `${NAME} gibt Rabatte über zehn Prozent frei, Fall ${seq}` : `Lieferzeit für Auftrag ${seq} beträgt zwei Wochen`,
        keywords: ["Rabatt"],
        relations: [],
        quote: seq % (RULES / NAMED) === 0 ? `laut ${NAME} ab sofort, Fall ${seq}` : `die Lieferzeit ist zwei Wochen, Fall ${seq}`
      }))
      yield* Effect.flatMap(LexicalIndex, (lex) => lex.rebuild(sql))
    }))
    // the workers up, as in a service that has been answering searches
    yield* Effect.flatMap(ReadPool, (p) => p.warm)
  }))
  const login = await fetch(`${server.url}/approval/login`, {
    method: "POST", redirect: "manual", body: new URLSearchParams({ token: APPROVAL }).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded", origin: ORIGIN }
  })
  expect(login.status).toBe(303)
  cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] ?? ""
}, 120_000)
afterAll(async () => {
  await server.close()
  cleanup()
})

describe("a redaction's apply and the searches sent meanwhile", () => {
  it("searches and /healthz are answered while the apply holds the writer; every search is logged after, the term as the marker", async () => {
    const preview = await asPerson("/v1/redactions/preview", { scope: "bench", term: NAME })
    expect(preview.status).toBe(200)
    // statement and quote of both versions (proposed, confirmed) of each named rule
    expect(preview.json.total).toBe(4 * NAMED)
    const logged = (await searchLogRows()).length

    let done = false
    const redacting = asPerson("/v1/redactions", { scope: "bench", term: NAME, reason: "Löschantrag", preview: preview.json.preview }).finally(() => {
      done = true
    })
    let searches = 0
    let duringWrite = 0
    let probesDuringWrite = 0
    let asked = false
    while (!done) {
      // one of them, sent while the transaction runs, asks for the term itself (before it, a search
      // for the term would be a new place, and the confirmation would meet preview-stale)
      const text = !asked && await writing() ? NAME : "Lieferzeit Auftrag"
      if (text === NAME) asked = true
      const r = await search(text)
      expect(r.status).toBe(200)
      searches++
      if (await writing()) duringWrite++
      const probe = await fetch(`${server.url}/healthz`)
      expect(probe.status).toBe(200)
      if (await writing()) probesDuringWrite++
    }
    const created = await redacting
    expect(created.status).toBe(201)
    expect(duringWrite).toBeGreaterThan(0)
    expect(probesDuringWrite).toBeGreaterThan(0)
    expect(asked).toBe(true)

    // every search's row, written once the writer was free; the term never in one of them
    let rows = await searchLogRows()
    for (let i = 0; i < 100 && rows.length < logged + searches; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      rows = await searchLogRows()
    }
    expect(rows.length).toBe(logged + searches)
    for (const row of rows) expect(row.terms ?? "").not.toMatch(/petra|müller|mueller/i)
    expect(rows.some((row) => (row.terms ?? "").includes("[redacted]"))).toBe(true)
  }, 120_000)
})
