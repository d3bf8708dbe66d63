/**
 * Search latency (median, p95) at 1k, 10k and 100k confirmed rules in one scope, each next to the
 * floor measured in the same run: one raw `rule_fts MATCH … ORDER BY bm25 LIMIT 10` for the same
 * query terms. Goal (issue 4): median ≤ 5× the floor and p95 ≤ 25 ms at 100k.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect, Logger, LogLevel } from "effect"
import { type AppConfigShape } from "../src/config/config.js"
import { benchConfig } from "./config.js"
import { ftsLiteral } from "../src/db/fts.js"
import { ScopeStore } from "../src/db/scope-store.js"
import { formatRuleId } from "../src/contracts/ids.js"
import { parseRuleRef } from "../src/contracts/ids.js"
import type { RuleVersionRow } from "../src/domain/rules.js"
import { buildBundle } from "../src/search/bundle.js"
import { LexicalIndex } from "../src/search/lexical/index.js"
import { ServicesLive } from "../src/services.js"
import { search } from "../src/search/search.js"
import { stageA } from "../src/search/stage-a.js"

const BUSINESS = [
  "Lieferzeit", "Hakenleiste", "Bestellung", "Lieferant", "Rechnung", "Zahlungsziel", "Skonto", "Kunde", "Angebot",
  "Muster", "Versand", "Palette", "Spedition", "Reklamation", "Gutschrift", "Preisliste", "Rabatt", "Lager",
  "delivery", "supplier", "invoice", "payment", "customer", "discount", "sample", "shipping", "warehouse", "order"
]
const SYL = ["ka", "ri", "mo", "te", "lu", "ser", "an", "dor", "vi", "pel", "gu", "nes", "tra", "bo", "lin", "ex"]
const VOCAB = [...BUSINESS, ...Array.from({ length: 20_000 }, (_, i) => [i % 16, (i >> 4) % 16, (i >> 8) % 16, (i >> 12) % 16].map((k) => SYL[k]).join(""))]
let seed = 7
const rand = (n: number) => {
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed % n
}
/** Zipf-like: rank r drawn with weight 1/r. */
const CUM = (() => {
  let acc = 0
  return VOCAB.map((_, i) => (acc += 1 / (i + 1)))
})()
const word = () => {
  const x = (rand(1_000_000) / 1_000_000) * (CUM[CUM.length - 1] ?? 1)
  let lo = 0
  let hi = CUM.length - 1
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if ((CUM[mid] ?? 0) < x) lo = mid + 1
    else hi = mid
  }
  return VOCAB[lo] ?? "x"
}
const sentence = (n: number) => Array.from({ length: n }, word).join(" ")

const QUERIES = ["Lieferzeit Hakenleiste", "Rechnung Skonto", "delivery time supplier", "Liefrzeit", "Zahlungsziele Kunde",
  "warehouse pallets shipping", "Preislisten Rabatt", "customer discount sample", "Reklamation Gutschrift", "order invoice payment"]

const config = (dataDir: string): AppConfigShape => benchConfig(dataDir)

const seedRules = (sql: SqlClient, n: number) =>
  sql.withTransaction(Effect.gen(function*() {
    const t = "2026-01-01T00:00:00.000Z"
    yield* sql`INSERT INTO source (id, kind, title, occurred_at, sender, thread, link, excerpt, fulltext_sha256, fetched_at, feeder)
      VALUES ('manual:person:1', 'manual', NULL, NULL, NULL, NULL, NULL, NULL, NULL, ${t}, 'person:1')`.raw
    for (let seq = 1; seq <= n; seq++) {
      const id = formatRuleId("bench", seq)
      const statement = `${sentence(12)} ${seq}`
      const keywords = JSON.stringify([word(), word()])
      const relations = process.env.BENCH_NO_REL === "1" ? "[]" : JSON.stringify([{ kind: "supplier", name: sentence(2), ref: null }])
      const quote = sentence(15)
      yield* sql`INSERT INTO rule (seq, id, created_at, created_by) VALUES (${seq}, ${id}, ${t}, 'person:1')`.raw
      for (const [version, status] of [[1, "proposed"], [2, "confirmed"]] as const) {
        yield* sql`INSERT INTO rule_version (rule_id, version, kind, statement, source_id, quote, timestamp_s, source_link, said_at, speaker,
            relations, keywords, valid_from, valid_until, supersedes, superseded_by, status, reason, changed_by, changed_at)
          VALUES (${id}, ${version}, 'rule', ${statement}, 'manual:person:1', ${quote}, NULL, NULL, ${t}, NULL, ${relations}, ${keywords},
            '2026-01-01', NULL, NULL, NULL, ${status}, 'bench', 'person:1', ${t})`.raw
      }
      yield* sql`INSERT INTO rule_fts (rowid, keywords, statement, relations, quote) VALUES (${seq}, ${JSON.parse(keywords).join(" ")}, ${statement}, ${"supplier"}, ${quote})`.raw
    }
  }))

const stats = (xs: Array<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  return { median: s[Math.floor(s.length / 2)] ?? 0, p95: s[Math.min(s.length - 1, Math.floor(s.length * 0.95))] ?? 0 }
}

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
    const full: Array<number> = []
    const a: Array<number> = []
    const floor: Array<number> = []
    const bundles: Array<number> = []
    // round 0 warms up (prepared statements, JIT, page cache) and is not counted
    for (let round = 0; round <= 5; round++) {
      const counted = round > 0
      for (const text of QUERIES) {
        const s0 = performance.now()
        const { response } = yield* search({ scopes: ["bench"], cross_scope: false, text, as_of: null, include_proposals: false, limit: 10 }, "00000000-0000-4000-8000-000000000000")
        if (counted) full.push(performance.now() - s0)
        // the bundles of the answer alone (their head rows read before the clock starts)
        const heads: Array<RuleVersionRow> = []
        for (const b of response.bundles) {
          const ref = parseRuleRef(b.head.ref)
          if (ref === null) continue
          const rows = yield* sql<RuleVersionRow>`SELECT * FROM rule_version WHERE rule_id = ${ref.id} AND version = ${ref.version ?? 1}`
          if (rows[0] !== undefined) heads.push(rows[0])
        }
        const b0 = performance.now()
        yield* sql.withTransaction(Effect.forEach(heads, (version) =>
          buildBundle(sql, { version, scope: "bench", rank: { a: null, b: null, rrf: null, reranker: null }, found_via: [], coverage: null, matched_terms: null }, {
            zone: "Europe/Berlin", recheckAfterDays: 180, nowMs: Date.now(), targetDay: "2026-06-01", includeProposals: false
          })))
        if (counted) bundles.push(performance.now() - b0)
        const a0 = performance.now()
        const result = yield* stageA(sql, { text }, { includeProposals: false, targetDay: "2026-06-01" })
        if (counted) a.push(performance.now() - a0)
        const query = result.terms.map((t) => ftsLiteral(t)).join(" OR ")
        const f0 = performance.now()
        if (query.length > 0) yield* sql`SELECT rowid FROM rule_fts WHERE rule_fts MATCH ${query} ORDER BY bm25(rule_fts) LIMIT 10`
        if (counted) floor.push(performance.now() - f0)
      }
    }
    return { n, seeded, rebuilt, full: stats(full), a: stats(a), floor: stats(floor), bundles: stats(bundles) }
  })

export const searchBench = async (sizes: ReadonlyArray<number> = [1_000, 10_000, 100_000]): Promise<void> => {
  console.log("\nSearch latency, one scope of confirmed rules (synthetic Zipf text, 10 queries × 5 rounds after one warm-up round)")
  console.log("rules   | search() median / p95 ms | stage a median / p95 ms | 10 bundles median / p95 ms | floor median / p95 ms | median ratio search/floor | rebuild s")
  const rows: Array<{ n: number; median: number; p95: number; a: number; floor: number }> = []
  for (const n of sizes) {
    const dir = mkdtempSync(join(tmpdir(), "gn-bench-search-"))
    try {
      const layer = ServicesLive(config(dir))
      const r = await Effect.runPromise(runAt(n).pipe(Effect.provide(layer), Effect.scoped, Logger.withMinimumLogLevel(LogLevel.Warning)))
      rows.push({ n, median: r.full.median, p95: r.full.p95, a: r.a.median, floor: r.floor.median })
      console.log(`${String(n).padEnd(7)} | ${r.full.median.toFixed(1).padStart(10)} / ${r.full.p95.toFixed(1).padStart(9)} | ${r.a.median.toFixed(1).padStart(9)} / ${r.a.p95.toFixed(1).padStart(9)} | ${r.bundles.median.toFixed(1).padStart(12)} / ${r.bundles.p95.toFixed(1).padStart(11)} | ${r.floor.median.toFixed(2).padStart(9)} / ${r.floor.p95.toFixed(2).padStart(7)} | ${(r.full.median / Math.max(r.floor.median, 0.01)).toFixed(1).padStart(25)} | ${(r.rebuilt / 1000).toFixed(1).padStart(9)}`)
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
  if (hundred !== undefined) {
    const ratio = hundred.median / Math.max(hundred.floor, 0.01)
    console.log(`goal at 100k: median ≤ 5× floor: ${ratio <= 5 ? "met" : "missed"} (×${ratio.toFixed(1)}); ` +
      `p95 ≤ 25 ms: ${hundred.p95 <= 25 ? "met" : "missed"} (${hundred.p95.toFixed(1)} ms)`)
  }
}
