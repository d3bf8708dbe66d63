/**
 * The cost of the storage hygiene (gaps.md §12, R1; goals: propose and search with R1 on ≤ 1.15×
 * without, same run). Two data dirs with the same scope `bench` of BENCH_HYGIENE_RULES confirmed
 * rules (default 10k): "on" as the service opens it (secure_delete = ON, temp_store = MEMORY,
 * FTS5 secure-delete on every FTS5 table), "off" with the two pragmas back to SQLite's defaults on
 * its writer and secure-delete off on its FTS5 tables. The same workload runs on both,
 * interleaved in rounds (the order alternating) so the machine's drift hits both alike:
 * proposals through propose() (quote check, transaction, rule_fts, lexical rows, duplicates),
 * then search() with queries never asked before (no answer held: stage a, the heads and the
 * bundles run), after a JIT warm-up that is not counted. Figures printed, never asserted.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect, Logger, LogLevel, ManagedRuntime } from "effect"
import { ScopeStore } from "../src/db/scope-store.js"
import type { ProposalRequest } from "../src/domain/proposal-schemas.js"
import { propose } from "../src/domain/proposals.js"
import { storeSource } from "../src/domain/sources.js"
import { LexicalIndex } from "../src/search/lexical/index.js"
import { search } from "../src/search/search.js"
import { type Services, ServicesLive } from "../src/services.js"
import { benchConfig } from "./config.js"
import { BUSINESS_WORDS, goalLine, seedConfirmedRules, seedManualSource, seededRandom, sentenceOf, stats, syllableWords, timed, zipfWords } from "./support.js"

const GOAL = 1.15
const MAIL_ID = "mail:<hygiene@example.com>"

const word = zipfWords([...BUSINESS_WORDS, ...syllableWords(20_000, 4)], seededRandom(11))
const sentence = sentenceOf(word)
const MAIL_LINES = Array.from({ length: 200 }, () => sentence(12))

const request = (i: number): ProposalRequest => ({
  scope: "bench", kind: "rule", statement: `${sentence(10)} (${i})`,
  source: { kind: "mail", id: MAIL_ID, quote: MAIL_LINES[i % MAIL_LINES.length] ?? "", link: null },
  said_at: "2026-03-12T09:15:00Z", speaker: "Maria", relations: [{ kind: "supplier", name: sentence(2), ref: null }],
  keywords: [word(), word()], valid_from: "2026-03-12", supersedes: null
})

/** R1 off on the writer of a file: the pragmas at SQLite's defaults, the FTS5 tables without secure-delete. */
const hygieneOff = (sql: SqlClient) =>
  Effect.gen(function*() {
    yield* sql`PRAGMA secure_delete = OFF`.raw
    yield* sql`PRAGMA temp_store = DEFAULT`.raw
    const tables = yield* sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table' AND lower(sql) LIKE 'create virtual table%using fts5(%'`
    for (const { name } of tables) yield* sql.unsafe(`INSERT INTO "${name}"("${name}", rank) VALUES ('secure-delete', 0)`).raw
  })

/** What the writer runs with, read back: "secure_delete/temp_store/FTS5 tables with secure-delete". */
const hygieneOf = (sql: SqlClient) =>
  Effect.gen(function*() {
    const sd = (yield* sql<{ secure_delete: number }>`PRAGMA secure_delete`)[0]?.secure_delete
    const ts = (yield* sql<{ temp_store: number }>`PRAGMA temp_store`)[0]?.temp_store
    const tables = yield* sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table' AND lower(sql) LIKE 'create virtual table%using fts5(%'`
    let on = 0
    for (const { name } of tables) {
      const v = yield* sql.unsafe<{ v: number }>(`SELECT v FROM "${name}_config" WHERE k = 'secure-delete'`)
      if (v[0]?.v === 1) on++
    }
    return `secure_delete ${sd}, temp_store ${ts}, FTS5 secure-delete ${on}/${tables.length}`
  })

const arm = async (rules: number, on: boolean) => {
  const dir = mkdtempSync(join(tmpdir(), `gn-bench-hygiene-${on ? "on" : "off"}-`))
  const runtime = ManagedRuntime.make(ServicesLive(benchConfig(dir)))
  const runQuiet = <A, E>(e: Effect.Effect<A, E, Services>) =>
    runtime.runPromise(e.pipe(Logger.withMinimumLogLevel(LogLevel.Warning)))
  await runQuiet(Effect.gen(function*() {
    const store = yield* ScopeStore
    yield* store.create("bench")
    const { sql } = yield* store.use("bench")
    if (!on) yield* hygieneOff(sql)
    yield* storeSource({
      scope: "bench",
      source: { kind: "mail", id: MAIL_ID, title: "Bench mail", occurred_at: "2026-03-12T09:15:00Z", sender: null, thread: null, link: null },
      text: MAIL_LINES.join("\n"), attachments: []
    }, "service:1")
    const draw = zipfWords([...BUSINESS_WORDS, ...syllableWords(20_000, 4)], seededRandom(5))
    const say = sentenceOf(draw)
    yield* sql.withTransaction(Effect.gen(function*() {
      yield* seedManualSource(sql)
      yield* seedConfirmedRules(sql, 1, rules, (seq) => ({
        statement: `${say(12)} ${seq}`, keywords: [draw(), draw()], relations: [{ kind: "supplier", name: say(2), ref: null }], quote: say(15),
        ftsRelations: "supplier"
      }))
    }))
    yield* Effect.flatMap(LexicalIndex, (lex) => lex.rebuild(sql))
  }))
  return {
    on,
    run: runQuiet,
    hygiene: () => runQuiet(Effect.flatMap(Effect.flatMap(ScopeStore, (s) => s.use("bench")), ({ sql }) => hygieneOf(sql))),
    close: async () => {
      await runtime.dispose()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

type Arm = Awaited<ReturnType<typeof arm>>

const by = { grantId: "service:1", channel: "api" as const }
const SEARCH_ID = "00000000-0000-4000-8000-000000000000"

/** A query of three to five words of the vocabulary and a round-unique word: never asked before. */
const queries = (() => {
  const rand = seededRandom(99)
  let n = 0
  return (): string => {
    n++
    const words = Array.from({ length: 3 + rand.int(3) }, () => word())
    return `${words.join(" ")} ${syllableWords(1, 3 + (n % 3))[0] ?? ""}${n}`
  }
})()

export const hygieneBench = async (): Promise<void> => {
  const rules = Number(process.env.BENCH_HYGIENE_RULES ?? 10_000)
  const rounds = Number(process.env.BENCH_HYGIENE_ROUNDS ?? 8)
  console.log(`\nhygiene: propose and search with R1 on (secure_delete, temp_store MEMORY, FTS5 secure-delete) against off, ${rules} rules each, ${rounds} rounds interleaved`)
  const arms: ReadonlyArray<Arm> = [await arm(rules, true), await arm(rules, false)]
  try {
    for (const a of arms) console.log(`${a.on ? "on " : "off"}: ${await a.hygiene()}`)
    const times = { propose: new Map<boolean, Array<number>>(), search: new Map<boolean, Array<number>>() }
    for (const a of arms) {
      times.propose.set(a.on, [])
      times.search.set(a.on, [])
    }
    const perRound = 50
    let next = rules + 1
    // proposals: perRound each, the arms' order alternating per round
    for (let r = 0; r < rounds; r++) {
      const reqs = Array.from({ length: perRound }, () => request(next++))
      for (const a of r % 2 === 0 ? arms : [...arms].reverse()) {
        const ms = await a.run(timed(Effect.forEach(reqs, (q) => propose(q, by), { discard: true })))
        times.propose.get(a.on)?.push(ms / perRound)
      }
    }
    // searches: warm-up, then each query (never asked before) on both arms
    const once = async (a: Arm, text: string) =>
      a.run(timed(search({ scopes: ["bench"], cross_scope: false, text, as_of: null, include_proposals: false, limit: 10 }, SEARCH_ID)))
    for (let w = 0; w < 100; w++) {
      const text = queries()
      for (const a of arms) await once(a, text)
    }
    for (let r = 0; r < rounds * 25; r++) {
      const text = queries()
      for (const a of r % 2 === 0 ? arms : [...arms].reverse()) times.search.get(a.on)?.push(await once(a, text))
    }
    for (const a of arms) console.log(`${a.on ? "on " : "off"} after the run: ${await a.hygiene()}`)
    const row = (what: "propose" | "search") => {
      const on = stats(times[what].get(true) ?? [])
      const off = stats(times[what].get(false) ?? [])
      return { on, off, ratio: on.median / off.median }
    }
    console.log("workload                 | R1 on median / p95 ms | R1 off median / p95 ms | ratio on/off (medians)")
    for (const what of ["propose", "search"] as const) {
      const r = row(what)
      const label = what === "propose" ? "propose (ms per proposal)" : "search, new question     "
      console.log(`${label} | ${`${r.on.median.toFixed(2)} / ${r.on.p95.toFixed(2)}`.padStart(21)} | ${`${r.off.median.toFixed(2)} / ${r.off.p95.toFixed(2)}`.padStart(22)} | ${r.ratio.toFixed(2).padStart(6)}`)
    }
    for (const what of ["propose", "search"] as const) {
      const r = row(what)
      console.log(goalLine(`${what} with R1 on ≤ ${GOAL}× without`, r.ratio <= GOAL,
        `${r.on.median.toFixed(2)} ms against ${r.off.median.toFixed(2)} ms, ×${r.ratio.toFixed(2)}`))
    }
  } finally {
    for (const a of arms) await a.close()
  }
}
