/**
 * Redaction over real HTTP (gaps.md §12, R4): POST /v1/redactions/preview and POST /v1/redactions
 * on the approval channel, a person whose grant holds `redact`, with the session cookie, the same
 * origin and the csrf token. The preview lists every place and the touched rules; the confirmation
 * with a reason erases them (201); a stale preview is 409 preview-stale; a grant without `redact`
 * is 403 channel-not-allowed; a service bearer, the dev API token and a request without the csrf
 * token are refused as on every approval route; a term under 3 characters is 400. Every refusal
 * leaves the scope file's rows and bytes as they were, and neither the term nor the reason reaches
 * the process log or search_log. While another process holds a read transaction the answer adds
 * `checkpointed: false` and the form's page says what to do.
 */
import { existsSync, statSync } from "node:fs"
import { Deferred, Effect, FiberId, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { csrfToken } from "../../src/auth/csrf.js"
import { BackupLock } from "../../src/backup/lock.js"
import { listLedgerOn, OpsStore } from "../../src/db/ops-store.js"
import { scopeFile, ScopeStore } from "../../src/db/scope-store.js"
import { propose } from "../../src/domain/proposals.js"
import { storeSource } from "../../src/domain/sources.js"
import { allRows } from "../support/approval.js"
import { tempDir, testConfig } from "../support/env.js"
import { mailProposal, mailSource } from "../support/fixtures.js"
import { captureLogs } from "../support/logs.js"
import { otherConnection } from "../support/other-connection.js"
import { fileHash, sqlOf } from "../support/run.js"
import { startServer, type TestServer } from "../support/server.js"

const DEV_API = "p".repeat(40)
const APPROVAL = "a".repeat(40)
const SESSION = "s".repeat(40)
const ORIGIN = "http://127.0.0.1:8787"
const EMAIL = "dev@example.com"
const csrf = csrfToken(SESSION, EMAIL)

const NAME = "Petra Müller"
const REASON = "Löschantrag DSR-2026-017"
const MAIL_ID = "mail:<offer-petra@example.com>"
const QUOTE = "ab sofort gibt Petra Müller jeden Rabatt über zehn Prozent frei"

let server: TestServer
let dataDir = ""
let cleanup: () => void
const logs = captureLogs()
let feederToken = ""
let cookie = ""
let person = ""

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

/** The signed-in person's JSON request: cookie, origin and csrf token. */
const asPerson = (path: string, body: unknown) => call("POST", path, { body, headers: { cookie, origin: ORIGIN, csrf } })

/** The scope file and its WAL, byte for byte, and every row of every table (rows first: reading opens the file). */
const snapshot = async () => {
  const rows = await server.run(Effect.flatMap(sqlOf("sales"), allRows))
  const files: Record<string, string> = {}
  const file = scopeFile(dataDir, "sales")
  for (const f of [file, `${file}-wal`]) if (existsSync(f)) files[f] = fileHash(f)
  return { rows, files }
}

const redactionCount = () =>
  server.run(Effect.flatMap(sqlOf("sales"), (sql) => sql<{ n: number }>`SELECT count(*) AS n FROM redaction`)).then((r) => r[0]?.n ?? -1)

beforeAll(async () => {
  const t = tempDir()
  cleanup = t.cleanup
  dataDir = t.dir
  const base = testConfig(t.dir, { scopes: [{ name: "sales", providers_allowed: [] }], limits: { requests_per_minute: 100_000, decisions_per_minute: 1000 } })
  const config = { ...base, env: { ...base.env, devApiToken: Redacted.make(DEV_API), devApprovalToken: Redacted.make(APPROVAL), sessionSecret: Redacted.make(SESSION) } }
  server = await startServer(config, { logs })
  await server.run(Effect.gen(function*() {
    yield* Effect.flatMap(ScopeStore, (s) => s.create("sales"))
    const ops = yield* OpsStore
    person = (yield* ops.createGrant({ kind: "person", auth: "email", identity: EMAIL, scopes: ["sales"], rights: ["read", "propose", "decide", "redact"] })).id
    const feeder = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: ["sales"], rights: ["read", "propose"], label: "feeder" })
    feederToken = "token" in feeder ? feeder.token : ""
    yield* storeSource(mailSource({
      source: {
        kind: "mail", id: MAIL_ID, title: `Angebot von ${NAME}`, occurred_at: "2026-03-12T09:15:00Z",
        sender: `${NAME} <petra.mueller@example.com>`, thread: null, link: null
      },
      text: `Hallo zusammen,\r\n\r\n${QUOTE}.\r\n\r\nViele Grüße`,
      attachments: []
    }), feeder.id)
    yield* propose(mailProposal({
      statement: `${NAME} approves every discount above ten percent`,
      source: { kind: "mail", id: MAIL_ID, quote: QUOTE, link: null }, speaker: NAME, keywords: ["Rabatt"]
    }), { grantId: feeder.id, channel: "api" })
  }))
  const login = await call("POST", "/approval/login", { form: { token: APPROVAL }, headers: { origin: ORIGIN } })
  expect(login.status).toBe(303)
  cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] ?? ""
}, 60_000)
afterAll(async () => {
  await server.close()
  cleanup()
})

describe("POST /v1/redactions/preview", () => {
  it("200: every place with its count, the touched rule and the digest; nothing written", async () => {
    const before = await snapshot()
    const r = await asPerson("/v1/redactions/preview", { scope: "sales", term: "petra mueller" })
    expect(r.status).toBe(200)
    const body = r.json() as { scope: string; total: number; places: Array<{ table: string; column: string; key: string; count: number }>; rules: Array<string>; preview: string }
    expect(body.scope).toBe("sales")
    expect(body.preview).toMatch(/^[0-9a-f]{64}$/)
    const where = body.places.map((p) => `${p.table}.${p.column}`)
    for (const place of ["source.title", "source.sender", "rule_version.statement", "rule_version.quote", "rule_version.speaker"]) expect(where).toContain(place)
    expect(body.places.find((p) => p.table === "rule_version" && p.column === "statement")).toMatchObject({ key: "sales-0001/1", count: 1 })
    expect(body.total).toBe(body.places.reduce((n, p) => n + p.count, 0))
    expect(body.rules).toEqual(["rule/sales-0001@1"])
    expect(await snapshot()).toEqual(before)
  })

  it("400 validation-failed for a term under 3 characters; nothing written", async () => {
    const before = await snapshot()
    const r = await asPerson("/v1/redactions/preview", { scope: "sales", term: "Pe" })
    expect(r.status).toBe(400)
    expect(r.json()).toMatchObject({ error: "validation-failed" })
    const confirm = await asPerson("/v1/redactions", { scope: "sales", term: " P ", reason: REASON, preview: "0".repeat(64) })
    expect(confirm.status).toBe(400)
    expect(await snapshot()).toEqual(before)
  })
})

describe("refusals change no byte of the scope file", () => {
  it("no csrf token (JSON and form) → 403 csrf-failed", async () => {
    const before = await snapshot()
    const preview = (await asPerson("/v1/redactions/preview", { scope: "sales", term: NAME })).json().preview as string
    const json = await call("POST", "/v1/redactions", { body: { scope: "sales", term: NAME, reason: REASON, preview }, headers: { cookie, origin: ORIGIN } })
    expect(json.status).toBe(403)
    expect(json.json()).toMatchObject({ error: "csrf-failed" })
    const form = await call("POST", "/v1/redactions", { form: { scope: "sales", term: NAME, reason: REASON, preview }, headers: { cookie, origin: ORIGIN } })
    expect(form.status).toBe(403)
    expect(form.text).toContain("csrf-failed")
    const foreign = await call("POST", "/v1/redactions", { body: { scope: "sales", term: NAME, reason: REASON, preview }, headers: { cookie, origin: "https://evil.example", csrf } })
    expect(foreign.status).toBe(403)
    expect(await snapshot()).toEqual(before)
  })

  it("a service bearer → 403 channel-not-allowed; the dev API token, the ops token or no credential → 401", async () => {
    const before = await snapshot()
    const body = { scope: "sales", term: NAME, reason: REASON, preview: "0".repeat(64) }
    for (const path of ["/v1/redactions/preview", "/v1/redactions"]) {
      const service = await call("POST", path, { body, headers: { authorization: `Bearer ${feederToken}`, origin: ORIGIN, csrf } })
      expect(service.status, path).toBe(403)
      expect(service.json()).toMatchObject({ error: "channel-not-allowed" })
      for (const authorization of [`Bearer ${DEV_API}`, `Bearer ${"o".repeat(40)}`]) {
        const r = await call("POST", path, { body, headers: { authorization, origin: ORIGIN, csrf } })
        expect(r.status, `${path} ${authorization.slice(0, 12)}`).toBe(401)
      }
      expect((await call("POST", path, { body, headers: { origin: ORIGIN, csrf } })).status).toBe(401)
    }
    expect(await snapshot()).toEqual(before)
  })

  it("a person whose grant lacks redact (decide does not imply it) → 403 channel-not-allowed, preview and confirmation", async () => {
    const preview = (await asPerson("/v1/redactions/preview", { scope: "sales", term: NAME })).json().preview as string
    const swap = (rights: Array<"read" | "propose" | "decide" | "redact">) => server.run(Effect.gen(function*() {
      const ops = yield* OpsStore
      yield* ops.disableGrant(person)
      person = (yield* ops.createGrant({ kind: "person", auth: "email", identity: EMAIL, scopes: ["sales"], rights })).id
    }))
    await swap(["read", "propose", "decide"])
    try {
      const before = await snapshot()
      const p = await asPerson("/v1/redactions/preview", { scope: "sales", term: NAME })
      expect(p.status).toBe(403)
      expect(p.json()).toMatchObject({ error: "channel-not-allowed" })
      const c = await asPerson("/v1/redactions", { scope: "sales", term: NAME, reason: REASON, preview })
      expect(c.status).toBe(403)
      expect(c.json()).toMatchObject({ error: "channel-not-allowed" })
      const page = await call("GET", "/approval/redactions", { headers: { cookie } })
      expect(page.status).toBe(403)
      expect(await snapshot()).toEqual(before)
    } finally {
      await swap(["read", "propose", "decide", "redact"])
    }
  })

  it("a scope outside the grant → 403 scope-not-allowed", async () => {
    const r = await asPerson("/v1/redactions/preview", { scope: "ops", term: NAME })
    expect(r.status).toBe(403)
    expect(r.json()).toMatchObject({ error: "scope-not-allowed" })
  })

  it("a preview that no longer matches (a new place since) → 409 preview-stale, nothing written", async () => {
    const stale = (await asPerson("/v1/redactions/preview", { scope: "sales", term: NAME })).json().preview as string
    await server.run(storeSource(mailSource({
      source: { kind: "mail", id: "mail:<again@example.com>", title: `Rückfrage an ${NAME}`, occurred_at: "2026-03-13T09:15:00Z", sender: "tom@example.com", thread: null, link: null },
      text: "Kurze Rückfrage.", attachments: []
    }), "service:2"))
    const before = await snapshot()
    const r = await asPerson("/v1/redactions", { scope: "sales", term: NAME, reason: REASON, preview: stale })
    expect(r.status).toBe(409)
    expect(r.json()).toMatchObject({ error: "preview-stale" })
    expect(await snapshot()).toEqual(before)
    expect(await redactionCount()).toBe(0)
  })
})

describe("POST /v1/redactions", () => {
  it("201 {id, scope, total}: every place reads [redacted], the rule keeps its status; the record keeps who, why and how many, never the term", async () => {
    const preview = (await asPerson("/v1/redactions/preview", { scope: "sales", term: NAME })).json() as { preview: string; total: number; places: Array<unknown> }
    const r = await asPerson("/v1/redactions", { scope: "sales", term: NAME, reason: REASON, preview: preview.preview })
    expect(r.status).toBe(201)
    expect(r.json()).toEqual({ id: "sales-x0001", scope: "sales", total: preview.total })
    const after = await server.run(Effect.flatMap(sqlOf("sales"), (sql) => Effect.all({
      redaction: sql<Record<string, unknown>>`SELECT id, places, requested_by, decided_by, reason FROM redaction`,
      rule: sql<{ statement: string; quote: string; status: string }>`SELECT statement, quote, status FROM rule_version WHERE rule_id = 'sales-0001'`,
      log: sql<{ operation: string }>`SELECT operation FROM search_log`
    })))
    expect(after.redaction).toEqual([{ id: "sales-x0001", places: preview.places.length, requested_by: person, decided_by: EMAIL, reason: REASON }])
    expect(after.rule).toEqual([{ statement: "[redacted] approves every discount above ten percent", quote: "ab sofort gibt [redacted] jeden Rabatt über zehn Prozent frei", status: "proposed" }])
    const rows = JSON.stringify(await server.run(Effect.flatMap(sqlOf("sales"), allRows)))
    expect(rows).not.toContain("Petra Müller")
    expect(rows).not.toContain("Müller")
    // the preview again finds nothing; a second confirmation of the old digest is stale
    const again = await asPerson("/v1/redactions/preview", { scope: "sales", term: NAME })
    expect(again.json()).toMatchObject({ total: 0, places: [], rules: [] })
    expect((await asPerson("/v1/redactions", { scope: "sales", term: NAME, reason: REASON, preview: preview.preview })).status).toBe(409)
  })

  it("the ledger of ops.sqlite holds the redaction with its places and without the term", async () => {
    const ledger = await server.run(Effect.flatMap(OpsStore, (o) => listLedgerOn(o.sql, "sales")))
    expect(ledger.map((r) => ({ id: r.id, seq: r.seq, decided_by: r.decided_by, reason: r.reason }))).toEqual([{ id: "sales-x0001", seq: 1, decided_by: EMAIL, reason: REASON }])
    expect(ledger[0]?.place_list.length).toBeGreaterThanOrEqual(5)
    // the places name rows by their keys (a message id stays an identifier), never the text
    expect(JSON.stringify(ledger).toLowerCase()).not.toContain("müller")
    expect(JSON.stringify(ledger).toLowerCase()).not.toContain("petra m")
  })

  it("409 backup-running while a backup operation holds the lock; nothing written", async () => {
    const preview = (await asPerson("/v1/redactions/preview", { scope: "sales", term: "Rückfrage" })).json().preview as string
    const release = Deferred.unsafeMake<void>(FiberId.none)
    const holding = server.run(Effect.flatMap(BackupLock, (lock) => lock.withLock("run")(Deferred.await(release))))
    try {
      const before = await snapshot()
      const r = await asPerson("/v1/redactions", { scope: "sales", term: "Rückfrage", reason: REASON, preview })
      expect(r.status).toBe(409)
      expect(r.json()).toMatchObject({ error: "backup-running" })
      expect(await snapshot()).toEqual(before)
    } finally {
      await server.run(Deferred.succeed(release, undefined))
      await holding
    }
    const after = await asPerson("/v1/redactions", { scope: "sales", term: "Rückfrage", reason: REASON, preview })
    expect(after.status).toBe(201)
    expect(after.json()).toMatchObject({ id: "sales-x0002" })
  })

  it("another process holding a read transaction (as Litestream does): 201 with checkpointed: false, the form's page says the text is still in the write-ahead log and what to do", async () => {
    const file = scopeFile(dataDir, "sales")
    const walSize = () => (existsSync(`${file}-wal`) ? statSync(`${file}-wal`).size : 0)
    const reader = otherConnection(file)
    try {
      // a read transaction begun before the redaction: the checkpoint cannot pass its snapshot
      reader.exec("BEGIN")
      reader.prepare("SELECT count(*) AS n FROM redaction").get()
      const preview = (await asPerson("/v1/redactions/preview", { scope: "sales", term: "zusammen" })).json() as { preview: string; total: number }
      const r = await asPerson("/v1/redactions", { scope: "sales", term: "zusammen", reason: REASON, preview: preview.preview })
      expect(r.status).toBe(201)
      expect(r.json()).toEqual({ id: "sales-x0003", scope: "sales", total: preview.total, checkpointed: false })
      expect(walSize(), "the WAL keeps the frames of the old text").toBeGreaterThan(0)
      // the confirmation form: 303 to the list, which says so in plain words
      const formPreview = (await asPerson("/v1/redactions/preview", { scope: "sales", term: "Hallo" })).json() as { preview: string }
      const form = await call("POST", "/v1/redactions", { form: { scope: "sales", term: "Hallo", reason: REASON, preview: formPreview.preview, csrf }, headers: { cookie, origin: ORIGIN } })
      expect(form.status).toBe(303)
      const location = form.headers.get("location") ?? ""
      expect(location).toBe("/approval/redactions?scope=sales&done=sales-x0004&wal=held#outcome")
      const page = await call("GET", location.replace(/#.*$/, ""), { headers: { cookie } })
      expect(page.status).toBe(200)
      expect(page.text).toContain("Erased — but the old text is still in the file&#39;s write-ahead log")
      expect(page.text).toContain("id=\"wal-held\"")
      expect(page.text).toMatch(/Stop Litestream now; the service finishes the checkpoint at the next redaction or when it restarts\. Then start Litestream again and run <code>groundnote backup run<\/code>/)
    } finally {
      reader.close()
    }
    // the reader gone: the next redaction's checkpoint completes and truncates the WAL; the answer is the plain one
    const preview = (await asPerson("/v1/redactions/preview", { scope: "sales", term: "Grüße" })).json() as { preview: string; total: number }
    const r = await asPerson("/v1/redactions", { scope: "sales", term: "Grüße", reason: REASON, preview: preview.preview })
    expect(r.json()).toEqual({ id: "sales-x0005", scope: "sales", total: preview.total })
    expect(walSize()).toBe(0)
    const page = await call("GET", "/approval/redactions?scope=sales&done=sales-x0005", { headers: { cookie } })
    expect(page.text).toContain("<h2>Erased.</h2>")
    expect(page.text).not.toContain("wal-held")
  })

  it("neither the term nor the reason reaches the process log or search_log", async () => {
    const all = JSON.stringify(logs.lines)
    for (const secret of [NAME, "petra mueller", "Petra", REASON, "DSR-2026-017"]) expect(all.toLowerCase()).not.toContain(secret.toLowerCase())
    expect(logs.lines.some((l) => l.message === "redaction access" && l.annotations.operation === "redact" && l.annotations.outcome === 201)).toBe(true)
    const ops = await server.run(Effect.flatMap(sqlOf("sales"), (sql) => sql<{ operation: string }>`SELECT DISTINCT operation FROM search_log`))
    expect(ops.map((o) => o.operation).filter((o) => /redact/.test(o))).toEqual([])
  })
})
