/**
 * Search latency (median, p95) at 1k, 10k and 100k confirmed rules in one scope, each next to the
 * floor measured in the same run: one raw `rule_fts MATCH … ORDER BY bm25 LIMIT 10` for the same
 * query terms. The goals (docs/performance.md) measure new words: one of the queries and 1–2 words
 * of the vocabulary that no search of the run asked before (bench/support.ts newWordsOf), so no
 * analysis of the text and no answer is held; each against its own floor: median ≤ 5×
 * the floor at 10k and at 100k; p95 ≤ 15 ms at 10k and ≤ 3× the floor's p95 at 100k; and the first
 * search after a write (a new confirmed rule indexed: both stamps move), new words again, ≤ 2× the
 * steady new words' median. Steady state: first the JIT's warm-up (BENCH_SEARCH_WARM rounds,
 * printed, not counted), then a write, then two rounds not counted.
 * Beside them, not goals: a query asked again (stage a's answer held under the stamp, stage-a.ts,
 * and a scope's answer under both stamps, search.ts) and a new input (the same query with trailing
 * spaces: analysed, then the held answer), against the floor of the query.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect, Logger, LogLevel } from "effect"
import { type AppConfigShape } from "../src/config/config.js"
import { benchConfig } from "./config.js"
import { BUSINESS_WORDS, goalLine, newWordsOf, seedConfirmedRules, seedManualSource, seededRandom, sentenceOf, stats, syllableWords, zipfWords } from "./support.js"
import { ftsLiteral } from "../src/db/fts.js"
import { ScopeStore } from "../src/db/scope-store.js"
import { formatRuleId, parseRuleRef } from "../src/contracts/ids.js"
import type { RuleVersionRow } from "../src/domain/rules.js"
import { buildBundles } from "../src/search/bundle.js"
import { LexicalIndex } from "../src/search/lexical/index.js"
import { ServicesLive } from "../src/services.js"
import { search } from "../src/search/search.js"
import { stageA } from "../src/search/stage-a.js"

/** Zipf-like over the business words and 20,000 synthetic ones: rank r drawn with weight 1/r. */
const VOCABULARY = [...BUSINESS_WORDS, ...syllableWords(20_000, 4)]
const word = zipfWords(VOCABULARY, seededRandom(7))
const sentence = sentenceOf(word)

const QUERIES = ["Lieferzeit Hakenleiste", "Rechnung Skonto", "delivery time supplier", "Liefrzeit", "Zahlungsziele Kunde",
  "warehouse pallets shipping", "Preislisten Rabatt", "customer discount sample", "Reklamation Gutschrift", "order invoice payment"]

/**
 * The new words of a run: words of the vocabulary (Zipf, a draw of its own) that no search of the
 * run asked before, the queries' words left out.
 */
const newWordsText = (): ((n: number) => string) => newWordsOf(zipfWords(VOCABULARY, seededRandom(11)), QUERIES)

const config = (dataDir: string): AppConfigShape => benchConfig(dataDir)

const seedRules = (sql: SqlClient, n: number) =>
  sql.withTransaction(Effect.gen(function*() {
    yield* seedManualSource(sql)
    yield* seedConfirmedRules(sql, 1, n, (seq) => {
      const statement = `${sentence(12)} ${seq}`
      const keywords = [word(), word()]
      const relations = process.env.BENCH_NO_REL === "1" ? [] : [{ kind: "supplier", name: sentence(2), ref: null }]
      return { statement, keywords, relations, quote: sentence(15), ftsRelations: "supplier" }
    })
  }))

/** The searches of each round, by kind: what runAt counts. */
interface Samples {
  readonly full: Array<number>
  readonly fresh: Array<number>
  readonly novel: Array<number>
  readonly novelFloor: Array<number>
  readonly a: Array<number>
  readonly floor: Array<number>
  readonly bundles: Array<number>
}

const samples = (): Samples => ({ full: [], fresh: [], novel: [], novelFloor: [], a: [], floor: [], bundles: [] })

/**
 * Rounds of the JIT's warm-up before the counted ones (BENCH_SEARCH_WARM, default 30: 300 searches
 * of each kind); 0 measures a process just started.
 */
const WARM_ROUNDS = Number(process.env.BENCH_SEARCH_WARM ?? 30)

/**
 * One round: each query asked again, as a new input (trailing spaces, as many as round + 1), with
 * a new word; its bundles; stage a of the new input; the floors.
 */
const oneRound = (sql: SqlClient, round: number, into: Samples, newWords: (n: number) => string) =>
  Effect.gen(function*() {
    for (const text of QUERIES) {
      const s0 = performance.now()
      const { response } = yield* search({ scopes: ["bench"], cross_scope: false, text, as_of: null, include_proposals: false, limit: 10 }, "00000000-0000-4000-8000-000000000000")
      into.full.push(performance.now() - s0)
      // a new input: stage a's answer is not held for it
      const n0 = performance.now()
      yield* search({ scopes: ["bench"], cross_scope: false, text: `${text}${" ".repeat(round + 1)}`, as_of: null, include_proposals: false, limit: 10 }, "00000000-0000-4000-8000-000000000000")
      into.fresh.push(performance.now() - n0)
      // new words: the query and 1–2 words no search of the run asked before (no analysis of the
      // text seen, nothing held for it), next to its own floor (the raw FTS5 query of its terms)
      const novelText = `${text} ${newWords(1 + (round % 2))}`
      const w0 = performance.now()
      const novelAnswer = yield* search({ scopes: ["bench"], cross_scope: false, text: novelText, as_of: null, include_proposals: false, limit: 10 }, "00000000-0000-4000-8000-000000000000")
      into.novel.push(performance.now() - w0)
      const novelQuery = novelAnswer.response.query.terms.map((t) => ftsLiteral(t)).join(" OR ")
      const nf0 = performance.now()
      if (novelQuery.length > 0) yield* sql`SELECT rowid FROM rule_fts WHERE rule_fts MATCH ${novelQuery} ORDER BY bm25(rule_fts) LIMIT 10`
      into.novelFloor.push(performance.now() - nf0)
      // the bundles of the answer alone (their head rows read before the clock starts)
      const heads: Array<RuleVersionRow> = []
      for (const b of response.bundles) {
        const ref = parseRuleRef(b.head.ref)
        if (ref === null) continue
        const rows = yield* sql<RuleVersionRow>`SELECT * FROM rule_version WHERE rule_id = ${ref.id} AND version = ${ref.version ?? 1}`
        if (rows[0] !== undefined) heads.push(rows[0])
      }
      const b0 = performance.now()
      // as search() builds them: buildBundles over the heads of the answer
      yield* sql.withTransaction(buildBundles(sql, heads.map((version) => ({
        version, scope: "bench", rank: { a: null, b: null, rrf: null, reranker: null }, found_via: [], coverage: null, matched_terms: null
      })), {
        zone: "Europe/Berlin", recheckAfterDays: 180, nowMs: Date.now(), targetDay: "2026-06-01", includeProposals: false
      }))
      into.bundles.push(performance.now() - b0)
      const a0 = performance.now()
      // stage a of a new input (the answer of the same text is held)
      const result = yield* stageA(sql, { text: ` ${text}${" ".repeat(round + 1)}` }, { includeProposals: false, targetDay: "2026-06-01" })
      into.a.push(performance.now() - a0)
      const query = result.terms.map((t) => ftsLiteral(t)).join(" OR ")
      const f0 = performance.now()
      if (query.length > 0) yield* sql`SELECT rowid FROM rule_fts WHERE rule_fts MATCH ${query} ORDER BY bm25(rule_fts) LIMIT 10`
      into.floor.push(performance.now() - f0)
    }
  })

const runAt = (n: number) =>
  Effect.gen(function*() {
    const store = yield* ScopeStore
    const lex = yield* LexicalIndex
    yield* store.create("bench")
    const { sql } = yield* store.use("bench")
    const t0 = performance.now()
    yield* seedRules(sql, n)
    const seeded = performance.now() - t0
    const t1 = performance.now()
    yield* sql.withTransaction(lex.rebuild(sql))
    const rebuilt = performance.now() - t1
    const counted = samples()
    // the JIT's warm-up, not counted: V8 goes on compiling (and re-compiling) the search's code for
    // some hundred new words' searches (V8's compiler threads' CPU per search 4.4 ms in the first 300, 2.2
    // over 1,500); a server runs long past that. Then a write: a new stamp, every cache of the file
    // empty, so the rounds below find the caches as a process just started would
    const warm = samples()
    const newWords = newWordsText()
    for (let round = 0; round < WARM_ROUNDS; round++) yield* oneRound(sql, round + 7, warm, newWords)
    if (WARM_ROUNDS > 0) yield* sql.withTransaction(lex.reindexRule(sql, formatRuleId("bench", QUERIES.length + 1)))
    // rounds 0 and 1 warm up and are not counted: prepared statements, page cache; the first
    // asks FTS5 for each sub-query and marks its phrases, the second reads their rows (phrases.ts)
    for (let round = 0; round <= 6; round++) yield* oneRound(sql, round, round > 1 ? counted : samples(), newWords)
    // the first search after a write (a new confirmed rule, indexed: both stamps move), new words
    // each time, against the steady new words above; then the same text again (its held answer)
    const cold: Array<number> = []
    const second: Array<number> = []
    for (let i = 0; i < 20; i++) {
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* seedConfirmedRules(sql, n + 1 + i, n + 1 + i, () => ({
          statement: `${sentence(12)} ${n + 1 + i}`, keywords: [word(), word()], relations: [], quote: sentence(15), ftsRelations: ""
        }))
        yield* lex.reindexRule(sql, formatRuleId("bench", n + 1 + i))
      }))
      const text = `${QUERIES[i % QUERIES.length] ?? ""} ${newWords(1 + (i % 2))}`
      for (const into of [cold, second]) {
        const c0 = performance.now()
        yield* search({ scopes: ["bench"], cross_scope: false, text, as_of: null, include_proposals: false, limit: 10 }, "00000000-0000-4000-8000-000000000000")
        into.push(performance.now() - c0)
      }
    }
    return {
      n, seeded, rebuilt, full: stats(counted.full), fresh: stats(counted.fresh), novel: stats(counted.novel), novelFloor: stats(counted.novelFloor),
      a: stats(counted.a), floor: stats(counted.floor), bundles: stats(counted.bundles), cold: stats(cold), second: stats(second),
      warm: { full: stats(warm.full), fresh: stats(warm.fresh), novel: stats(warm.novel), searches: warm.novel.length }
    }
  })

export const searchBench = async (sizes: ReadonlyArray<number> = [1_000, 10_000, 100_000]): Promise<void> => {
  console.log("\nSearch latency, one scope of confirmed rules (synthetic Zipf text, 10 queries × 5 rounds after two warm-up rounds; then 20 writes, each followed by a search of new words, twice)")
  console.log("new words: the query and 1–2 words no search of the run asked before (nothing held; the goals); search(): the query asked again (its answer held); new input: the same query with trailing spaces (analysed, then the held answer)")
  console.log("rules   | search() median / p95 ms | new input median / p95 ms | new words median / p95 ms (their floor) | stage a median / p95 ms | 10 bundles median / p95 ms | floor median / p95 ms | median ratio search/floor | after a write, new words: 1st / 2nd search median ms | rebuild s")
  const rows: Array<{
    n: number; median: number; p95: number; freshMedian: number; freshP95: number; novelMedian: number; novelP95: number
    novelFloor: number; novelFloorP95: number; a: number; floor: number; floorP95: number; cold: number
  }> = []
  for (const n of sizes) {
    const dir = mkdtempSync(join(tmpdir(), "gn-bench-search-"))
    try {
      const layer = ServicesLive(config(dir))
      const r = await Effect.runPromise(runAt(n).pipe(Effect.provide(layer), Effect.scoped, Logger.withMinimumLogLevel(LogLevel.Warning)))
      rows.push({
        n, median: r.full.median, p95: r.full.p95, freshMedian: r.fresh.median, freshP95: r.fresh.p95, novelMedian: r.novel.median, novelP95: r.novel.p95,
        novelFloor: r.novelFloor.median, novelFloorP95: r.novelFloor.p95, a: r.a.median, floor: r.floor.median, floorP95: r.floor.p95,
        cold: r.cold.median
      })
      if (r.warm.searches > 0) {
        const w = r.warm
        console.log(`JIT warm-up at ${n} rules, not counted (${w.searches} searches of each kind, then a write empties the caches): asked again ${w.full.median.toFixed(1)} / ${w.full.p95.toFixed(1)} ms, new input ${w.fresh.median.toFixed(1)} / ${w.fresh.p95.toFixed(1)} ms, new words ${w.novel.median.toFixed(1)} / ${w.novel.p95.toFixed(1)} ms`)
      }
      console.log(`${String(n).padEnd(7)} | ${r.full.median.toFixed(1).padStart(10)} / ${r.full.p95.toFixed(1).padStart(9)} | ${r.fresh.median.toFixed(1).padStart(11)} / ${r.fresh.p95.toFixed(1).padStart(9)} | ${r.novel.median.toFixed(1).padStart(11)} / ${r.novel.p95.toFixed(1).padStart(9)} (${r.novelFloor.median.toFixed(2)} / ${r.novelFloor.p95.toFixed(2)}) | ${r.a.median.toFixed(1).padStart(9)} / ${r.a.p95.toFixed(1).padStart(9)} | ${r.bundles.median.toFixed(1).padStart(12)} / ${r.bundles.p95.toFixed(1).padStart(11)} | ${r.floor.median.toFixed(2).padStart(9)} / ${r.floor.p95.toFixed(2).padStart(7)} | ${(r.full.median / Math.max(r.floor.median, 0.01)).toFixed(1).padStart(25)} | ${r.cold.median.toFixed(1).padStart(21)} / ${r.second.median.toFixed(1).padStart(17)} | ${(r.rebuilt / 1000).toFixed(1).padStart(9)}`)
    } finally {
      // BENCH_KEEP=1 keeps the data dir (for EXPLAIN QUERY PLAN and profiling by hand)
      if (process.env.BENCH_KEEP === "1") console.log(`kept ${dir}`)
      else rmSync(dir, { recursive: true, force: true })
    }
  }
  const ten = rows.find((r) => r.n === 10_000)
  const hundred = rows.find((r) => r.n === 100_000)
  if (ten !== undefined && hundred !== undefined) {
    const x = (k: "median" | "a" | "floor") => (hundred[k] / Math.max(ten[k], 0.01)).toFixed(1)
    console.log(`growth of the medians from 10k to 100k: search() ×${x("median")}, stage a ×${x("a")}, floor ×${x("floor")}`)
  }
  // the goals measure new words against their own floor; the held answers are printed beside
  type Row = (typeof rows)[number]
  for (const r of [ten, hundred]) {
    if (r === undefined) continue
    const ratio = r.novelMedian / Math.max(r.novelFloor, 0.01)
    console.log(goalLine(`search() median ≤ 5× floor at ${r.n / 1000}k, new words`, ratio <= 5, `${r.novelMedian.toFixed(1)} ms against ${r.novelFloor.toFixed(2)} ms, ×${ratio.toFixed(1)}`))
  }
  if (ten !== undefined) console.log(goalLine("search() p95 ≤ 15 ms at 10k, new words", ten.novelP95 <= 15, `${ten.novelP95.toFixed(1)} ms`))
  if (hundred !== undefined) {
    const ratio = hundred.novelP95 / Math.max(hundred.novelFloorP95, 0.01)
    console.log(goalLine("search() p95 ≤ 3× floor p95 at 100k, new words", ratio <= 3, `${hundred.novelP95.toFixed(1)} ms against ${hundred.novelFloorP95.toFixed(2)} ms, ×${ratio.toFixed(1)}`))
  }
  for (const r of [ten, hundred]) {
    if (r === undefined) continue
    const ratio = r.cold / Math.max(r.novelMedian, 0.01)
    console.log(goalLine(`first search after a write ≤ 2× a steady search at ${r.n / 1000}k, new words`, ratio <= 2,
      `${r.cold.toFixed(1)} ms against ${r.novelMedian.toFixed(1)} ms, ×${ratio.toFixed(1)}`))
  }
  const held = (r: Row) =>
    `asked again ${r.median.toFixed(1)} / ${r.p95.toFixed(1)} ms, new input ${r.freshMedian.toFixed(1)} / ${r.freshP95.toFixed(1)} ms (median / p95; their floor ${r.floor.toFixed(2)} / ${r.floorP95.toFixed(2)} ms)`
  for (const r of [ten, hundred]) if (r !== undefined) console.log(`held answers at ${r.n / 1000}k, beside the goals: ${held(r)}`)
}
