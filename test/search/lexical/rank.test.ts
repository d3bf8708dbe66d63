/**
 * The pool's shortcuts on scopes with many rules (architecture.md §7 step 3–4): each gives the
 * pool the one-step sub-query over every alternative would give — the same rules in the same
 * order, rank_a equal to 4 decimals. Rules are inserted in bulk (as the bench does) and indexed
 * by the full rebuild, so a test holds well over the 600 rows a sub-query keeps.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { ScopeStore } from "../../../src/db/scope-store.js"
import { formatRuleId } from "../../../src/contracts/ids.js"
import { LexicalIndex } from "../../../src/search/lexical/index.js"
import { ALL_OFF } from "../../../src/search/lexical/options.js"
import { planSubQueries } from "../../../src/search/lexical/rank.js"
import { stageA } from "../../../src/search/stage-a.js"
import { tempDir } from "../../support/env.js"
import { run, sqlOf } from "../../support/run.js"
import { DAY, lexConfig } from "./support.js"

let dir: string
let cleanup: () => void
beforeEach(() => {
  ;({ dir, cleanup } = tempDir())
})
afterEach(() => cleanup())

/** Every switch off: one sub-query ("word" on lex_word), the pool ranked by −bm25 alone. */
const config = () => lexConfig(dir, { lexical: { features: ALL_OFF } })

interface BulkRule {
  readonly statement: string
  readonly status: "confirmed" | "proposed"
}

/** Inserts the rules (seq 1…n) with their rule_fts rows, then rebuilds the lex_* tables. */
const bulk = (rules: ReadonlyArray<BulkRule>) =>
  run(config(), Effect.gen(function*() {
    const store = yield* ScopeStore
    yield* store.create("sales")
    const sql = yield* sqlOf("sales")
    const t = "2026-01-01T00:00:00Z"
    yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql`INSERT INTO source (id, kind, fetched_at, feeder) VALUES ('manual:person:1', 'manual', ${t}, 'person:1')`.raw
      for (const [i, r] of rules.entries()) {
        const seq = i + 1
        const id = formatRuleId("sales", seq)
        yield* sql`INSERT INTO rule (seq, id, created_at, created_by) VALUES (${seq}, ${id}, ${t}, 'person:1')`.raw
        yield* sql`INSERT INTO rule_version (rule_id, version, kind, statement, source_id, quote, said_at, relations, keywords,
            valid_from, status, reason, changed_by, changed_at)
          VALUES (${id}, 1, 'rule', ${r.statement}, 'manual:person:1', 'q', ${t}, '[]', '[]', '2026-01-01', 'proposed', 'bulk', 'person:1', ${t})`.raw
        if (r.status === "confirmed") {
          yield* sql`INSERT INTO rule_version (rule_id, version, kind, statement, source_id, quote, said_at, relations, keywords,
              valid_from, status, reason, changed_by, changed_at)
            VALUES (${id}, 2, 'rule', ${r.statement}, 'manual:person:1', 'q', ${t}, '[]', '[]', '2026-01-01', 'confirmed', 'bulk', 'person:1', ${t})`.raw
        }
        yield* sql`INSERT INTO rule_fts (rowid, keywords, statement, relations, quote) VALUES (${seq}, '', ${r.statement}, '', 'q')`.raw
      }
    }))
    yield* Effect.flatMap(LexicalIndex, (lex) => lex.rebuild(sql))
  }))

/** The sub-queries the pool plans for a text. */
const plan = (text: string) =>
  run(config(), Effect.gen(function*() {
    const sql: SqlClient = yield* sqlOf("sales")
    const lex = yield* LexicalIndex
    return yield* planSubQueries(sql, yield* lex.analyze(sql, { text }), lex.options)
  }))

/** The pool of stage a next to the one-step query over every alternative (ranked by −bm25). */
const poolAndReference = (text: string, match: string, includeProposals: boolean) =>
  run(config(), Effect.gen(function*() {
    const sql: SqlClient = yield* sqlOf("sales")
    // the first search asks FTS5, the second reads the phrase rows, the third adds them up in memory: one pool
    const runs = [
      yield* stageA(sql, { text }, { includeProposals, targetDay: DAY }),
      yield* stageA(sql, { text }, { includeProposals, targetDay: DAY }),
      yield* stageA(sql, { text }, { includeProposals, targetDay: DAY })
    ]
    const a = runs[2] ?? runs[0]
    for (const r of runs) expect(r.pool).toEqual(a?.pool)
    const statuses = includeProposals ? ["confirmed", "superseded", "proposed"] : ["confirmed", "superseded"]
    const reference = yield* sql<{ seq: number; score: number }>`
      SELECT d.seq, bm25(lex_word, 4, 3, 2, 1) AS score FROM lex_word JOIN lex_doc d ON d.seq = lex_word.rowid
      WHERE lex_word MATCH ${match} AND d.status IN (SELECT value FROM json_each(${JSON.stringify(statuses)}))
      ORDER BY score, d.seq LIMIT 200`
    return {
      pool: (a?.pool ?? []).map((h) => [h.seq, h.rank_a]),
      reference: reference.map((r) => [r.seq, Math.round(-r.score * 10_000) / 10_000])
    }
  }))

describe("sub-queries rank in the FTS table first, then read lex_doc", () => {
  it("many better-ranked proposals left out: the one-step query answers, the pool is the same", async () => {
    // 700 proposals with the word twice rank above 300 confirmed rules with it once
    await bulk([
      ...Array.from({ length: 700 }, (_, i): BulkRule => ({ statement: `hakenleiste hakenleiste p${i}`, status: "proposed" })),
      ...Array.from({ length: 300 }, (_, i): BulkRule => ({ statement: `hakenleiste c${i} x${i % 7}`, status: "confirmed" }))
    ])
    const confirmed = await poolAndReference("hakenleiste", "\"hakenleiste\" *", false)
    expect(confirmed.pool).toHaveLength(200)
    expect(confirmed.pool.every(([seq]) => (seq ?? 0) > 700)).toBe(true)
    expect(confirmed.pool).toEqual(confirmed.reference)
    const all = await poolAndReference("hakenleiste", "\"hakenleiste\" *", true)
    expect(all.pool.every(([seq]) => (seq ?? 0) <= 700)).toBe(true)
    expect(all.pool).toEqual(all.reference)
  }, 60_000)
})

describe("the pool keeps the best 200", () => {
  it("of more rows with distinct scores: exactly 200, the reference's (no tie fills the last place)", async () => {
    // 260 rules, each with its own (occurrences of the word, length): each row's bm25 differs; 300
    // rules without the word keep its IDF above FTS5's floor
    await bulk([
      ...Array.from({ length: 260 }, (_, i): BulkRule => ({
        statement: [...Array.from({ length: 1 + (i % 5) }, () => "hakenleiste"), ...Array.from({ length: Math.floor(i / 5) }, (_, j) => `w${j}`)].join(" "),
        status: "confirmed"
      })),
      ...Array.from({ length: 300 }, (_, i): BulkRule => ({ statement: `lieferzeit z${i}`, status: "confirmed" }))
    ])
    const r = await poolAndReference("hakenleiste", "\"hakenleiste\" *", false)
    expect(r.pool).toHaveLength(200)
    expect(r.pool).toEqual(r.reference)
    expect(new Set(r.pool.map(([, v]) => v)).size).toBeGreaterThan(100)
  }, 60_000)
})

describe("a word in half of the rows or more", () => {
  const rules = (rare: number) => [
    // "alpha" in every rule, "beta" in `rare` of 1,400 (under half); the same length everywhere
    ...Array.from({ length: rare }, (_, i): BulkRule => ({ statement: `alpha beta w${i} v${i % 5}`, status: "confirmed" })),
    ...Array.from({ length: 1400 - rare }, (_, i): BulkRule => ({ statement: `alpha z${i} y${i} v${i % 5}`, status: "confirmed" }))
  ]

  it("is left out when the other words still fill the sub-query: the same pool", async () => {
    await bulk(rules(650))
    expect(await plan("alpha beta")).toEqual([{ name: "word", table: "lex_word", phrases: ["\"beta\" *"], match: "\"beta\" *", fullPhrases: ["\"alpha\" *", "\"beta\" *"], full: "\"alpha\" * OR \"beta\" *" }])
    const r = await poolAndReference("alpha beta", "\"alpha\" * OR \"beta\" *", false)
    expect(r.pool).toHaveLength(200)
    expect(r.pool).toEqual(r.reference)
  }, 60_000)

  it("stays when the other words match fewer rows: rules with the common word alone still fill the pool", async () => {
    await bulk(rules(120))
    expect(await plan("alpha beta")).toEqual([{ name: "word", table: "lex_word", phrases: ["\"beta\" *"], match: "\"beta\" *", fullPhrases: ["\"alpha\" *", "\"beta\" *"], full: "\"alpha\" * OR \"beta\" *" }])
    // alone, the common word is searched: no other alternative is left
    expect(await plan("alpha")).toEqual([{ name: "word", table: "lex_word", phrases: ["\"alpha\" *"], match: "\"alpha\" *" }])
    const r = await poolAndReference("alpha beta", "\"alpha\" * OR \"beta\" *", false)
    expect(r.pool).toHaveLength(200)
    expect(r.pool.slice(120).every(([seq]) => (seq ?? 0) > 120)).toBe(true)
    expect(r.pool).toEqual(r.reference)
  }, 60_000)
})
