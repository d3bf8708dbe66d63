/**
 * HTTP: authenticated GET /v1/rules/:id and POST /v1/proposals per second on loopback, next to
 * /healthz in the same run (the ratio shows what auth, the pipeline and search_log cost).
 * Load: C concurrent keep-alive clients in this process for D seconds per endpoint.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { HttpServer } from "@effect/platform"
import { Effect, Layer, Logger, LogLevel, ManagedRuntime } from "effect"
import type { AppConfigShape } from "../src/config/config.js"
import { benchConfig } from "./config.js"
import { percentile } from "./support.js"
import { OpsStore } from "../src/db/ops-store.js"
import { ScopeStore } from "../src/db/scope-store.js"
import { propose } from "../src/domain/proposals.js"
import { storeSource } from "../src/domain/sources.js"
import { publicListener } from "../src/http/server.js"
import { ServicesLive } from "../src/services.js"

const CONCURRENCY = 16
const SECONDS = 3

const config = (dataDir: string): AppConfigShape => benchConfig(dataDir, { limits: { requests_per_minute: 100_000 } }, 0)

const MAIL = Array.from({ length: 50 }, (_, i) => `Line ${i}: the supplier confirms delivery times for order batch ${i} within two days.`).join("\n")

interface Result { readonly perSecond: number; readonly p50: number; readonly p99: number; readonly errors: number }

const load = async (make: (i: number) => Promise<Response>): Promise<Result> => {
  const latencies: Array<number> = []
  let errors = 0
  let i = 0
  const end = performance.now() + SECONDS * 1000
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (performance.now() < end) {
      const t0 = performance.now()
      const res = await make(i++)
      await res.arrayBuffer()
      if (!res.ok) errors += 1
      latencies.push(performance.now() - t0)
    }
  }))
  latencies.sort((a, b) => a - b)
  const at = (q: number) => percentile(latencies, q)
  return { perSecond: latencies.length / SECONDS, p50: at(0.5), p99: at(0.99), errors }
}

export const httpBench = async (): Promise<void> => {
  const dir = mkdtempSync(join(tmpdir(), "gn-bench-http-"))
  const runtime = ManagedRuntime.make(publicListener("127.0.0.1", 0).pipe(
    Layer.provideMerge(ServicesLive(config(dir))),
    Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
  ))
  try {
    const { url, token, ids } = await runtime.runPromise(Effect.gen(function*() {
      const address = (yield* HttpServer.HttpServer).address
      const ops = yield* OpsStore
      yield* Effect.flatMap(ScopeStore, (s) => s.create("bench"))
      const grant = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: ["bench"], rights: ["read", "propose"] })
      yield* storeSource({
        scope: "bench", attachments: [], text: MAIL,
        source: { kind: "mail", id: "mail:<bench@example.com>", title: "Bench", occurred_at: "2026-03-12T09:15:00Z", sender: null, thread: null, link: null }
      }, grant.id)
      const ids: Array<string> = []
      for (let i = 0; i < 1000; i++) {
        const created = yield* propose(proposal(i), { grantId: grant.id, channel: "api" })
        ids.push(created.ref.slice(5, created.ref.indexOf("@")))
      }
      return { url: `http://127.0.0.1:${address._tag === "TcpAddress" ? address.port : 0}`, token: "token" in grant ? grant.token : "", ids }
    }))
    const auth = { authorization: `Bearer ${token}` }
    const health = await load(() => fetch(`${url}/healthz`))
    const read = await load((i) => fetch(`${url}/v1/rules/${ids[i % ids.length]}?include_proposals=true`, { headers: auth }))
    const write = await load((i) => fetch(`${url}/v1/proposals`, {
      method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify(proposal(10_000 + i))
    }))
    console.log(`\nHTTP on loopback, ${CONCURRENCY} concurrent keep-alive clients in-process, ${SECONDS} s each, 1k rules in the scope`)
    console.log("endpoint                    | req/s  | p50 ms | p99 ms | errors | healthz/endpoint")
    for (const [name, r] of [["GET /healthz", health], ["GET /v1/rules/:id", read], ["POST /v1/proposals", write]] as const) {
      console.log(`${name.padEnd(27)} | ${r.perSecond.toFixed(0).padStart(6)} | ${r.p50.toFixed(2).padStart(6)} | ${r.p99.toFixed(2).padStart(6)} | ${String(r.errors).padStart(6)} | ${(health.perSecond / r.perSecond).toFixed(2).padStart(16)}`)
    }
  } finally {
    await runtime.dispose()
    rmSync(dir, { recursive: true, force: true })
  }
}

const proposal = (i: number) => ({
  scope: "bench", kind: "rule" as const, statement: `Delivery rule number ${i} for order batches`,
  source: { kind: "mail" as const, id: "mail:<bench@example.com>", quote: `the supplier confirms delivery times for order batch ${i % 50} within two days`, link: null },
  said_at: "2026-03-12T09:15:00Z", speaker: null, relations: [], keywords: ["Lieferzeit"], valid_from: "2026-03-12", supersedes: null
})
