/**
 * The backup worker: its jobs run off the main thread (from TypeScript source under vitest, and
 * from dist/ as built JavaScript), the main thread keeps answering meanwhile, failures carry
 * SQLite's code, and an interrupted operation leaves a fresh worker for the next.
 */
import { execFileSync } from "node:child_process"
import { existsSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Effect, Either } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { sampleWord } from "../../src/backup/jobs.js"
import { makeBackupWorker } from "../../src/backup/worker-client.js"
import { workerEntry } from "../../src/backup/worker-loader.js"
import { storeSource } from "../../src/domain/sources.js"
import { scopeFile } from "../../src/db/scope-store.js"
import { OpsStore } from "../../src/db/ops-store.js"
import { mailSource } from "../support/fixtures.js"
import { type BackupEnv, backupEnv, runService, seedScope } from "./support.js"

let env: BackupEnv
beforeEach(() => {
  env = backupEnv()
})
afterEach(() => env.cleanup())

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
const withWorker = <A, E>(f: (w: Effect.Effect.Success<typeof makeBackupWorker>) => Effect.Effect<A, E>) =>
  Effect.runPromise(Effect.scoped(Effect.flatMap(makeBackupWorker, f)))

describe("the backup worker", () => {
  it("runs from TypeScript source under vitest, off the main thread", async () => {
    expect(workerEntry(import.meta.url).mode).toBe("source")
    expect(workerEntry("file:///x/dist/src/backup/run.js")).toMatchObject({ mode: "dist", execArgv: [] })
    const [mode, ping] = await withWorker((w) => Effect.map(w.run({ op: "ping" }), (p) => [w.mode, p] as const))
    expect(mode).toBe("source")
    expect(ping.isMainThread).toBe(false)
    expect(ping.threadId).toBeGreaterThan(0)
  })

  it("runs from dist/ as built JavaScript (npm run build, as the service runs)", async () => {
    const built = join(ROOT, "dist", "src", "backup", "worker-client.js")
    expect(existsSync(built), "dist/ is built by the suite's global setup (unset GROUNDNOTE_SKIP_BUILD)").toBe(true)
    await runService(env.config, seedScope("sales", 1))
    const script = `
      import { Effect } from "effect"
      import { makeBackupWorker } from ${JSON.stringify(built)}
      const out = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
        const w = yield* makeBackupWorker
        const ping = yield* w.run({ op: "ping" })
        const facts = yield* w.run({ op: "inspect", file: ${JSON.stringify(scopeFile(env.dataDir, "sales"))}, kind: "scope", integrity: true, sample: true })
        return { mode: w.mode, ping, integrity: facts.integrity, rules: facts.counts.rule, sample: facts.sample.found }
      })))
      console.log(JSON.stringify(out))`
    const stdout = execFileSync(process.execPath, ["--input-type=module", "-e", script], { cwd: ROOT, encoding: "utf8" })
    expect(JSON.parse(stdout)).toEqual({ mode: "dist", ping: { threadId: expect.any(Number), isMainThread: false }, integrity: "ok", rules: 1, sample: true })
  })

  it("leaves the main thread answering while a long VACUUM INTO runs", async () => {
    const big = "Lieferzeiten und Bestellungen der Hakenleisten. ".repeat(90_000)
    await runService(env.config, Effect.gen(function*() {
      yield* seedScope("sales", 1)
      for (let i = 0; i < 4; i++) yield* storeSource(mailSource({ scope: "sales", text: `${big}${i}`, attachments: [] }, `mail:<big-${i}@example.com>`), "service:1")
    }))
    const order: Array<string> = []
    await withWorker((w) => Effect.gen(function*() {
      yield* w.run({ op: "ping" })
      const job = Effect.runPromise(w.run({ op: "snapshot", source: scopeFile(env.dataDir, "sales"), target: join(env.root, "snap.sqlite") }))
        .then(() => order.push("snapshot done"))
      setTimeout(() => order.push("timer"), 0)
      yield* Effect.promise(() => job)
    }))
    expect(order).toEqual(["timer", "snapshot done"])
  })

  it("fails with SQLite's code for a missing or foreign file", async () => {
    writeFileSync(join(env.root, "garbage.sqlite"), "no database here".repeat(100))
    const [missing, garbage] = await withWorker((w) => Effect.all([
      Effect.either(w.run({ op: "inspect", file: join(env.root, "missing.sqlite"), kind: "scope", integrity: true, sample: false })),
      Effect.either(w.run({ op: "inspect", file: join(env.root, "garbage.sqlite"), kind: "scope", integrity: true, sample: false }))
    ]))
    expect(Either.isLeft(missing) && missing.left.code).toBe("SQLITE_CANTOPEN")
    expect(Either.isLeft(garbage) && garbage.left.code).toBe("SQLITE_NOTADB")
    expect(existsSync(join(env.root, "missing.sqlite"))).toBe(false)
  })

  it("an interrupted operation terminates its worker; the next one gets a fresh worker", async () => {
    const first = await withWorker((w) => Effect.succeed(w.threadId))
    const same = await withWorker((w) => Effect.succeed(w.threadId))
    expect(same).toBe(first)
    await Effect.runPromiseExit(Effect.scoped(Effect.flatMap(makeBackupWorker, () => Effect.interrupt)))
    const fresh = await withWorker((w) => Effect.map(w.run({ op: "ping" }), (p) => [w.threadId, p.threadId] as const))
    expect(fresh[0]).not.toBe(first)
    expect(fresh[1]).toBe(fresh[0])
  })

  it("counts the append-only tables by their unconditional 'append-only' delete trigger", async () => {
    await runService(env.config, Effect.gen(function*() {
      yield* seedScope("sales", 1)
      yield* Effect.flatMap(OpsStore, (o) => o.endSession("a".repeat(30), Math.floor(Date.now() / 1000) + 3600))
    }))
    const [ops, scope] = await withWorker((w) => Effect.all([
      w.run({ op: "inspect", file: join(env.dataDir, "ops.sqlite"), kind: "ops", integrity: false, sample: false }),
      w.run({ op: "inspect", file: scopeFile(env.dataDir, "sales"), kind: "scope", integrity: false, sample: false })
    ]))
    expect(Object.keys(ops.counts).sort()).toEqual(["backup_run", "backup_state", "grant", "key_recipient", "redaction_ledger", "reranker_usage"])
    expect(ops.remembered).toEqual({ sales: 2 })
    expect(Object.keys(scope.counts)).toEqual(expect.arrayContaining(["meta", "rule", "rule_version", "decision", "source", "source_attachment", "source_segment", "link"]))
    expect(scope.counts).not.toHaveProperty("search_log")
    expect(scope.metaScope).toBe("sales")
  })

  it("samples the longest word of a statement", () => {
    expect(sampleWord("Ask the supplier for the delivery time")).toBe("supplier")
    expect(sampleWord("Lieferzeit für Hakenleisten prüfen")).toBe("Hakenleisten")
    expect(sampleWord("… — !")).toBeNull()
  })
})
