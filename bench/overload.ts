/**
 * Overload: POST /v1/search with new words (every text a business query and a word of the scope's
 * vocabulary nobody asked since the start) from 20 and then 200 keep-alive clients in a process
 * of their own (bench/load-client.ts "search": a 503 is waited out for its Retry-After, as a
 * well-behaved client does), on one scope of BENCH_OVERLOAD_RULES confirmed rules (default 10k,
 * inserted by SQL), with the read pool and the admission gate as the service runs them. Goal: 200
 * clients get ≥ 50 % of the answers per second that 20 clients get (shedding stays cheap). Also
 * printed: what a 503 costs against a search: its latency at the client, and the server's CPU per
 * 503 measured alone (the same service with a gate that serves nothing, 200 clients for 5 s after 2 s
 * not counted).
 * BENCH_OVERLOAD_SECONDS: seconds per run (default 10, after 5 s of warm-up at 20 clients).
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { OpsStore } from "../src/db/ops-store.js"
import { ScopeStore } from "../src/db/scope-store.js"
import { HttpServer } from "@effect/platform"
import { ReadPool } from "../src/read-pool/pool.js"
import { child, loadConfig, QUERIES, seedRules, serverRuntime, urlOf } from "./load.js"
import type { SearchJob, SearchReport } from "./load-client.js"
import { admissionLayer } from "../src/transport/admission.js"
import { goalLine, percentile, syllableWord } from "./support.js"

const RULES = Number(process.env.BENCH_OVERLOAD_RULES ?? 10_000)
const SECONDS = Number(process.env.BENCH_OVERLOAD_SECONDS ?? 10)
const WARM_S = 5
const TEXTS = 2_500

/** `n` new-words texts from `from` on: a business query and one more word of the vocabulary. */
const texts = (from: number, n: number): Array<string> =>
  Array.from({ length: n }, (_, i) => `${QUERIES[(from + i) % QUERIES.length] ?? ""} ${syllableWord(from + i, 3)}`)

interface Run {
  readonly clients: number
  readonly report: SearchReport
  /** the server process's CPU in the run, ms (every thread) */
  readonly cpuMs: number
}

const pct = (xs: ReadonlyArray<number>, q: number): number => percentile([...xs].sort((a, b) => a - b), q)

export const overloadBench = async (): Promise<void> => {
  const dir = mkdtempSync(join(tmpdir(), "gn-bench-overload-"))
  const runtime = serverRuntime(loadConfig(dir), {})
  let disposed = false
  try {
    const token = await runtime.runPromise(Effect.gen(function*() {
      const store = yield* ScopeStore
      yield* store.create("big")
      const { sql } = yield* store.use("big")
      yield* seedRules(sql, "big", RULES)
      const grant = yield* Effect.flatMap(OpsStore, (ops) =>
        ops.createGrant({ kind: "service", auth: "bearer", scopes: ["big"], rights: ["read", "propose"] }))
      return "token" in grant ? grant.token ?? "" : ""
    }))
    const url = urlOf(await runtime.runPromise(Effect.map(HttpServer.HttpServer, (s) => s.address)))
    await runtime.runPromise(Effect.flatMap(ReadPool, (p) => p.warm))
    let next = 0
    const run = async (clients: number, seconds: number): Promise<Run> => {
      // as many texts as the client's one argument holds (~100 KB); a run that answers more asks some twice (printed)
      const queries = texts(next, TEXTS)
      next += TEXTS
      const cpu = process.cpuUsage()
      const report = await child<SearchReport>({ mode: "search", url, token, clients, seconds, scope: "big", queries } satisfies SearchJob)
      const used = process.cpuUsage(cpu)
      return { clients, report, cpuMs: (used.user + used.system) / 1000 }
    }
    await run(20, WARM_S)
    const few = await run(20, SECONDS)
    const many = await run(200, SECONDS)
    const rate = (r: Run) => r.report.ok.length / r.report.seconds
    const cpuPerSearch = few.cpuMs / Math.max(1, few.report.ok.length)
    const shed = many.report.overloaded.length
    await runtime.dispose()
    disposed = true
    // a 503 alone: a gate that admits nothing, 200 clients honouring Retry-After
    const refusing = serverRuntime(loadConfig(dir), { admission: admissionLayer({ maxActive: 0, maxQueued: 0 }) })
    let cpuPer503 = Number.NaN
    try {
      const refusingUrl = urlOf(await refusing.runPromise(Effect.map(HttpServer.HttpServer, (s) => s.address)))
      const refuse = (seconds: number) =>
        child<SearchReport>({ mode: "search", url: refusingUrl, token, clients: 200, seconds, scope: "big", queries: texts(0, 10) })
      // the first seconds not counted: the service's start (its workers load the lexicon) lands in them
      await refuse(2)
      const cpu = process.cpuUsage()
      const alone = await refuse(5)
      const used = process.cpuUsage(cpu)
      cpuPer503 = (used.user + used.system) / 1000 / Math.max(1, alone.overloaded.length)
    } finally {
      await refusing.dispose()
    }
    console.log(`\noverload: POST /v1/search with new words, ${RULES} confirmed rules, ${SECONDS} s per run after ${WARM_S} s of warm-up; clients honour Retry-After`)
    console.log("clients | answers/s | p50 ms | p99 ms | 503/s | 503 p50 ms | server CPU ms/s | slowest client's answers | other")
    for (const r of [few, many]) {
      const asked = r.report.ok.length + r.report.overloaded.length
      if (asked > TEXTS) console.log(`(${r.clients} clients: ${asked} requests for ${TEXTS} texts: ${asked - TEXTS} asked again)`)
      const other = Object.entries(r.report.otherStatus).map(([k, v]) => `${k} × ${v}`).join(", ")
      console.log(`${String(r.clients).padStart(7)} | ${rate(r).toFixed(1).padStart(9)} | ${pct(r.report.ok, 0.5).toFixed(1).padStart(6)} | ` +
        `${pct(r.report.ok, 0.99).toFixed(1).padStart(6)} | ${(r.report.overloaded.length / r.report.seconds).toFixed(1).padStart(5)} | ` +
        `${(r.report.overloaded.length === 0 ? Number.NaN : pct(r.report.overloaded, 0.5)).toFixed(1).padStart(10)} | ` +
        `${(r.cpuMs / r.report.seconds).toFixed(0).padStart(15)} | ${String(Math.min(...r.report.perClient)).padStart(24)} | ${other}`)
    }
    console.log(`server CPU a search (20 clients): ${cpuPerSearch.toFixed(2)} ms; a 503 (measured alone): ${cpuPer503.toFixed(2)} ms`)
    if (many.report.sample503 !== null) console.log(`503 Retry-After ${many.report.retryAfter.join(",")} ${many.report.sample503}`)
    const ratio = rate(many) / Math.max(rate(few), 0.001)
    console.log(goalLine("200 clients honouring Retry-After get ≥ 50 % of the answers/s of 20 clients (new words, 10k rules)", ratio >= 0.5,
      `${rate(many).toFixed(1)} against ${rate(few).toFixed(1)}/s, ×${ratio.toFixed(2)}; ${(shed / many.report.seconds).toFixed(1)} 503/s`))
  } finally {
    if (!disposed) await runtime.dispose()
    rmSync(dir, { recursive: true, force: true })
  }
}
