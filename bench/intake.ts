/**
 * intake() against the path before slice A (gaps.md §10; the goal: intake ≤ 1.3× propose): at 10k existing rules, a
 * proposal through intake (secret scan over statement, quote, keywords, speaker and relation
 * names; the repeat lookup; the checks and insert; the classification with its scope facts and
 * its row) against propose() (the checks and insert only), interleaved in rounds on the same file
 * so drift hits both alike; then intake in mode A, where each proposal is also adopted (version 2,
 * decision, FTS and index rows again). Figures printed, never asserted.
 *
 * Then POST /v1/proposals over HTTP as feeders send them: a scope of 1k, 3k and 10k confirmed
 * rules (BENCH_INTAKE_HTTP_SIZES; seeded by SQL, the lexical index rebuilt), 4 keep-alive clients
 * in a process of their own (bench/intake-client.ts) sending new proposals of a mail for
 * BENCH_INTAKE_SECONDS (default 8) after 2 s of warm-up (and a whole run not counted before the first
 * size: the process's first proposals load the lexicon); every proposal runs the secret scan, the
 * quote check, the duplicate check and the classification. Goals: ≥ 100/s at every size, and the
 * rate at 10k ≥ 0.8× the rate at 1k (printed as goal lines).
 *
 * Then where a proposal's time goes, in process on the same scopes, one proposal at a time: intake()
 * whole and, of it, the duplicate check (RuleIndex.similar: stage a over the statement right after the
 * proposal's own rows, inside its write transaction, architecture.md §6.3), which holds the scope's
 * one writer and so bounds the rate at 1000 / its ms per second whatever else gets faster; and how
 * many answers the check would change if it ran before the proposal's own rows (as a check outside
 * the write, on the read pool, would): its top 3 and the coverage stored with each mark.
 */
import { fork } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect, Layer, Logger, LogLevel, ManagedRuntime } from "effect"
import { formatRuleId } from "../src/contracts/ids.js"
import { OpsStore } from "../src/db/ops-store.js"
import { ScopeStore } from "../src/db/scope-store.js"
import { intake } from "../src/domain/intake.js"
import type { ProposalRequest } from "../src/domain/proposal-schemas.js"
import { insertProposal, propose } from "../src/domain/proposals.js"
import { RuleIndex } from "../src/domain/rule-index.js"
import { storeSource } from "../src/domain/sources.js"
import { publicListener } from "../src/http/server.js"
import { LexicalIndex } from "../src/search/lexical/index.js"
import { ServicesLive } from "../src/services.js"
import { benchConfig } from "./config.js"
import type { IntakeJob, IntakeReport } from "./intake-client.js"
import {
  BUSINESS_WORDS, freePort, goalLine, percentile, seedConfirmedRules, seedManualSource, seededRandom, sentenceOf, stats, SYLLABLES, syllableWords, timed,
  zipfWords
} from "./support.js"

const WORDS = [
  "Lager", "Palette", "Halle", "Muster", "Inventur", "Protokoll", "Teamordner", "Gabelstapler", "Tor", "Keller",
  "warehouse", "pallet", "hall", "sample", "stocktaking", "forklift", "gate", "shelf", "label", "shift"
]
const rand = seededRandom(7).int
const word = (): string => (rand(3) === 0 ? WORDS[rand(WORDS.length)] ?? "x" : [rand(16), rand(16), rand(16)].map((k) => SYLLABLES[k]).join(""))
const sentence = (n: number): string => Array.from({ length: n }, word).join(" ")

const MAIL_LINES = Array.from({ length: 200 }, () => sentence(12))
const MAIL_ID = "mail:<bench@acme.example>"

const request = (i: number): ProposalRequest => ({
  scope: "bench", kind: "rule", statement: `${sentence(10)} (${i})`,
  source: { kind: "mail", id: MAIL_ID, quote: MAIL_LINES[i % MAIL_LINES.length] ?? "", link: null },
  said_at: "2026-03-12T09:15:00Z", speaker: "Maria", relations: [{ kind: "product", name: sentence(2), ref: null }],
  keywords: [word(), word()], valid_from: "2026-03-12", supersedes: null
})

const bareInsert = (sql: SqlClient, seq: number, r: ProposalRequest) =>
  Effect.gen(function*() {
    const id = formatRuleId("bench", seq)
    const now = new Date().toISOString()
    yield* sql`INSERT INTO rule (seq, id, created_at, created_by) VALUES (${seq}, ${id}, ${now}, 'person:1')`.raw
    yield* sql`INSERT INTO rule_version (rule_id, version, kind, statement, source_id, quote, said_at, speaker, relations, keywords,
        valid_from, status, reason, changed_by, changed_at)
      VALUES (${id}, 1, ${r.kind}, ${r.statement}, ${MAIL_ID}, ${r.source.quote}, ${r.said_at}, ${r.speaker},
        ${JSON.stringify(r.relations)}, ${JSON.stringify(r.keywords)}, ${r.valid_from}, 'proposed', 'bench', 'person:1', ${now})`.raw
    yield* sql`INSERT INTO rule_fts (rowid, keywords, statement, relations, quote)
      VALUES (${seq}, ${r.keywords.join(" ")}, ${r.statement}, ${r.relations.map((x) => `${x.kind} ${x.name}`).join(" ")}, ${r.source.quote})`.raw
  })

const median = (xs: ReadonlyArray<number>): number => stats(xs).median

/** ms per proposal of each path at `existing` rules: `rounds` rounds of `n` each, interleaved. */
const runAt = (existing: number, mode: "manual" | "autonomous", rounds: number, n: number) =>
  Effect.gen(function*() {
    const dir = mkdtempSync(join(tmpdir(), "gn-bench-intake-"))
    const config = benchConfig(dir, { approval: { default_mode: mode, daily_limit: 1000, own_domains: ["acme.example"] } })
    try {
      return yield* Effect.gen(function*() {
        const store = yield* ScopeStore
        yield* store.create("bench")
        yield* storeSource({
          scope: "bench",
          source: { kind: "mail", id: MAIL_ID, title: "Bench mail", occurred_at: "2026-03-12T09:15:00Z", sender: "maria@acme.example", thread: null, link: null },
          text: MAIL_LINES.join("\n"), attachments: []
        }, "service:1")
        const { sql } = yield* store.use("bench")
        yield* sql.withTransaction(Effect.forEach(Array.from({ length: existing }, (_, i) => i + 1), (seq) => bareInsert(sql, seq, request(seq)), { discard: true }))
        yield* Effect.flatMap(LexicalIndex, (lex) => lex.rebuild(sql))
        let next = existing + 1
        const before: Array<number> = []
        const after: Array<number> = []
        const by = { grantId: "service:1", channel: "api" as const }
        for (let r = 0; r < rounds; r++) {
          before.push(yield* timed(Effect.forEach(Array.from({ length: n }, () => next++), (i) => propose(request(i), by), { discard: true })))
          after.push(yield* timed(Effect.forEach(Array.from({ length: n }, () => next++), (i) => intake(request(i), { ...by, requestId: null }), { discard: true })))
        }
        const adopted = yield* sql<{ n: number }>`SELECT count(*) AS n FROM decision WHERE origin = 'auto'`
        return { before: median(before) / n, after: median(after) / n, adopted: adopted[0]?.n ?? 0 }
      }).pipe(Effect.provide(ServicesLive(config)), Effect.scoped)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

export const intakeBench = async (): Promise<void> => {
  await intakeHttpBench()
  if (process.env.BENCH_INTAKE_HTTP_ONLY === "1") return
  await intakeSplitBench(httpSizes())
  const existing = Number(process.env.BENCH_INTAKE_RULES ?? 10_000)
  console.log(`\nintake: propose with the secret scan and the classification (intake) against propose without them, at ${existing} rules`)
  console.log("mode       | propose ms | intake ms | ratio intake/propose | adopted")
  for (const mode of ["manual", "autonomous"] as const) {
    const r = await Effect.runPromise(runAt(existing, mode, 5, 100).pipe(Logger.withMinimumLogLevel(LogLevel.Warning)))
    console.log(`${mode.padEnd(10)} | ${r.before.toFixed(2).padStart(10)} | ${r.after.toFixed(2).padStart(9)} | ${(r.after / r.before).toFixed(2).padStart(20)} | ${r.adopted}`)
  }
}

// ---- POST /v1/proposals over HTTP, 4 clients ----------------------------------------------------

const HTTP_CLIENTS = 4
const httpWord = zipfWords([...BUSINESS_WORDS, ...syllableWords(5_000, 3)], seededRandom(31))
const httpSentence = sentenceOf(httpWord)
const HTTP_LINES = Array.from({ length: 200 }, (_, i) => `Zeile ${i}: ${httpSentence(12)}.`)
const HTTP_MAIL = "mail:<intake-http@acme.example>"

/** A new proposal of the mail: a statement of 10–14 words of the scope's vocabulary. */
const httpProposal = (i: number) => ({
  scope: "bench", kind: "rule", statement: `${httpSentence(10 + (i % 5))} (${i})`,
  source: { kind: "mail", id: HTTP_MAIL, quote: (HTTP_LINES[i % HTTP_LINES.length] ?? "").slice(9, 80), link: null },
  speaker: "Maria", relations: [{ kind: "supplier", name: httpSentence(2), ref: null }], keywords: [httpWord(), httpWord()]
})

/** The scope `bench` with `rules` confirmed rules (lexical index rebuilt) and the mail the proposals quote, stored by `feeder`. */
const seedHttpScope = (rules: number, feeder: string) =>
  Effect.gen(function*() {
    const store = yield* ScopeStore
    yield* store.create("bench")
    const { sql } = yield* store.use("bench")
    yield* sql.withTransaction(Effect.gen(function*() {
      yield* seedManualSource(sql)
      yield* seedConfirmedRules(sql, 1, rules, (seq) => ({
        statement: `${httpSentence(10 + (seq % 5))} (${seq})`, keywords: [httpWord(), httpWord()],
        relations: [{ kind: "supplier", name: httpSentence(2), ref: null }], quote: HTTP_LINES[seq % HTTP_LINES.length] ?? ""
      }))
      yield* Effect.flatMap(LexicalIndex, (lex) => lex.rebuild(sql))
    }))
    yield* storeSource({
      scope: "bench", attachments: [], text: HTTP_LINES.join("\n"),
      source: { kind: "mail", id: HTTP_MAIL, title: "Regeln", occurred_at: "2026-03-12T09:15:00Z", sender: "maria@acme.example", thread: null, link: null }
    }, feeder)
  })

interface HttpRate {
  readonly rules: number
  readonly perSecond: number
  readonly p50: number
  readonly p99: number
  readonly other: string
  /** the service process's CPU per proposal sent, ms (every thread: the listener, the writer, GC) */
  readonly cpuMs: number
  /** its main thread's CPU per proposal sent, ms, where Linux tells it (the one writer runs there) */
  readonly mainMs: number | null
}

/** CPU time of this process's main thread, ms (Linux: /proc/self/task/<pid>/schedstat), else null. */
const mainThreadCpuMs = (): number | null => {
  const file = `/proc/self/task/${process.pid}/schedstat`
  return existsSync(file) ? Number(readFileSync(file, "utf8").split(" ")[0]) / 1e6 : null
}

const httpAt = async (rules: number, seconds: number): Promise<HttpRate> => {
  const dir = mkdtempSync(join(tmpdir(), "gn-bench-intake-http-"))
  const port = await freePort()
  const config = benchConfig(dir, {
    public_url: `http://127.0.0.1:${port}`, limits: { requests_per_minute: 100_000 },
    approval: { default_mode: "manual", own_domains: ["acme.example"] }
  }, port)
  const runtime = ManagedRuntime.make(publicListener("127.0.0.1", port).pipe(
    Layer.provideMerge(ServicesLive(config)),
    Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
  ))
  try {
    const token = await runtime.runPromise(Effect.gen(function*() {
      const grant = yield* Effect.flatMap(OpsStore, (ops) =>
        ops.createGrant({ kind: "service", auth: "bearer", scopes: ["bench"], rights: ["read", "propose"] }))
      yield* seedHttpScope(rules, grant.id)
      return "token" in grant ? grant.token ?? "" : ""
    }))
    const bodies = Array.from({ length: 400 * (seconds + 2) }, (_, i) => JSON.stringify(httpProposal(rules + i)))
    const job: IntakeJob = { url: `http://127.0.0.1:${port}`, token, clients: HTTP_CLIENTS, warmSeconds: 2, seconds, bodies }
    const cpu0 = process.cpuUsage()
    const main0 = mainThreadCpuMs()
    const report = await new Promise<IntakeReport>((resolve, reject) => {
      const p = fork(new URL("./intake-client.js", import.meta.url), [], { stdio: ["ignore", "inherit", "inherit", "ipc"] })
      let got: IntakeReport | undefined
      p.on("message", (m) => {
        got = m as IntakeReport
      })
      p.on("exit", (code) => (got !== undefined ? resolve(got) : reject(new Error(`intake client exited with ${code}`))))
      p.send(job)
    })
    const cpu = process.cpuUsage(cpu0)
    const main1 = mainThreadCpuMs()
    if (report.sent >= bodies.length) throw new Error("the intake client ran out of proposals: raise the bodies' count")
    const sorted = [...report.ok].sort((a, b) => a - b)
    const other = Object.entries(report.otherStatus).map(([k, v]) => `${k} × ${v}`).join(", ")
    return {
      rules, perSecond: report.ok.length / report.seconds, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99),
      other: other === "" ? "" : `${other}: ${report.sample ?? ""}`,
      cpuMs: (cpu.user + cpu.system) / 1000 / Math.max(1, report.sent),
      mainMs: main0 === null || main1 === null ? null : (main1 - main0) / Math.max(1, report.sent)
    }
  } finally {
    await runtime.dispose()
    rmSync(dir, { recursive: true, force: true })
  }
}

const httpSizes = (): Array<number> =>
  (process.env.BENCH_INTAKE_HTTP_SIZES ?? "1000,3000,10000").split(",").map((x) => Number(x.trim())).filter((n) => n > 0)

export const intakeHttpBench = async (): Promise<void> => {
  const sizes = httpSizes()
  const seconds = Number(process.env.BENCH_INTAKE_SECONDS ?? 8)
  console.log(`
POST /v1/proposals over HTTP: ${HTTP_CLIENTS} keep-alive clients in a process of their own, ${seconds} s counted after 2 s of warm-up, ` +
    "each a new proposal of a mail (secret scan, quote check, duplicate check, classification), mode manual")
  // the process's first proposals load the lexicon and warm the JIT: a run not counted first, so the
  // first size does not pay them (it would flatter the 10k/1k ratio)
  const warm = await httpAt(sizes[0] ?? 1000, 3)
  console.log(`warm-up, not counted: ${warm.rules} rules, 3 s: ${warm.perSecond.toFixed(1)} proposals/s`)
  // the CPU a proposal costs the service moves less with the machine's other load than the rate does
  console.log("confirmed rules | proposals/s | p50 ms | p99 ms | CPU ms a proposal (process / main thread) | other answers")
  const rates: Array<HttpRate> = []
  for (const rules of sizes) {
    const r = await httpAt(rules, seconds)
    rates.push(r)
    const cpu = `${r.cpuMs.toFixed(2)} / ${r.mainMs === null ? "-" : r.mainMs.toFixed(2)}`
    console.log(`${String(rules).padStart(15)} | ${r.perSecond.toFixed(1).padStart(11)} | ${r.p50.toFixed(1).padStart(6)} | ${r.p99.toFixed(1).padStart(6)} | ${cpu.padStart(41)} | ${r.other}`)
  }
  for (const r of rates) {
    console.log(goalLine(`POST /v1/proposals ≥ 100/s (${HTTP_CLIENTS} clients, ${r.rules} confirmed rules)`, r.perSecond >= 100,
      `${r.perSecond.toFixed(1)}/s, p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms`))
  }
  const first = rates[0]
  const last = rates[rates.length - 1]
  if (first !== undefined && last !== undefined && first !== last) {
    const ratio = last.perSecond / first.perSecond
    console.log(goalLine(`POST /v1/proposals rate at ${last.rules} rules ≥ 0.8× the rate at ${first.rules}`, ratio >= 0.8,
      `${last.perSecond.toFixed(1)} against ${first.perSecond.toFixed(1)}/s, ×${ratio.toFixed(2)}`))
  }
}

// ---- where a proposal's time goes, in process ---------------------------------------------------

const SPLIT_WARM = 20
const SPLIT_COUNT = 100

/** A new proposal of the mail as both doors complete it (bench/intake-client.ts sends it without said_at and valid_from). */
const splitRequest = (i: number): ProposalRequest => ({
  ...httpProposal(i), kind: "rule", source: { kind: "mail", id: HTTP_MAIL, quote: (HTTP_LINES[i % HTTP_LINES.length] ?? "").slice(9, 80), link: null },
  relations: [{ kind: "supplier", name: httpSentence(2), ref: null }], said_at: "2026-03-12T09:15:00Z", valid_from: "2026-03-12", supersedes: null
})

interface Split {
  readonly rules: number
  /** median ms of intake() whole and of its duplicate check */
  readonly intake: number
  readonly check: number
  /** of `compared` proposals: top 3 (refs in order) and the stored coverages that differ when the check runs before the proposal's own rows */
  readonly compared: number
  readonly otherTop3: number
  readonly otherCoverage: number
}

const splitAt = (rules: number) =>
  Effect.gen(function*() {
    yield* seedHttpScope(rules, "service:1")
    const store = yield* ScopeStore
    const index = yield* RuleIndex
    const by = { grantId: "service:1", channel: "api" as const, requestId: null }
    // intake() with the duplicate check timed where insertProposal runs it
    let checkMs = 0
    const timedIndex = {
      ...index,
      similar: (...args: Parameters<typeof index.similar>) =>
        Effect.suspend(() => {
          const t0 = performance.now()
          return Effect.ensuring(index.similar(...args), Effect.sync(() => {
            checkMs = performance.now() - t0
          }))
        })
    }
    const whole: Array<number> = []
    const check: Array<number> = []
    let next = rules + 1_000_000
    for (let i = 0; i < SPLIT_WARM + SPLIT_COUNT; i++) {
      const ms = yield* timed(intake(splitRequest(next++), by).pipe(Effect.provideService(RuleIndex, timedIndex)))
      if (i < SPLIT_WARM) continue
      whole.push(ms)
      check.push(checkMs)
    }
    // the check before the proposal's own rows against the check intake runs, in the same transaction
    let otherTop3 = 0
    let otherCoverage = 0
    for (let i = 0; i < SPLIT_COUNT; i++) {
      const req = splitRequest(next++)
      const { before, after } = yield* store.write("bench", ({ sql }) =>
        Effect.gen(function*() {
          const seq = (yield* sql<{ seq: number }>`SELECT coalesce(max(seq), 0) + 1 AS seq FROM rule`)[0]?.seq ?? 1
          const before = yield* index.similar(sql, req, seq, "2026-03-12")
          const ins = yield* insertProposal(sql, req, by, { now: "2026-03-12T10:00:00.000Z", today: "2026-03-12" })
          const marks = yield* sql<{ ref: string; coverage: number }>`SELECT ref, coverage FROM proposal_neighbour WHERE rule_id = ${ins.id} ORDER BY rank`
          return { before, after: marks }
        }))
      if (before.map((c) => c.ref).join() !== after.map((c) => c.ref).join()) otherTop3++
      else if (before.some((c, k) => Math.min(1, Math.max(0, c.coverage)) !== after[k]?.coverage)) otherCoverage++
    }
    return {
      rules, intake: median(whole), check: median(check), compared: SPLIT_COUNT, otherTop3, otherCoverage
    } satisfies Split
  })

export const intakeSplitBench = async (sizes: ReadonlyArray<number>): Promise<void> => {
  console.log(`\nwhere a proposal's time goes, in process, one at a time (${SPLIT_COUNT} proposals after ${SPLIT_WARM}, medians): ` +
    "intake() whole and its duplicate check, which runs inside the write transaction and bounds the rate at 1000 / its ms per second; " +
    "then the same check run before the proposal's own rows (outside the write): answers that would change")
  console.log("confirmed rules | intake ms | check ms | check share | rate bound by the check | other top 3 | same top 3, other coverage")
  for (const rules of sizes) {
    const dir = mkdtempSync(join(tmpdir(), "gn-bench-intake-split-"))
    const config = benchConfig(dir, { approval: { default_mode: "manual", own_domains: ["acme.example"] } })
    try {
      const r = await Effect.runPromise(splitAt(rules).pipe(
        Effect.provide(ServicesLive(config)), Effect.scoped, Logger.withMinimumLogLevel(LogLevel.Warning)
      ))
      console.log(`${String(r.rules).padStart(15)} | ${r.intake.toFixed(1).padStart(9)} | ${r.check.toFixed(1).padStart(8)} | ` +
        `${`${(100 * r.check / r.intake).toFixed(0)} %`.padStart(11)} | ${`${(1000 / r.check).toFixed(0)}/s`.padStart(23)} | ` +
        `${`${r.otherTop3} of ${r.compared}`.padStart(11)} | ${`${r.otherCoverage} of ${r.compared}`.padStart(26)}`)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
