/**
 * Search over HTTP as a client sees it: a scope of 3,000 confirmed rules loaded through
 * /v1 (POST /v1/sources, POST /v1/proposals, POST /v1/rules/:id/decision), POST /v1/search
 * (limit 10) one at a time on one keep-alive connection, from a client in a process of its own
 * (bench/load-client.ts "steps": a program calling the service, as the load bench's clients); next
 * to each search, in the same run, the raw FTS5 query on the same file (`rule_fts MATCH <the
 * answer's terms, OR-ed> ORDER BY bm25 LIMIT 10`). Then the scope grows to 30,000 rules (the
 * rest inserted by SQL as bench/search.ts seeds them, the lexical index rebuilt) and the same is
 * measured again.
 * The goals measure new words: each of the 30 queries of 2–3 common words with 1–2 words of the
 * vocabulary no search of the run asked before (bench/support.ts newWordsOf: no analysis of the
 * text, no answer held): median ≤ 4× the raw query's median and p95 ≤ 6× its p95, at 3k and at
 * 30k rules. Beside them, not goals: the queries asked again (their answer held), the same as a
 * new input (trailing spaces: analysed, then the held answer), from fetch() on the server's own
 * thread and search() in-process.
 * The counted rounds follow the load (its last write) and one round not counted. BENCH_SEARCH_HTTP_WARM
 * rounds (default 0) of the JIT's warm-up run before, as bench/search.ts's: the same steps with new
 * words of a draw of their own that leaves the counted ones out, then a write (a proposal confirmed
 * through /v1), so every cache starts again as after the load. Measured against none it was within
 * the noise of the shared machine (docs/performance.md row 40), so the default stays the old measure.
 * Then, not a goal, where a new-words search's time goes (other new words of that draw, each query
 * in turn): search() in-process, ReadPool.search without HTTP, and POST /v1/search with the time its
 * ReadPool.search took; which thread the pool ran them on; and whether the file's stamps moved
 * between the counted searches (the search_log rows must not move them).
 * BENCH_SEARCH_HTTP_RULES: the rule count (3,000); BENCH_SEARCH_HTTP_BIG: the larger count (30,000;
 * 0 leaves it out); BENCH_SEARCH_HTTP_WARM: the warm-up rounds (0: none, the service as loaded);
 * BENCH_KEEP=1 keeps the data dir; BENCH_SEARCH_HTTP_FROM=<dir> starts from a copy of one kept so (same
 * rule count) instead of loading the rules (a minute instead of minutes, for A/B runs; the service then
 * has not run the loading's intake, so with BENCH_SEARCH_HTTP_WARM=0 its code is colder than after a load).
 */
import { fork } from "node:child_process"
import { cpSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Clock, Effect, Layer, Logger, LogLevel, ManagedRuntime, Redacted } from "effect"
import { csrfToken } from "../src/auth/csrf.js"
import { sessionCookieName, signSession } from "../src/auth/session.js"
import { ftsLiteral } from "../src/db/fts.js"
import { OpsStore } from "../src/db/ops-store.js"
import { ScopeStore } from "../src/db/scope-store.js"
import { LexicalIndex } from "../src/search/lexical/index.js"
import type { SearchResponse } from "../src/domain/search-schemas.js"
import { publicListener } from "../src/http/server.js"
import { search } from "../src/search/search.js"
import { ReadPool, ReadPoolLive } from "../src/read-pool/pool.js"
import { readStamp } from "../src/search/lexical/stamp-cache.js"
import { ServicesLive } from "../src/services.js"
import { benchConfig } from "./config.js"
import type { StepAnswer, StepsJob } from "./load-client.js"
import { BUSINESS_WORDS, freePort, goalLine, newWordsOf, seedConfirmedRules, seedManualSource, seededRandom, sentenceOf, stats, syllableWords, timed, zipfWords } from "./support.js"

const RULES = Number(process.env.BENCH_SEARCH_HTTP_RULES ?? 3_000)
const BIG = Number(process.env.BENCH_SEARCH_HTTP_BIG ?? 30_000)
const QUERY_COUNT = 30
const ROUNDS = 3
const WARM_ROUNDS = Number(process.env.BENCH_SEARCH_HTTP_WARM ?? 0)
/** rounds of the split (in-process, read pool, HTTP), each query once each way */
const SPLIT_ROUNDS = 2
const EMAIL = "bench@example.com"
const FEEDER = "f".repeat(40)

const rand = seededRandom(23)
const VOCABULARY = [...BUSINESS_WORDS, ...syllableWords(5_000, 3)]
const word = zipfWords(VOCABULARY, rand)
const sentence = sentenceOf(word)
/** The source every rule quotes a line of. */
const LINES = Array.from({ length: 400 }, (_, i) => `Zeile ${i}: ${sentence(14)}.`)
/** 2–3 common words each: the business words, which the Zipf draw makes the commonest. */
const QUERIES = Array.from({ length: QUERY_COUNT }, () =>
  Array.from({ length: 2 + rand.int(2) }, () => BUSINESS_WORDS[rand.int(BUSINESS_WORDS.length)] ?? "Lieferzeit").join(" "))
/** The new words: a draw of their own, the queries' words left out. */
const newWords = newWordsOf(zipfWords(VOCABULARY, seededRandom(29)), QUERIES)
/** The counted rounds' new words, per round and query (round 0 is not counted), drawn in the order the rounds ask them. */
const drawRounds = (): Array<Array<string>> =>
  Array.from({ length: ROUNDS + 1 }, (_, round) => QUERIES.map(() => newWords(1 + (round % 2))))

/** The time the last ReadPool.search took (the split's HTTP row reads it after each request). */
let lastPoolMs = 0
/** The service's read pool, each search timed. */
const timedReadPool = Layer.effect(ReadPool, Effect.map(ReadPool, (pool) => ({
  ...pool,
  search: (req: Parameters<typeof pool.search>[0], searchId: string) =>
    Effect.suspend(() => {
      const t0 = performance.now()
      return Effect.ensuring(pool.search(req, searchId), Effect.sync(() => {
        lastPoolMs = performance.now() - t0
      }))
    })
}))).pipe(Layer.provide(ReadPoolLive))

const proposal = (i: number) => ({
  scope: "bench", kind: "rule", statement: `${sentence(12)} (${i})`,
  source: { kind: "mail", id: "mail:<search-http@example.com>", quote: LINES[i % LINES.length] ?? "", link: null },
  said_at: "2026-03-12T09:15:00Z", speaker: "Maria", relations: [{ kind: "supplier", name: sentence(2), ref: null }],
  keywords: [word(), word()], valid_from: "2026-03-12", supersedes: null
})

const post = async (url: string, body: unknown, headers: Record<string, string>): Promise<Response> => {
  const res = await fetch(url, { method: "POST", body: JSON.stringify(body), headers: { ...headers, "content-type": "application/json" } })
  if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`)
  return res
}

export const searchHttpBench = async (): Promise<void> => {
  const dir = mkdtempSync(join(tmpdir(), "gn-bench-search-http-"))
  // a data dir kept by an earlier run (BENCH_KEEP=1, same rule count): its rules are not loaded again (its warm-up's rule stays)
  const from = process.env.BENCH_SEARCH_HTTP_FROM
  if (from !== undefined) cpSync(from, dir, { recursive: true })
  const port = await freePort()
  const base = benchConfig(dir, {
    public_url: `http://127.0.0.1:${port}`,
    limits: { requests_per_minute: 100_000, decisions_per_minute: 100_000 }
  }, port)
  const config = { ...base, env: { ...base.env, devEmail: EMAIL, devApiToken: Redacted.make(FEEDER) } }
  const runtime = ManagedRuntime.make(publicListener("127.0.0.1", port).pipe(
    Layer.provideMerge(ServicesLive(config, { readPool: timedReadPool })),
    Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
  ))
  const url = `http://127.0.0.1:${port}`
  try {
    const { cookie } = await runtime.runPromise(Effect.gen(function*() {
      const ops = yield* OpsStore
      if (from === undefined) yield* Effect.flatMap(ScopeStore, (s) => s.create("bench"))
      if (from === undefined) yield* ops.createGrant({ kind: "person", auth: "email", identity: EMAIL, scopes: ["bench"], rights: ["read", "propose", "decide"] })
      const now = yield* Clock.currentTimeMillis
      return { cookie: `${sessionCookieName(config.file.public_url)}=${signSession(Redacted.value(config.env.sessionSecret), EMAIL, now)}` }
    }))
    const bearer = { authorization: `Bearer ${FEEDER}` }
    const decider = { cookie, csrf: csrfToken(Redacted.value(config.env.sessionSecret), EMAIL), origin: url }
    const t0 = performance.now()
    if (from !== undefined) for (let i = 0; i < RULES; i++) proposal(i) // the same draws: the 30k row's rules stay the same
    else await post(`${url}/v1/sources`, {
      scope: "bench", attachments: [], text: LINES.join("\n"),
      source: { kind: "mail", id: "mail:<search-http@example.com>", title: "Regeln", occurred_at: "2026-03-12T09:15:00Z", sender: "maria@example.com", thread: null, link: null }
    }, bearer)
    for (let i = 0; i < (from === undefined ? RULES : 0); i++) {
      const created = await (await post(`${url}/v1/proposals`, proposal(i), bearer)).json() as { ref: string }
      const id = created.ref.slice(5, created.ref.indexOf("@"))
      await post(`${url}/v1/rules/${id}/decision`, { decision: "confirm", version: 1 }, decider)
    }
    const loaded = (performance.now() - t0) / 1000

    const job: StepsJob = { mode: "steps", url, token: FEEDER, scope: "bench" }
    const client = fork(new URL("./load-client.js", import.meta.url), [JSON.stringify(job)], { stdio: ["ignore", "inherit", "inherit", "ipc"] })
    const step = (text: string) =>
      new Promise<StepAnswer>((resolve) => {
        client.once("message", (m) => resolve(m as StepAnswer))
        client.send({ text })
      })
    /** The new-words texts of both sizes, drawn before anything else asks: the same texts whatever the warm-up. */
    const counted = { small: drawRounds(), big: BIG > RULES ? drawRounds() : [] }
    /** Other new words (warm-up, split): a draw of their own that leaves out every counted text's words. */
    const spare = newWordsOf(zipfWords(VOCABULARY, seededRandom(31)), [...QUERIES, ...counted.small.flat(), ...counted.big.flat()])
    const mainStamp = () => runtime.runPromise(Effect.flatMap(Effect.flatMap(ScopeStore, (s) => s.use("bench")), ({ sql }) => readStamp(sql)))

    interface Samples {
      readonly ownProcess: Array<number>
      readonly newInput: Array<number>
      readonly novel: Array<number>
      /** the service process's CPU (every thread) while it answered the new words */
      readonly novelCpu: Array<number>
      readonly novelFloor: Array<number>
      readonly http: Array<number>
      readonly inProcess: Array<number>
      readonly floor: Array<number>
      bytes: number
      stampMoves: number
    }
    const samples = (): Samples => ({ ownProcess: [], newInput: [], novel: [], novelCpu: [], novelFloor: [], http: [], inProcess: [], floor: [], bytes: 0, stampMoves: 0 })

    /**
     * One round of every query: asked again, as a new input (`spaces` trailing spaces), with new words
     * (`novelOf`), from fetch(), in-process; counted into `into`.
     */
    const oneRound = async (spaces: number, novelOf: (q: number) => string, into: Samples | null) => {
      let stamp = into === null ? undefined : await mainStamp()
      for (const [q, text] of QUERIES.entries()) {
        const apart = await step(text)
        if (apart.status !== 200) throw new Error(`the client process: POST /v1/search answered ${apart.status}`)
        const fresh = await step(`${text}${" ".repeat(spaces)}`)
        if (fresh.status !== 200 || JSON.stringify(fresh.terms) !== JSON.stringify(apart.terms)) throw new Error(`the new input of "${text}" answered otherwise`)
        const novelText = `${text} ${novelOf(q)}`
        const c0 = process.cpuUsage()
        const nw = await step(novelText)
        const c = process.cpuUsage(c0)
        if (nw.status !== 200) throw new Error(`the client process: POST /v1/search of new words answered ${nw.status}`)
        const body = { scopes: ["bench"], text, limit: 10 }
        const h0 = performance.now()
        const res = await post(`${url}/v1/search`, body, bearer)
        const raw = await res.arrayBuffer()
        const ms = performance.now() - h0
        const answer = JSON.parse(new TextDecoder().decode(raw)) as SearchResponse
        if (JSON.stringify(apart.terms) !== JSON.stringify(answer.query.terms)) throw new Error(`the two clients got different terms for "${text}"`)
        const [own, raw0, rawNovel, now] = await runtime.runPromise(Effect.gen(function*() {
          const s0 = performance.now()
          yield* search({ scopes: ["bench"], cross_scope: false, text, as_of: null, include_proposals: false, limit: 10 }, "00000000-0000-4000-8000-000000000000")
          const own = performance.now() - s0
          const { sql } = yield* Effect.flatMap(ScopeStore, (s) => s.use("bench"))
          const rawOf = (terms: ReadonlyArray<string>) =>
            Effect.gen(function*() {
              const match = terms.map((t) => ftsLiteral(t)).join(" OR ")
              const f0 = performance.now()
              if (match.length > 0) yield* sql`SELECT rowid FROM rule_fts WHERE rule_fts MATCH ${match} ORDER BY bm25(rule_fts) LIMIT 10`
              return performance.now() - f0
            })
          return [own, yield* rawOf(answer.query.terms), yield* rawOf(nw.terms), yield* readStamp(sql)] as const
        }))
        if (into === null) continue
        if (now !== stamp) into.stampMoves++
        stamp = now
        into.ownProcess.push(apart.ms)
        into.newInput.push(fresh.ms)
        into.novel.push(nw.ms)
        into.novelCpu.push((c.user + c.system) / 1000)
        into.novelFloor.push(rawNovel)
        into.http.push(ms)
        into.inProcess.push(own)
        into.floor.push(raw0)
        into.bytes = Math.max(into.bytes, raw.byteLength, nw.bytes)
      }
    }

    /**
     * Where a new-words search's time goes, not a goal: each query with other new words in process
     * (search()), through ReadPool.search without HTTP, and through POST /v1/search (with the time its
     * ReadPool.search took), the three in turn (each query starts with another); and the threads the
     * pool ran them on.
     */
    const split = async (rules: number) => {
      const inProcess: Array<number> = []
      const pooled: Array<number> = []
      const http: Array<number> = []
      const httpPool: Array<number> = []
      const req = (text: string) => ({ scopes: ["bench"], cross_scope: false, text, as_of: null, include_proposals: false, limit: 10 })
      const poolStats = () => runtime.runPromise(Effect.flatMap(ReadPool, (p) => p.stats))
      const before = await poolStats()
      /** the wall time and this process's CPU (every thread's) of one search */
      const cpu: Record<"inProcess" | "pooled" | "http", Array<number>> = { inProcess: [], pooled: [], http: [] }
      const measured = async <A>(into: Array<number>, run: () => Promise<A>): Promise<A> => {
        const c0 = process.cpuUsage()
        const out = await run()
        const c = process.cpuUsage(c0)
        into.push((c.user + c.system) / 1000)
        return out
      }
      const ways = [
        async (text: string) => {
          inProcess.push(await measured(cpu.inProcess, () => runtime.runPromise(timed(search(req(text), "00000000-0000-4000-8000-000000000000")))))
        },
        async (text: string) => {
          pooled.push(await measured(cpu.pooled, () => runtime.runPromise(Effect.flatMap(ReadPool, (p) => timed(p.search(req(text), "00000000-0000-4000-8000-000000000000"))))))
        },
        async (text: string) => {
          const a = await measured(cpu.http, () => step(text))
          if (a.status !== 200) throw new Error(`the client process: POST /v1/search answered ${a.status}`)
          http.push(a.ms)
          httpPool.push(lastPoolMs)
        }
      ] as const
      for (let round = 0; round < SPLIT_ROUNDS; round++) {
        for (const [q, text] of QUERIES.entries()) {
          for (let k = 0; k < ways.length; k++) await ways[(q + round + k) % ways.length]?.(`${text} ${spare(1 + ((q + k) % 2))}`)
        }
      }
      const after = await poolStats()
      const row = (name: string, xs: ReadonlyArray<number>, cpuMs?: ReadonlyArray<number>) => {
        const x = stats(xs)
        const c = cpuMs === undefined ? "" : ` | ${stats(cpuMs).median.toFixed(2).padStart(8)}`
        console.log(`${name.padEnd(48)} | ${x.median.toFixed(2).padStart(9)} | ${x.p95.toFixed(2).padStart(6)}${c}`)
      }
      console.log(`\nwhere a new-words search's time goes at ${rules.toLocaleString("en")} rules (not a goal; other new words, each query ${SPLIT_ROUNDS}× each way, in turn)`)
      console.log("what                                             | median ms | p95 ms | CPU ms (the service's process, median)")
      row("search() in-process", inProcess, cpu.inProcess)
      row("ReadPool.search, no HTTP", pooled, cpu.pooled)
      row("POST /v1/search, client in its own process", http, cpu.http)
      row("  of which its ReadPool.search", httpPool)
      console.log(`the read pool ran ${after.inThread - before.inThread} of these searches on the main thread, ${after.inWorker - before.inWorker} in a worker ` +
        `(${after.ready} workers up; a search alone on the service runs on the main thread: src/read-pool/pool.ts)`)
    }

    const measure = async (rules: number, loaded: string, novel: ReadonlyArray<ReadonlyArray<string>>) => {
      const into = samples()
      // round 0 warms up and is not counted
      for (let round = 0; round <= ROUNDS; round++) await oneRound(round + 1, (q) => novel[round]?.[q] ?? "", round === 0 ? null : into)
      const { ownProcess, newInput, novel: novelMs, novelFloor, http, inProcess, floor, bytes } = into
      const w = stats(novelMs)
      const wf = stats(novelFloor)
      const c = stats(ownProcess)
      const n = stats(newInput)
      const h = stats(http)
      const s = stats(inProcess)
      const f = stats(floor)
      console.log(`\nPOST /v1/search one at a time, ${rules.toLocaleString("en")} confirmed rules ${loaded}; ` +
        `${QUERY_COUNT} queries × ${ROUNDS} rounds after one round not counted; answers up to ${(bytes / 1000).toFixed(0)} KB; ` +
        `the file's stamps moved ${into.stampMoves} times between the counted searches`)
      console.log("what                                             | median ms | p95 ms")
      for (
        const [name, x] of [
          ["new words, client in its own process", w],
          ["  raw FTS5 of their terms on the same file", wf],
          ["asked again (held answer), client's process", c],
          ["  the same, each query as a new input", n],
          ["  the same, fetch() on the server's thread", h],
          ["  the same, search() in-process", s],
          ["  raw FTS5 of their terms on the same file", f]
        ] as const
      ) {
        console.log(`${name.padEnd(48)} | ${x.median.toFixed(2).padStart(9)} | ${x.p95.toFixed(2).padStart(6)}`)
      }
      const k = `${rules / 1000}k`
      const ratio = w.median / Math.max(wf.median, 0.01)
      console.log(goalLine(`POST /v1/search median ≤ 4× raw FTS5 (${k} rules, sequential, new words)`, ratio <= 4,
        `${w.median.toFixed(2)} ms against ${wf.median.toFixed(2)} ms, ×${ratio.toFixed(1)}`))
      const ratio95 = w.p95 / Math.max(wf.p95, 0.01)
      console.log(goalLine(`POST /v1/search p95 ≤ 6× raw FTS5 p95 (${k} rules, sequential, new words)`, ratio95 <= 6,
        `${w.p95.toFixed(2)} ms against ${wf.p95.toFixed(2)} ms, ×${ratio95.toFixed(1)}`))
      console.log(`new words at ${k}: the service's CPU per request ${stats(into.novelCpu).median.toFixed(2)} ms (median; every thread of its process)`)
      console.log(`held answers at ${k}, beside the goals: asked again ×${(c.median / Math.max(f.median, 0.01)).toFixed(1)} the raw query, ` +
        `as a new input ×${(n.median / Math.max(f.median, 0.01)).toFixed(1)}, from fetch() on the server's thread ×${(h.median / Math.max(f.median, 0.01)).toFixed(1)}`)
    }
    // the JIT's warm-up (none by default), then a write: every cache starts again, as after the load
    const w0 = performance.now()
    // the warm-up's new inputs have more spaces than the counted rounds' (their analysis is carried through the write)
    for (let round = 0; round < WARM_ROUNDS; round++) await oneRound(ROUNDS + 2 + round, () => spare(1 + (round % 2)), null)
    if (WARM_ROUNDS > 0) {
      // its words a draw of their own: the rules the 30k row adds stay those of the bench's draw
      const other = sentenceOf(zipfWords(VOCABULARY, seededRandom(37)))
      const written = {
        scope: "bench", kind: "rule", statement: `${other(12)} (warm-up)`,
        source: { kind: "mail", id: "mail:<search-http@example.com>", quote: LINES[0] ?? "", link: null },
        said_at: "2026-03-12T09:15:00Z", speaker: "Maria", relations: [{ kind: "supplier", name: other(2), ref: null }],
        keywords: [other(1), other(1)], valid_from: "2026-03-12", supersedes: null
      }
      const created = await (await post(`${url}/v1/proposals`, written, bearer)).json() as { ref: string }
      await post(`${url}/v1/rules/${created.ref.slice(5, created.ref.indexOf("@"))}/decision`, { decision: "confirm", version: 1 }, decider)
    }
    const warmed = WARM_ROUNDS > 0 ? `, after ${WARM_ROUNDS} rounds of warm-up (${((performance.now() - w0) / 1000).toFixed(0)} s) and a write` : ", no warm-up"
    await measure(RULES, `${from === undefined ? `loaded through /v1 in ${loaded.toFixed(0)} s` : `copied from ${from}`}${warmed}`, counted.small)
    await split(RULES)
    if (BIG > RULES) {
      const t1 = performance.now()
      await runtime.runPromise(Effect.gen(function*() {
        const { sql } = yield* Effect.flatMap(ScopeStore, (s) => s.use("bench"))
        const lex = yield* LexicalIndex
        const top = Number((yield* sql<{ n: number | null }>`SELECT max(seq) AS n FROM rule`)[0]?.n ?? 0)
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* seedManualSource(sql)
          yield* seedConfirmedRules(sql, top + 1, top + BIG - RULES, (seq) => ({
            statement: `${sentence(12)} (${seq})`, keywords: [word(), word()], relations: [{ kind: "supplier", name: sentence(2), ref: null }],
            quote: LINES[seq % LINES.length] ?? ""
          }))
          yield* lex.rebuild(sql)
        }))
      }))
      await measure(BIG, `(${(BIG - RULES).toLocaleString("en")} of them inserted by SQL in ${((performance.now() - t1) / 1000).toFixed(0)} s)`, counted.big)
    }
    client.send({ done: true })
  } finally {
    await runtime.dispose()
    // BENCH_KEEP=1 keeps the data dir (for profiling by hand)
    if (process.env.BENCH_KEEP === "1") console.log(`kept ${dir}`)
    else rmSync(dir, { recursive: true, force: true })
  }
}
