/**
 * The operator's night and morning, end to end with real processes (architecture.md §11): `groundnote serve`
 * with data (a feeder's source and proposals, a person's confirmations and a rejection) →
 * `groundnote backup nightly` (the dead-man endpoint on 127.0.0.1 gets its ping) → the scope file
 * is deleted → the service is stopped → `groundnote restore` → the file is moved in → the
 * service starts again → every rule and decision is back and search finds them.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { csrfToken } from "../../src/auth/csrf.js"
import { countIn } from "../backup/support.js"
import { baseConfigJson, tempDir } from "../support/env.js"
import { mailProposal, mailSource, manualProposal } from "../support/fixtures.js"
import { CLI, cleanEnv, cli, freePort, json } from "./support.js"

const S = (c: string) => c.repeat(40)
const DEV_API = S("p")

interface Running {
  readonly child: ChildProcess
  readonly stdout: () => string
}

describe("an operator's night and morning", { timeout: 600_000 }, () => {
  const { dir: root, cleanup } = tempDir("gn-story-")
  const dataDir = join(root, "data")
  const scopeFile = join(dataDir, "scopes", "sales.sqlite")
  let port = 0
  let url = ""
  let env: Record<string, string> = {}
  let deadman: Server
  const pings: Array<string> = []
  let service: Running | null = null
  let feeder = ""

  const start = async (): Promise<Running> => {
    const child = spawn(process.execPath, [CLI, "serve"], { env, cwd: root, stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    child.stdout?.on("data", (d: Buffer) => { out += d.toString() })
    child.stderr?.on("data", () => undefined)
    const until = Date.now() + 60_000
    while (Date.now() < until) {
      if (child.exitCode !== null) throw new Error(`serve exited ${child.exitCode}: ${out}`)
      const up = await fetch(`${url}/healthz`).then((r) => r.ok, () => false)
      if (up && existsSync(join(dataDir, "ops.sock"))) return { child, stdout: () => out }
      await new Promise((r) => setTimeout(r, 200))
    }
    child.kill("SIGKILL")
    throw new Error("serve did not come up")
  }
  const stop = (r: Running) => new Promise<void>((resolve) => {
    if (r.child.exitCode !== null) return resolve()
    r.child.once("exit", () => resolve())
    r.child.kill("SIGTERM")
  })

  const asFeeder = () => ({ ...env, GROUNDNOTE_URL: url, GROUNDNOTE_API_TOKEN: feeder })
  const asPerson = () => ({ ...env, GROUNDNOTE_URL: url, GROUNDNOTE_API_TOKEN: DEV_API })

  /** A decision as the person on the approval channel (session cookie and csrf token, from the origin of public_url). */
  const decide = async (cookie: string, id: string, body: Record<string, unknown>) => {
    const r = await fetch(`${url}/v1/rules/${id}/decision`, {
      method: "POST",
      headers: { cookie, origin: url, csrf: csrfToken(S("s"), "dev@example.com"), "content-type": "application/json" },
      body: JSON.stringify(body)
    })
    expect(r.status, await r.clone().text()).toBe(200)
  }

  beforeAll(async () => {
    mkdirSync(dataDir, { mode: 0o700 })
    mkdirSync(join(root, "backup"), { mode: 0o700 })
    mkdirSync(join(root, "exports"), { mode: 0o700 })
    mkdirSync(join(root, "restore"), { mode: 0o700 })
    deadman = createServer((req, res) => {
      pings.push(`${req.method ?? ""} ${req.url ?? ""}`)
      res.writeHead(200).end()
    })
    await new Promise<void>((r) => deadman.listen(0, "127.0.0.1", () => r()))
    port = await freePort()
    url = `http://127.0.0.1:${port}`
    writeFileSync(join(root, "groundnote.json"), JSON.stringify({
      ...baseConfigJson(["sales"]),
      public_url: url,
      backup: {
        kind: "copy", directory: join(root, "backup"), export_directory: join(root, "exports"),
        deadman_url: `http://127.0.0.1:${(deadman.address() as AddressInfo).port}/ping/nightly`
      }
    }))
    writeFileSync(join(root, "mail.json"), JSON.stringify(mailSource()))
    writeFileSync(join(root, "p1.json"), JSON.stringify(mailProposal()))
    writeFileSync(join(root, "p2.json"), JSON.stringify(manualProposal("Invoices of Müller GmbH are paid within 30 days net", { keywords: ["Zahlungsziel"] })))
    writeFileSync(join(root, "p3.json"), JSON.stringify(manualProposal("Always order hook rails by the pallet, never singly", { keywords: ["Palette"] })))
    env = {
      ...cleanEnv(),
      GROUNDNOTE_AUTH_MODE: "dev-token", GROUNDNOTE_SESSION_SECRET: S("s"), GROUNDNOTE_OPS_TOKEN: S("o"),
      GROUNDNOTE_DEV_MCP_TOKEN: S("m"), GROUNDNOTE_DEV_APPROVAL_TOKEN: S("a"), GROUNDNOTE_DEV_API_TOKEN: DEV_API,
      GROUNDNOTE_DEV_EMAIL: "dev@example.com", GROUNDNOTE_DATA_DIR: dataDir, GROUNDNOTE_CONFIG: join(root, "groundnote.json"),
      GROUNDNOTE_PORT: String(port)
    }
  })
  afterAll(async () => {
    if (service !== null) await stop(service)
    await new Promise<void>((r) => deadman.close(() => r()))
    cleanup()
  })

  const before: Record<string, unknown> = {}
  const counted: Record<string, number> = {}

  it("evening: the service runs with data — a scope, grants, a source, three proposals, two confirmed, one rejected", async () => {
    service = await start()
    const scope = await cli(["scope", "create", "sales"], env)
    expect(scope.code, scope.stderr).toBe(0)
    const person = await cli(["grants", "create", "--kind", "person", "--auth", "email", "--identity", "dev@example.com", "--scope", "sales", "--right", "read", "--right", "propose", "--right", "decide"], env)
    expect(person.code, person.stderr).toBe(0)
    const f = await cli(["grants", "create", "--kind", "service", "--auth", "bearer", "--scope", "sales", "--right", "read", "--right", "propose", "--label", "feeder"], env)
    expect(f.code, f.stderr).toBe(0)
    feeder = f.stdout.trim()
    expect((await cli(["sources", "put", "--body", join(root, "mail.json")], asFeeder())).code).toBe(0)
    for (const p of ["p1.json", "p2.json", "p3.json"]) {
      const r = await cli(["propose", "--body", join(root, p)], asFeeder())
      expect(r.code, r.stderr).toBe(0)
    }
    const login = await fetch(`${url}/approval/login`, { method: "POST", redirect: "manual", headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" }, body: new URLSearchParams({ token: S("a") }).toString() })
    expect(login.status).toBe(303)
    const cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] ?? ""
    await decide(cookie, "sales-0001", { decision: "confirm", version: 1 })
    await decide(cookie, "sales-0002", { decision: "confirm", version: 1, reason: "agreed with accounting" })
    await decide(cookie, "sales-0003", { decision: "reject", version: 1, reason: "we order singly for small customers" })
    const open = await cli(["approvals", "open"], asPerson())
    expect(open.stdout).toBe("0\n")
    for (const id of ["sales-0001", "sales-0002"]) {
      const v = await cli(["rules", "versions", id, "--json"], asFeeder())
      expect(v.code, v.stderr).toBe(0)
      before[id] = json(v)
      expect((json(v).decisions as Array<unknown>).length).toBe(1)
    }
    for (const t of ["rule", "rule_version", "decision", "source"]) counted[t] = await countIn(scopeFile, t)
    expect(counted).toMatchObject({ rule: 3, decision: 3 })
  })

  it("night: backup nightly copies, probes, exports and pings the dead-man endpoint", async () => {
    const r = await cli(["backup", "nightly", "--json"], env)
    expect(r.code, r.stdout).toBe(0)
    expect(json(r)).toMatchObject({ ok: true, run: { ok: true }, probe: { ok: true, scopes: [{ scope: "sales", ok: true }] }, ping: { ok: true } })
    expect(pings).toEqual(["GET /ping/nightly"])
  })

  it("morning: the scope file is gone; the operator stops the service, restores the night's copy, moves it in and starts again", async () => {
    for (const suffix of ["", "-wal", "-shm"]) rmSync(`${scopeFile}${suffix}`, { force: true })
    if (service !== null) await stop(service)
    service = null
    const target = join(root, "restore", "sales.sqlite")
    const r = await cli(["restore", "--to", target, "--scope", "sales", "--json"], env)
    expect(r.code, r.stdout + r.stderr).toBe(0)
    expect(json(r)).toMatchObject({ ok: true, scope: "sales", from: "copy", target, warnings: [] })
    renameSync(target, scopeFile)
    for (const t of Object.keys(counted)) expect(await countIn(scopeFile, t), t).toBe(counted[t])
    service = await start()
  })

  it("every rule and decision is back, the scope is not locked, search finds the rules, doctor finds no failure", async () => {
    const status = await cli(["status", "--json"], env)
    expect(status.code, status.stderr).toBe(0)
    expect(json(status).scopes).toEqual([expect.objectContaining({ scope: "sales", created: true, locked: false })])
    for (const id of ["sales-0001", "sales-0002"]) {
      const v = await cli(["rules", "versions", id, "--json"], asFeeder())
      expect(v.code, v.stderr).toBe(0)
      expect(json(v)).toEqual(before[id])
    }
    const rejected = await cli(["rules", "get", "sales-0003", "--include-proposals"], asFeeder())
    expect(rejected.code).toBe(1)
    expect(rejected.stderr).toMatch(/^groundnote: not-found: /)
    const [lieferzeit, muller] = await Promise.all([
      cli(["search", "--scope", "sales", "--text", "Lieferzeit Hakenleisten", "--json"], asFeeder()),
      cli(["search", "--scope", "sales", "--text", "Zahlungsziel Müller", "--json"], asFeeder())
    ])
    for (const [r, id] of [[lieferzeit, "sales-0001"], [muller, "sales-0002"]] as const) {
      expect(r.code, r.stderr).toBe(0)
      const bundles = json(r).bundles as Array<{ head: { ref: string; status: string } }>
      expect(bundles[0]?.head).toMatchObject({ ref: expect.stringMatching(new RegExp(`^rule/${id}@\\d+$`)), status: "confirmed" })
    }
    const doctor = await cli(["doctor", "--json"], env)
    const failed = (JSON.parse(doctor.stdout) as Array<{ id: string; status: string }>).filter((f) => f.status === "fail")
    expect(failed).toEqual([])
    expect(doctor.code).toBe(0)
    expect(service?.stdout() ?? "").not.toContain(feeder)
  })
})
