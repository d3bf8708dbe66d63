import { copyFileSync, readdirSync, rmSync } from "node:fs"
import { join } from "node:path"
import { Effect, Option } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { BackupLock } from "../../src/backup/lock.js"
import { runBackup } from "../../src/backup/run.js"
import { verifyBackup } from "../../src/backup/verify.js"
import { OpsStore } from "../../src/db/ops-store.js"
import { type BackupEnv, backupEnv, confirm, runService, seedScope, serviceRuntime, withFile } from "./support.js"

let env: BackupEnv
beforeEach(() => {
  env = backupEnv()
})
afterEach(() => env.cleanup())

const copyOf = (scope: string) => join(env.backupDir, "scopes", `${scope}.sqlite`)
const state = (scope: string) =>
  runService(env.config, Effect.map(Effect.flatMap(OpsStore, (o) => o.getBackupStateFull(scope)), Option.getOrThrow))

describe("backup verify", () => {
  it("checks the live snapshot and the newest backup, reports to backup_state and moves the floor", async () => {
    await runService(env.config, Effect.gen(function*() {
      yield* seedScope("sales", 3)
      yield* seedScope("ops", 1)
    }))
    await runService(env.config, runBackup())
    await new Promise((r) => setTimeout(r, 5))
    await runService(env.config, Effect.flatMap(confirm("sales-0002"), () => Effect.void))
    const answer = await runService(env.config, verifyBackup())
    expect(answer.ok).toBe(true)
    expect(answer.scopes.map((s) => s.scope)).toEqual(["sales", "ops"])
    const sales = answer.scopes[0]
    expect(sales?.checks.map((c) => [c.check, c.ok])).toEqual([
      ["live-snapshot", true], ["live-integrity", true], ["live-meta-scope", true], ["live-sample-query", true],
      ["versions-remembered", true], ["fetch-copy", true], ["integrity", true], ["meta-scope", true], ["schema-version", true],
      ["sample-query", true], ["not-older-than-last-verified", true], ["not-ahead-of-live", true], ["export-hashes", true]
    ])
    expect(sales?.exceptions).toEqual(["sales-0002"])
    expect(sales?.counts.live).toMatchObject({ rule_version: 6, decision: 3 })
    expect(sales?.counts.backup).toMatchObject({ rule_version: 5, decision: 2 })
    const s = await state("sales")
    expect(s.verify_ok).toBe(1)
    expect(s.verified_at).not.toBeNull()
    expect(JSON.parse(s.verified_counts ?? "{}")).toEqual(sales?.counts.backup)
    expect(JSON.parse(s.verify_result ?? "{}")).toMatchObject({ ok: true, scope: "sales", exceptions: ["sales-0002"] })
    expect(readdirSync(env.dataDir).filter((n) => n.startsWith("."))).toEqual([])
    const runs = await runService(env.config, Effect.flatMap(OpsStore, (o) => o.sql`SELECT seq FROM backup_run WHERE kind = 'probe'`))
    expect(runs).toEqual([])
  })

  it("fails on an older backup than the last verified one (the floor), and on a tampered one, keeping the floor", async () => {
    await runService(env.config, seedScope("sales", 2))
    await runService(env.config, runBackup())
    const older = join(env.root, "older.sqlite")
    copyFileSync(copyOf("sales"), older)
    await runService(env.config, Effect.flatMap(confirm("sales-0002"), () => Effect.void))
    await runService(env.config, runBackup())
    expect((await runService(env.config, verifyBackup({ scope: "sales" }))).ok).toBe(true)
    const floor = (await state("sales")).verified_counts
    expect(JSON.parse(floor ?? "{}")).toMatchObject({ rule_version: 4 })

    copyFileSync(older, copyOf("sales"))
    const answer = await runService(env.config, verifyBackup({ scope: "sales" }))
    expect(answer.ok).toBe(false)
    expect(answer.scopes[0]?.checks.find((c) => c.check === "not-older-than-last-verified")).toEqual({
      check: "not-older-than-last-verified", ok: false,
      detail: "fewer rows than the last verified backup: decision 1 < 2, rule_version 3 < 4"
    })
    expect((await state("sales")).verify_ok).toBe(0)
    expect((await state("sales")).verified_counts).toBe(floor)

    await runService(env.config, runBackup())
    await withFile(copyOf("sales"), (sql) => Effect.gen(function*() {
      yield* sql.unsafe("DROP TRIGGER decision_no_update").raw
      yield* sql.unsafe("UPDATE decision SET decided_by_identity = 'mallory@example.com' WHERE rule_id = 'sales-0001'").raw
    }))
    const tampered = await runService(env.config, verifyBackup())
    expect(tampered.scopes[0]?.checks.find((c) => c.check === "export-hashes")).toEqual({
      check: "export-hashes", ok: false, detail: "differs from live without a later change: sales-0001"
    })
    expect((await state("sales")).verified_counts).toBe(floor)
  })

  it("fails the fetch without a backup but still checks live; a live file below what ops.sqlite remembers fails versions-remembered", async () => {
    await runService(env.config, seedScope("sales", 1))
    const answer = await runService(env.config, verifyBackup())
    expect(answer.scopes[0]?.checks).toEqual([
      { check: "live-snapshot", ok: true },
      { check: "live-integrity", ok: true },
      { check: "live-meta-scope", ok: true },
      { check: "live-sample-query", ok: true, detail: "sales-0001 found by a word of its statement" },
      { check: "versions-remembered", ok: true, detail: "2 ≥ 2" },
      { check: "fetch-copy", ok: false, detail: `no backup copy at ${copyOf("sales")}` }
    ])
    await runService(env.config, runBackup())
    await runService(env.config, Effect.flatMap(OpsStore, (o) => o.raiseVersionCount("sales", 9)))
    const locked = await runService(env.config, verifyBackup())
    expect(locked.scopes[0]?.checks.find((c) => c.check === "versions-remembered")).toEqual({
      check: "versions-remembered", ok: false, detail: "2 rule versions, ops.sqlite remembers 9"
    })
    rmSync(copyOf("sales"))
  })

  it("a lost scope file (no file, ops.sqlite remembers its versions) fails its live snapshot and keeps the floor", async () => {
    await runService(env.config, seedScope("sales", 1))
    await runService(env.config, runBackup())
    const before = await state("sales")
    for (const suffix of ["", "-wal", "-shm"]) rmSync(join(env.dataDir, "scopes", `sales.sqlite${suffix}`), { force: true })
    const answer = await runService(env.config, verifyBackup())
    expect(answer.ok).toBe(false)
    expect(answer.scopes.map((s) => [s.scope, s.ok])).toEqual([["sales", false]])
    expect(answer.scopes[0]?.checks.find((c) => c.check === "live-snapshot")?.ok).toBe(false)
    expect((await state("sales")).verified_counts).toEqual(before.verified_counts)
  })

  it("shares the lock with run and probe", async () => {
    await runService(env.config, seedScope("sales", 1))
    const runtime = serviceRuntime(env.config)
    try {
      const e = await runtime.runPromise(Effect.flatMap(BackupLock, (l) => l.withLock("run")(Effect.flip(verifyBackup()))))
      expect(e).toMatchObject({ _tag: "BackupRunning", reason: "run" })
      expect((e as { code: string }).code).toBe("backup-running")
    } finally {
      await runtime.dispose()
    }
  })
})
