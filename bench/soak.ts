/**
 * npm run soak (docs/reliability.md; not in CI): SOAK_MINUTES (30) of mixed load against a real service on
 * loopback — searches, proposals, confirmations, search_rules over MCP, the approval pages — from
 * SOAK_CLIENTS (8) clients in a child process (bench/soak-client.ts). Every minute one line: the
 * service process's RSS and heap, its open handles (active resources), the gate's admitted and
 * refused requests, and per kind of request the answers with their p50/p95/p99 latency, 503s and
 * failures. Flat RSS and handles after the warm-up are the goal. The scope starts with
 * SOAK_RULES (2000) confirmed rules, inserted directly.
 */
import { fork } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { HttpServer } from "@effect/platform"
import { Effect, Redacted } from "effect"
import { csrfToken } from "../src/auth/csrf.js"
import { OpsStore } from "../src/db/ops-store.js"
import { ScopeStore } from "../src/db/scope-store.js"
import { ReadPool, readPoolLayer } from "../src/read-pool/pool.js"
import { admissionLayer, type Gate } from "../src/transport/admission.js"
import { loadConfig, login, MAIL_LINES, QUERIES, seedRules, serverRuntime, sourceOf, urlOf } from "./load.js"
import type { MinuteReport, SoakJob } from "./soak-client.js"

const MINUTES = Number(process.env.SOAK_MINUTES ?? 30)
const CLIENTS = Number(process.env.SOAK_CLIENTS ?? 8)
const RULES = Number(process.env.SOAK_RULES ?? 2000)
const MCP_TOKEN = "m".repeat(40)

const mb = (n: number) => (n / 1024 / 1024).toFixed(0)

const soak = async () => {
  const dataDir = mkdtempSync(join(tmpdir(), "gn-soak-"))
  const base = loadConfig(dataDir)
  const config = { ...base, env: { ...base.env, devMcpToken: Redacted.make(MCP_TOKEN) } }
  let gate: Gate | undefined
  const runtime = serverRuntime(config, { readPool: readPoolLayer(), admission: admissionLayer({}, (g) => (gate = g)) })
  try {
    const url = urlOf(await runtime.runPromise(Effect.map(HttpServer.HttpServer, (s) => s.address)))
    const token = await runtime.runPromise(Effect.gen(function*() {
      const store = yield* ScopeStore
      const ops = yield* OpsStore
      yield* store.create("big")
      yield* ops.createGrant({ kind: "person", auth: "email", identity: "bench@example.com", scopes: ["big"], rights: ["read", "propose", "decide"] })
      const grant = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: ["big"], rights: ["read", "propose"] })
      const { sql } = yield* store.use("big")
      yield* seedRules(sql, "big", RULES)
      yield* Effect.flatMap(ReadPool, (p) => p.warm)
      return "token" in grant ? grant.token : ""
    }))
    const source = await fetch(`${url}/v1/sources`, {
      method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(sourceOf("big"))
    })
    if (source.status !== 201) throw new Error(`source: ${source.status}`)
    const cookie = await login(url, config.file.public_url)
    const job: SoakJob = {
      url, token, mcpToken: MCP_TOKEN, cookie, csrf: csrfToken("s".repeat(40), "bench@example.com"), origin: config.file.public_url,
      scope: "big", clients: CLIENTS, minutes: MINUTES, queries: QUERIES, quotes: MAIL_LINES, sourceId: "mail:<load@example.com>"
    }
    console.log(`soak: ${MINUTES} min, ${CLIENTS} clients of mixed load (10 searches, 3 proposals, 2 confirmations, 3 MCP searches, 2 approval pages in every 20), ${RULES} rules to start`)
    console.log("min | RSS MB | heap MB | handles | admitted | 503 | search n p50/p95/p99 ms | propose n p50/p99 | decide n p50/p99 | mcp n p50/p99 | page n p50/p99 | failed")
    let last = { admitted: 0, refused: 0 }
    await new Promise<void>((resolve, reject) => {
      const p = fork(new URL("./soak-client.js", import.meta.url), [JSON.stringify(job)], { stdio: ["ignore", "inherit", "inherit", "ipc"] })
      p.on("message", (m: MinuteReport | { done: true }) => {
        if ("done" in m) return
        const mem = process.memoryUsage()
        const s = gate?.stats()
        const admitted = (s?.admitted ?? 0) - last.admitted
        const refused = (s?.rejected ?? 0) + (s?.displaced ?? 0) - last.refused
        last = { admitted: s?.admitted ?? 0, refused: (s?.rejected ?? 0) + (s?.displaced ?? 0) }
        const k = m.kinds
        const two = (name: string) => `${k[name]?.n ?? 0} ${(k[name]?.p50 ?? 0).toFixed(0)}/${(k[name]?.p99 ?? 0).toFixed(0)}`
        const failed = Object.values(k).reduce((a, x) => a + x.failed, 0)
        console.log([
          String(m.minute).padStart(3), mb(mem.rss).padStart(6), mb(mem.heapUsed).padStart(7), String(process.getActiveResourcesInfo().length).padStart(7),
          String(admitted).padStart(8), String(refused).padStart(3),
          `${k.search?.n ?? 0} ${(k.search?.p50 ?? 0).toFixed(0)}/${(k.search?.p95 ?? 0).toFixed(0)}/${(k.search?.p99 ?? 0).toFixed(0)}`.padStart(23),
          two("propose").padStart(17), two("decide").padStart(16), two("mcp").padStart(13), two("page").padStart(14), String(failed).padStart(6)
        ].join(" | "))
      })
      p.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`soak client exited with ${code}`))))
    })
    const stats = await runtime.runPromise(Effect.flatMap(ReadPool, (p) => p.stats))
    console.log(`read pool: ${stats.inWorker} jobs in ${stats.size} workers, ${stats.inThread} on the main thread; gate: ${JSON.stringify(gate?.stats())}`)
  } finally {
    await runtime.dispose()
    rmSync(dataDir, { recursive: true, force: true })
  }
}

soak().catch((e: unknown) => {
  console.error(e)
  process.exit(1)
})
