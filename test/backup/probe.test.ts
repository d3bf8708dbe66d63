import { execFileSync } from "node:child_process"
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync } from "node:fs"
import { join } from "node:path"
import { Effect, Option } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { exportFileName, exportStamp, sha256Line } from "../../src/backup/nightly-export.js"
import { probeBackup } from "../../src/backup/probe.js"
import { runBackup } from "../../src/backup/run.js"
import { OpsStore } from "../../src/db/ops-store.js"
import { scopeFile } from "../../src/db/scope-store.js"
import { fileHash } from "../support/run.js"
import { type BackupEnv, backupEnv, confirm, failureOf, runService, seedScope, withFile } from "./support.js"

let env: BackupEnv
beforeEach(() => {
  env = backupEnv({ exportDir: true })
})
afterEach(() => env.cleanup())

const copyOf = (scope: string) => join(env.backupDir, "scopes", `${scope}.sqlite`)
const state = (scope: string) =>
  runService(env.config, Effect.map(Effect.flatMap(OpsStore, (o) => o.getBackupStateFull(scope)), Option.getOrThrow))
const probeRuns = () =>
  runService(env.config, Effect.flatMap(OpsStore, (o) => o.sql<{ kind: string; ok: number; result: string }>`SELECT kind, ok, result FROM backup_run WHERE kind = 'probe' ORDER BY seq`))
const leftovers = () => readdirSync(env.dataDir).filter((n) => n.startsWith("."))
const checkOf = (answer: { scopes: ReadonlyArray<{ scope: string; checks: ReadonlyArray<{ check: string; ok: boolean; detail?: string }> }> }, scope: string, check: string) =>
  answer.scopes.find((s) => s.scope === scope)?.checks.find((c) => c.check === check)

describe("restore probe (copy)", () => {
  it("passes after a run, writes the nightly export with its .sha256 (0600, directories 0700) and moves the floor", async () => {
    await runService(env.config, Effect.gen(function*() {
      yield* seedScope("sales", 3)
      yield* seedScope("ops", 1)
    }))
    await runService(env.config, runBackup())
    const answer = await runService(env.config, probeBackup())
    expect(answer.ok).toBe(true)
    expect(answer.kind).toBe("copy")
    expect(answer.ops).toEqual({
      ok: true,
      checks: [
        { check: "fetch-copy", ok: true, detail: join(env.backupDir, "ops.sqlite") },
        { check: "integrity", ok: true },
        { check: "schema-version", ok: true, detail: expect.any(String) }
      ]
    })
    const sales = answer.scopes.find((s) => s.scope === "sales")
    expect(sales?.checks.map((c) => [c.check, c.ok])).toEqual([
      ["fetch-copy", true], ["integrity", true], ["meta-scope", true], ["schema-version", true], ["sample-query", true],
      ["not-older-than-last-verified", true], ["redaction-ledger", true], ["pair-consistent", true], ["live-snapshot", true],
      ["not-ahead-of-live", true], ["export-hashes", true], ["nightly-export", true]
    ])
    expect(checkOf(answer, "sales", "sample-query")?.detail).toBe("sales-0003 found by a word of its statement")
    expect(sales?.exceptions).toEqual([])
    const exp = sales?.export
    if (exp === null || exp === undefined) throw new Error("no export")
    expect(exp.file.startsWith(join(env.exportDir, "sales", "sales-export-"))).toBe(true)
    expect(exp.file).toMatch(/sales-export-\d{8}T\d{6}\.\d{3}Z-[0-9a-f]{8}\.tar\.gz$/)
    expect(statSync(exp.file).size).toBe(exp.bytes)
    expect(fileHash(exp.file)).toBe(exp.sha256)
    expect(statSync(exp.file).mode & 0o777).toBe(0o600)
    expect(statSync(`${exp.file}.sha256`).mode & 0o777).toBe(0o600)
    expect(statSync(join(env.exportDir, "sales")).mode & 0o777).toBe(0o700)
    const shaName = exp.file.slice(join(env.exportDir, "sales").length + 1)
    expect(readFileSync(`${exp.file}.sha256`, "utf8")).toBe(sha256Line(exp.sha256, shaName))
    execFileSync("sha256sum", ["-c", "--quiet", `${shaName}.sha256`], { cwd: join(env.exportDir, "sales") })
    const listing = execFileSync("tar", ["-tzf", exp.file], { encoding: "utf8" }).split("\n")
    expect(listing).toContain("sales/rules/sales-0003.md")
    expect(readdirSync(join(env.exportDir, "sales")).filter((n) => n.startsWith("."))).toEqual([])
    expect(leftovers()).toEqual([])

    const s = await state("sales")
    expect(s.probe_ok).toBe(1)
    expect(s.probed_at).not.toBeNull()
    expect(JSON.parse(s.verified_counts ?? "{}")).toMatchObject({ rule: 3, rule_version: 5, decision: 2 })
    expect(s.export_sha256).toBe(exp.sha256)
    expect(s.exported_at).not.toBeNull()
    const runs = await probeRuns()
    expect(runs).toHaveLength(1)
    expect(JSON.parse(runs[0]?.result ?? "{}")).toEqual(answer)

    // a second probe writes a second archive beside the first, never over it
    const again = await runService(env.config, probeBackup({ scope: "sales" }))
    expect(again.scopes.map((x) => x.scope)).toEqual(["sales"])
    expect(again.scopes[0]?.export?.file).not.toBe(exp.file)
    expect(readdirSync(join(env.exportDir, "sales")).filter((n) => n.endsWith(".tar.gz"))).toHaveLength(2)
    expect(fileHash(exp.file)).toBe(exp.sha256)
  })

  it("fails naming the rule on a tampered backup (a row edited in the copy); the floor stays", async () => {
    await runService(env.config, seedScope("sales", 3))
    await runService(env.config, runBackup())
    await runService(env.config, probeBackup())
    const floorBefore = (await state("sales")).verified_counts
    await withFile(copyOf("sales"), (sql) => Effect.gen(function*() {
      yield* sql.unsafe("DROP TRIGGER rule_version_no_update").raw
      yield* sql.unsafe("UPDATE rule_version SET statement = 'Never ask the supplier anything at all' WHERE rule_id = 'sales-0002'").raw
    }))
    const answer = await runService(env.config, probeBackup())
    expect(answer.ok).toBe(false)
    expect(checkOf(answer, "sales", "export-hashes")).toEqual({
      check: "export-hashes", ok: false, detail: "differs from live without a later change: sales-0002"
    })
    expect(answer.scopes[0]?.export).toBeNull()
    expect(checkOf(answer, "sales", "nightly-export")).toBeUndefined()
    const s = await state("sales")
    expect(s.probe_ok).toBe(0)
    expect(s.verified_counts).toBe(floorBefore)
    expect(readdirSync(join(env.exportDir, "sales")).filter((n) => n.endsWith(".tar.gz"))).toHaveLength(1)
  })

  it("fails naming the rule on a backup ahead of live", async () => {
    await runService(env.config, seedScope("sales", 2))
    // the data dir as it was (a consistent pair, stopped service)
    const saved = join(env.root, "saved")
    mkdirSync(saved)
    copyFileSync(join(env.dataDir, "ops.sqlite"), join(saved, "ops.sqlite"))
    copyFileSync(scopeFile(env.dataDir, "sales"), join(saved, "sales.sqlite"))
    await runService(env.config, Effect.flatMap(confirm("sales-0002"), () => Effect.void))
    await runService(env.config, runBackup())
    // live goes back to the older pair: the backup is ahead of it
    for (const f of [join(env.dataDir, "ops.sqlite"), scopeFile(env.dataDir, "sales")]) {
      for (const suffix of ["-wal", "-shm"]) rmSync(`${f}${suffix}`, { force: true })
    }
    copyFileSync(join(saved, "ops.sqlite"), join(env.dataDir, "ops.sqlite"))
    copyFileSync(join(saved, "sales.sqlite"), scopeFile(env.dataDir, "sales"))
    const answer = await runService(env.config, probeBackup())
    expect(answer.ok).toBe(false)
    expect(checkOf(answer, "sales", "not-ahead-of-live")).toEqual({
      check: "not-ahead-of-live", ok: false, detail: "the backup has more rows than live: decision 2 > 1, rule_version 4 > 3"
    })
    expect(checkOf(answer, "sales", "export-hashes")).toEqual({
      check: "export-hashes", ok: false, detail: "differs from live without a later change: sales-0002"
    })
  })

  it("passes with a rule confirmed after the backup named in exceptions", async () => {
    await runService(env.config, seedScope("sales", 2))
    await runService(env.config, runBackup())
    await new Promise((r) => setTimeout(r, 5))
    await runService(env.config, Effect.flatMap(confirm("sales-0002"), () => Effect.void))
    const answer = await runService(env.config, probeBackup())
    expect(answer.ok).toBe(true)
    expect(answer.scopes[0]?.exceptions).toEqual(["sales-0002"])
    expect(checkOf(answer, "sales", "export-hashes")).toEqual({
      check: "export-hashes", ok: true, detail: "2 rules compared, 1 changed after the backup"
    })
  })

  it("fails pair-consistent when the scope copy is older than the ops.sqlite copy remembers", async () => {
    await runService(env.config, seedScope("sales", 2))
    await runService(env.config, runBackup())
    const older = join(env.root, "older.sqlite")
    copyFileSync(copyOf("sales"), older)
    await runService(env.config, Effect.flatMap(confirm("sales-0002"), () => Effect.void))
    await runService(env.config, runBackup())
    copyFileSync(older, copyOf("sales"))
    const answer = await runService(env.config, probeBackup())
    expect(checkOf(answer, "sales", "pair-consistent")).toEqual({
      check: "pair-consistent", ok: false,
      detail: "3 rule versions, the ops.sqlite backup remembers 4: restoring both would lock the scope"
    })
    expect(answer.ok).toBe(false)
  })

  it("fails the fetch when there is no backup, and says so per file", async () => {
    await runService(env.config, seedScope("sales", 1))
    const answer = await runService(env.config, probeBackup())
    expect(answer.ok).toBe(false)
    expect(answer.ops.checks).toEqual([{ check: "fetch-copy", ok: false, detail: `no backup copy at ${join(env.backupDir, "ops.sqlite")}` }])
    expect(answer.scopes[0]?.checks).toEqual([{ check: "fetch-copy", ok: false, detail: `no backup copy at ${copyOf("sales")}` }])
    expect((await state("sales")).probe_ok).toBe(0)
    expect(leftovers()).toEqual([])
  })

  it("a lost scope file (no file, ops.sqlite remembers its versions) fails the probe; a scope never created is left out", async () => {
    await runService(env.config, seedScope("sales", 2))
    await runService(env.config, runBackup())
    for (const suffix of ["", "-wal", "-shm"]) rmSync(scopeFile(env.dataDir, "sales") + suffix, { force: true })
    const answer = await runService(env.config, probeBackup())
    expect(answer.ok).toBe(false)
    expect(answer.scopes.map((s) => s.scope)).toEqual(["sales"])
    expect(checkOf(answer, "sales", "scope-created")).toEqual({
      check: "scope-created", ok: false, detail: "the scope's file is missing while ops.sqlite remembers 3 rule versions: restore it (docs/backup.md)"
    })
  })

  it("removes the throw-away directory a crashed probe or verify left in the data dir", async () => {
    await runService(env.config, seedScope("sales", 1))
    await runService(env.config, runBackup())
    mkdirSync(join(env.dataDir, ".probe-0123456789abcdef", "scopes"), { recursive: true, mode: 0o700 })
    mkdirSync(join(env.dataDir, ".verify-fedcba9876543210"), { mode: 0o700 })
    mkdirSync(join(env.dataDir, ".probe-notes"), { mode: 0o700 })
    expect((await runService(env.config, probeBackup())).ok).toBe(true)
    expect(leftovers()).toEqual([".probe-notes"])
  })

  it("refuses an unfit export directory before anything runs, and a scope that is not configured", async () => {
    await runService(env.config, seedScope("sales", 1))
    await runService(env.config, runBackup())
    chmodSync(env.exportDir, 0o770)
    const e = await failureOf(env.config, probeBackup())
    expect(e).toMatchObject({ _tag: "ExportDirectoryInvalid", code: "export-directory-invalid" })
    expect((e as { reason: string }).reason).toMatch(/writable by group or others \(mode 0770\)/)
    chmodSync(env.exportDir, 0o1777)
    // sticky and world-writable is fine for the directory itself; <scope>/ must be a real 0700 directory
    mkdirSync(join(env.root, "elsewhere"), { mode: 0o700 })
    symlinkSync(join(env.root, "elsewhere"), join(env.exportDir, "sales"))
    const e2 = await failureOf(env.config, probeBackup())
    expect((e2 as { reason: string }).reason).toMatch(/sales is a symlink/)
    rmSync(join(env.exportDir, "sales"))
    mkdirSync(join(env.exportDir, "sales"), { mode: 0o750 })
    chmodSync(join(env.exportDir, "sales"), 0o750)
    const e3 = await failureOf(env.config, probeBackup())
    expect((e3 as { reason: string }).reason).toMatch(/has mode 0750, it must be 0700/)
    expect(await probeRuns()).toEqual([])
    const e4 = await failureOf(env.config, probeBackup({ scope: "nowhere" }))
    expect(e4).toMatchObject({ _tag: "ValidationFailed" })
    expect(leftovers()).toEqual([])
  })
})

describe("nightly export names", () => {
  it("carry the UTC time with milliseconds and 8 hex", () => {
    expect(exportStamp(Date.parse("2026-11-07T03:15:00.123Z"))).toBe("20261107T031500.123Z")
    expect(exportFileName("sales", Date.parse("2026-11-07T03:15:00.123Z"), "0a1b2c3d")).toBe("sales-export-20261107T031500.123Z-0a1b2c3d.tar.gz")
    expect(exportFileName("sales", 0)).not.toBe(exportFileName("sales", 0))
    expect(existsSync(env.exportDir)).toBe(true)
  })
})
