/**
 * A redaction and a backup never overlap (gaps.md §12, the backup lock): a redaction asked for
 * while a backup run holds the lock answers backup-running and writes nothing; a backup run, probe
 * or verify asked for while a redaction is applied answers backup-running, and the copy made after
 * it holds the redacted file whole.
 */
import { join } from "node:path"
import { Deferred, Effect, Fiber } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { BackupLock, withRedactionLock } from "../../src/backup/lock.js"
import { probeBackup } from "../../src/backup/probe.js"
import { runBackup } from "../../src/backup/run.js"
import { OpsStore } from "../../src/db/ops-store.js"
import { scopeFile } from "../../src/db/scope-store.js"
import { filesHolding, redactTerm, seedNamed, TERM } from "../redaction/ledger-support.js"
import { type BackupEnv, backupEnv, countIn, serviceRuntime } from "./support.js"

let env: BackupEnv
beforeEach(() => {
  env = backupEnv({ scopes: ["sales"] })
})
afterEach(() => env.cleanup())

describe("a redaction and the backup lock", () => {
  it("a redaction while a backup run holds the lock answers backup-running and writes nothing", async () => {
    const runtime = serviceRuntime(env.config)
    try {
      await runtime.runPromise(seedNamed())
      const refused = await runtime.runPromise(Effect.flatMap(BackupLock, (lock) =>
        lock.withLock("run")(Effect.flip(withRedactionLock(redactTerm(TERM))))))
      expect(refused).toMatchObject({ _tag: "BackupRunning", reason: "run", message: "a backup run is running; try again when it has finished" })
      expect((refused as { code: string }).code).toBe("backup-running")
      expect(await runtime.runPromise(Effect.flatMap(OpsStore, (o) => o.listLedger("sales")))).toEqual([])
    } finally {
      await runtime.dispose()
    }
    expect(await countIn(scopeFile(env.dataDir, "sales"), "redaction")).toBe(0)
  })

  it("a backup run or probe while a redaction is applied answers backup-running; the run after it copies the redacted file", async () => {
    const runtime = serviceRuntime(env.config)
    try {
      await runtime.runPromise(seedNamed())
      const gate = await runtime.runPromise(Deferred.make<void>())
      const redaction = runtime.runFork(withRedactionLock(Effect.zipRight(Deferred.await(gate), redactTerm(TERM))))
      const current = () => runtime.runPromise(Effect.flatMap(BackupLock, (l) => l.current))
      while ((await current()) !== "redaction") await new Promise((r) => setTimeout(r, 5))
      for (const op of [Effect.flip(runBackup()), Effect.flip(probeBackup())] as const) {
        const e: unknown = await runtime.runPromise<unknown, unknown>(op)
        expect(e).toMatchObject({ _tag: "BackupRunning", reason: "redaction", message: "a redaction is being applied; try again when it has finished" })
      }
      await runtime.runPromise(Deferred.succeed(gate, undefined))
      const applied = await runtime.runPromise(Fiber.join(redaction))
      expect(applied.redaction.id).toBe("sales-x0001")
      expect(await current()).toBeNull()
      expect((await runtime.runPromise(runBackup())).ok).toBe(true)
    } finally {
      await runtime.dispose()
    }
    const copy = join(env.backupDir, "scopes", "sales.sqlite")
    expect(await countIn(copy, "redaction")).toBe(1)
    expect(filesHolding([copy], TERM)).toEqual([])
  })
})
