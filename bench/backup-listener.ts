/**
 * The public listener while a backup runs (docs/backup.md, Measured): the p95 of GET /healthz and
 * POST /v1/search on the public listener, idle and during backups of a 100k-rule scope started
 * over the ops socket (POST /ops/backup/run back to back for a measuring window, then one
 * POST /ops/backup/probe), as ratios against idle. Goal: < 2×. The service is composed as
 * main.ts composes it (the public listener and the ops socket over ServicesLive in one process);
 * two sequential clients run in this process too, on one endpoint at a time in turns of 2 s, so
 * their latencies include any stall of the service's event loop.
 *
 * BENCH_LISTENER_RULES (default 100000) sets the scope's size; BENCH_LISTENER_SECONDS (default 8)
 * the idle and the run window.
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { request } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { HttpServer } from "@effect/platform"
import { Effect, Layer, Logger, LogLevel, ManagedRuntime } from "effect"
import { OpsStore } from "../src/db/ops-store.js"
import { ScopeStore } from "../src/db/scope-store.js"
import { serviceListeners } from "../src/http/listeners.js"
import { ServicesLive } from "../src/services.js"
import { seedRules } from "./backup.js"
import { benchConfig } from "./config.js"
import { percentile } from "./support.js"

const OPS_TOKEN = "o".repeat(40)
const GOAL = 2

interface Sample {
  readonly p50: number
  readonly p95: number
  readonly n: number
  readonly errors: number
}


/** How long one endpoint is measured before the other takes its turn. */
const WINDOW_MS = 2_000

/**
 * Two sequential clients on one endpoint at a time, the endpoints taking turns in windows of
 * WINDOW_MS until `until()` says stop (measured together, every /healthz would wait behind the
 * synchronous part of a search in the same event loop); latencies in ms.
 */
const measure = async (url: string, token: string, until: () => boolean): Promise<{ healthz: Sample; search: Sample }> => {
  const lat = { healthz: [] as Array<number>, search: [] as Array<number> }
  const errors = { healthz: 0, search: 0 }
  let i = 0
  const body = () => JSON.stringify({ scopes: ["bench"], text: `Lieferzeit${i % 500} Rechnung${(i * 7) % 500} supplier${(i++ * 13) % 500}` })
  const loop = async (kind: "healthz" | "search", stop: () => boolean) => {
    while (!stop()) {
      const t0 = performance.now()
      const res = kind === "healthz"
        ? await fetch(`${url}/healthz`)
        : await fetch(`${url}/v1/search`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: body() })
      await res.arrayBuffer()
      if (!res.ok) errors[kind] += 1
      lat[kind].push(performance.now() - t0)
    }
  }
  let kind: "healthz" | "search" = "healthz"
  while (!until() || lat.healthz.length === 0 || lat.search.length === 0) {
    const end = performance.now() + WINDOW_MS
    const stop = () => performance.now() > end || (until() && lat[kind].length > 0)
    await Promise.all([loop(kind, stop), loop(kind, stop)])
    kind = kind === "healthz" ? "search" : "healthz"
  }
  const sample = (k: "healthz" | "search"): Sample => {
    const sorted = [...lat[k]].sort((a, b) => a - b)
    return { p50: percentile(sorted, 0.5), p95: percentile(sorted, 0.95), n: sorted.length, errors: errors[k] }
  }
  return { healthz: sample("healthz"), search: sample("search") }
}

/** One POST over the ops socket; resolves with the answer's ok. */
const opsPost = (socketPath: string, path: string): Promise<boolean> =>
  new Promise((resolve, reject) => {
    const req = request({ socketPath, method: "POST", path, headers: { authorization: `Bearer ${OPS_TOKEN}` } }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => {
        try {
          resolve(res.statusCode === 200 && (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { ok?: unknown }).ok === true)
        } catch {
          resolve(false)
        }
      })
    })
    req.on("error", reject)
    req.end()
  })

const fmt = (s: Sample) => `${s.p50.toFixed(1).padStart(6)} / ${s.p95.toFixed(1).padStart(6)} ms (${String(s.n).padStart(5)} req${s.errors > 0 ? `, ${s.errors} errors` : ""})`
const ratio = (during: Sample, idle: Sample) => {
  const r = during.p95 / Math.max(idle.p95, 0.001)
  return `${r.toFixed(2)}× ${r < GOAL ? "(< 2×, goal met)" : "(goal < 2×: MISSED)"}`
}

export const backupListenerBench = async (rules = Number(process.env.BENCH_LISTENER_RULES ?? 100_000)): Promise<void> => {
  const seconds = Number(process.env.BENCH_LISTENER_SECONDS ?? 8)
  const root = mkdtempSync(join(tmpdir(), "gn-bench-listener-"))
  const dataDir = join(root, "data")
  const backupDir = join(root, "backup")
  const exportDir = join(root, "exports")
  for (const d of [dataDir, backupDir, exportDir]) mkdirSync(d, { mode: 0o700 })
  const config = benchConfig(dataDir, {
    backup: { kind: "copy", directory: backupDir, deadman_url: "http://127.0.0.1:9/x", export_directory: exportDir },
    limits: { requests_per_minute: 100_000 }
  }, 0)
  const runtime = ManagedRuntime.make(serviceListeners("127.0.0.1", 0).pipe(
    Layer.provideMerge(ServicesLive(config)),
    Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
  ))
  try {
    const t0 = performance.now()
    const { token, url } = await runtime.runPromise(Effect.gen(function*() {
      const address = (yield* HttpServer.HttpServer).address
      const store = yield* ScopeStore
      const ops = yield* OpsStore
      yield* store.create("bench")
      const { sql } = yield* store.use("bench")
      yield* seedRules(sql, rules)
      yield* ops.raiseVersionCount("bench", 2 * rules)
      const grant = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: ["bench"], rights: ["read"] })
      return { token: "token" in grant ? grant.token : "", url: address._tag === "TcpAddress" ? `http://127.0.0.1:${address.port}` : "" }
    }))
    const socket = join(dataDir, "ops.sock")
    console.log(`\nThe public listener during a backup (${rules.toLocaleString("en")} rules, seeded in ${((performance.now() - t0) / 1000).toFixed(0)} s; two sequential clients, the endpoints in turns of 2 s; p50 / p95)`)
    // warm up: the first search builds caches, the first run starts the backup worker
    await measure(url, token, (() => {
      const end = performance.now() + 2000
      return () => performance.now() > end
    })())
    await opsPost(socket, "/ops/backup/run")

    const idleEnd = performance.now() + seconds * 1000
    const idle = await measure(url, token, () => performance.now() > idleEnd)

    let runs = 0
    let runsOk = true
    let running = true
    const runEnd = performance.now() + seconds * 1000
    const runner = (async () => {
      while (performance.now() < runEnd) {
        runsOk = (await opsPost(socket, "/ops/backup/run")) && runsOk
        runs++
      }
      running = false
    })()
    const duringRun = await measure(url, token, () => !running)
    await runner

    let probing = true
    const probeStart = performance.now()
    const prober = opsPost(socket, "/ops/backup/probe").finally(() => {
      probing = false
    })
    const duringProbe = await measure(url, token, () => !probing)
    const probeOk = await prober
    const probeSeconds = (performance.now() - probeStart) / 1000

    console.log("                          | GET /healthz                      | POST /v1/search")
    console.log(`idle                      | ${fmt(idle.healthz)} | ${fmt(idle.search)}`)
    console.log(`during backup run (${String(runs).padStart(2)}×)   | ${fmt(duringRun.healthz)} | ${fmt(duringRun.search)}`)
    console.log(`during probe (${probeSeconds.toFixed(0).padStart(3)} s)      | ${fmt(duringProbe.healthz)} | ${fmt(duringProbe.search)}`)
    console.log(`p95 ratio, run / idle:   /healthz ${ratio(duringRun.healthz, idle.healthz)}; search ${ratio(duringRun.search, idle.search)}`)
    console.log(`p95 ratio, probe / idle: /healthz ${ratio(duringProbe.healthz, idle.healthz)}; search ${ratio(duringProbe.search, idle.search)}`)
    if (!runsOk || !probeOk) console.log("  (a backup run or probe failed!)")
  } finally {
    await runtime.dispose()
    if (process.env.BENCH_KEEP === "1") console.log(`kept ${root}`)
    else rmSync(root, { recursive: true, force: true })
  }
}
