/**
 * kill -9 of the service during a backup run (a real process, killed while VACUUM INTO writes the
 * temporary copy of a large scope): the previous copy stays valid and the next run succeeds.
 * The test polls for the temporary copy and kills at once; the scope is large enough that the
 * copy takes long compared with a poll, also on a busy machine.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { readdirSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { runBackup } from "../../src/backup/run.js"
import { typeScriptExecArgv } from "../../src/backup/worker-loader.js"
import { storeSource } from "../../src/domain/sources.js"
import { mailSource } from "../support/fixtures.js"
import { fileHash } from "../support/run.js"
import { type BackupEnv, backupEnv, countIn, runService, seedScope, withFile } from "./support.js"

let env: BackupEnv
beforeEach(() => {
  env = backupEnv({ scopes: ["sales"] })
})
afterEach(() => env.cleanup())

const CHILD = fileURLToPath(new URL("./fixtures/backup-child.ts", import.meta.url))
const scopesCopyDir = () => join(env.backupDir, "scopes")
const copyOf = () => join(scopesCopyDir(), "sales.sqlite")

/** Starts a service process that runs a backup; `exited` resolves when it exits, `output` is what it printed. */
const startChild = (): { child: ChildProcess; exited: Promise<number | null>; output: () => string } => {
  const child = spawn(process.execPath, [...typeScriptExecArgv(), CHILD, env.dataDir, env.backupDir], { stdio: ["ignore", "pipe", "pipe"] })
  let output = ""
  child.stdout?.on("data", (d: Buffer) => (output += d.toString("utf8")))
  child.stderr?.on("data", (d: Buffer) => (output += d.toString("utf8")))
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  return { child, exited, output: () => output.slice(-2000) }
}

const waitFor = async (predicate: () => boolean, what: string, ms = 120_000) => {
  const until = Date.now() + ms
  while (!predicate()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 2))
  }
}

describe("kill -9 during a backup run", () => {
  it("leaves the previous copy valid, and the next run succeeds", async () => {
    // a scope of ~110 MB, so VACUUM INTO takes a while even on a busy machine
    const big = "Lieferzeiten und Bestellungen der Hakenleisten. ".repeat(90_000)
    await runService(env.config, Effect.gen(function*() {
      yield* seedScope("sales", 2)
      for (let i = 0; i < 24; i++) {
        yield* storeSource(mailSource({ scope: "sales", text: `${big}${i}`, attachments: [] }, `mail:<big-${i}@example.com>`), "service:1")
      }
    }))
    const first = await runService(env.config, runBackup())
    expect(first.ok).toBe(true)
    const good = fileHash(copyOf())
    await runService(env.config, storeSource(mailSource({ scope: "sales", text: `${big}x`, attachments: [] }, "mail:<later@example.com>"), "service:1"))

    const { child, exited, output } = startChild()
    let killed = false
    try {
      await waitFor(() => child.exitCode !== null || readdirSync(scopesCopyDir()).some((n) => n.startsWith(".sales.sqlite.tmp-")), "the temporary copy")
      if (child.exitCode === null) {
        killed = child.kill("SIGKILL")
      }
    } finally {
      if (child.exitCode === null && !killed) child.kill("SIGKILL")
    }
    await exited
    expect(killed, `the child was not killed during the copy; it printed:\n${output()}`).toBe(true)
    expect(child.signalCode).toBe("SIGKILL")

    // the copy in place is the previous one, whole (the rename never happened)
    expect(fileHash(copyOf())).toBe(good)
    const check = await withFile(copyOf(), (sql) => sql<{ integrity_check: string }>`PRAGMA integrity_check`)
    expect(check).toEqual([{ integrity_check: "ok" }])
    expect(await countIn(copyOf(), "source")).toBe(26)

    const next = await runService(env.config, runBackup())
    expect(next.ok).toBe(true)
    expect(readdirSync(scopesCopyDir()).filter((n) => n.includes(".tmp-"))).toEqual([])
    expect(await countIn(copyOf(), "source")).toBe(27)
  }, 240_000)
})
