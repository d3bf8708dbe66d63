import { existsSync, linkSync, mkdirSync, readdirSync, renameSync, statSync, symlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Effect, Exit, Fiber, Ref } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { restoreExitCode, type RestoreCheckFailed } from "../../src/backup/errors.js"
import { linkNoOverwrite } from "../../src/backup/fsutil.js"
import { restoreConfigOf, restoreOps, restoreScope } from "../../src/backup/restore.js"
import { runBackup } from "../../src/backup/run.js"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore, scopeFile } from "../../src/db/scope-store.js"
import { propose } from "../../src/domain/proposals.js"
import { manualProposal } from "../support/fixtures.js"
import { fileHash } from "../support/run.js"
import { type BackupEnv, backupEnv, countIn, runService, seedScope, serviceRuntime, withFile } from "./support.js"

let env: BackupEnv
let out: string
beforeEach(() => {
  env = backupEnv()
  out = join(env.root, "restored")
  mkdirSync(out, { mode: 0o755 })
})
afterEach(() => env.cleanup())

/** Restore runs in the CLI: only the config, no service. */
const rc = () => restoreConfigOf(env.config)
const ok = async <A, E>(effect: Effect.Effect<A, E>): Promise<A> => {
  const exit = await Effect.runPromiseExit(effect)
  if (Exit.isFailure(exit)) throw new Error(`restore failed: ${String(exit.cause)}`)
  return exit.value
}
const refusal = async <A, E>(effect: Effect.Effect<A, E>): Promise<E> => {
  const exit = await Effect.runPromiseExit(effect)
  if (Exit.isSuccess(exit) || exit.cause._tag !== "Fail") throw new Error(`expected a refusal, got ${Exit.isSuccess(exit) ? "success" : String(exit.cause)}`)
  return exit.cause.error
}
const copyOf = (scope: string) => join(env.backupDir, "scopes", `${scope}.sqlite`)

describe("restore", () => {
  it("fetches the newest copy into a temporary file next to the target, checks it and hard-links it (0600)", async () => {
    await runService(env.config, seedScope("sales", 3))
    await runService(env.config, runBackup())
    const target = join(out, "sales.sqlite")
    const progress: Array<string> = []
    const answer = await ok(restoreScope({ to: target, scope: "sales", progress: (l) => progress.push(l) }, rc()))
    expect(answer).toMatchObject({ ok: true, scope: "sales", from: "copy", target, warnings: [] })
    expect(answer.checks.map((c) => [c.check, c.ok])).toEqual([
      ["fetch-copy", true], ["integrity", true], ["meta-scope", true], ["schema-version", true], ["sample-query", true],
      ["not-older-than-last-verified", true], ["redaction-ledger", true]
    ])
    expect(fileHash(target)).toBe(fileHash(copyOf("sales")))
    expect(statSync(target).mode & 0o777).toBe(0o600)
    expect(statSync(target).nlink).toBe(1)
    expect(answer.bytes).toBe(statSync(target).size)
    expect(readdirSync(out)).toEqual(["sales.sqlite"])
    expect(progress).toEqual(["fetching the newest scope sales backup (copy)", `linking ${target}`])
  })

  it("restoring the ops + scope copies of one run never locks a scope, also with writes during the run", async () => {
    await runService(env.config, Effect.gen(function*() {
      yield* seedScope("sales", 2)
      yield* seedScope("ops", 1)
    }))
    const runtime = serviceRuntime(env.config)
    try {
      const written = await runtime.runPromise(Effect.gen(function*() {
        const n = yield* Ref.make(0)
        const writer = yield* Effect.fork(Effect.forever(Effect.gen(function*() {
          const i = yield* Ref.updateAndGet(n, (x) => x + 1)
          yield* propose(manualProposal(`Written during the backup run, number ${i}`, { scope: "sales" }), { grantId: "person:1", channel: "mcp" })
          yield* Effect.sleep("1 millis")
        })))
        const answer = yield* runBackup()
        yield* Fiber.interrupt(writer)
        if (!answer.ok) return yield* Effect.die(new Error(JSON.stringify(answer)))
        return yield* Ref.get(n)
      }))
      expect(written).toBeGreaterThan(0)
    } finally {
      await runtime.dispose()
    }
    // a new data dir from the copies of that run
    const staging = join(env.root, "staging")
    mkdirSync(staging, { mode: 0o700 })
    await ok(restoreOps({ to: join(staging, "ops.sqlite") }, rc()))
    await ok(restoreScope({ to: join(staging, "sales.sqlite"), scope: "sales" }, rc()))
    await ok(restoreScope({ to: join(staging, "ops-scope.sqlite"), scope: "ops" }, rc()))
    const fresh = backupEnv()
    try {
      mkdirSync(join(fresh.dataDir, "scopes"), { mode: 0o700 })
      renameSync(join(staging, "ops.sqlite"), join(fresh.dataDir, "ops.sqlite"))
      renameSync(join(staging, "sales.sqlite"), scopeFile(fresh.dataDir, "sales"))
      renameSync(join(staging, "ops-scope.sqlite"), scopeFile(fresh.dataDir, "ops"))
      const [salesRows, opsRows, states] = await runService(fresh.config, Effect.gen(function*() {
        const store = yield* ScopeStore
        const sales = yield* store.use("sales")
        const ops = yield* store.use("ops")
        const count = (h: typeof sales) => Effect.map(h.sql<{ n: number }>`SELECT count(*) AS n FROM rule_version`, (r) => r[0]?.n ?? 0)
        return [yield* count(sales), yield* count(ops), yield* store.states] as const
      }))
      expect(states.map((s) => [s.scope, s.locked])).toEqual([["sales", false], ["ops", false]])
      const remembered = await runService(fresh.config, Effect.flatMap(OpsStore, (o) => o.listBackupStates()))
      expect(salesRows).toBeGreaterThanOrEqual(remembered.find((r) => r.scope === "sales")?.version_count ?? Infinity)
      expect(opsRows).toBe(2)
    } finally {
      fresh.cleanup()
    }
  })

  it("refuses the live file, the scopes directory (also through symlinks), an existing target or -wal/-shm/-journal, a missing directory and an unknown scope; writes nothing", async () => {
    await runService(env.config, seedScope("sales", 1))
    await runService(env.config, runBackup())
    const listing = () => [readdirSync(out).sort(), readdirSync(join(env.dataDir, "scopes")).sort(), readdirSync(env.root).sort()]
    const before = listing()
    const expectRefusal = async (to: string, code: string, scope = "sales") => {
      const e = await refusal(restoreScope({ to, scope }, rc()))
      expect((e as { code: string }).code, to).toBe(code)
      expect(restoreExitCode(e as Parameters<typeof restoreExitCode>[0]), to).toBe(1)
    }
    await expectRefusal(scopeFile(env.dataDir, "sales"), "target-is-live")
    await expectRefusal(join(env.dataDir, "ops.sqlite"), "target-is-live")
    await expectRefusal(scopeFile(env.dataDir, "ops"), "target-is-live")
    await expectRefusal(join(env.dataDir, "scopes", "other.sqlite"), "target-in-scopes-dir")
    symlinkSync(join(env.dataDir, "scopes"), join(env.root, "scopes-link"))
    await expectRefusal(join(env.root, "scopes-link", "other.sqlite"), "target-in-scopes-dir")
    await expectRefusal(join(env.root, "scopes-link", "sales.sqlite"), "target-is-live")
    symlinkSync(join(env.dataDir, "scopes", "new.sqlite"), join(out, "dangling.sqlite"))
    await expectRefusal(join(out, "dangling.sqlite"), "target-in-scopes-dir")
    writeFileSync(join(out, "exists.sqlite"), "")
    await expectRefusal(join(out, "exists.sqlite"), "target-exists")
    for (const suffix of ["-wal", "-shm", "-journal"]) {
      writeFileSync(join(out, `side${suffix}.sqlite${suffix}`), "")
      await expectRefusal(join(out, `side${suffix}.sqlite`), "target-exists")
    }
    await expectRefusal(join(env.root, "nowhere", "sales.sqlite"), "target-directory-missing")
    const unknown = await refusal(restoreScope({ to: join(out, "x.sqlite"), scope: "nowhere" }, rc()))
    expect(unknown).toMatchObject({ _tag: "ValidationFailed" })
    const [outAfter, scopesAfter, rootAfter] = listing()
    expect(scopesAfter).toEqual(before[1])
    expect(rootAfter).toEqual([...(before[2] ?? []), "scopes-link"].sort())
    expect(outAfter).toEqual(["dangling.sqlite", "exists.sqlite", "side-journal.sqlite-journal", "side-shm.sqlite-shm", "side-wal.sqlite-wal"])
  })

  it("a failed check writes nothing (exit 3): a damaged copy, a copy of another scope, a copy older than the floor", async () => {
    await runService(env.config, Effect.gen(function*() {
      yield* seedScope("sales", 2)
      yield* seedScope("ops", 1)
    }))
    await runService(env.config, runBackup())
    const expectCheckFailure = async (failing: ReadonlyArray<string>) => {
      const e = (await refusal(restoreScope({ to: join(out, "sales.sqlite"), scope: "sales" }, rc()))) as RestoreCheckFailed
      expect(e._tag).toBe("RestoreCheckFailed")
      expect(e.code).toBe("restore-check-failed")
      expect(restoreExitCode(e)).toBe(3)
      expect(e.checks.filter((c) => !c.ok).map((c) => c.check)).toEqual(failing)
      expect(readdirSync(out)).toEqual([])
    }
    // older than the floor
    await runService(env.config, Effect.flatMap(OpsStore, (o) =>
      o.recordVerify("sales", { ok: true, at: "2026-01-01T00:00:00Z", result: {}, verified_counts: { rule_version: 7 } })))
    await expectCheckFailure(["not-older-than-last-verified"])
    // another scope's file
    linkSync(copyOf("ops"), join(env.root, "ops-copy.sqlite"))
    renameSync(join(env.root, "ops-copy.sqlite"), copyOf("sales"))
    await expectCheckFailure(["meta-scope", "not-older-than-last-verified"])
    // not a database
    writeFileSync(copyOf("sales"), "garbage".repeat(1000))
    await expectCheckFailure(["integrity"])
    const e = (await refusal(restoreScope({ to: join(out, "sales.sqlite"), scope: "sales" }, rc()))) as RestoreCheckFailed
    expect(e.checks.find((c) => c.check === "integrity")?.detail).toBe("the backup unreadable: SQLITE_NOTADB")
  })

  it("warns without a backup_state row (restore ops.sqlite first) and when ops.sqlite remembers more versions", async () => {
    await runService(env.config, seedScope("sales", 2))
    await runService(env.config, runBackup())
    await runService(env.config, Effect.flatMap(OpsStore, (o) => o.raiseVersionCount("sales", 10)))
    const fewer = await ok(restoreScope({ to: join(out, "a.sqlite"), scope: "sales" }, rc()))
    expect(fewer.warnings).toEqual(["the restored file has 3 rule versions, ops.sqlite remembers 10: the service would lock it (invariant 7)"])
    // the whole data dir is gone
    renameSync(env.dataDir, join(env.root, "lost"))
    const lost = await ok(restoreScope({ to: join(out, "b.sqlite"), scope: "sales" }, rc()))
    expect(lost.warnings).toEqual([`no backup_state row for sales (${join(env.dataDir, "ops.sqlite")} does not exist): restore ops.sqlite first`])
    expect(existsSync(env.dataDir)).toBe(false)
  })

  it("links without overwriting, also in a race", () => {
    writeFileSync(join(out, "tmp"), "new")
    writeFileSync(join(out, "target"), "old")
    expect(linkNoOverwrite(join(out, "tmp"), join(out, "target"))).toBe(false)
    expect(readdirSync(out).sort()).toEqual(["target", "tmp"])
    expect(linkNoOverwrite(join(out, "tmp"), join(out, "fresh"))).toBe(true)
    expect(readdirSync(out).sort()).toEqual(["fresh", "target"])
  })
})

describe("restore of ops.sqlite", () => {
  it("checks integrity and schema_version and refuses the live ops.sqlite", async () => {
    await runService(env.config, seedScope("sales", 1))
    await runService(env.config, runBackup())
    const answer = await ok(restoreOps({ to: join(out, "ops.sqlite") }, rc()))
    expect(answer.checks.map((c) => c.check)).toEqual(["fetch-copy", "integrity", "schema-version"])
    expect(await countIn(join(out, "ops.sqlite"), "backup_state")).toBe(1)
    const e = await refusal(restoreOps({ to: join(env.dataDir, "ops.sqlite") }, rc()))
    expect(e).toMatchObject({ code: "target-is-live" })
    await withFile(join(out, "ops.sqlite"), (sql) => sql`SELECT 1`)
  })
})
