/**
 * Backup bench (docs/backup.md, Measured): seconds of backup run, restore probe (with the nightly export) and
 * backup verify for one scope of 1k, 10k and 100k confirmed rules, and how long the service's
 * event loop stalled meanwhile (the work runs in the backup worker; perf_hooks'
 * monitorEventLoopDelay in the service's thread). Then the /healthz and POST /v1/search p95 on the
 * public listener during backups of the 100k scope against idle (backup-listener.ts).
 *
 * BENCH_BACKUP_SIZES=1000,10000 picks the sizes; BENCH_BACKUP_LISTENER=0 leaves out the listener
 * measure; BENCH_KEEP=1 keeps the data dir.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { monitorEventLoopDelay } from "node:perf_hooks"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect, Layer, Logger, LogLevel } from "effect"
import { BackupLock } from "../src/backup/lock.js"
import { probeBackup } from "../src/backup/probe.js"
import { runBackup } from "../src/backup/run.js"
import { verifyBackup } from "../src/backup/verify.js"
import { makeBackupWorker } from "../src/backup/worker-client.js"
import { AppConfig } from "../src/config/config.js"
import { OpsStore } from "../src/db/ops-store.js"
import { ScopeStoreLive } from "../src/services.js"
import { ScopeStore, scopeFile } from "../src/db/scope-store.js"
import { formatRuleId } from "../src/contracts/ids.js"
import { makeKeyPair } from "../src/keys/keypair.js"
import { backupListenerBench } from "./backup-listener.js"
import { benchConfig } from "./config.js"
import { goalLine, seededRandom } from "./support.js"

const rand = seededRandom(11).int
const WORDS = ["Lieferzeit", "Hakenleiste", "Bestellung", "Lieferant", "Rechnung", "Zahlungsziel", "Skonto", "Kunde", "Angebot",
  "delivery", "supplier", "invoice", "payment", "customer", "discount", "sample", "shipping", "warehouse", "order", "approval"]
const sentence = (n: number): string => Array.from({ length: n }, () => `${WORDS[rand(WORDS.length)] ?? "x"}${rand(500)}`).join(" ")

/** n rules, each proposed then confirmed with its decision row and search row (one transaction per 1,000). */
export const seedRules = (sql: SqlClient, n: number) =>
  Effect.gen(function*() {
    const t = "2026-01-01T00:00:00.000Z"
    yield* sql`INSERT INTO source (id, kind, title, occurred_at, sender, thread, link, excerpt, fulltext_sha256, fetched_at, feeder)
      VALUES ('manual:person:1', 'manual', NULL, NULL, NULL, NULL, NULL, NULL, NULL, ${t}, 'person:1')`.raw
    for (let start = 1; start <= n; start += 1000) {
      yield* sql.withTransaction(Effect.gen(function*() {
        for (let seq = start; seq < Math.min(start + 1000, n + 1); seq++) {
          const id = formatRuleId("bench", seq)
          const statement = `${sentence(12)} ${seq}`
          const keywords = JSON.stringify([sentence(1), sentence(1)])
          const quote = sentence(15)
          yield* sql`INSERT INTO rule (seq, id, created_at, created_by) VALUES (${seq}, ${id}, ${t}, 'person:1')`.raw
          for (const [version, status] of [[1, "proposed"], [2, "confirmed"]] as const) {
            yield* sql`INSERT INTO rule_version (rule_id, version, kind, statement, source_id, quote, timestamp_s, source_link, said_at, speaker,
                relations, keywords, valid_from, valid_until, supersedes, superseded_by, status, reason, changed_by, changed_at)
              VALUES (${id}, ${version}, 'rule', ${statement}, 'manual:person:1', ${quote}, NULL, NULL, ${t}, NULL, '[]', ${keywords},
                '2026-01-01', NULL, NULL, NULL, ${status}, 'bench', 'person:1', ${t})`.raw
          }
          yield* sql`INSERT INTO decision (rule_id, version, kind, decided_by, decided_by_identity, decided_at, reason, new_version)
            VALUES (${id}, 1, 'confirm', 'person:2', 'anna@example.com', ${t}, NULL, 2)`.raw
          yield* sql`INSERT INTO rule_fts (rowid, keywords, statement, relations, quote)
            VALUES (${seq}, ${JSON.parse(keywords).join(" ")}, ${statement}, '', ${quote})`.raw
        }
      }))
    }
  })

/** BENCH_BACKUP_TRACE=1: each step of the probe with the longest stall since the previous step. */
let lastStep = performance.now()
let worst = 0
let stallTimer: ReturnType<typeof setInterval> | null = null
const stallTrace = (line: string): void => {
  if (process.env.BENCH_BACKUP_TRACE !== "1") return
  if (stallTimer === null) {
    let prev = performance.now()
    stallTimer = setInterval(() => {
      const now = performance.now()
      worst = Math.max(worst, now - prev)
      prev = now
    }, 1)
    stallTimer.unref()
  }
  console.log(`  ${(performance.now() - lastStep).toFixed(0).padStart(6)} ms, worst gap ${worst.toFixed(0)} ms → ${line}`)
  lastStep = performance.now()
  worst = 0
}

interface Timed<A> {
  readonly value: A
  readonly seconds: number
  /** longest stall of the event loop while it ran, ms */
  readonly maxStallMs: number
  /** p99 of the event loop delay while it ran, ms */
  readonly p99Ms: number
}

const timed = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<Timed<A>, E, R> =>
  Effect.gen(function*() {
    const h = monitorEventLoopDelay({ resolution: 10 })
    h.enable()
    const t0 = performance.now()
    const value = yield* effect
    const seconds = (performance.now() - t0) / 1000
    h.disable()
    return { value, seconds, maxStallMs: h.max / 1e6, p99Ms: h.percentile(99) / 1e6 }
  })

const runAt = (n: number, backupDir: string) =>
  Effect.gen(function*() {
    const store = yield* ScopeStore
    const ops = yield* OpsStore
    yield* store.create("bench")
    const { sql } = yield* store.use("bench")
    const t0 = performance.now()
    yield* seedRules(sql, n)
    yield* ops.raiseVersionCount("bench", 2 * n)
    const seeded = (performance.now() - t0) / 1000
    // the worker starts once per process; its start is not part of the figures
    yield* Effect.scoped(Effect.flatMap(makeBackupWorker, (w) => w.run({ op: "ping" })))
    const run = yield* timed(runBackup())
    const probe = yield* timed(probeBackup({ progress: stallTrace }))
    const verify = yield* timed(verifyBackup())
    const config = yield* AppConfig
    const live = scopeFile(config.env.dataDir, "bench")
    const mb = (statSync(live).size + (existsSync(`${live}-wal`) ? statSync(`${live}-wal`).size : 0)) / 1e6
    const copyMb = statSync(join(backupDir, "scopes", "bench.sqlite")).size / 1e6
    // the same scope keyed: the run encrypts its copy as a stream (gaps.md §12 R5), same run otherwise
    const plainRun = yield* timed(runBackup())
    const pair = yield* makeKeyPair
    yield* ops.addRecipient({ scope: "bench", recipient: pair.recipient, origin: "created" })
    yield* ops.addRecipient({ scope: null, recipient: pair.recipient, origin: "created" })
    const encRun = yield* timed(runBackup())
    return { n, seeded, mb, copyMb, run, probe, verify, plainRun, encRun, archiveMb: (probe.value.scopes[0]?.export?.bytes ?? 0) / 1e6 }
  })

export const backupBench = async (sizes: ReadonlyArray<number> = [1_000, 10_000, 100_000]): Promise<void> => {
  console.log("\nBackup (one scope of confirmed rules with decisions; copy kind; the probe writes the nightly export)")
  const encrypted: Array<{ readonly n: number; readonly plain: number; readonly enc: number }> = []
  console.log("rules   | live MB | copy MB | run s | probe s | verify s | archive MB | event loop max stall ms (run / probe / verify) | p99 ms (run / probe / verify) | seed s")
  for (const n of sizes) {
    const root = mkdtempSync(join(tmpdir(), "gn-bench-backup-"))
    const dataDir = join(root, "data")
    const backupDir = join(root, "backup")
    const exportDir = join(root, "exports")
    for (const d of [dataDir, backupDir, exportDir]) mkdirSync(d, { mode: 0o700 })
    try {
      const config = benchConfig(dataDir, {
        backup: { kind: "copy", directory: backupDir, deadman_url: "http://127.0.0.1:9/x", export_directory: exportDir }
      })
      const layer = Layer.mergeAll(ScopeStoreLive(), BackupLock.Default).pipe(
        Layer.provideMerge(OpsStore.Default),
        Layer.provideMerge(Layer.succeed(AppConfig, config))
      )
      const r = await Effect.runPromise(runAt(n, backupDir).pipe(Effect.provide(layer), Effect.scoped, Logger.withMinimumLogLevel(LogLevel.Warning)))
      const okAll = r.run.value.ok && r.probe.value.ok && r.verify.value.ok && r.plainRun.value.ok && r.encRun.value.ok
      encrypted.push({ n, plain: r.plainRun.seconds, enc: r.encRun.seconds })
      console.log(
        `${String(n).padEnd(7)} | ${r.mb.toFixed(1).padStart(7)} | ${r.copyMb.toFixed(1).padStart(7)} | ${r.run.seconds.toFixed(2).padStart(5)} | ` +
          `${r.probe.seconds.toFixed(2).padStart(7)} | ${r.verify.seconds.toFixed(2).padStart(8)} | ${r.archiveMb.toFixed(1).padStart(10)} | ` +
          `${[r.run, r.probe, r.verify].map((x) => x.maxStallMs.toFixed(0)).join(" / ").padStart(46)} | ` +
          `${[r.run, r.probe, r.verify].map((x) => x.p99Ms.toFixed(0)).join(" / ").padStart(29)} | ${r.seeded.toFixed(1).padStart(6)}` +
          (okAll ? "" : "  (a check failed!)")
      )
    } finally {
      if (process.env.BENCH_KEEP === "1") console.log(`kept ${root}`)
      else rmSync(root, { recursive: true, force: true })
    }
  }
  const largest = encrypted.at(-1)
  if (largest !== undefined) {
    console.log(goalLine(`backup run of a ${largest.n}-rule scope, encrypted vs plaintext ≤ 1.5×`, largest.enc <= 1.5 * largest.plain,
      `${largest.enc.toFixed(2)} s encrypted, ${largest.plain.toFixed(2)} s plaintext: ${(largest.enc / largest.plain).toFixed(2)}×`))
  }
  if (process.env.BENCH_BACKUP_LISTENER !== "0") await backupListenerBench()
}
