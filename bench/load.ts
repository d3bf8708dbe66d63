/**
 * Load (docs/performance.md, docs/reliability.md Overload): POST /v1/search from N keep-alive clients on
 * loopback, with /healthz and the ops socket probed from another process all along; before
 * (searches and exports on the main thread, no admission gate: the service as it was) and after
 * (the read pool's workers and the admission gate), in one table with a goal line each. The
 * clients cycle through 10 queries, so after the first of each, stage a's answer is held under the
 * stamp (stage-a.ts); a third row "new words" (16 clients) is "after" with every query and a word
 * no search asked before (load-client.ts newWordWith: no analysis of the text held),
 * and the 16-client goals are measured on it (≥ 200 searches/s, p99 ≤ 150 ms, /healthz p99 ≤ 20
 * ms); the held answers of "after" are printed beside them.
 *
 * Each variant starts a service of its own (new worker threads), and its rows are measured after a
 * warm-up of the 16-client load, printed but not counted: a worker's JIT compiles ~1,200 functions
 * over its first ~20 s under this load, on V8's compiler threads, which took ~1.4 ms of CPU per
 * search from the two cores the searches share (docs/performance.md). The warm-up runs in windows of WARM_WINDOW_S seconds until the
 * server's CPU per search stops falling (a window no more than 5 % below the lowest before it:
 * support.ts settled), BENCH_LOAD_WARM seconds at least and BENCH_LOAD_WARM_MAX at most: on a
 * slow machine the same seconds answer fewer searches, and after 10 s a new input's search still
 * cost 40 % more than once settled. The warm-up of "new words" takes its words from the second half
 * of newWordWith's, each window 2,000 of its own, the run from the first half.
 *
 * The scopes are loaded through /v1 as a client would: one mail source, POST /v1/proposals quoting
 * it, and each proposal confirmed with POST /v1/rules/:id/decision by a person with an approval
 * session (BENCH_LOAD_SEED=sql inserts the same rows directly, for a quick run). The clients run in
 * child processes (bench/load-client.ts), so the measurement is not spent on the server's thread.
 *
 *   BENCH_LOAD_BIG (10000)  BENCH_LOAD_SMALL (2000)   rules of the two scopes
 *   BENCH_LOAD_SECONDS (20)                           per scenario and variant
 *   BENCH_LOAD_WARM (10)                              the warm-up of each variant, seconds at least (0: none)
 *   BENCH_LOAD_WARM_MAX (60)                          and at most, until it settled (see above)
 *   BENCH_LOAD_DIR                                    keep (or reuse) the loaded data dir there
 *   BENCH_LOAD_POOL (default: the pool's default size)
 */
import { fork } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { HttpServer } from "@effect/platform"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect, Layer, Logger, LogLevel, ManagedRuntime, Redacted } from "effect"
import { csrfToken } from "../src/auth/csrf.js"
import type { AppConfigShape } from "../src/config/config.js"
import { formatRuleId } from "../src/contracts/ids.js"
import { OpsStore } from "../src/db/ops-store.js"
import { ScopeStore } from "../src/db/scope-store.js"
import { serviceListeners } from "../src/http/listeners.js"
import { ReadPool, ReadPoolInThread, readPoolLayer } from "../src/read-pool/pool.js"
import { LexicalIndex } from "../src/search/lexical/index.js"
import { type ServiceOverrides, ServicesLive } from "../src/services.js"
import { AdmissionLive, AdmissionOff } from "../src/transport/admission.js"
import { settled } from "./support.js"
import { benchConfig } from "./config.js"
import { fourSyllables, NEW_WORDS, type ProbeJob, type ProbeReport, type SearchJob, type SearchReport } from "./load-client.js"

const BIG = Number(process.env.BENCH_LOAD_BIG ?? 10_000)
const SMALL = Number(process.env.BENCH_LOAD_SMALL ?? 2_000)
const SECONDS = Number(process.env.BENCH_LOAD_SECONDS ?? 20)
const WARM = Number(process.env.BENCH_LOAD_WARM ?? 10)
const WARM_MAX = Math.max(WARM, Number(process.env.BENCH_LOAD_WARM_MAX ?? 60))
/** the warm-up's windows, seconds */
const WARM_WINDOW_S = 5
/** the new words: the run takes the first half, the warm-up the second */
const HALF = NEW_WORDS / 2
const POOL = process.env.BENCH_LOAD_POOL === undefined ? undefined : Number(process.env.BENCH_LOAD_POOL)
const APPROVAL_TOKEN = "a".repeat(40)
const OPS_TOKEN = "o".repeat(40)
const SESSION_SECRET = "s".repeat(40)
const EMAIL = "bench@example.com"
const PUBLIC_URL = "http://127.0.0.1:8787"

export const loadConfig = (dataDir: string): AppConfigShape => {
  const c = benchConfig(dataDir, {
    scopes: [{ name: "big", providers_allowed: [] }, { name: "small", providers_allowed: [] }],
    limits: { requests_per_minute: 100_000, decisions_per_minute: 100_000 },
    approval: { default_mode: "manual" }
  }, 0)
  return { ...c, env: { ...c.env, devApprovalToken: Redacted.make(APPROVAL_TOKEN), opsToken: Redacted.make(OPS_TOKEN), sessionSecret: Redacted.make(SESSION_SECRET) } }
}

// ---------------------------------------------------------------------------------------------
// Text: business words and made-up ones; queries of 2–3 common business words

const WORDS = ["Lieferzeit", "Hakenleiste", "Bestellung", "Lieferant", "Rechnung", "Zahlungsziel", "Skonto", "Kunde", "Angebot",
  "Versand", "Palette", "Spedition", "delivery", "supplier", "invoice", "payment", "customer", "discount", "shipping", "order"]
let seed = 7
const rand = (n: number) => {
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed % n
}
// the made-up words have four syllables (65,536 of them, k from the generator's high bits): most occur in one or two
// rules, and the "new words" come from the same words (load-client.ts newWordWith)
const word = () => (rand(4) === 0 ? WORDS[rand(WORDS.length)] : fourSyllables(Math.floor(rand(2_147_483_648) / 32_768)))
const sentence = (n: number) => Array.from({ length: n }, word).join(" ")
export const QUERIES = ["Lieferzeit Hakenleiste", "Rechnung Skonto Kunde", "delivery supplier", "Zahlungsziel Kunde", "invoice payment order",
  "Palette Spedition Versand", "Angebot Rabatt", "customer discount", "shipping order", "Lieferant Bestellung"]

export const MAIL_LINES = Array.from({ length: 200 }, (_, i) => `Line ${i}: ${sentence(10)}`)
const MAIL_ID = "mail:<load@example.com>"

export const proposalOf = (scope: string, i: number) => ({
  scope, kind: "rule", statement: `${sentence(12)} ${i}`,
  source: { kind: "mail", id: MAIL_ID, quote: MAIL_LINES[i % MAIL_LINES.length] ?? "", link: null },
  said_at: "2026-03-12T09:15:00Z", speaker: null, relations: [{ kind: "supplier", name: `Lieferant ${i % 50}`, ref: null }],
  keywords: [word(), word()], valid_from: "2026-03-12", supersedes: null
})

export const sourceOf = (scope: string) => ({
  scope, attachments: [], text: MAIL_LINES.join("\n"),
  source: { kind: "mail", id: MAIL_ID, title: "Load", occurred_at: "2026-03-12T09:15:00Z", sender: null, thread: null, link: null }
})

// ---------------------------------------------------------------------------------------------
// Loading through /v1

export interface Client {
  readonly url: string
  readonly token: string
  readonly cookie: string
}

const call = async (url: string, path: string, init: { method: string; headers: Record<string, string>; body?: string }) => {
  // a keep-alive connection the server closed as it was reused (ECONNRESET) is tried again: a repeated
  // proposal is answered with the same ref, a repeated confirmation 409 already-decided
  for (let attempt = 1; ; attempt++) {
    try {
      const res = await fetch(`${url}${path}`, { ...init, redirect: "manual" })
      const text = await res.text()
      return { status: res.status, text, headers: res.headers }
    } catch (e) {
      if (attempt >= 3) throw e
    }
  }
}

/** The person's approval session (dev-token login, sent from `origin`: the service's public_url). */
export const login = async (url: string, origin: string): Promise<string> => {
  const r = await call(url, "/approval/login", { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded", origin: new URL(origin).origin }, body: `token=${APPROVAL_TOKEN}` })
  if (r.status !== 303) throw new Error(`login: ${r.status}`)
  return (r.headers.get("set-cookie") ?? "").split(";")[0] ?? ""
}

export const decideHeaders = (cookie: string) => ({
  cookie, csrf: csrfToken(SESSION_SECRET, EMAIL), origin: PUBLIC_URL, "content-type": "application/json"
})

/** One rule through /v1: the proposal, then its confirmation. */
export const loadRule = async (c: Client, scope: string, i: number): Promise<string> => {
  const p = await call(c.url, "/v1/proposals", {
    method: "POST", headers: { authorization: `Bearer ${c.token}`, "content-type": "application/json" }, body: JSON.stringify(proposalOf(scope, i))
  })
  if (p.status !== 201 && p.status !== 200) throw new Error(`proposal ${i}: ${p.status} ${p.text.slice(0, 200)}`)
  const id = /^rule\/(.+)@1$/.exec((JSON.parse(p.text) as { ref: string }).ref)?.[1] ?? ""
  const d = await call(c.url, `/v1/rules/${id}/decision`, { method: "POST", headers: decideHeaders(c.cookie), body: JSON.stringify({ decision: "confirm", version: 1 }) })
  if (d.status !== 200 && d.status !== 409) throw new Error(`decision ${id}: ${d.status} ${d.text.slice(0, 200)}`)
  return id
}

/** Rules `from`…`n - 1` of a scope through /v1 (a kept data dir resumes where the last run stopped). */
const loadThroughV1 = async (c: Client, scope: string, from: number, n: number) => {
  const s = await call(c.url, "/v1/sources", {
    method: "POST", headers: { authorization: `Bearer ${c.token}`, "content-type": "application/json" }, body: JSON.stringify(sourceOf(scope))
  })
  if (s.status !== 201 && s.status !== 200) throw new Error(`source: ${s.status} ${s.text.slice(0, 200)}`)
  let next = from
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (next < n) await loadRule(c, scope, next++)
  }))
}

/** The same rows as the /v1 load, inserted directly (BENCH_LOAD_SEED=sql). */
export const seedRules = (sql: SqlClient, scope: string, n: number) =>
  sql.withTransaction(Effect.gen(function*() {
    const t = "2026-01-01T00:00:00.000Z"
    yield* sql`INSERT INTO source (id, kind, title, occurred_at, sender, thread, link, excerpt, fulltext_sha256, fetched_at, feeder)
      VALUES ('manual:person:1', 'manual', NULL, NULL, NULL, NULL, NULL, NULL, NULL, ${t}, 'person:1')`.raw
    for (let seq = 1; seq <= n; seq++) {
      const id = formatRuleId(scope, seq)
      const p = proposalOf(scope, seq)
      const relations = JSON.stringify(p.relations)
      yield* sql`INSERT INTO rule (seq, id, created_at, created_by) VALUES (${seq}, ${id}, ${t}, 'person:1')`.raw
      for (const [version, status] of [[1, "proposed"], [2, "confirmed"]] as const) {
        yield* sql`INSERT INTO rule_version (rule_id, version, kind, statement, source_id, quote, timestamp_s, source_link, said_at, speaker,
            relations, keywords, valid_from, valid_until, supersedes, superseded_by, status, reason, changed_by, changed_at)
          VALUES (${id}, ${version}, 'rule', ${p.statement}, 'manual:person:1', ${p.source.quote}, NULL, NULL, ${t}, NULL, ${relations},
            ${JSON.stringify(p.keywords)}, '2026-01-01', NULL, NULL, NULL, ${status}, 'bench', 'person:1', ${t})`.raw
      }
      yield* sql`INSERT INTO rule_fts (rowid, keywords, statement, relations, quote)
        VALUES (${seq}, ${p.keywords.join(" ")}, ${p.statement}, 'supplier', ${p.source.quote})`.raw
    }
    yield* Effect.flatMap(LexicalIndex, (lex) => lex.rebuild(sql))
  }))

// ---------------------------------------------------------------------------------------------
// The server and the clients

export const serverRuntime = (config: AppConfigShape, overrides: ServiceOverrides) =>
  ManagedRuntime.make(serviceListeners("127.0.0.1", 0).pipe(
    Layer.provideMerge(ServicesLive(config, overrides)),
    Layer.provide(Logger.minimumLogLevel(LogLevel.Error))
  ))

export const urlOf = (address: HttpServer.Address) => `http://127.0.0.1:${address._tag === "TcpAddress" ? address.port : 0}`

/** Runs bench/load-client.js in a child process with `job`; its one report. */
export const child = <R>(job: SearchJob | ProbeJob): Promise<R> =>
  new Promise((resolve, reject) => {
    const p = fork(new URL("./load-client.js", import.meta.url), [JSON.stringify(job)], { stdio: ["ignore", "inherit", "inherit", "ipc"] })
    let report: R | undefined
    p.on("message", (m) => {
      report = m as R
    })
    p.on("exit", (code) => (report !== undefined ? resolve(report) : reject(new Error(`load client exited with ${code}`))))
  })

const pct = (xs: ReadonlyArray<number>, q: number): number => {
  if (xs.length === 0) return Number.NaN
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? Number.NaN
}

export interface Row {
  readonly variant: string
  readonly clients: number
  readonly rules: number
  readonly perSecond: number
  readonly p50: number
  readonly p95: number
  readonly p99: number
  readonly overloadedPerSecond: number
  readonly slowest: number
  readonly starved: number
  readonly healthzP99: number
  readonly healthzMax: number
  readonly opsP99: number
  readonly opsMax: number
  readonly errors: number
}

export const scenario = async (
  variant: string, url: string, token: string, socketPath: string, scope: string, rules: number, clients: number, seconds: number,
  newWords?: { readonly from: number; readonly count: number }
): Promise<{ row: Row; search: SearchReport; probe: ProbeReport }> => {
  const [search, probe] = await Promise.all([
    child<SearchReport>({ mode: "search", url, token, clients, seconds, scope, queries: QUERIES, ...(newWords === undefined ? {} : { newWords }) }),
    child<ProbeReport>({ mode: "probe", url, socketPath, opsToken: OPS_TOKEN, seconds, intervalMs: 50 })
  ])
  const errors = Object.values(search.otherStatus).reduce((a, b) => a + b, 0) + probe.failures
  return {
    search, probe,
    row: {
      variant, clients, rules,
      perSecond: search.ok.length / search.seconds,
      p50: pct(search.ok, 0.5), p95: pct(search.ok, 0.95), p99: pct(search.ok, 0.99),
      overloadedPerSecond: search.overloaded.length / search.seconds,
      slowest: Math.min(...search.perClient),
      starved: search.perClient.filter((n) => n <= 1).length,
      healthzP99: pct(probe.healthz, 0.99), healthzMax: Math.max(...probe.healthz, 0),
      opsP99: pct(probe.ops, 0.99), opsMax: Math.max(...probe.ops, 0),
      errors
    }
  }
}

const f0 = (x: number) => (Number.isNaN(x) ? "–" : x.toFixed(0))
const f1 = (x: number) => (Number.isNaN(x) ? "–" : x >= 1000 ? x.toFixed(0) : x.toFixed(1))

export const printTable = (rows: ReadonlyArray<Row>, seconds: number) => {
  console.log(`\nLoad: POST /v1/search from N keep-alive clients on loopback, ${seconds} s per row; /healthz and GET /ops/status probed every 50 ms from another process`)
  console.log("variant  | clients | rules  | searches/s | p50 ms | p95 ms | p99 ms | 503/s | slowest client's answers | clients ≤ 1 answer | /healthz p99 (max) ms | ops p99 (max) ms | errors")
  for (const r of rows) {
    console.log([
      r.variant.padEnd(8), String(r.clients).padStart(7), String(r.rules).padStart(6), f1(r.perSecond).padStart(10), f1(r.p50).padStart(6),
      f1(r.p95).padStart(6), f1(r.p99).padStart(6), f1(r.overloadedPerSecond).padStart(5), String(r.slowest).padStart(24), String(r.starved).padStart(18),
      `${f1(r.healthzP99)} (${f0(r.healthzMax)})`.padStart(21), `${f1(r.opsP99)} (${f0(r.opsMax)})`.padStart(16), String(r.errors).padStart(6)
    ].join(" | "))
  }
}

const goal = (name: string, met: boolean, figure: string) => console.log(`goal ${met ? "met   " : "MISSED"} ${name}: ${figure}`)

export const loadBench = async (): Promise<void> => {
  const keep = process.env.BENCH_LOAD_DIR
  const dataDir = keep ?? mkdtempSync(join(tmpdir(), "gn-bench-load-"))
  if (keep !== undefined && !existsSync(keep)) mkdirSync(keep, { recursive: true, mode: 0o700 })
  const config = loadConfig(dataDir)
  const pool = POOL === undefined ? {} : { size: POOL }
  try {
    // 1. load the scopes (once; a kept data dir is reused)
    const t0 = performance.now()
    const loader = serverRuntime(config, {})
    const token = await loader.runPromise(Effect.gen(function*() {
      const store = yield* ScopeStore
      const ops = yield* OpsStore
      const grants = yield* ops.listGrants()
      const existing = grants.find((g) => g.kind === "service")
      if (existing !== undefined) return null
      yield* store.create("big")
      yield* store.create("small")
      yield* ops.createGrant({ kind: "person", auth: "email", identity: EMAIL, scopes: ["big", "small"], rights: ["read", "propose", "decide"] })
      const grant = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: ["big", "small"], rights: ["read", "propose"] })
      return "token" in grant ? grant.token : ""
    }))
    const tokenFile = join(dataDir, "bench-token")
    const { readFileSync, writeFileSync } = await import("node:fs")
    if (token !== null) writeFileSync(tokenFile, token, { mode: 0o600 })
    const bearer = token ?? readFileSync(tokenFile, "utf8")
    const confirmed = await loader.runPromise(Effect.gen(function*() {
      const store = yield* ScopeStore
      const out: Record<string, number> = {}
      for (const scope of ["big", "small"]) {
        const { sql } = yield* store.use(scope)
        out[scope] = (yield* sql<{ n: number }>`SELECT count(*) AS n FROM current_version WHERE status = 'confirmed'`)[0]?.n ?? 0
      }
      return out
    }))
    const missing = (confirmed.big ?? 0) < BIG || (confirmed.small ?? 0) < SMALL
    if (missing && process.env.BENCH_LOAD_SEED === "sql" && token !== null) {
      await loader.runPromise(Effect.gen(function*() {
        const store = yield* ScopeStore
        for (const [scope, n] of [["big", BIG], ["small", SMALL]] as const) {
          const { sql } = yield* store.use(scope)
          yield* seedRules(sql, scope, n)
        }
      }))
    } else if (missing) {
      const url = urlOf(await loader.runPromise(Effect.map(HttpServer.HttpServer, (s) => s.address)))
      const cookie = await login(url, config.file.public_url)
      for (const [scope, n] of [["big", BIG], ["small", SMALL]] as const) await loadThroughV1({ url, token: bearer, cookie }, scope, confirmed[scope] ?? 0, n)
    }
    await loader.dispose()
    console.log(`\nload: ${BIG} + ${SMALL} rules ${!missing ? "reused" : process.env.BENCH_LOAD_SEED === "sql" ? "inserted directly" : "loaded through /v1"} in ${((performance.now() - t0) / 1000).toFixed(0)} s`)

    // 2. before and after, each scenario
    // "new words": after, every query a text of words never asked before (16 clients)
    const variants: ReadonlyArray<readonly [string, ServiceOverrides]> = [
      ["before", { readPool: ReadPoolInThread, admission: AdmissionOff }],
      ["after", { readPool: readPoolLayer(pool), admission: AdmissionLive }],
      ["new words", { readPool: readPoolLayer(pool), admission: AdmissionLive }]
    ]
    const rows: Array<Row> = []
    const samples: Array<string> = []
    for (const [variant, overrides] of variants) {
      const runtime = serverRuntime(config, overrides)
      try {
        const url = urlOf(await runtime.runPromise(Effect.map(HttpServer.HttpServer, (s) => s.address)))
        await runtime.runPromise(Effect.flatMap(ReadPool, (p) => p.warm))
        // warm-up: the first searches of each scope (caches, prepared statements), all of a scope's
        // queries at once, so they warm where the load runs them (one at a time, a lone search runs
        // on the main thread and leaves the workers' caches cold)
        for (const scope of ["big", "small"]) {
          await Promise.all(QUERIES.map((q) =>
            call(url, "/v1/search", { method: "POST", headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json" }, body: JSON.stringify({ scopes: [scope], text: q }) })))
        }
        const socket = join(dataDir, "ops.sock")
        if (WARM > 0) {
          // the 16-client load on the big scope, not counted, until the server's CPU per search settles (see the top)
          const costs: Array<number> = []
          const windows = Math.ceil(WARM / WARM_WINDOW_S)
          let last: Row | undefined
          while (costs.length * WARM_WINDOW_S < WARM_MAX && !settled(costs, windows)) {
            const cpu = process.cpuUsage()
            // the warm-up's new words come from the second half of the texts, the run's from the first
            const warmWords = { from: HALF + ((costs.length * 2_000) % HALF), count: 2_000 }
            const w = await scenario(variant, url, bearer, socket, "big", BIG, 16, WARM_WINDOW_S, variant === "new words" ? warmWords : undefined)
            const used = process.cpuUsage(cpu)
            costs.push((used.user + used.system) / 1000 / Math.max(1, w.search.ok.length))
            last = w.row
          }
          const how = settled(costs, windows) ? "settled" : "not settled"
          console.log(`warm-up, not counted: ${variant}, 16 clients, ${costs.length * WARM_WINDOW_S} s (server CPU a search by ${WARM_WINDOW_S} s: ${costs.map((c) => c.toFixed(2)).join(", ")} ms, ${how}); last ${WARM_WINDOW_S} s: ${f1(last?.perSecond ?? Number.NaN)} searches/s, p99 ${f1(last?.p99 ?? Number.NaN)} ms, /healthz p99 ${f1(last?.healthzP99 ?? Number.NaN)} ms`)
        }
        for (const [scope, rules, clients] of [["big", BIG, 16], ["small", SMALL, 200]] as const) {
          if (variant === "new words" && clients !== 16) continue
          const r = await scenario(variant, url, bearer, socket, scope, rules, clients, SECONDS, variant === "new words" ? { from: 0, count: HALF } : undefined)
          rows.push(r.row)
          if (r.search.sample503 !== null) samples.push(`${variant} ${clients} clients: 503 Retry-After ${r.search.retryAfter.join(",")} ${r.search.sample503}`)
        }
      } finally {
        await runtime.dispose()
      }
    }
    printTable(rows, SECONDS)
    for (const s of samples.slice(0, 2)) console.log(s)
    const row = (variant: string, clients: number) => rows.find((r) => r.variant === variant && r.clients === clients)
    const a16 = row("after", 16)
    const a200 = row("after", 200)
    const n16 = row("new words", 16)
    if (n16 !== undefined) {
      goal("16 clients, 10k rules, new words: ≥ 200 searches/s", n16.perSecond >= 200, `${f1(n16.perSecond)}/s`)
      goal("16 clients, 10k rules, new words: p99 ≤ 150 ms", n16.p99 <= 150, `${f1(n16.p99)} ms`)
      goal("16 clients, new words: /healthz p99 ≤ 20 ms", n16.healthzP99 <= 20, `${f1(n16.healthzP99)} ms`)
    }
    if (a16 !== undefined) {
      // held answers, beside the goals
      console.log(`held answers, 16 clients, 10k rules (the 10 queries again), beside the goals: ${f1(a16.perSecond)}/s, p99 ${f1(a16.p99)} ms, ` +
        `/healthz p99 ${f1(a16.healthzP99)} ms (before: ${f1(row("before", 16)?.perSecond ?? Number.NaN)}/s, p99 ${f1(row("before", 16)?.p99 ?? Number.NaN)} ms, /healthz p99 ${f1(row("before", 16)?.healthzP99 ?? Number.NaN)} ms)`)
    }
    if (a200 !== undefined) {
      goal("200 clients, 2k rules: /healthz p99 ≤ 50 ms", a200.healthzP99 <= 50, `${f1(a200.healthzP99)} ms (before ${f1(row("before", 200)?.healthzP99 ?? Number.NaN)} ms)`)
      goal("200 clients, 2k rules: ops socket p99 ≤ 50 ms", a200.opsP99 <= 50, `${f1(a200.opsP99)} ms (before ${f1(row("before", 200)?.opsP99 ?? Number.NaN)} ms)`)
      goal("200 clients: no client starved (every client ≥ 2 answers)", a200.starved === 0, `slowest client ${a200.slowest} answers, ${a200.starved} clients ≤ 1 (before ${row("before", 200)?.slowest ?? "–"} and ${row("before", 200)?.starved ?? "–"})`)
    }
  } finally {
    if (keep === undefined) rmSync(dataDir, { recursive: true, force: true })
  }
}
