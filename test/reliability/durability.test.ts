/**
 * Durability (docs/reliability.md): a real `groundnote serve` (the built CLI, dist/) takes concurrent writes
 * — sources and proposals into two scopes from several clients at once — and is killed with
 * SIGKILL in the middle of them. Before it starts again every SQLite file of the data dir passes
 * `PRAGMA integrity_check`; after the restart every write that was acknowledged (201) before the
 * kill is back, readable over the API. GROUNDNOTE_DURABILITY_ROUNDS rounds (default 3).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Reactivity from "@effect/experimental/Reactivity"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { baseConfigJson, tempDir } from "../support/env.js"
import { mailSource, manualProposal } from "../support/fixtures.js"
import { CLI, cleanEnv, cli, freePort } from "../e2e/support.js"
import { isErrorBody, raw } from "./support.js"

const ROUNDS = Number(process.env.GROUNDNOTE_DURABILITY_ROUNDS ?? "3")
const WRITERS = 8
/** The kill comes after at least this many acknowledged writes of the round. */
const MIN_ACKED = 40
const S = (c: string) => c.repeat(40)
const DEV_API = S("p")

/** The integrity_check answer of one SQLite file (opened as the service opens it: its WAL replayed). */
const integrity = (file: string): Promise<string> =>
  Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const sql = yield* SqliteClient.make({ filename: file }).pipe(Effect.provide(Reactivity.layer))
    const rows = yield* sql<{ integrity_check: string }>`PRAGMA integrity_check`
    return rows.map((r) => r.integrity_check).join("; ")
  })))

const sqliteFiles = (dataDir: string): Array<string> => {
  const out: Array<string> = []
  for (const name of readdirSync(dataDir)) if (name.endsWith(".sqlite")) out.push(join(dataDir, name))
  const scopes = join(dataDir, "scopes")
  if (existsSync(scopes)) for (const name of readdirSync(scopes)) if (name.endsWith(".sqlite")) out.push(join(scopes, name))
  return out
}

interface Acked {
  readonly kind: "source" | "rule"
  readonly scope: string
  readonly id: string
}

describe("kill -9 during concurrent writes", { timeout: 600_000 }, () => {
  const { dir: root, cleanup } = tempDir("gn-durable-")
  const dataDir = join(root, "data")
  let url = ""
  let env: Record<string, string> = {}
  let child: ChildProcess | null = null
  const figures: Array<string> = []

  const start = async (): Promise<ChildProcess> => {
    const c = spawn(process.execPath, [CLI, "serve"], { env, cwd: root, stdio: ["ignore", "ignore", "ignore"] })
    const until = Date.now() + 60_000
    while (Date.now() < until) {
      if (c.exitCode !== null) throw new Error(`serve exited ${String(c.exitCode)}`)
      const up = await fetch(`${url}/healthz`).then((r) => r.ok, () => false)
      if (up && existsSync(join(dataDir, "ops.sock"))) return c
      await new Promise((r) => setTimeout(r, 100))
    }
    c.kill("SIGKILL")
    throw new Error("serve did not come up")
  }
  const kill9 = (c: ChildProcess) => new Promise<void>((resolve) => {
    if (c.exitCode !== null || c.signalCode !== null) return resolve()
    c.once("exit", () => resolve())
    c.kill("SIGKILL")
  })

  beforeAll(async () => {
    mkdirSync(dataDir, { mode: 0o700 })
    const port = await freePort()
    url = `http://127.0.0.1:${port}`
    writeFileSync(join(root, "groundnote.json"), JSON.stringify({
      ...baseConfigJson(["sales", "ops"]),
      public_url: url,
      limits: { requests_per_minute: 100_000 }
    }))
    env = {
      ...cleanEnv(),
      GROUNDNOTE_AUTH_MODE: "dev-token", GROUNDNOTE_SESSION_SECRET: S("s"), GROUNDNOTE_OPS_TOKEN: S("o"),
      GROUNDNOTE_DEV_MCP_TOKEN: S("m"), GROUNDNOTE_DEV_APPROVAL_TOKEN: S("a"), GROUNDNOTE_DEV_API_TOKEN: DEV_API,
      GROUNDNOTE_DEV_EMAIL: "dev@example.com", GROUNDNOTE_DATA_DIR: dataDir, GROUNDNOTE_CONFIG: join(root, "groundnote.json"),
      GROUNDNOTE_PORT: String(port)
    }
    child = await start()
    for (const scope of ["sales", "ops"]) expect((await cli(["scope", "create", scope], env)).code).toBe(0)
    const person = await cli(["grants", "create", "--kind", "person", "--auth", "email", "--identity", "dev@example.com", "--scope", "sales", "--scope", "ops", "--right", "read", "--right", "propose"], env)
    expect(person.code, person.stderr).toBe(0)
  }, 180_000)
  afterAll(async () => {
    if (child !== null) await kill9(child)
    if (figures.length > 0) console.log(`durability:\n${figures.join("\n")}`)
    cleanup()
  }, 60_000)

  const post = (path: string, body: unknown) =>
    fetch(`${url}${path}`, { method: "POST", headers: { authorization: `Bearer ${DEV_API}`, "content-type": "application/json" }, body: JSON.stringify(body) })

  /** One writer: sources and proposals, alternating scopes, until stopped; every 201 is remembered. */
  const writer = async (round: number, w: number, acked: Array<Acked>, stop: { now: boolean }, tally: { sent: number; failed: number }) => {
    for (let n = 0; !stop.now; n++) {
      const scope = (w + n) % 2 === 0 ? "sales" : "ops"
      tally.sent++
      try {
        if (n % 2 === 0) {
          const id = `mail:<r${String(round)}-w${String(w)}-n${String(n)}@example.com>`
          const r = await post("/v1/sources", { ...mailSource({ scope, text: `Round ${String(round)} writer ${String(w)} mail ${String(n)}: Lieferzeit Hakenleisten` }, id), attachments: [] })
          if (r.status === 201) acked.push({ kind: "source", scope, id })
        } else {
          const statement = `Durable rule ${String(round)}.${String(w)}.${String(n)}: order item ${String(round * 100_000 + w * 1000 + n)} only with a written confirmation`
          const r = await post("/v1/proposals", manualProposal(statement, { scope, keywords: [`k${String(round)}w${String(w)}n${String(n)}`] }))
          if (r.status === 201) {
            const ref = String(((await r.json()) as { ref?: unknown }).ref ?? "")
            acked.push({ kind: "rule", scope, id: ref.replace(/^rule\/|@\d+$/g, "") })
          } else await r.body?.cancel()
        }
      } catch {
        tally.failed++ // the kill cut this one: not acknowledged
        return
      }
    }
  }

  for (let round = 1; round <= ROUNDS; round++) {
    it(`round ${String(round)}: every acknowledged write is back after kill -9, every file passes integrity_check`, async () => {
      if (child === null) child = await start()
      const acked: Array<Acked> = []
      const stop = { now: false }
      const tally = { sent: 0, failed: 0 }
      const writers = Array.from({ length: WRITERS }, (_, w) => writer(round, w, acked, stop, tally))
      // kill in the middle of the writes: once enough are acknowledged, at a different moment each round
      const until = Date.now() + 30_000
      while (acked.length < MIN_ACKED && Date.now() < until) await new Promise((r) => setTimeout(r, 20))
      await new Promise((r) => setTimeout(r, 37 * round))
      await kill9(child)
      child = null
      stop.now = true
      // a 201 the process sent before it died still counts as acknowledged when it is read afterwards
      await Promise.all(writers)
      expect(acked.length).toBeGreaterThanOrEqual(MIN_ACKED)

      const files = sqliteFiles(dataDir)
      expect(files.length).toBeGreaterThanOrEqual(3)
      for (const file of files) expect([file, await integrity(file)]).toEqual([file, "ok"])

      child = await start()
      const missing: Array<Acked> = []
      for (const a of acked) {
        const path = a.kind === "source" ? `/v1/sources/${encodeURIComponent(a.id)}?scope=${a.scope}` : `/v1/rules/${a.id}?include_proposals=true`
        const r = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${DEV_API}` } })
        await r.body?.cancel()
        if (r.status !== 200) missing.push(a)
      }
      figures.push(`  round ${String(round)}: ${String(tally.sent)} writes sent by ${String(WRITERS)} clients, ${String(acked.length)} acknowledged, ${String(tally.failed)} cut by the kill, ${String(missing.length)} lost; ${String(files.length)} files integrity_check ok`)
      expect(missing).toEqual([])
    })
  }

  it("the served process answers a chunked body over the limit with its 413, on a route and on /mcp", async () => {
    if (child === null) child = await start()
    const over = { chunked: [...Array.from({ length: 16 }, () => Buffer.alloc(16 * 1024, 0x20)), Buffer.from(" ")] }
    for (const [path, headers] of [
      ["/v1/search", { authorization: `Bearer ${DEV_API}` }],
      ["/mcp", { authorization: `Bearer ${S("m")}`, accept: "application/json, text/event-stream" }]
    ] as const) {
      const a = await raw(url, { method: "POST", path, headers: { ...headers, "content-type": "application/json" }, body: over })
      expect([path, a.status, isErrorBody(a)]).toEqual([path, 413, true])
    }
  })
})
