import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Effect, Option } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { LITESTREAM_RUN_MESSAGE, runBackup } from "../../src/backup/run.js"
import { BackupLock } from "../../src/backup/lock.js"
import { OpsStore } from "../../src/db/ops-store.js"
import { scopeFile } from "../../src/db/scope-store.js"
import { storeSource } from "../../src/domain/sources.js"
import { mailSource } from "../support/fixtures.js"
import { fileHash } from "../support/run.js"
import { type BackupEnv, backupEnv, countIn, failureOf, runService, seedScope, serviceRuntime, withFile } from "./support.js"

let env: BackupEnv
beforeEach(() => {
  env = backupEnv()
})
afterEach(() => env.cleanup())

const copyOf = (scope: string) => join(env.backupDir, "scopes", `${scope}.sqlite`)
const opsCopy = () => join(env.backupDir, "ops.sqlite")
const mode = (path: string) => statSync(path).mode & 0o777
const tempFiles = () =>
  [...readdirSync(env.backupDir), ...(existsSync(join(env.backupDir, "scopes")) ? readdirSync(join(env.backupDir, "scopes")) : [])]
    .filter((n) => n.includes(".tmp-"))

const seedBoth = () => runService(env.config, Effect.gen(function*() {
  yield* seedScope("sales", 4)
  yield* seedScope("ops", 2)
}))

describe("backup run (copy)", () => {
  it("copies ops.sqlite first, then every created scope in config order: consistent, 0600, the same rows as live", async () => {
    await seedBoth()
    const answer = await runService(env.config, runBackup())
    expect(answer).toMatchObject({ ok: true, kind: "copy", ran: true })
    expect(answer.ops).toMatchObject({ ok: true, file: opsCopy() })
    expect(answer.scopes.map((s) => [s.scope, s.ok, s.file])).toEqual([["sales", true, copyOf("sales")], ["ops", true, copyOf("ops")]])
    expect(answer.scopes[0]?.bytes).toBe(statSync(copyOf("sales")).size)
    expect(mode(join(env.backupDir, "scopes"))).toBe(0o700)
    for (const f of [opsCopy(), copyOf("sales"), copyOf("ops")]) expect(mode(f)).toBe(0o600)
    for (const table of ["rule", "rule_version", "decision", "source"]) {
      expect(await countIn(copyOf("sales"), table)).toBe(await countIn(scopeFile(env.dataDir, "sales"), table))
    }
    expect(await countIn(copyOf("sales"), "rule_version")).toBe(6)
    expect(tempFiles()).toEqual([])
    const [states, rows] = await runService(env.config, Effect.flatMap(OpsStore, (o) => Effect.all([
      o.listBackupStates(),
      o.sql<{ kind: string; backup_kind: string; ok: number; result: string }>`SELECT kind, backup_kind, ok, result FROM backup_run`
    ])))
    expect(states.map((s) => [s.scope, s.last_backup_at !== null])).toEqual([["ops", true], ["sales", true]])
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatchObject({ kind: "run", backup_kind: "copy", ok: 1 })
    expect(JSON.parse(rows[0]?.result ?? "{}")).toEqual(answer)
  })

  it("a shrunken live file never overwrites a good copy (previous copy and verified floor)", async () => {
    await runService(env.config, Effect.gen(function*() {
      yield* seedScope("sales", 2)
      yield* storeSource(mailSource({ scope: "sales", attachments: [] }, "mail:<spare@example.com>"), "service:1")
    }))
    expect((await runService(env.config, runBackup())).ok).toBe(true)
    const good = fileHash(copyOf("sales"))
    // the live file loses a source row (its append-only trigger dropped by someone with the file)
    await withFile(scopeFile(env.dataDir, "sales"), (sql) => Effect.gen(function*() {
      yield* sql.unsafe("DROP TRIGGER source_no_delete").raw
      yield* sql.unsafe("DELETE FROM source WHERE id = 'mail:<spare@example.com>'").raw
    }))
    const answer = await runService(env.config, runBackup())
    expect(answer.ok).toBe(false)
    expect(answer.ops?.ok).toBe(true)
    expect(answer.scopes[0]).toMatchObject({ scope: "sales", ok: false, bytes: null, detail: "no-regression: source 2 < 3" })
    expect(fileHash(copyOf("sales"))).toBe(good)
    expect(tempFiles()).toEqual([])

    // a floor above live (the last verified backup had more rule versions) fails the item too
    rmSync(copyOf("sales"))
    await runService(env.config, Effect.flatMap(OpsStore, (o) =>
      o.recordVerify("sales", { ok: true, at: "2026-01-01T00:00:00Z", result: {}, verified_counts: { rule_version: 99 } })))
    const again = await runService(env.config, runBackup())
    expect(again.scopes[0]?.detail).toBe("no-regression: rule_version 3 < 99")
    expect(existsSync(copyOf("sales"))).toBe(false)
  })

  it("an unreadable previous copy fails the item and stays untouched", async () => {
    await seedBoth()
    mkdirSync(join(env.backupDir, "scopes"), { mode: 0o700 })
    writeFileSync(copyOf("sales"), "this is not a database, but it is the operator's file".repeat(100), { mode: 0o600 })
    const before = fileHash(copyOf("sales"))
    const answer = await runService(env.config, runBackup())
    expect(answer.ok).toBe(false)
    expect(answer.scopes.find((s) => s.scope === "sales")).toMatchObject({
      ok: false, bytes: null, detail: "no-regression: previous copy unreadable: SQLITE_NOTADB"
    })
    expect(answer.scopes.find((s) => s.scope === "ops")?.ok).toBe(true)
    expect(fileHash(copyOf("sales"))).toBe(before)
    expect(tempFiles()).toEqual([])
    const state = await runService(env.config, Effect.flatMap(OpsStore, (o) => o.getBackupStateFull("sales")))
    expect(Option.getOrThrow(state).last_backup_at).toBeNull()
  })

  it("a locked scope is not copied; its previous copy stays", async () => {
    await seedBoth()
    await runService(env.config, runBackup())
    const good = fileHash(copyOf("sales"))
    // ops.sqlite remembers more versions than the file holds: the service locks the scope
    await runService(env.config, Effect.flatMap(OpsStore, (o) => o.raiseVersionCount("sales", 50)))
    const answer = await runService(env.config, runBackup())
    expect(answer.scopes[0]).toMatchObject({ scope: "sales", ok: false, bytes: null })
    expect(answer.scopes[0]?.detail).toMatch(/^scope-locked: fewer rule versions \(6\) than ops.sqlite remembers \(50\)$/)
    expect(answer.scopes[1]?.ok).toBe(true)
    expect(fileHash(copyOf("sales"))).toBe(good)
  })

  it("a lost scope file (no file, ops.sqlite remembers its versions) fails its item; its previous copy stays", async () => {
    await seedBoth()
    await runService(env.config, runBackup())
    const good = fileHash(copyOf("sales"))
    for (const suffix of ["", "-wal", "-shm"]) rmSync(scopeFile(env.dataDir, "sales") + suffix, { force: true })
    const answer = await runService(env.config, runBackup())
    expect(answer.ok).toBe(false)
    expect(answer.scopes.map((s) => [s.scope, s.ok])).toEqual([["sales", false], ["ops", true]])
    expect(answer.scopes[0]?.detail).toMatch(/^scope-locked: file missing: ops.sqlite remembers 6 rule versions/)
    expect(fileHash(copyOf("sales"))).toBe(good)
  })

  it("a created scope without a backup_state row is not copied (backup-state-missing)", async () => {
    await runService(env.config, seedScope("sales", 1))
    // a file of the scope "ops" made by another data dir: this ops.sqlite has no row for it
    const other = backupEnv()
    try {
      await runService(other.config, seedScope("ops", 1))
      writeFileSync(scopeFile(env.dataDir, "ops"), readFileSync(scopeFile(other.dataDir, "ops")), { mode: 0o600 })
    } finally {
      other.cleanup()
    }
    const answer = await runService(env.config, runBackup())
    expect(answer.scopes.map((s) => [s.scope, s.ok, s.detail])).toEqual([
      ["sales", true, undefined],
      ["ops", false, "backup-state-missing: ops.sqlite has no backup_state row for this scope"]
    ])
    expect(existsSync(copyOf("ops"))).toBe(false)
  })

  it("refuses an unfit backup directory, naming the reason, and writes nothing", async () => {
    await seedBoth()
    const refuse = async (directory: string, reason: RegExp) => {
      const config = { ...env.config, file: { ...env.config.file, backup: { kind: "copy" as const, directory, deadman_url: "http://127.0.0.1:9/x" } } }
      const e = await failureOf(config, runBackup())
      expect(e).toMatchObject({ _tag: "BackupDirectoryInvalid", code: "backup-directory-invalid" })
      expect((e as { reason: string }).reason).toMatch(reason)
    }
    await refuse(join(env.root, "missing"), /does not exist/)
    writeFileSync(join(env.root, "plain"), "x")
    await refuse(join(env.root, "plain"), /is not a directory/)
    mkdirSync(join(env.root, "open"), { mode: 0o755 })
    chmodSync(join(env.root, "open"), 0o755)
    await refuse(join(env.root, "open"), /has mode 0755, it must be 0700/)
    mkdirSync(join(env.dataDir, "inside"), { mode: 0o700 })
    await refuse(join(env.dataDir, "inside"), /lies inside the data dir/)
    symlinkSync(join(env.dataDir, "inside"), join(env.root, "via-link"))
    await refuse(join(env.root, "via-link"), /lies inside the data dir/)
    if (process.getuid?.() === 0) {
      mkdirSync(join(env.root, "foreign"), { mode: 0o700 })
      chownSync(join(env.root, "foreign"), 65534, 65534)
      await refuse(join(env.root, "foreign"), /owned by uid 65534, not by the service user/)
    } else {
      await refuse("/", /owned by uid 0, not by the service user/)
    }
    // <directory>/scopes must be a real 0700 directory
    symlinkSync(join(env.root, "open"), join(env.backupDir, "scopes"))
    const e = await failureOf(env.config, runBackup())
    expect(e).toMatchObject({ code: "backup-directory-invalid" })
    expect((e as { reason: string }).reason).toMatch(/is a symlink/)
    expect(readdirSync(env.backupDir)).toEqual(["scopes"])
    expect(readdirSync(join(env.root, "open"))).toEqual([])
  })

  it("removes temporary copies an interrupted run left behind", async () => {
    await seedBoth()
    mkdirSync(join(env.backupDir, "scopes"), { mode: 0o700 })
    const stale = join(env.backupDir, "scopes", ".sales.sqlite.tmp-123e4567-e89b-42d3-a456-426614174000")
    writeFileSync(stale, "half a copy")
    // the rollback journal SQLite keeps beside the copy while VACUUM INTO writes it
    writeFileSync(`${stale}-journal`, "its journal")
    writeFileSync(join(env.backupDir, "scopes", "notes.txt"), "the operator's")
    expect((await runService(env.config, runBackup())).ok).toBe(true)
    expect(existsSync(stale)).toBe(false)
    expect(existsSync(`${stale}-journal`)).toBe(false)
    expect(existsSync(join(env.backupDir, "scopes", "notes.txt"))).toBe(true)
  })

  it("a second run, probe or verify while one runs is refused with backup-running", async () => {
    await seedBoth()
    const runtime = serviceRuntime(env.config)
    try {
      const nested = Effect.flatMap(BackupLock, (lock) => lock.withLock("probe")(Effect.flip(runBackup())))
      const e = await runtime.runPromise(nested)
      expect(e).toMatchObject({ _tag: "BackupRunning", reason: "probe" })
      expect((e as { code: string }).code).toBe("backup-running")
      expect(await runtime.runPromise(Effect.flatMap(BackupLock, (l) => l.current))).toBeNull()
      expect((await runtime.runPromise(runBackup())).ok).toBe(true)
    } finally {
      await runtime.dispose()
    }
  })
})

describe("backup run (litestream)", () => {
  it("copies nothing and records a row", async () => {
    const ls = backupEnv({ kind: "litestream" })
    try {
      await runService(ls.config, seedScope("sales", 1))
      const answer = await runService(ls.config, runBackup())
      expect(answer).toMatchObject({ ok: true, kind: "litestream", ran: false, message: LITESTREAM_RUN_MESSAGE, ops: null, scopes: [] })
      expect(readdirSync(ls.backupDir)).toEqual([])
      const rows = await runService(ls.config, Effect.flatMap(OpsStore, (o) => o.sql<{ backup_kind: string; ok: number }>`SELECT backup_kind, ok FROM backup_run`))
      expect(rows).toEqual([{ backup_kind: "litestream", ok: 1 }])
    } finally {
      ls.cleanup()
    }
  })
})
