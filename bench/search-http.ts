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
 * BENCH_SEARCH_HTTP_RULES: the rule count (3,000); BENCH_SEARCH_HTTP_BIG: the larger count (30,000;
 * 0 leaves it out); BENCH_KEEP=1 keeps the data dir.
 */
import { fork } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
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
import { ServicesLive } from "../src/services.js"
import { benchConfig } from "./config.js"
import type { StepAnswer, StepsJob } from "./load-client.js"
import { BUSINESS_WORDS, freePort, goalLine, newWordsOf, seedConfirmedRules, seedManualSource, seededRandom, sentenceOf, stats, syllableWords, zipfWords } from "./support.js"

const RULES = Number(process.env.BENCH_SEARCH_HTTP_RULES ?? 3_000)
const BIG = Number(process.env.BENCH_SEARCH_HTTP_BIG ?? 30_000)
const QUERY_COUNT = 30
const ROUNDS = 3
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
  const port = await freePort()
  const base = benchConfig(dir, {
    public_url: `http://127.0.0.1:${port}`,
    limits: { requests_per_minute: 100_000, decisions_per_minute: 100_000 }
  }, port)
  const config = { ...base, env: { ...base.env, devEmail: EMAIL, devApiToken: Redacted.make(FEEDER) } }
  const runtime = ManagedRuntime.make(publicListener("127.0.0.1", port).pipe(
    Layer.provideMerge(ServicesLive(config)),
    Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
  ))
  const url = `http://127.0.0.1:${port}`
  try {
    const { cookie } = await runtime.runPromise(Effect.gen(function*() {
      const ops = yield* OpsStore
      yield* Effect.flatMap(ScopeStore, (s) => s.create("bench"))
      yield* ops.createGrant({ kind: "person", auth: "email", identity: EMAIL, scopes: ["bench"], rights: ["read", "propose", "decide"] })
      const now = yield* Clock.currentTimeMillis
      return { cookie: `${sessionCookieName(config.file.public_url)}=${signSession(Redacted.value(config.env.sessionSecret), EMAIL, now)}` }
    }))
    const bearer = { authorization: `Bearer ${FEEDER}` }
    const decider = { cookie, csrf: csrfToken(Redacted.value(config.env.sessionSecret), EMAIL), origin: url }
    const t0 = performance.now()
    await post(`${url}/v1/sources`, {
      scope: "bench", attachments: [], text: LINES.join("\n"),
      source: { kind: "mail", id: "mail:<search-http@example.com>", title: "Regeln", occurred_at: "2026-03-12T09:15:00Z", sender: "maria@example.com", thread: null, link: null }
    }, bearer)
    for (let i = 0; i < RULES; i++) {
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
    const measure = async (rules: number, loaded: string) => {
      const ownProcess: Array<number> = []
      const newInput: Array<number> = []
      const novel: Array<number> = []
      const novelFloor: Array<number> = []
      const http: Array<number> = []
      const inProcess: Array<number> = []
      const floor: Array<number> = []
      let bytes = 0
      // round 0 warms up and is not counted
      for (let round = 0; round <= ROUNDS; round++) {
        for (const text of QUERIES) {
          const apart = await step(text)
          if (apart.status !== 200) throw new Error(`the client process: POST /v1/search answered ${apart.status}`)
          const fresh = await step(`${text}${" ".repeat(round + 1)}`)
          if (fresh.status !== 200 || JSON.stringify(fresh.terms) !== JSON.stringify(apart.terms)) throw new Error(`the new input of "${text}" answered otherwise`)
          const novelText = `${text} ${newWords(1 + (round % 2))}`
          const nw = await step(novelText)
          if (nw.status !== 200) throw new Error(`the client process: POST /v1/search of new words answered ${nw.status}`)
          const body = { scopes: ["bench"], text, limit: 10 }
          const h0 = performance.now()
          const res = await post(`${url}/v1/search`, body, bearer)
          const raw = await res.arrayBuffer()
          const ms = performance.now() - h0
          const answer = JSON.parse(new TextDecoder().decode(raw)) as SearchResponse
          if (JSON.stringify(apart.terms) !== JSON.stringify(answer.query.terms)) throw new Error(`the two clients got different terms for "${text}"`)
          const [own, raw0, rawNovel] = await runtime.runPromise(Effect.gen(function*() {
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
            return [own, yield* rawOf(answer.query.terms), yield* rawOf(nw.terms)] as const
          }))
          if (round === 0) continue
          ownProcess.push(apart.ms)
          newInput.push(fresh.ms)
          novel.push(nw.ms)
          novelFloor.push(rawNovel)
          http.push(ms)
          inProcess.push(own)
          floor.push(raw0)
          bytes = Math.max(bytes, raw.byteLength, nw.bytes)
        }
      }
      const w = stats(novel)
      const wf = stats(novelFloor)
      const c = stats(ownProcess)
      const n = stats(newInput)
      const h = stats(http)
      const s = stats(inProcess)
      const f = stats(floor)
      console.log(`\nPOST /v1/search one at a time, ${rules.toLocaleString("en")} confirmed rules ${loaded}; ` +
        `${QUERY_COUNT} queries × ${ROUNDS} rounds after one warm-up round; answers up to ${(bytes / 1000).toFixed(0)} KB`)
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
      console.log(`held answers at ${k}, beside the goals: asked again ×${(c.median / Math.max(f.median, 0.01)).toFixed(1)} the raw query, ` +
        `as a new input ×${(n.median / Math.max(f.median, 0.01)).toFixed(1)}, from fetch() on the server's thread ×${(h.median / Math.max(f.median, 0.01)).toFixed(1)}`)
    }
    await measure(RULES, `loaded through /v1 in ${loaded.toFixed(0)} s`)
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
      await measure(BIG, `(${(BIG - RULES).toLocaleString("en")} of them inserted by SQL in ${((performance.now() - t1) / 1000).toFixed(0)} s)`)
    }
    client.send({ done: true })
  } finally {
    await runtime.dispose()
    // BENCH_KEEP=1 keeps the data dir (for profiling by hand)
    if (process.env.BENCH_KEEP === "1") console.log(`kept ${dir}`)
    else rmSync(dir, { recursive: true, force: true })
  }
}
