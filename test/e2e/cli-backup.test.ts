/**
 * The operator's backup commands of the built CLI against a real service (architecture.md §11,
 * gaps.md §9): backup run|probe|verify|nightly over the ops socket (exit 0, 3 on a failed check,
 * 1 on backup-running), nightly's dead-man ping to an endpoint on 127.0.0.1, restore without the
 * service (every refusal, exit 3 on a failed check, nothing written), and doctor with the service
 * up and down (--json, exit 3 on any fail, plain text when stderr is not a TTY).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import { type AddressInfo, createServer as createNetServer, type Socket } from "node:net"
import { join } from "node:path"
import { Deferred, Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { BackupLock } from "../../src/backup/lock.js"
import { OpsStore } from "../../src/db/ops-store.js"
import { FINDING_IDS } from "../../src/ops/doctor/types.js"
import { type BackupEnv, backupEnv, seedScope, withFile } from "../backup/support.js"
import { baseConfigJson, testConfig } from "../support/env.js"
import { captureLogs } from "../support/logs.js"
import { cleanEnv, cli, GC_PRESSURE, json, type Result, type Service, startService } from "./support.js"

const S = (c: string) => c.repeat(40)
const SECRETS = {
  GROUNDNOTE_AUTH_MODE: "dev-token", GROUNDNOTE_SESSION_SECRET: S("s"), GROUNDNOTE_OPS_TOKEN: S("o"),
  GROUNDNOTE_DEV_MCP_TOKEN: S("m"), GROUNDNOTE_DEV_APPROVAL_TOKEN: S("a"), GROUNDNOTE_DEV_EMAIL: "dev@example.com"
}

describe("backup, restore and doctor from the CLI", { timeout: 300_000 }, () => {
  let env: BackupEnv
  let service: Service
  let deadman: Server
  let pings: Array<string> = []
  let deadmanUrl = ""
  const logs = captureLogs()

  const configFile = (name: string, backup: Record<string, unknown>) => {
    const path = join(env.root, name)
    writeFileSync(path, JSON.stringify({ ...baseConfigJson(), backup }))
    return path
  }
  let goodConfig = ""
  const cliEnv = (config = goodConfig): Record<string, string> => ({
    ...cleanEnv(), ...SECRETS, GROUNDNOTE_DATA_DIR: env.dataDir, GROUNDNOTE_CONFIG: config
  })

  beforeAll(async () => {
    env = backupEnv({ exportDir: true })
    deadman = createServer((req, res) => {
      pings.push(`${req.method ?? ""} ${req.url ?? ""}`)
      res.writeHead(req.url === "/ping/abc123" ? 200 : 500).end("ok")
    })
    await new Promise<void>((r) => deadman.listen(0, "127.0.0.1", () => r()))
    deadmanUrl = `http://127.0.0.1:${(deadman.address() as AddressInfo).port}/ping/abc123`
    const backup = { kind: "copy", directory: env.backupDir, deadman_url: deadmanUrl, export_directory: env.exportDir }
    goodConfig = configFile("groundnote.json", backup)
    service = await startService(testConfig(env.dataDir, { backup }), { logs })
    await service.run(Effect.gen(function*() {
      yield* seedScope("sales", 4)
      yield* seedScope("ops", 2)
    }))
  })
  afterAll(async () => {
    await service.stop()
    await new Promise<void>((r) => deadman.close(() => r()))
    env.cleanup()
  })

  it("backup run: the human report on stderr (stdout empty), --json the RunAnswer", async () => {
    const human = await cli(["backup", "run"], cliEnv())
    expect(human.code, human.stderr).toBe(0)
    expect(human.stdout).toBe("")
    expect(human.stderr).toMatch(/^backup run \(copy\), .*: ok\n {2}ops\.sqlite: ok, .* to .*ops\.sqlite\n {2}sales: ok/)
    const r = await cli(["backup", "run", "--json"], cliEnv())
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toBe("")
    expect(json(r)).toMatchObject({ ok: true, kind: "copy", ran: true, scopes: [{ scope: "sales", ok: true }, { scope: "ops", ok: true }] })
  })

  it("backup probe writes the nightly export; verify --scope checks one scope", async () => {
    const [probe, verify] = [await cli(["backup", "probe", "--json"], cliEnv()), await cli(["backup", "verify", "--scope", "sales"], cliEnv())]
    expect(probe.code, probe.stderr).toBe(0)
    const scopes = json(probe).scopes as Array<{ scope: string; export: { file: string } | null }>
    expect(scopes.map((s) => [s.scope, s.export !== null])).toEqual([["sales", true], ["ops", true]])
    expect(existsSync(scopes[0]?.export?.file ?? "")).toBe(true)
    expect(verify.code, verify.stderr).toBe(0)
    expect(verify.stderr).toMatch(/^backup verify \(copy\), .*: ok\n {2}sales: ok \(\d+ checks\)$/m)
  })

  it("backup nightly: run, probe, then one GET to the dead-man URL; exit 0; the URL is never printed", async () => {
    pings = []
    const r = await cli(["backup", "nightly"], cliEnv())
    expect(r.code, r.stderr).toBe(0)
    expect(pings).toEqual(["GET /ping/abc123"])
    expect(r.stdout).toBe("")
    expect(r.stderr).toContain("backup nightly: ok")
    expect(r.stderr).toContain("dead-man ping: ok (200, attempt 1)")
    expect(r.stderr).not.toContain("abc123")
    const j = await cli(["backup", "nightly", "--json"], cliEnv())
    expect(j.code, j.stderr).toBe(0)
    expect(json(j)).toMatchObject({ ok: true, run: { ok: true }, probe: { ok: true }, ping: { sent: true, ok: true, status: 200, attempts: 1 } })
    expect(j.stdout).not.toContain("abc123")
  })

  it("backup nightly with a dead-man endpoint that fails: reported after bounded attempts, exit 3", async () => {
    pings = []
    const failing = configFile("failing.json", { kind: "copy", directory: env.backupDir, deadman_url: deadmanUrl.replace("abc123", "wrong"), export_directory: env.exportDir })
    const r = await cli(["backup", "nightly", "--json"], cliEnv(failing))
    expect(r.code).toBe(3)
    expect(json(r)).toMatchObject({ ok: false, run: { ok: true }, probe: { ok: true }, ping: { sent: true, ok: false, status: 500, attempts: 3 } })
    expect(pings).toEqual(["GET /ping/wrong", "GET /ping/wrong", "GET /ping/wrong"])
    expect(r.stderr).toMatch(/^groundnote: check-failed: backup nightly failed: the dead-man ping did not pass\n$/)
    const missing = await cli(["backup", "nightly"], cliEnv(join(env.root, "nope.json")))
    expect(missing.code).toBe(1)
    expect(missing.stderr).toMatch(/^groundnote: config-unreadable: backup nightly reads backup\.deadman_url from /)
  })

  /** A dead-man endpoint on 127.0.0.1 that does what `handle` does with each connection; closed after `f`. */
  const withEndpoint = async (handle: (socket: Socket) => void, f: (url: string, accepted: () => number) => Promise<void>) => {
    const sockets: Array<Socket> = []
    const server = createNetServer((socket) => {
      sockets.push(socket)
      socket.on("error", () => undefined)
      handle(socket)
    })
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()))
    try {
      await f(`http://127.0.0.1:${(server.address() as AddressInfo).port}/ping/abc123`, () => sockets.length)
    } finally {
      for (const s of sockets) s.destroy()
      await new Promise<void>((r) => server.close(() => r()))
    }
  }
  // under GC pressure: a timeout that a garbage collection can lose is lost at once
  const nightlyWith = (name: string, url: string, timeoutMs: number) =>
    cli(["backup", "nightly", "--json"], cliEnv(configFile(name, { kind: "copy", directory: env.backupDir, deadman_url: url, export_directory: env.exportDir })), {
      timeoutMs,
      nodeArgs: GC_PRESSURE
    })

  it("backup nightly with a dead-man endpoint that accepts and never answers: three bounded attempts, then exit 3 (the process ends)", async () => {
    await withEndpoint(() => undefined, async (url, accepted) => {
      const started = Date.now()
      // 3 attempts of 10 s, 2 pauses of 2 s, run and probe: the CLI is killed (code null) after 90 s
      const r = await nightlyWith("silent.json", url, 90_000)
      expect(r.code, r.stderr).toBe(3)
      expect(Date.now() - started).toBeLessThan(80_000)
      expect(json(r)).toMatchObject({ ok: false, run: { ok: true }, probe: { ok: true }, ping: { sent: true, ok: false, attempts: 3, error: expect.stringContaining("no answer within 10000 ms") } })
      expect(accepted()).toBe(3)
      expect(r.stdout).not.toContain("abc123")
    })
  }, 120_000)

  it("backup nightly with a dead-man endpoint that answers 200 and half a body: the ping counts, exit 0 (the process ends)", async () => {
    const half = (socket: Socket) => {
      socket.once("data", () => socket.write("HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 100\r\n\r\nOK, half"))
    }
    await withEndpoint(half, async (url, accepted) => {
      const r = await nightlyWith("half.json", url, 60_000)
      expect(r.code, r.stderr).toBe(0)
      expect(json(r)).toMatchObject({ ok: true, ping: { sent: true, ok: true, status: 200, attempts: 1 } })
      expect(accepted()).toBe(1)
    })
  }, 120_000)

  it("while a backup holds the lock: backup-running, exit 1, with --json the error body", async () => {
    const release = await service.run(Deferred.make<void>())
    const held = service.run(Effect.flatMap(BackupLock, (lock) => lock.withLock("verify")(Deferred.await(release))))
    try {
      await new Promise((r) => setTimeout(r, 200))
      const r = await cli(["backup", "probe", "--json"], cliEnv())
      expect(r.code).toBe(1)
      expect(json(r)).toEqual({ error: "backup-running", message: "a backup verify is running; try again when it has finished" })
      expect(r.stderr).toMatch(/^groundnote: backup-running: /)
    } finally {
      await service.run(Deferred.succeed(release, undefined))
      await held
    }
  })

  it("doctor with the service up and a fresh backup: every finding, no fail, exit 0; plain text on a pipe", async () => {
    const [j, human] = await Promise.all([cli(["doctor", "--json"], cliEnv()), cli(["doctor"], cliEnv())])
    expect(j.code, j.stdout).toBe(0)
    const findings = JSON.parse(j.stdout) as Array<{ id: string; status: string }>
    expect(findings.map((f) => f.id)).toEqual([...FINDING_IDS])
    expect(findings.filter((f) => f.status === "fail")).toEqual([])
    expect(Object.fromEntries(findings.map((f) => [f.id, f.status]))).toMatchObject({
      "config-valid": "ok", "ops-socket": "ok", "scopes-unlocked": "ok", "backup-age": "ok", "probe-age": "ok", "verify-result": "ok",
      "semantic-model": "skip", "reranker-key": "skip", "reranker-budget": "skip", "clock-skew": "skip"
    })
    expect(human.code).toBe(0)
    expect(human.stdout).toBe("")
    expect(human.stderr.includes("\u001b")).toBe(false)
    expect(human.stderr).toMatch(/^\d+ ok, \d+ warn, 0 fail, \d+ skip$/m)
  })

  it("doctor with the service down and a broken config: ops-socket and config-valid fail, the rest say skip and why, exit 3", async () => {
    const bad = join(env.root, "bad.json")
    writeFileSync(bad, JSON.stringify({ ...baseConfigJson(), serach: {} }))
    const r = await cli(["doctor", "--json"], { ...cliEnv(bad), GROUNDNOTE_DATA_DIR: join(env.root, "no-data") })
    expect(r.code).toBe(3)
    const byId = Object.fromEntries((JSON.parse(r.stdout) as Array<{ id: string; status: string; message: string }>).map((f) => [f.id, f]))
    expect(byId["config-valid"]).toMatchObject({ status: "fail", message: expect.stringContaining("serach: unknown key — did you mean search?") })
    expect(byId["ops-socket"]?.status).toBe("fail")
    expect(byId["data-dir-permissions"]?.status).toBe("fail")
    for (const id of ["service-version", "scopes-unlocked", "backup-age", "probe-age", "verify-result"]) {
      expect(byId[id]).toMatchObject({ status: "skip", message: expect.stringContaining("the service is not reachable (ops-socket: ops-unreachable)") })
    }
    expect(byId["semantic-model"]).toMatchObject({ status: "skip", message: "groundnote.json did not load (see config-valid)" })
    expect(r.stderr).toMatch(/^groundnote: check-failed: doctor found .*config-valid.*ops-socket/m)
  })

  const restore = (args: ReadonlyArray<string>, config = goodConfig): Promise<Result> => cli(["restore", ...args], cliEnv(config))

  it("restore: the newest copy to a new file, checked, 0600; never over a file; every refusal exit 1; usage exit 2", async () => {
    const target = join(env.root, "restored", "sales.sqlite")
    const { mkdirSync, statSync } = await import("node:fs")
    mkdirSync(join(env.root, "restored"), { mode: 0o700 })
    const r = await restore(["--to", target, "--scope", "sales", "--json"])
    expect(r.code, r.stderr).toBe(0)
    expect(json(r)).toMatchObject({ ok: true, scope: "sales", from: "copy", target, warnings: [] })
    expect(statSync(target).mode & 0o777).toBe(0o600)
    const human = await restore(["--to", join(env.root, "restored", "ops.sqlite"), "--ops"])
    expect(human.code, human.stderr).toBe(0)
    expect(human.stdout).toBe("")
    expect(human.stderr).toMatch(/^restored ops\.sqlite from copy to .*ops\.sqlite/)
    const before = readFileSync(target)
    const refused = await Promise.all([
      restore(["--to", target, "--scope", "sales", "--json"]),
      restore(["--to", join(env.dataDir, "scopes", "sales.sqlite"), "--scope", "sales"]),
      restore(["--to", join(env.dataDir, "scopes", "new.sqlite"), "--scope", "sales"]),
      restore(["--to", join(env.root, "missing-dir", "sales.sqlite"), "--scope", "sales"]),
      restore(["--to", join(env.root, "restored", "x.sqlite"), "--scope", "nope"])
    ])
    expect(refused.map((x) => x.code)).toEqual([1, 1, 1, 1, 1])
    expect(json(refused[0] as Result)).toMatchObject({ error: "target-exists" })
    expect(refused.map((x) => /^groundnote: ([a-z-]+):/.exec(x.stderr)?.[1])).toEqual([
      "target-exists", "target-is-live", "target-in-scopes-dir", "target-directory-missing", "validation-failed"
    ])
    expect(readFileSync(target).equals(before)).toBe(true)
    const usage = await Promise.all([restore(["--to", target]), restore(["--to", target, "--scope", "sales", "--ops"]), restore(["--scope", "sales"])])
    expect(usage.map((x) => x.code)).toEqual([2, 2, 2])
  })

  it("restore of a broken backup: the failed checks, exit 3, nothing written", async () => {
    writeFileSync(join(env.backupDir, "scopes", "ops.sqlite"), "this is not a database at all".repeat(200))
    const target = join(env.root, "restored", "ops-scope.sqlite")
    const r = await restore(["--to", target, "--scope", "ops", "--json"])
    expect(r.code).toBe(3)
    expect(json(r)).toMatchObject({ error: "restore-check-failed", checks: expect.arrayContaining([expect.objectContaining({ check: "integrity", ok: false })]) })
    expect(r.stderr).toMatch(/^groundnote: check-failed: the backup failed integrity: nothing was written\n$/)
    expect(existsSync(target)).toBe(false)
    const human = await restore(["--to", target, "--scope", "ops"])
    expect(human.code).toBe(3)
    expect(human.stderr).toMatch(/checks of the fetched backup:\n {2}ok {4}fetch-copy.*\n {2}FAIL {2}integrity/)
  })

  it("a probe that finds a tampered backup: the answer names the rule, exit 3; the floor does not move", async () => {
    await withFile(join(env.backupDir, "scopes", "sales.sqlite"), (sql) => Effect.gen(function*() {
      yield* sql.unsafe("DROP TRIGGER rule_version_no_update").raw
      yield* sql.unsafe("UPDATE rule_version SET statement = 'Never ask the supplier anything at all' WHERE rule_id = 'sales-0002'").raw
    }))
    const floor = await service.run(Effect.flatMap(OpsStore, (o) => o.getBackupStateFull("sales")))
    const r = await cli(["backup", "probe", "--scope", "sales", "--json"], cliEnv())
    expect(r.code).toBe(3)
    const sales = (json(r).scopes as Array<{ checks: Array<{ check: string; ok: boolean; detail?: string }> }>)[0]
    expect(sales?.checks.find((c) => c.check === "export-hashes")).toEqual({ check: "export-hashes", ok: false, detail: "differs from live without a later change: sales-0002" })
    expect(r.stderr).toMatch(/^groundnote: check-failed: backup probe failed for sales\n$/)
    const after = await service.run(Effect.flatMap(OpsStore, (o) => o.getBackupStateFull("sales")))
    expect(JSON.stringify(after)).not.toBe(JSON.stringify(floor))
    expect(after._tag === "Some" && floor._tag === "Some" && after.value.verified_counts === floor.value.verified_counts).toBe(true)
  })
})
