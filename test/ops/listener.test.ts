/**
 * The ops listener in-process on a temp data dir, driven with node:http over its Unix socket
 * (architecture.md §11, gaps.md §3): bearer check, status, grants, scopes, error bodies, limits,
 * socket mode, no TCP port, one log line per request.
 */
import { spawn } from "node:child_process"
import { existsSync, lstatSync, mkdirSync, realpathSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { HttpApp, type HttpServerRequest } from "@effect/platform"
import { Effect, Exit, Layer, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { BEARER_RE, hashBearer, OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { AppConfig } from "../../src/config/config.js"
import { makeOpsApp, OpsListenerLive } from "../../src/http/ops-listener.js"
import { VERSION } from "../../src/version.js"
import { storeLayer, tempDir, testConfig } from "../support/env.js"
import { captureLogs } from "../support/logs.js"
import { type Answer, call, OPS_TOKEN, ownTcpListeners, ownUnixListeners, type Started, startListener } from "./support.js"

const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

interface Body { error?: string; message?: string; issues?: Array<{ path: string; message: string }> }
const body = (a: Answer) => a.json as Body & Record<string, unknown>

describe("ops listener", () => {
  const { dir, cleanup } = tempDir("gn-ol-")
  const config = testConfig(dir)
  const logs = captureLogs()
  let tcpBefore: Set<string> | null = null
  let listener: Started
  let socket = ""

  beforeAll(async () => {
    tcpBefore = ownTcpListeners()
    listener = await startListener(config, logs.layer)
    socket = listener.socket
  })
  afterAll(async () => {
    await listener.stop()
    cleanup()
  })

  it("listens on <data dir>/ops.sock with mode 0600 and opens no TCP port", () => {
    const st = lstatSync(socket)
    expect(st.isSocket()).toBe(true)
    expect(st.mode & 0o777).toBe(0o600)
    const tcpAfter = ownTcpListeners()
    if (tcpBefore !== null && tcpAfter !== null) {
      expect([...tcpAfter].filter((i) => !tcpBefore?.has(i))).toEqual([])
      expect(ownUnixListeners()).toContain(socket)
    }
    const line = logs.lines.find((l) => l.message === "ops listening")
    expect(line?.annotations).toMatchObject({ listener: "ops", socket })
  })

  it("answers 401 unauthorized without a token, with a wrong one and with another scheme", async () => {
    const cases: Array<Parameters<typeof call>[3]> = [
      { token: null },
      { token: "x".repeat(40) },
      { token: OPS_TOKEN.slice(1) },
      { token: `${OPS_TOKEN}x` },
      { authorization: `Basic ${OPS_TOKEN}` },
      { authorization: `Bearer ${OPS_TOKEN} extra` }
    ]
    for (const options of cases) {
      for (const [method, path] of [["GET", "/ops/status"], ["GET", "/ops/grants"], ["POST", "/ops/scopes"], ["GET", "/nope"]] as const) {
        const a = await call(socket, method, path, options)
        expect(a.status, `${method} ${path} ${JSON.stringify(options)}`).toBe(401)
        expect(body(a)).toMatchObject({ error: "unauthorized" })
        expect(typeof body(a).message).toBe("string")
      }
    }
    // nothing was created through an unauthorized request
    expect((await call(socket, "GET", "/ops/grants")).json).toEqual([])
    // the scheme is case-insensitive
    expect((await call(socket, "GET", "/ops/grants", { authorization: `bearer ${OPS_TOKEN}` })).status).toBe(200)
  })

  it("GET /ops/status answers OpsStatus", async () => {
    const a = await call(socket, "GET", "/ops/status")
    expect(a.status).toBe(200)
    expect(a.headers["content-type"]).toMatch(/^application\/json/)
    const s = body(a)
    expect(Object.keys(s).sort()).toEqual(["backup", "data_dir", "instance", "now", "scopes", "semantic", "service", "started_at", "usage", "version"])
    expect(s.usage).toEqual({ reranker_month_usd: 0 })
    expect(s).toMatchObject({
      service: "groundnote",
      instance: "acme",
      version: VERSION,
      data_dir: realpathSync(dir),
      backup: {
        kind: "copy", directory: "/var/backups/groundnote", export_directory: null, running: null,
        ops_backup_at: null, last_run: null, last_probe: null
      }
    })
    expect(s.started_at).toMatch(INSTANT)
    expect(s.now).toMatch(INSTANT)
    expect(String(s.started_at) <= String(s.now)).toBe(true)
    expect(s.scopes).toEqual(["sales", "ops"].map((scope) => ({
      scope, created: false, locked: false, lock_reason: null, version_count: null, last_backup_at: null,
      verified_at: null, verify_ok: null, probed_at: null, probe_ok: null, exported_at: null, export_sha256: null
    })))
  })

  it("status reads backup_run: the last good ops copy, the newest run and probe", async () => {
    await listener.run(Effect.flatMap(OpsStore, ({ sql }) => Effect.gen(function*() {
      const row = (seq: number, kind: string, at: string, ok: number, result: unknown) =>
        sql`INSERT INTO backup_run (seq, kind, backup_kind, started_at, finished_at, ok, result)
            VALUES (${seq}, ${kind}, 'copy', ${at}, ${at}, ${ok}, ${JSON.stringify(result)})`.raw
      yield* row(1, "run", "2025-01-01T01:00:00.000Z", 1, { ok: true, ops: { ok: true } })
      yield* row(2, "probe", "2025-01-01T02:00:00.000Z", 1, { ok: true })
      yield* row(3, "run", "2025-01-02T01:00:00.000Z", 0, { ok: false, ops: { ok: false } })
      yield* row(4, "run", "2025-01-03T01:00:00.000Z", 0, { ok: false, ops: null })
    })))
    const s = body(await call(socket, "GET", "/ops/status"))
    expect(s.backup).toMatchObject({
      ops_backup_at: "2025-01-01T01:00:00.000Z",
      last_run: { seq: 4, kind: "run", started_at: "2025-01-03T01:00:00.000Z", finished_at: "2025-01-03T01:00:00.000Z", ok: false },
      last_probe: { seq: 2, kind: "probe", started_at: "2025-01-01T02:00:00.000Z", finished_at: "2025-01-01T02:00:00.000Z", ok: true }
    })
  })

  let bearerToken = ""
  let bearerId = ""

  it("POST /ops/grants creates a bearer grant and shows its token exactly once", async () => {
    const a = await call(socket, "POST", "/ops/grants", {
      body: { kind: "service", auth: "bearer", scopes: ["sales"], rights: ["read", "propose"], label: "feeder" }
    })
    expect(a.status).toBe(201)
    const g = body(a)
    expect(g.token).toMatch(BEARER_RE)
    bearerToken = String(g.token)
    bearerId = String(g.id)
    expect(g).toMatchObject({
      kind: "service", auth: "bearer", identity: null, fingerprint: `sha256:${hashBearer(bearerToken).slice(0, 12)}`,
      scopes: ["sales"], rights: ["read", "propose"], label: "feeder", active: true, disabled_at: null
    })
    expect(g.created_at).toMatch(INSTANT)
    const list = await call(socket, "GET", "/ops/grants")
    expect(list.status).toBe(200)
    expect(list.text).not.toContain(bearerToken)
    expect(list.text).not.toContain("token")
    expect(list.json).toEqual([Object.fromEntries(Object.entries(g).filter(([k]) => k !== "token"))])
  })

  it("POST /ops/grants creates a person grant without a token", async () => {
    const a = await call(socket, "POST", "/ops/grants", {
      body: { kind: "person", auth: "email", identity: "Anna@Example.com", scopes: ["ops", "sales"], rights: ["read", "decide"] }
    })
    expect(a.status).toBe(201)
    expect(body(a)).toMatchObject({ identity: "anna@example.com", fingerprint: null, rights: ["read", "decide"], label: null })
    expect(body(a)).not.toHaveProperty("token")
    const again = await call(socket, "POST", "/ops/grants", {
      body: { kind: "person", auth: "email", identity: "anna@example.com", scopes: ["ops"], rights: ["read"] }
    })
    expect(again.status).toBe(409)
    expect(body(again)).toMatchObject({ error: "grant-exists" })
  })

  it("answers 400 validation-failed with issues for a bad grant body", async () => {
    const bad: Array<[unknown, string]> = [
      [{ kind: "service", auth: "bearer", scopes: ["sales"], rights: ["read"], extra: 1 }, "extra"],
      [{ auth: "bearer", scopes: ["sales"], rights: ["read"] }, "kind"],
      [{ kind: "robot", auth: "bearer", scopes: ["sales"], rights: ["read"] }, "kind"],
      [{ kind: "service", auth: "bearer", scopes: [], rights: ["read"] }, "scopes"],
      [{ kind: "service", auth: "bearer", scopes: ["Sales!"], rights: ["read"] }, "scopes[0]"],
      [{ kind: "service", auth: "bearer", scopes: ["sales"], rights: ["decide"] }, "rights"],
      [{ kind: "service", auth: "bearer", identity: "x", scopes: ["sales"], rights: ["read"] }, "identity"],
      [{ kind: "service", auth: "bearer", scopes: ["unknown"], rights: ["read"] }, "scopes[0]"],
      [[1, 2], "(root)"],
      [null, "(root)"]
    ]
    for (const [b, path] of bad) {
      const a = await call(socket, "POST", "/ops/grants", { body: b })
      expect(a.status, JSON.stringify(b)).toBe(400)
      expect(body(a).error).toBe("validation-failed")
      expect(body(a).message).toMatch(/^grant is invalid: /)
      expect(body(a).issues?.map((i) => i.path), JSON.stringify(b)).toContain(path)
    }
    for (const raw of ["{", "", "not json"]) {
      const a = await call(socket, "POST", "/ops/grants", { raw })
      expect(a.status).toBe(400)
      expect(body(a)).toMatchObject({ error: "validation-failed", issues: [{ path: "(root)" }] })
    }
  })

  it("POST /ops/grants/:id/disable answers the disabled GrantOut; unknown ids are 404", async () => {
    const a = await call(socket, "POST", `/ops/grants/${encodeURIComponent(bearerId)}/disable`)
    expect(a.status).toBe(200)
    expect(body(a)).toMatchObject({ id: bearerId, active: false })
    expect(body(a).disabled_at).toMatch(INSTANT)
    const again = await call(socket, "POST", `/ops/grants/${encodeURIComponent(bearerId)}/disable`)
    expect(again.status).toBe(200)
    expect(body(again)).toMatchObject({ id: bearerId, active: false, disabled_at: body(a).disabled_at })
    const missing = await call(socket, "POST", "/ops/grants/service:999/disable")
    expect(missing.status).toBe(404)
    expect(body(missing)).toMatchObject({ error: "not-found" })
    expect(bearerToken).not.toBe("")
  })

  it("POST /ops/grants/:id/rename disables the row and answers the new one", async () => {
    const created = body(await call(socket, "POST", "/ops/grants", {
      body: { kind: "service", auth: "access-service", identity: "feeder.access", scopes: ["sales"], rights: ["propose"], label: "old" }
    }))
    const a = await call(socket, "POST", `/ops/grants/${String(created.id)}/rename`, { body: { label: "new name" } })
    expect(a.status).toBe(200)
    const renamed = body(a)
    expect(renamed.id).not.toBe(created.id)
    expect(renamed).toMatchObject({ label: "new name", identity: "feeder.access", active: true, scopes: ["sales"], rights: ["propose"] })
    const list = (await call(socket, "GET", "/ops/grants")).json as Array<Record<string, unknown>>
    expect(list.find((g) => g.id === created.id)).toMatchObject({ active: false, label: "old" })
    expect(list.find((g) => g.id === renamed.id)).toMatchObject({ active: true, label: "new name" })
    // the old row cannot be renamed again; bad bodies are 400
    expect((await call(socket, "POST", `/ops/grants/${String(created.id)}/rename`, { body: { label: "x" } })).status).toBe(404)
    for (const b of [{}, { label: "" }, { label: "x".repeat(201) }, { label: "ok", more: true }]) {
      const r = await call(socket, "POST", `/ops/grants/${String(renamed.id)}/rename`, { body: b })
      expect(r.status, JSON.stringify(b)).toBe(400)
      expect(body(r).error).toBe("validation-failed")
      expect(body(r).issues?.length).toBeGreaterThan(0)
    }
  })

  it("POST /ops/scopes creates the file of a configured scope; status shows it", async () => {
    const a = await call(socket, "POST", "/ops/scopes", { body: { name: "sales" } })
    expect(a.status).toBe(201)
    expect(a.json).toEqual({ scope: "sales", created: true })
    expect(existsSync(join(dir, "scopes", "sales.sqlite"))).toBe(true)
    const s = body(await call(socket, "GET", "/ops/status"))
    expect((s.scopes as Array<Record<string, unknown>>)[0]).toMatchObject({ scope: "sales", created: true, locked: false, version_count: 0 })
    const again = await call(socket, "POST", "/ops/scopes", { body: { name: "sales" } })
    expect(again.status).toBe(409)
    expect(body(again)).toMatchObject({ error: "scope-exists" })
    const unknown = await call(socket, "POST", "/ops/scopes", { body: { name: "nowhere" } })
    expect(unknown.status).toBe(400)
    expect(body(unknown)).toMatchObject({ error: "validation-failed", issues: [{ path: "name" }] })
    for (const b of [{ name: "X" }, {}, { name: "ops", force: true }]) {
      const r = await call(socket, "POST", "/ops/scopes", { body: b })
      expect(r.status, JSON.stringify(b)).toBe(400)
      expect(body(r).error).toBe("validation-failed")
    }
  })

  it("status shows a scope whose file fails the open check as locked with its reason", async () => {
    mkdirSync(join(dir, "scopes"), { recursive: true, mode: 0o700 })
    writeFileSync(join(dir, "scopes", "ops.sqlite"), "not a database at all", { mode: 0o600 })
    const s = body(await call(socket, "GET", "/ops/status"))
    expect((s.scopes as Array<Record<string, unknown>>)[1]).toMatchObject({
      scope: "ops", created: true, locked: true, lock_reason: "not a SQLite file", version_count: null
    })
  })

  it("answers 404 not-found for an unknown route or method", async () => {
    for (const [method, path] of [["GET", "/nope"], ["GET", "/ops/scopes"], ["POST", "/ops/status"], ["GET", "/healthz"], ["DELETE", "/ops/grants"]] as const) {
      const a = await call(socket, method, path)
      expect(a.status, `${method} ${path}`).toBe(404)
      expect(body(a)).toMatchObject({ error: "not-found" })
      expect(typeof body(a).message).toBe("string")
    }
  })

  it("answers 413 payload-too-large above 256 KiB, with and without content-length", async () => {
    const big = JSON.stringify({ name: "sales", pad: "x".repeat(300 * 1024) })
    for (const chunked of [false, true]) {
      const a = await call(socket, "POST", "/ops/scopes", { raw: big, chunked })
      expect(a.status, `chunked ${chunked}`).toBe(413)
      expect(body(a)).toMatchObject({ error: "payload-too-large" })
    }
    // a route without a body refuses a declared large one too, and does nothing
    const disable = await call(socket, "POST", "/ops/grants/person:2/disable", { raw: big })
    expect(disable.status).toBe(413)
    const grants = (await call(socket, "GET", "/ops/grants")).json as Array<Record<string, unknown>>
    expect(grants.find((g) => g.id === "person:2")).toMatchObject({ active: true })
    // just under the limit is read (and then refused for its content)
    const under = JSON.stringify({ label: "y".repeat(256 * 1024 - 20) })
    const r = await call(socket, "POST", "/ops/grants/person:2/rename", { raw: under })
    expect(r.status).toBe(400)
    // the listener still answers afterwards
    expect((await call(socket, "GET", "/ops/grants")).status).toBe(200)
  })

  it("logs one JSON line per request (method, path, status) and never the token or a body", () => {
    const requests = logs.lines.filter((l) => l.message === "ops request")
    expect(requests.length).toBeGreaterThan(30)
    for (const l of requests) {
      expect(Object.keys(l.annotations).sort()).toEqual(["listener", "method", "ms", "path", "status"])
      expect(l.level).toBe("INFO")
    }
    expect(requests.some((l) => l.annotations.status === 401 && l.annotations.path === "/ops/status")).toBe(true)
    expect(requests.some((l) => l.annotations.status === 201 && l.annotations.path === "/ops/grants")).toBe(true)
    const all = JSON.stringify(logs.lines)
    expect(all).not.toContain(OPS_TOKEN)
    expect(all).not.toContain(bearerToken)
    expect(all).not.toContain("feeder.access")
  })
})

describe("ops listener lifecycle", () => {
  it("removes its socket on shutdown, replaces a stale one, and refuses a socket another listener serves", async () => {
    const { dir, cleanup } = tempDir("gn-ol-")
    try {
      const config = testConfig(dir)
      const quiet = captureLogs().layer
      const first = await startListener(config, quiet)
      expect(lstatSync(first.socket).isSocket()).toBe(true)
      const second = await Effect.runPromiseExit(
        Layer.launch(OpsListenerLive.pipe(Layer.provide(storeLayer(config)))).pipe(Effect.timeout("10 seconds"), Effect.provide(quiet))
      )
      expect(Exit.isFailure(second)).toBe(true)
      expect(JSON.stringify(second)).toContain("ops-socket-unavailable")
      expect((await call(first.socket, "GET", "/ops/grants")).status).toBe(200)
      await first.stop()
      expect(existsSync(first.socket)).toBe(false)

      // a stale socket left by a crashed process is removed and replaced
      const child = spawn(process.execPath, [
        "-e", "require('node:net').createServer().listen(process.argv[1], () => console.log('ready'))", first.socket
      ], { stdio: ["ignore", "pipe", "inherit"] })
      await new Promise<void>((resolve, reject) => {
        child.once("error", reject)
        child.stdout.on("data", (chunk: Buffer) => {
          if (chunk.toString().includes("ready")) resolve()
        })
      })
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
      child.kill("SIGKILL")
      await exited
      expect(lstatSync(first.socket).isSocket()).toBe(true)
      const third = await startListener(config, quiet)
      expect((await call(third.socket, "GET", "/ops/status")).status).toBe(200)
      await third.stop()
    } finally {
      cleanup()
    }
  })

  it("an unexpected failure is 500 {error: internal} with nothing else, and the cause is logged", async () => {
    const logs = captureLogs()
    const { dir, cleanup } = tempDir("gn-ol-")
    try {
      const config = testConfig(dir)
      const ops = { listGrants: () => Effect.die(new Error("boom: SELECT * FROM grant")) } as unknown as OpsStore
      const scopes = {} as unknown as ScopeStore
      const app = makeOpsApp({ config, startedAt: "2025-01-01T00:00:00.000Z" }).pipe(
        Effect.provideService(OpsStore, ops), Effect.provideService(ScopeStore, scopes), Effect.provideService(AppConfig, config)
      )
      const handler = HttpApp.toWebHandler(app.pipe(Effect.provide(logs.layer)) as Effect.Effect<never, never, HttpServerRequest.HttpServerRequest>)
      const res = await handler(new Request("http://ops.invalid/ops/grants", {
        headers: { authorization: `Bearer ${Redacted.value(config.env.opsToken)}` }
      }))
      expect(res.status).toBe(500)
      expect(await res.text()).toBe(JSON.stringify({ error: "internal" }))
      const failed = logs.lines.find((l) => l.message === "ops request failed")
      expect(String(failed?.annotations.cause)).toContain("boom")
      expect(logs.lines.find((l) => l.message === "ops request")?.annotations).toMatchObject({ status: 500, path: "/ops/grants" })
    } finally {
      cleanup()
    }
  })
})
