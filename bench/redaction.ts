/**
 * A redaction at scale (gaps.md §12): a scope of BENCH_REDACTION_RULES confirmed rules (default
 * 10k, seeded by SQL with the lexical index built), a name in the statement of 500 of them, so
 * 1,000 places (both versions of each); the preview's time, the apply's time (one write
 * transaction: the places found again, replaced, every derived row rebuilt; then the WAL
 * checkpoint), and POST /v1/search one at a time from a client in a process of its own
 * (bench/load-client.ts "steps"), idle and while the apply runs. Goals: preview ≤ 2 s, apply
 * ≤ 10 s, search p99 during the apply ≤ 3× idle p99. Printed beside them: how busy the bench's
 * main thread (the server's) was during the apply (event-loop utilization) and its longest stall
 * (a 1 ms timer's largest lateness). BENCH_TRACE=1 also prints the read pool's state before the
 * apply, every stall over 12 ms and every search (start:latency, ms after the confirmation).
 */
import { fork } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer, Logger, LogLevel, ManagedRuntime, Redacted } from "effect"
import { OpsStore } from "../src/db/ops-store.js"
import { ScopeStore } from "../src/db/scope-store.js"
import { publicListener } from "../src/http/server.js"
import { type Caller, CurrentCaller } from "../src/auth/caller.js"
import { previewTerm, redactTerm } from "../src/operations/redactions.js"
import { LexicalIndex } from "../src/search/lexical/index.js"
import { ReadPool } from "../src/read-pool/pool.js"
import { ServicesLive } from "../src/services.js"
import { benchConfig } from "./config.js"
import type { StepAnswer, StepsJob } from "./load-client.js"
import { BUSINESS_WORDS, freePort, goalLine, seedConfirmedRules, seededRandom, seedManualSource, sentenceOf, stats, syllableWords, zipfWords } from "./support.js"

const RULES = Number(process.env.BENCH_REDACTION_RULES ?? 10_000)
const NAMED = 500
const NAME = "Petra Müller"
const FEEDER = "f".repeat(40)
const EMAIL = "bench@example.com"
const IDLE_STEPS = 200
/** how long the person reads the preview before confirming it */
const READ_PREVIEW_MS = 2_000
const TRACE = process.env.BENCH_TRACE === "1"
/** a stall of the main thread worth listing (BENCH_TRACE) */
const STALL_MS = 12

const rand = seededRandom(41)
const word = zipfWords([...BUSINESS_WORDS, ...syllableWords(5_000, 3)], rand)
const sentence = sentenceOf(word)
const every = Math.floor(RULES / NAMED)

export const redactionBench = async (): Promise<void> => {
  const dir = mkdtempSync(join(tmpdir(), "gn-bench-redaction-"))
  const port = await freePort()
  const base = benchConfig(dir, { public_url: `http://127.0.0.1:${port}`, limits: { requests_per_minute: 100_000, decisions_per_minute: 100_000 } }, port)
  const config = { ...base, env: { ...base.env, devEmail: EMAIL, devApiToken: Redacted.make(FEEDER) } }
  const runtime = ManagedRuntime.make(publicListener("127.0.0.1", port).pipe(
    Layer.provideMerge(ServicesLive(config)),
    Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
  ))
  const url = `http://127.0.0.1:${port}`
  try {
    await runtime.runPromise(Effect.gen(function*() {
      const store = yield* ScopeStore
      yield* store.create("bench")
      // the dev API token acts for the grant of devEmail
      yield* Effect.flatMap(OpsStore, (ops) => ops.createGrant({ kind: "person", auth: "email", identity: EMAIL, scopes: ["bench"], rights: ["read"] }))
      const { sql } = yield* store.use("bench")
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* seedManualSource(sql)
        yield* seedConfirmedRules(sql, 1, RULES, (seq) => ({
          statement: seq % every === 0 && seq / every <= NAMED ? `${NAME} approves ${sentence(10)} (${seq})` : `${sentence(12)} (${seq})`,
          keywords: [word(), word()],
          relations: [{ kind: "supplier", name: sentence(2), ref: null }],
          quote: sentence(14)
        }))
      }))
      yield* Effect.flatMap(LexicalIndex, (lex) => lex.rebuild(sql))
    }))
    const job: StepsJob = { mode: "steps", url, token: FEEDER, scope: "bench" }
    const client = fork(new URL("./load-client.js", import.meta.url), [JSON.stringify(job)], { stdio: ["ignore", "inherit", "inherit", "ipc"] })
    const step = (text: string) =>
      new Promise<StepAnswer>((resolve) => {
        client.once("message", (m) => resolve(m as StepAnswer))
        client.send({ text })
      })
    const query = (i: number) => `${BUSINESS_WORDS[i % BUSINESS_WORDS.length] ?? "Lieferzeit"} ${word()}`
    for (let i = 0; i < 50; i++) await step(query(i))
    const idle: Array<number> = []
    for (let i = 0; i < IDLE_STEPS; i++) {
      const a = await step(query(i))
      if (a.status !== 200) throw new Error(`POST /v1/search answered ${a.status}`)
      idle.push(a.ms)
    }

    // the operations the approval channel runs (src/operations/redactions.ts), as a person's grant
    const person: Caller = {
      identity: { kind: "person", auth: "email", identity: EMAIL },
      grant: { id: "person-bench", kind: "person", auth: "email", identity: EMAIL, scopes: ["bench"], rights: ["read", "decide", "redact"] },
      channel: "approval"
    }
    const p0 = performance.now()
    const preview = await runtime.runPromise(previewTerm({ scope: "bench", term: NAME }))
    const previewMs = performance.now() - p0
    // the person reads the preview before confirming it
    await new Promise((resolve) => setTimeout(resolve, READ_PREVIEW_MS))

    if (TRACE) console.log(`read pool before the apply: ${JSON.stringify(await runtime.runPromise(Effect.flatMap(ReadPool, (p) => p.stats)))}`)
    let done = false
    const load = loadavg()[0] ?? 0
    const a0 = performance.now()
    const elu0 = performance.eventLoopUtilization()
    // the main thread's stalls: how late a 1 ms timer fires
    const stalls: Array<string> = []
    let longest = 0
    let tick = a0
    const ticker = setInterval(() => {
      const now = performance.now()
      longest = Math.max(longest, now - tick)
      if (now - tick > STALL_MS) stalls.push(`${(tick - a0).toFixed(0)}+${(now - tick).toFixed(0)}`)
      tick = now
    }, 1)
    const timeline: Array<string> = []
    const applying = runtime.runPromise(Effect.provideService(
      Effect.map(redactTerm({ scope: "bench", term: NAME, reason: "bench", preview: preview.body.preview }), (created) => ({
        created, totalMs: performance.now() - a0
      })),
      CurrentCaller, person
    )).finally(() => {
      done = true
    })
    const during: Array<number> = []
    let failed = 0
    for (let i = 0; !done; i++) {
      const t = performance.now() - a0
      const a = await step(query(i))
      timeline.push(`${t.toFixed(0)}:${a.ms.toFixed(0)}`)
      if (a.status === 200) during.push(a.ms)
      else failed++
    }
    const r = await applying
    const elu = performance.eventLoopUtilization(elu0)
    clearInterval(ticker)
    if (TRACE) {
      console.log(`main thread stalls over ${STALL_MS} ms (start+length, ms after the confirmation): ${stalls.join(" ")}`)
      console.log(`searches (start:latency): ${timeline.join(" ")}`)
    }
    client.send({ done: true })

    const si = stats(idle)
    const sd = stats(during)
    console.log(`\nredaction: "${NAME}" in ${NAMED} of ${RULES.toLocaleString("en")} confirmed rules (${preview.body.total} occurrences in ${preview.places.length} places)`)
    console.log("what                                   | ms")
    console.log(`preview                                | ${previewMs.toFixed(0).padStart(6)}`)
    console.log(`apply, ledger, wal_checkpoint(TRUNCATE) | ${r.totalMs.toFixed(0).padStart(6)} (checkpoint ${r.created.checkpointed === false ? "not completed" : "completed"})`)
    console.log(`main thread during the apply: event loop busy ${(elu.utilization * 100).toFixed(0)} %, longest stall ${longest.toFixed(0)} ms (load average ${load.toFixed(2)} at the confirmation)`)
    console.log(`search idle: n ${si.n}, median ${si.median.toFixed(2)}, p99 ${si.p99.toFixed(2)}`)
    console.log(`search during the apply: n ${sd.n}, median ${sd.median.toFixed(2)}, p99 ${sd.p99.toFixed(2)}, max ${sd.max.toFixed(2)}, not 200: ${failed}`)
    console.log(goalLine("redaction preview ≤ 2 s (1,000 places, 10k rules)", previewMs <= 2000, `${previewMs.toFixed(0)} ms`))
    console.log(goalLine("redaction apply ≤ 10 s (1,000 places, 10k rules)", r.totalMs <= 10_000, `${r.totalMs.toFixed(0)} ms with the ledger and the checkpoint`))
    const ratio = sd.p99 / Math.max(si.p99, 0.01)
    console.log(goalLine("search p99 during a redaction ≤ 3× idle p99", sd.n > 0 && failed === 0 && ratio <= 3,
      `${sd.p99.toFixed(2)} ms against ${si.p99.toFixed(2)} ms, ×${ratio.toFixed(2)}; ${sd.n} searches answered during the apply`))
  } finally {
    await runtime.dispose()
    rmSync(dir, { recursive: true, force: true })
  }
}
