/**
 * kill -9 between a redaction's commit and its checkpoint (gaps.md §12): a real process commits
 * the redaction and is killed before its checkpoint, so the main file still holds the old text
 * and the WAL the new pages. The next open of the scope finishes the checkpoint: while the scope
 * is open, no byte of the .sqlite or its -wal holds the erased name.
 */
import { spawn } from "node:child_process"
import { statSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { Effect, ManagedRuntime } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { typeScriptExecArgv } from "../../src/backup/worker-loader.js"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore, scopeFile } from "../../src/db/scope-store.js"
import { storeLayer, tempDir, testConfig } from "../support/env.js"
import { run } from "../support/run.js"
import { filesHolding, seedNamed, TERM, withWal } from "./ledger-support.js"

const CHILD = fileURLToPath(new URL("./fixtures/redact-child.ts", import.meta.url))

let dir: string
let cleanup: () => void
beforeEach(() => {
  ;({ dir, cleanup } = tempDir("gn-ledger-crash-"))
})
afterEach(() => cleanup())

describe("kill -9 after a redaction's commit, before its checkpoint", () => {
  it("the next open of the scope finishes the checkpoint: the name is in no byte of the .sqlite and -wal", async () => {
    const config = testConfig(dir)
    await run(config, seedNamed())
    const live = scopeFile(dir, "sales")

    const child = spawn(process.execPath, [...typeScriptExecArgv(), CHILD, dir], { stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
    const committed = new Promise<boolean>((resolve) => {
      child.stdout?.on("data", (d: Buffer) => {
        output += d.toString("utf8")
        if (output.includes("committed")) resolve(true)
      })
      child.stderr?.on("data", (d: Buffer) => (output += d.toString("utf8")))
      child.once("exit", () => resolve(false))
    })
    const ok = await committed
    if (child.exitCode === null) child.kill("SIGKILL")
    await exited
    expect(ok, `the child did not commit; it printed:\n${output.slice(-2000)}`).toBe(true)
    expect(child.signalCode).toBe("SIGKILL")

    // the crash state: the WAL holds the commit, the main file still the old text
    expect(statSync(`${live}-wal`).size).toBeGreaterThan(0)
    expect(filesHolding([live], TERM)).toEqual([live])

    const runtime = ManagedRuntime.make(storeLayer(config))
    try {
      await runtime.runPromise(Effect.flatMap(ScopeStore, (s) => s.use("sales")))
      // the scope is open (its connection too): the checkpoint ran at the open, not at a close
      expect(filesHolding(withWal(live), TERM)).toEqual([])
      const ledger = await runtime.runPromise(Effect.flatMap(OpsStore, (o) => o.listLedger("sales")))
      expect(ledger.map((r) => r.id)).toEqual(["sales-x0001"])
    } finally {
      await runtime.dispose()
    }
  }, 120_000)
})
