/**
 * The built CLI (`node dist/src/ops/cli.js`) against the ops listener running in this process on
 * a temp data dir: the ops commands with and without --json, exit codes, and the trust checks
 * that run before the ops token is sent (architecture.md §11 "CLI groundnote").
 */
import { spawn } from "node:child_process"
import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { BEARER_RE } from "../../src/db/ops-store.js"
import { VERSION } from "../../src/version.js"
import { tempDir, testConfig } from "../support/env.js"
import { captureLogs } from "../support/logs.js"
import { OPS_TOKEN, type Started, startListener } from "./support.js"

const root = join(import.meta.dirname, "..", "..")
const cliPath = join(root, "dist", "src", "ops", "cli.js")

const cleanEnv = (): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("GROUNDNOTE_") && v !== undefined) env[k] = v
  return env
}

interface Result { readonly code: number | null; readonly stdout: string; readonly stderr: string }

/** Spawns the CLI asynchronously (the listener answers from this process's event loop). */
const cli = (args: ReadonlyArray<string>, env: Record<string, string>): Promise<Result> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath, ...args], { env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => { stdout += d.toString() })
    child.stderr.on("data", (d: Buffer) => { stderr += d.toString() })
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000)
    child.on("error", reject)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })

const json = (r: Result): Record<string, unknown> => JSON.parse(r.stdout) as Record<string, unknown>

describe("groundnote ops commands against the ops socket", { timeout: 90_000 }, () => {
  const { dir, cleanup } = tempDir("gn-oc-")
  const logs = captureLogs()
  let listener: Started
  const env = (): Record<string, string> => ({ ...cleanEnv(), GROUNDNOTE_DATA_DIR: dir, GROUNDNOTE_OPS_TOKEN: OPS_TOKEN })

  beforeAll(async () => {
    listener = await startListener(testConfig(dir), logs.layer)
  })
  afterAll(async () => {
    await listener.stop()
    cleanup()
  })

  it("status --json prints only OpsStatus on stdout", async () => {
    const r = await cli(["status", "--json"], env())
    expect(r.stderr).toBe("")
    expect(r.code).toBe(0)
    expect(json(r)).toMatchObject({ service: "groundnote", instance: "acme", version: VERSION, data_dir: realpathSync(dir) })
  })

  it("status without --json prints to stderr only", async () => {
    const r = await cli(["status"], env())
    expect(r.code).toBe(0)
    expect(r.stdout).toBe("")
    expect(r.stderr).toContain("instance acme")
    expect(r.stderr).toContain("sales: no file yet (groundnote scope create sales)")
  })

  it("scope create makes the file; a second time is exit 1 with scope-exists", async () => {
    const r = await cli(["scope", "create", "sales", "--json"], env())
    expect(r.code).toBe(0)
    expect(json(r)).toEqual({ scope: "sales", created: true })
    const human = await cli(["scope", "create", "ops"], env())
    expect(human.code).toBe(0)
    expect(human.stdout).toBe("")
    expect(human.stderr).toContain("created the file of scope ops")
    const again = await cli(["scope", "create", "sales", "--json"], env())
    expect(again.code).toBe(1)
    expect(json(again)).toMatchObject({ error: "scope-exists" })
    expect(again.stderr).toMatch(/^groundnote: scope-exists: .+\n$/)
    const status = json(await cli(["status", "--json"], env()))
    expect(status.scopes).toMatchObject([{ scope: "sales", created: true }, { scope: "ops", created: true }])
  })

  let bearerId = ""
  let token = ""

  it("grants create of a bearer grant without --json prints the token alone on stdout", async () => {
    const r = await cli(["grants", "create", "--kind", "service", "--auth", "bearer", "--scope", "sales", "--scope", "ops",
      "--right", "read", "--right", "propose", "--label", "feeder"], env())
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^gn_[A-Za-z0-9_-]{43}\n$/)
    token = r.stdout.trim()
    expect(token).toMatch(BEARER_RE)
    expect(r.stderr).toContain("shown this once")
    expect(r.stderr).not.toContain(token)
    bearerId = /service:\d+/.exec(r.stderr)?.[0] ?? ""
    expect(bearerId).not.toBe("")
  })

  it("grants create --json answers GrantOut plus the token; list never shows it", async () => {
    const r = await cli(["grants", "create", "--json", "--kind", "service", "--auth", "bearer", "--scope", "sales", "--right", "read"], env())
    expect(r.code).toBe(0)
    expect(r.stderr).toBe("")
    const g = json(r)
    expect(g).toMatchObject({ kind: "service", auth: "bearer", identity: null, scopes: ["sales"], rights: ["read"], active: true })
    expect(String(g.token)).toMatch(BEARER_RE)
    const person = await cli(["grants", "create", "--json", "--kind", "person", "--auth", "email", "--identity", "Anna@Example.com",
      "--scope", "sales", "--right", "read", "--right", "decide"], env())
    expect(person.code).toBe(0)
    expect(json(person)).toMatchObject({ identity: "anna@example.com", rights: ["read", "decide"] })
    expect(json(person)).not.toHaveProperty("token")

    const list = await cli(["grants", "list", "--json"], env())
    expect(list.code).toBe(0)
    const grants = JSON.parse(list.stdout) as Array<Record<string, unknown>>
    expect(grants.map((x) => x.id)).toEqual([bearerId, g.id, json(person).id])
    expect(list.stdout).not.toContain(token)
    expect(list.stdout).not.toContain(String(g.token))
    const human = await cli(["grants", "list"], env())
    expect(human.code).toBe(0)
    expect(human.stdout).toBe("")
    expect(human.stderr).toContain(`${bearerId}  active  service/bearer  sha256:`)
    expect(human.stderr).toContain("anna@example.com")
  })

  it("grants create with a bad value is refused by the service: exit 1, validation-failed", async () => {
    const r = await cli(["grants", "create", "--json", "--kind", "service", "--auth", "bearer", "--scope", "nowhere", "--right", "read"], env())
    expect(r.code).toBe(1)
    expect(json(r)).toMatchObject({ error: "validation-failed", issues: [{ path: "scopes[0]" }] })
    expect(r.stderr).toMatch(/^groundnote: validation-failed: grant is invalid: scopes\[0\]/)
    const decide = await cli(["grants", "create", "--kind", "service", "--auth", "bearer", "--scope", "sales", "--right", "decide"], env())
    expect(decide.code).toBe(1)
    expect(decide.stdout).toBe("")
    expect(decide.stderr).toMatch(/^groundnote: validation-failed: .*decide/)
  })

  it("grants create --rights read,decide,redact gives a person redact; a service is refused it; an unknown right is a usage error", async () => {
    const r = await cli(["grants", "create", "--json", "--kind", "person", "--auth", "email", "--identity", "dpo@example.com",
      "--scope", "sales", "--rights", "read,decide,redact"], env())
    expect(r.code).toBe(0)
    expect(json(r)).toMatchObject({ identity: "dpo@example.com", rights: ["read", "decide", "redact"] })
    const repeated = await cli(["grants", "create", "--json", "--kind", "person", "--auth", "email", "--identity", "dpo2@example.com",
      "--scope", "sales", "--right", "redact", "--right", "read"], env())
    expect(json(repeated)).toMatchObject({ rights: ["read", "redact"] })
    const service = await cli(["grants", "create", "--kind", "service", "--auth", "bearer", "--scope", "sales", "--rights", "read,redact"], env())
    expect(service.code).toBe(1)
    expect(service.stdout).toBe("")
    expect(service.stderr).toMatch(/^groundnote: validation-failed: .*only a person can hold redact/)
    const unknown = await cli(["grants", "create", "--kind", "person", "--auth", "email", "--identity", "x@example.com", "--scope", "sales", "--rights", "read,erase"], env())
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toContain("--rights: erase is not one of read, propose, decide, redact")
  })

  it("grants rename copies the grant with the new label; grants disable disables it", async () => {
    const r = await cli(["grants", "rename", bearerId, "--label", "feeder (mail)", "--json"], env())
    expect(r.code).toBe(0)
    const renamed = json(r)
    expect(renamed.id).not.toBe(bearerId)
    expect(renamed).toMatchObject({ label: "feeder (mail)", active: true, scopes: ["ops", "sales"] })
    const d = await cli(["grants", "disable", String(renamed.id)], env())
    expect(d.code).toBe(0)
    expect(d.stdout).toBe("")
    expect(d.stderr).toContain(`disabled ${String(renamed.id)}  disabled 20`)
    const dj = await cli(["grants", "disable", "--json", String(renamed.id)], env())
    expect(json(dj)).toMatchObject({ id: renamed.id, active: false })
    const missing = await cli(["grants", "disable", "service:999"], env())
    expect(missing.code).toBe(1)
    expect(missing.stderr).toMatch(/^groundnote: not-found: /)
    const list = JSON.parse((await cli(["grants", "list", "--json"], env())).stdout) as Array<Record<string, unknown>>
    expect(list.find((g) => g.id === bearerId)).toMatchObject({ active: false, label: "feeder" })
  })

  it("usage errors exit 2", async () => {
    const cases = [
      ["grants", "create", "--kind", "robot", "--auth", "bearer", "--scope", "sales", "--right", "read"],
      ["grants", "create", "--kind", "service", "--auth", "bearer", "--right", "read"],
      ["grants", "create", "--kind", "service", "--auth", "bearer", "--scope", "sales"],
      ["grants", "rename", "person:1"],
      ["grants", "disable"],
      ["scope", "create"],
      ["status", "--nope"]
    ]
    const results = await Promise.all(cases.map((args) => cli(args, env())))
    for (const [i, r] of results.entries()) {
      const args = (cases[i] ?? []).join(" ")
      expect(r.code, args).toBe(2)
      expect(r.stdout, args).toBe("")
    }
  })

  it("a wrong token is the service's 401: exit 1 with unauthorized", async () => {
    const r = await cli(["status", "--json"], { ...env(), GROUNDNOTE_OPS_TOKEN: "w".repeat(40) })
    expect(r.code).toBe(1)
    expect(json(r)).toMatchObject({ error: "unauthorized" })
    expect(r.stderr).toMatch(/^groundnote: unauthorized: /)
  })

  it("never logs the ops token or a bearer token", () => {
    const all = JSON.stringify(logs.lines)
    expect(all).not.toContain(OPS_TOKEN)
    expect(all).not.toContain(token)
    expect(logs.lines.filter((l) => l.message === "ops request").length).toBeGreaterThan(10)
  })
})

describe("trust checks before the token is sent", { timeout: 60_000 }, () => {
  const base = mkdtempSync(join(tmpdir(), "gn-ot-"))
  const servers: Array<Server> = []
  let connections = 0
  afterAll(async () => {
    for (const s of servers) await new Promise<void>((r) => s.close(() => r()))
    chmodSync(base, 0o700)
    rmSync(base, { recursive: true, force: true })
  })

  /** A data dir (0700) whose ops.sock is a trap: any connection to it is counted. */
  const trapDir = async (path: string): Promise<string> => {
    mkdirSync(path, { recursive: true, mode: 0o700 })
    chmodSync(path, 0o700)
    const server = createServer((socket) => {
      connections++
      socket.destroy()
    })
    await new Promise<void>((r) => server.listen(join(path, "ops.sock"), () => r()))
    servers.push(server)
    return path
  }

  const env = (dataDir: string, token: string | null = OPS_TOKEN): Record<string, string> => ({
    ...cleanEnv(), GROUNDNOTE_DATA_DIR: dataDir, ...(token === null ? {} : { GROUNDNOTE_OPS_TOKEN: token })
  })

  const expectFailure = async (dataDir: string, code: string, token: string | null = OPS_TOKEN) => {
    const before = connections
    const r = await cli(["status", "--json"], env(dataDir, token))
    expect(r.code, r.stderr).toBe(1)
    expect(json(r)).toMatchObject({ error: code })
    expect(r.stderr).toMatch(new RegExp(`^groundnote: ${code}: .+\\n$`))
    expect(connections - before).toBe(0)
    return r
  }

  beforeAll(() => {
    chmodSync(base, 0o700)
  })

  it("the trap itself is reached when everything is in order (control)", async () => {
    const ok = await trapDir(join(base, "ok"))
    const before = connections
    const r = await cli(["status", "--json"], env(ok))
    expect(r.code).toBe(1)
    expect(connections - before).toBe(1)
  })

  it("a missing data dir is ops-unreachable", async () => {
    const r = await expectFailure(join(base, "missing"), "ops-unreachable")
    expect(r.stderr).toContain(join(base, "missing"))
  })

  it("a data dir without ops.sock is ops-unreachable", async () => {
    const empty = join(base, "empty")
    mkdirSync(empty, { mode: 0o700 })
    await expectFailure(empty, "ops-unreachable")
  })

  it("a data dir with mode 0755 is ops-socket-untrusted", async () => {
    const open = await trapDir(join(base, "open"))
    chmodSync(open, 0o755)
    const r = await expectFailure(open, "ops-socket-untrusted")
    expect(r.stderr).toContain("chmod 700")
  })

  it("a symlinked data dir is ops-socket-untrusted", async () => {
    const real = await trapDir(join(base, "real"))
    const link = join(base, "link")
    symlinkSync(real, link)
    const r = await expectFailure(link, "ops-socket-untrusted")
    expect(r.stderr).toContain("symlink")
  })

  it("a world-writable parent without the sticky bit is ops-socket-untrusted; with it, or only group-writable, fine", async () => {
    const parent = join(base, "shared")
    mkdirSync(parent, { mode: 0o700 })
    const data = await trapDir(join(parent, "data"))
    chmodSync(parent, 0o777)
    const r = await expectFailure(data, "ops-socket-untrusted")
    expect(r.stderr).toContain(parent)
    chmodSync(parent, 0o1777)
    const before = connections
    await cli(["status", "--json"], env(data))
    expect(connections - before).toBe(1)
    // §11 names others only: a group-writable parent (a setgid 2775 /srv) is the operator's group
    chmodSync(parent, 0o2775)
    await cli(["status", "--json"], env(data))
    expect(connections - before).toBe(2)
    chmodSync(parent, 0o700)
  })

  it("an ops.sock that is not a socket is ops-socket-untrusted", async () => {
    const fake = join(base, "fake")
    mkdirSync(fake, { mode: 0o700 })
    writeFileSync(join(fake, "ops.sock"), "")
    await expectFailure(fake, "ops-socket-untrusted")
  })

  it("a missing GROUNDNOTE_OPS_TOKEN is ops-token-missing", async () => {
    const ok = join(base, "ok")
    await expectFailure(ok, "ops-token-missing", null)
    await expectFailure(ok, "ops-token-missing", "")
  })

  it("a relative GROUNDNOTE_DATA_DIR resolves against the working directory", async () => {
    const r = await new Promise<Result>((resolve, reject) => {
      const child = spawn(process.execPath, [cliPath, "status", "--json"], { env: env("ok"), cwd: base, stdio: ["ignore", "pipe", "pipe"] })
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (d: Buffer) => { stdout += d.toString() })
      child.stderr.on("data", (d: Buffer) => { stderr += d.toString() })
      child.on("error", reject)
      child.on("close", (code) => resolve({ code, stdout, stderr }))
    })
    // the trap closes the connection without an answer: reached, so the checks passed
    expect(r.code).toBe(1)
    expect(json(r)).toMatchObject({ error: "ops-unreachable" })
  })
})
