/**
 * Backup kind litestream against a real Litestream (v0.3.13 from @flydotio/litestream-linux-x64):
 * `litestream replicate` of a live data dir to a file:// replica runs while the service writes;
 * probe, verify and restore then fetch with `litestream restore -o`.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Effect, Exit, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { execProgram, findLitestream } from "../../src/backup/litestream.js"
import { probeBackup } from "../../src/backup/probe.js"
import { restoreConfigOf, restoreScope } from "../../src/backup/restore.js"
import { runBackup } from "../../src/backup/run.js"
import { verifyBackup } from "../../src/backup/verify.js"
import { OpsStore } from "../../src/db/ops-store.js"
import { scopeFile } from "../../src/db/scope-store.js"
import { type BackupEnv, backupEnv, confirm, countIn, runService, seedScope } from "./support.js"

let env: BackupEnv
let replicate: ChildProcess | null = null
let configFile: string
const previousConfig = process.env.LITESTREAM_CONFIG

const yaml = (dbs: ReadonlyArray<readonly [string, string]>) =>
  ["dbs:", ...dbs.flatMap(([path, replica]) => [
    `  - path: ${path}`,
    "    monitor-interval: 100ms",
    "    replicas:",
    `      - url: file://${replica}`,
    "        sync-interval: 100ms"
  ])].join("\n") + "\n"

const binary = (): string => {
  const b = findLitestream()
  if (b === null) throw new Error("no litestream binary (node_modules/@flydotio/litestream-linux-x64, an optional dependency)")
  return b
}

/** Waits until a `litestream restore` of `live` holds `rows` rule versions (or rows in `table`). */
const waitReplicated = async (live: string, table: string, rows: number) => {
  const probeDir = join(env.root, "wait")
  for (let attempt = 0; attempt < 200; attempt++) {
    rmSync(probeDir, { recursive: true, force: true })
    mkdirSync(probeDir)
    const out = join(probeDir, "x.sqlite")
    const r = await Effect.runPromise(execProgram(binary(), ["restore", "-o", out, live]))
    if (r.code === 0 && existsSync(out) && (await countIn(out, table)) >= rows) {
      rmSync(probeDir, { recursive: true, force: true })
      return
    }
    await new Promise((res) => setTimeout(res, 100))
  }
  throw new Error(`${live} was not replicated with ${rows} rows in ${table}`)
}

beforeAll(async () => {
  env = backupEnv({ kind: "litestream", exportDir: true })
  await runService(env.config, Effect.gen(function*() {
    yield* seedScope("sales", 3)
    yield* seedScope("ops", 1)
  }))
  configFile = join(env.root, "litestream.yml")
  writeFileSync(configFile, yaml([
    [join(env.dataDir, "ops.sqlite"), join(env.root, "replica", "ops")],
    [scopeFile(env.dataDir, "sales"), join(env.root, "replica", "sales")],
    [scopeFile(env.dataDir, "ops"), join(env.root, "replica", "scope-ops")]
  ]))
  process.env.LITESTREAM_CONFIG = configFile
  replicate = spawn(binary(), ["replicate"], { env: { ...process.env, LITESTREAM_CONFIG: configFile }, stdio: "ignore" })
  // the service keeps writing while Litestream replicates
  await runService(env.config, Effect.flatMap(confirm("sales-0002"), () => Effect.void))
  await waitReplicated(scopeFile(env.dataDir, "sales"), "rule_version", 6)
  await waitReplicated(scopeFile(env.dataDir, "ops"), "rule_version", 2)
  await waitReplicated(join(env.dataDir, "ops.sqlite"), "backup_state", 2)
}, 120_000)

afterAll(async () => {
  const child = replicate
  if (child !== null && child.exitCode === null) {
    const exited = new Promise((res) => child.once("exit", res))
    child.kill("SIGTERM")
    await exited
  }
  if (previousConfig === undefined) delete process.env.LITESTREAM_CONFIG
  else process.env.LITESTREAM_CONFIG = previousConfig
  env.cleanup()
})

describe("backup kind litestream with a real Litestream", () => {
  it("backup run copies nothing: Litestream replicates", async () => {
    const answer = await runService(env.config, runBackup())
    expect(answer).toMatchObject({ ok: true, kind: "litestream", ran: false, ops: null, scopes: [] })
  })

  it("the probe restores every file through litestream restore, checks it and writes the nightly export", async () => {
    await waitReplicated(join(env.dataDir, "ops.sqlite"), "backup_run", 1)
    const answer = await runService(env.config, probeBackup())
    expect(answer.ok).toBe(true)
    expect(answer.kind).toBe("litestream")
    expect(answer.ops.checks.map((c) => [c.check, c.ok])).toEqual([["fetch-litestream", true], ["integrity", true], ["schema-version", true]])
    expect(answer.scopes.map((s) => s.scope)).toEqual(["sales", "ops"])
    expect(answer.scopes[0]?.checks.map((c) => c.check)).toEqual([
      "fetch-litestream", "integrity", "meta-scope", "schema-version", "sample-query", "not-older-than-last-verified", "redaction-ledger",
      "pair-consistent", "live-snapshot", "not-ahead-of-live", "export-hashes", "nightly-export"
    ])
    const exp = answer.scopes[0]?.export
    expect(exp?.file.startsWith(join(env.exportDir, "sales"))).toBe(true)
    expect(statSync(exp?.file ?? "").mode & 0o777).toBe(0o600)
    const state = await runService(env.config, Effect.map(Effect.flatMap(OpsStore, (o) => o.getBackupStateFull("sales")), Option.getOrThrow))
    expect(state.probe_ok).toBe(1)
    expect(JSON.parse(state.verified_counts ?? "{}")).toMatchObject({ rule_version: 6 })
    expect(readdirSync(env.dataDir).filter((n) => n.startsWith(".probe-"))).toEqual([])
  })

  it("verify compares the replica with live", async () => {
    const answer = await runService(env.config, verifyBackup({ scope: "sales" }))
    expect(answer.ok).toBe(true)
    expect(answer.scopes[0]?.checks.filter((c) => !c.ok)).toEqual([])
    expect(answer.scopes[0]?.checks.some((c) => c.check === "fetch-litestream")).toBe(true)
  })

  it("restore brings a scope back from the replica, without the service", async () => {
    const out = join(env.root, "restored")
    mkdirSync(out)
    const exit = await Effect.runPromiseExit(restoreScope({ to: join(out, "sales.sqlite"), scope: "sales" }, restoreConfigOf(env.config)))
    if (Exit.isFailure(exit)) throw new Error(String(exit.cause))
    expect(exit.value).toMatchObject({ ok: true, from: "litestream", warnings: [] })
    expect(readdirSync(out)).toEqual(["sales.sqlite"])
    expect(await countIn(join(out, "sales.sqlite"), "rule_version")).toBe(6)
    expect(await countIn(join(out, "sales.sqlite"), "decision")).toBe(3)
  })

  it("finds the real binary, not the npm package's node script (which loses exit codes and signals)", async () => {
    const b = binary()
    expect(b.endsWith(`litestream-${process.platform}-${process.arch}/litestream`) || !b.includes("node_modules")).toBe(true)
    const r = await Effect.runPromise(execProgram(b, ["restore", "-o", join(env.root, "never.sqlite"), join(env.root, "not-configured.sqlite")]))
    expect(r.code).toBe(1)
  })

  it("a file Litestream does not replicate fails fetch-litestream, naming the reason", async () => {
    const partial = join(env.root, "partial.yml")
    writeFileSync(partial, yaml([[join(env.dataDir, "ops.sqlite"), join(env.root, "replica", "ops")]]))
    process.env.LITESTREAM_CONFIG = partial
    try {
      const answer = await runService(env.config, verifyBackup({ scope: "sales" }))
      const fetch = answer.scopes[0]?.checks.find((c) => c.check === "fetch-litestream")
      expect(fetch?.ok).toBe(false)
      expect(fetch?.detail).toBe(`litestream restore of ${scopeFile(env.dataDir, "sales")} failed (exit 1): level=ERROR msg="failed to run" error="database not found in config: ${scopeFile(env.dataDir, "sales")}"`)
      expect(answer.ok).toBe(false)
    } finally {
      process.env.LITESTREAM_CONFIG = configFile
    }
  })
})
