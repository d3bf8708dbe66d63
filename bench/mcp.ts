/**
 * MCP: search_rules (compact) calls per second through the official SDK Client on
 * loopback at 10k confirmed rules, next to POST /v1/search with the same queries in the same run;
 * the ratio is the cost of the MCP framing (JSON-RPC, a fresh server per request) and the model
 * rendering (compact form, its binary search over the rendered size, annotateForeign). Also
 * search_rules with detail "full" (framing and rendering without the compact cap).
 * Load: C concurrent clients in this process for D seconds per endpoint. Every call asks new words:
 * one of the queries and a word of the scope's vocabulary no call asked before (each endpoint a
 * third of the texts, in turn; a call past its third asks its first again, and the table says how
 * many did).
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { HttpServer } from "@effect/platform"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect, Layer, Logger, LogLevel, ManagedRuntime, Redacted } from "effect"
import type { AppConfigShape } from "../src/config/config.js"
import { OpsStore } from "../src/db/ops-store.js"
import { ScopeStore } from "../src/db/scope-store.js"
import { publicListener } from "../src/http/server.js"
import { ServicesLive } from "../src/services.js"
import { LexicalIndex } from "../src/search/lexical/index.js"
import { benchConfig } from "./config.js"
import { percentile, seedConfirmedRules, seedManualSource, seededRandom, SYLLABLES } from "./support.js"

const CONCURRENCY = 8
const SECONDS = 3
const RULES = Number(process.env.BENCH_MCP_RULES ?? 10_000)
const MCP_TOKEN = "m".repeat(40)
const API_TOKEN = "p".repeat(40)

const config = (dataDir: string): AppConfigShape => {
  const c = benchConfig(dataDir, { limits: { requests_per_minute: 100_000 } }, 0)
  return { ...c, env: { ...c.env, devMcpToken: Redacted.make(MCP_TOKEN), devApiToken: Redacted.make(API_TOKEN) } }
}

const WORDS = ["Lieferzeit", "Hakenleiste", "Bestellung", "Lieferant", "Rechnung", "Zahlungsziel", "Skonto", "Kunde", "Angebot",
  "Versand", "Palette", "Spedition", "delivery", "supplier", "invoice", "payment", "customer", "discount", "shipping", "order"]
const rand = seededRandom(11).int
const word = () => (rand(4) === 0 ? WORDS[rand(WORDS.length)] : [rand(16), rand(16), rand(16)].map((k) => SYLLABLES[k]).join("")) ?? "x"
const sentence = (n: number) => Array.from({ length: n }, word).join(" ")
const QUERIES = ["Lieferzeit Hakenleiste", "Rechnung Skonto", "delivery time supplier", "Zahlungsziel Kunde", "invoice payment order"]
/**
 * The new words' texts: a query and a made-up word of the scope's vocabulary no other text holds
 * (an odd multiplier permutes the 4,096 words of three syllables); a third for each endpoint.
 */
const TEXT_COUNT = 4_095
const THIRD = Math.floor(TEXT_COUNT / 3)
const textOf = (i: number): string => {
  const k = (i * 1_597 + 7) & 4_095
  return `${QUERIES[i % QUERIES.length] ?? ""} ${[k & 15, (k >> 4) & 15, (k >> 8) & 15].map((d) => SYLLABLES[d]).join("")}`
}
const textsOf = (part: 0 | 1 | 2) => Array.from({ length: THIRD }, (_, i) => textOf(part * THIRD + i))

/** Confirmed rules in bulk (version 1 proposed, version 2 confirmed), then the lexical index. */
const seedRules = (sql: SqlClient, n: number) =>
  sql.withTransaction(Effect.gen(function*() {
    yield* seedManualSource(sql)
    yield* seedConfirmedRules(sql, 1, n, (seq) => {
      const statement = `${sentence(12)} ${seq}`
      const keywords = [word(), word()]
      return { statement, keywords, relations: [{ kind: "supplier", name: `Lieferant ${seq % 50}`, ref: null }], quote: sentence(40) }
    })
    yield* Effect.flatMap(LexicalIndex, (lex) => lex.rebuild(sql))
  }))

interface Result { readonly perSecond: number; readonly p50: number; readonly p99: number; readonly errors: number; readonly chars: number; readonly repeated: number }

const load = async (call: (i: number) => Promise<{ ok: boolean; chars: number }>): Promise<Result> => {
  const latencies: Array<number> = []
  let errors = 0
  let chars = 0
  let i = 0
  const end = performance.now() + SECONDS * 1000
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (performance.now() < end) {
      const t0 = performance.now()
      const r = await call(i++)
      if (!r.ok) errors += 1
      chars += r.chars
      latencies.push(performance.now() - t0)
    }
  }))
  latencies.sort((a, b) => a - b)
  const at = (q: number) => percentile(latencies, q)
  return { perSecond: latencies.length / SECONDS, p50: at(0.5), p99: at(0.99), errors, chars: chars / Math.max(1, latencies.length), repeated: Math.max(0, i - THIRD) }
}

export const mcpBench = async (): Promise<void> => {
  const dir = mkdtempSync(join(tmpdir(), "gn-bench-mcp-"))
  const runtime = ManagedRuntime.make(publicListener("127.0.0.1", 0).pipe(
    Layer.provideMerge(ServicesLive(config(dir))),
    Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
  ))
  const clients: Array<Client> = []
  try {
    const url = await runtime.runPromise(Effect.gen(function*() {
      const address = (yield* HttpServer.HttpServer).address
      const store = yield* ScopeStore
      yield* store.create("bench")
      yield* Effect.flatMap(OpsStore, (ops) => ops.createGrant({ kind: "person", auth: "email", identity: "bench@example.com", scopes: ["bench"], rights: ["read", "propose"] }))
      const { sql } = yield* store.use("bench")
      yield* seedRules(sql, RULES)
      return `http://127.0.0.1:${address._tag === "TcpAddress" ? address.port : 0}`
    }))
    for (let c = 0; c < CONCURRENCY; c++) {
      const client = new Client({ name: "groundnote-bench", version: "1.0.0" })
      await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${MCP_TOKEN}` } } }))
      clients.push(client)
    }
    const tool = (detail: "compact" | "full", texts: ReadonlyArray<string>) => async (i: number) => {
      const r = await clients[i % CONCURRENCY]?.callTool({ name: "search_rules", arguments: { scopes: ["bench"], text: texts[i % texts.length], detail } })
      const first = (r?.content as Array<{ type: string; text?: string }> | undefined)?.[0]
      return { ok: r !== undefined && r.isError !== true, chars: first?.text?.length ?? 0 }
    }
    const v1Texts = textsOf(0)
    const api = async (i: number) => {
      const res = await fetch(`${url}/v1/search`, {
        method: "POST", headers: { authorization: `Bearer ${API_TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ scopes: ["bench"], text: v1Texts[i % v1Texts.length] })
      })
      const text = await res.text()
      return { ok: res.ok, chars: text.length }
    }
    const v1 = await load(api)
    const compact = await load(tool("compact", textsOf(1)))
    const full = await load(tool("full", textsOf(2)))
    console.log(`\nMCP search_rules over the SDK client on loopback, ${RULES} confirmed rules, ${CONCURRENCY} concurrent clients, ${SECONDS} s each, new words (${THIRD} texts each)`)
    console.log("call                          | req/s  | p50 ms | p99 ms | errors | answer chars | POST /v1/search ÷ call | texts asked again")
    for (const [name, r] of [["POST /v1/search", v1], ["search_rules compact (MCP)", compact], ["search_rules full (MCP)", full]] as const) {
      console.log(`${name.padEnd(29)} | ${r.perSecond.toFixed(0).padStart(6)} | ${r.p50.toFixed(2).padStart(6)} | ${r.p99.toFixed(2).padStart(6)} | ${String(r.errors).padStart(6)} | ${r.chars.toFixed(0).padStart(12)} | ${(v1.perSecond / r.perSecond).toFixed(2).padStart(22)} | ${String(r.repeated).padStart(17)}`)
    }
  } finally {
    for (const c of clients) await c.close()
    await runtime.dispose()
    rmSync(dir, { recursive: true, force: true })
  }
}
