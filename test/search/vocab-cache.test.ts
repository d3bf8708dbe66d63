/**
 * The in-memory cache of what only writes change (src/search/lexical/vocab.ts): the
 * same queries through the cached and the uncached path give the same answers; a write between
 * two searches changes the second answer — a write of this process on another connection, and a
 * write of another process on the file (the stamp in index_stamp, bumped in the writer's
 * transaction, tells the cache it is stale). Stage a's answers are held under the same stamp
 * (src/search/stage-a.ts): an input asked again is not analysed or pooled again, and anything else
 * — other options, another day, a write — is. A scope's answer (heads and bundles) is held under
 * both stamps (src/search/search.ts, content_stamp of migration 0007): a write the lexical index
 * never sees (a link to an entity) still changes the next answer.
 */
import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { Effect, type Layer, ManagedRuntime, TestClock, TestContext } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { ScopeStore, scopeFile } from "../../src/db/scope-store.js"
import { decide } from "../../src/decision/decide.js"
import type { SearchRequest } from "../../src/domain/search-schemas.js"
import { propose } from "../../src/domain/proposals.js"
import { storeSource } from "../../src/domain/sources.js"
import { createEntity } from "../../src/graph/entities.js"
import { proposeLink } from "../../src/graph/links.js"
import { applyReview } from "../../src/structure/review.js"
import { LexicalIndex, lexicalIndexLayer, makeLexicalIndex } from "../../src/search/lexical/index.js"
import { lexicalOptions } from "../../src/search/lexical/options.js"
import { search } from "../../src/search/search.js"
import { storeLayer, tempDir, testConfig } from "../support/env.js"
import { mailSource, manualProposal } from "../support/fixtures.js"
import { run, type Stores, sqlOf } from "../support/run.js"

const ROOT = fileURLToPath(new URL("../..", import.meta.url))
let dir: string
let cleanup: () => void
let config: ReturnType<typeof testConfig>
const agent = { grantId: "person:1", channel: "mcp" as const }
const person = { grantId: "person:2", identity: "anna@example.com" }

const at = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(Date.UTC(2026, 5, 15, 12))
    return yield* effect
  }).pipe(Effect.provide(TestContext.TestContext))

const STATEMENTS = [
  ["Die Lieferzeit für Hakenleisten erfragt der Einkauf beim Lieferanten", ["Lieferzeit", "Hakenleiste"]],
  ["Rechnungen mit Skonto werden innerhalb von zehn Tagen bezahlt", ["Rechnung", "Skonto"]],
  ["Delivery times of the supplier are confirmed in writing", ["delivery", "supplier"]],
  ["Zahlungsziele für Neukunden betragen dreißig Tage netto", ["Zahlungsziel", "Kunde"]],
  ["Pallets leave the warehouse only with a shipping note", ["warehouse", "shipping"]],
  ["Preislisten mit Rabatt gibt der Vertrieb nur nach Freigabe heraus", ["Preisliste", "Rabatt"]],
  ["Reklamationen werden mit einer Gutschrift abgeschlossen", ["Reklamation", "Gutschrift"]],
  ["Every order needs an invoice before the payment is booked", ["order", "invoice"]],
  ["Muster für Kunden verschickt der Versand per Spedition", ["Muster", "Versand"]],
  ["Die Lieferzeit von Wandhakenleisten beträgt drei Wochen", ["Lieferzeit", "Wandhakenleiste"]]
] as const

const QUERIES: ReadonlyArray<Partial<SearchRequest>> = [
  { text: "Lieferzeit Hakenleiste" }, { text: "Rechnung Skonto" }, { text: "delivery time supplier" }, { text: "Liefrzeit" },
  { text: "Zahlungsziele Kunde" }, { text: "warehouse pallets shipping" }, { text: "Preislisten Rabatt" }, { text: "Hakenleisten" },
  { text: "customer discount sample" }, { text: "Reklamation Gutschrift" }, { text: "order invoice payment" },
  { terms: ["Lieferzeit", "Wandhakenleiste"] }, { text: "Lieferzeit", include_proposals: true }, { text: "Rechnung bezahlen Skonto Tage" }
]

const req = (over: Partial<SearchRequest>): SearchRequest => ({
  scopes: ["sales"], cross_scope: false, as_of: null, include_proposals: false, limit: 10, ...over
})

/** The answer without what differs from run to run (durations). */
const answerOf = (r: { response: { stages: unknown } & Record<string, unknown> }) => ({ ...r.response, stages: null })

beforeEach(async () => {
  ;({ dir, cleanup } = tempDir())
  config = testConfig(dir)
  await run(config, at(Effect.gen(function*() {
    yield* (yield* ScopeStore).create("sales")
    yield* storeSource(mailSource(), "service:1")
    for (const [i, [statement, keywords]] of STATEMENTS.entries()) {
      yield* propose(manualProposal(statement, { keywords: [...keywords], relations: [] }), agent)
      // the last two stay proposals
      if (i < STATEMENTS.length - 2) yield* decide(`sales-${String(i + 1).padStart(4, "0")}`, { decision: "confirm", version: 1 }, person)
    }
  })))
})
afterEach(() => cleanup())

const uncached = () => lexicalIndexLayer(lexicalOptions(config.file.search), { cache: false })

describe("the vocabulary cache", () => {
  it("the same queries through the cached and the uncached path give the same answers, twice over", async () => {
    const answers = Effect.gen(function*() {
      const out: Array<unknown> = []
      // two rounds: the second answers from the cache the first filled
      for (let round = 0; round < 2; round++) {
        for (const q of QUERIES) out.push(answerOf(yield* search(req(q), "00000000-0000-4000-8000-000000000000")))
      }
      return out
    })
    const cached = await run(config, at(answers))
    const plain = await run(config, at(answers).pipe(Effect.provide(uncached())))
    expect(cached).toHaveLength(QUERIES.length * 2)
    expect(cached.slice(0, QUERIES.length)).toEqual(cached.slice(QUERIES.length))
    expect(cached).toEqual(plain)
    // the queries find something: the comparison is not one of empty answers
    expect(cached.filter((a) => (a as { bundles: Array<unknown> }).bundles.length > 0).length).toBeGreaterThan(QUERIES.length)
  })

  describe("a write between two searches changes the second answer", () => {
    let searcher: ManagedRuntime.ManagedRuntime<Stores, unknown>
    beforeEach(() => {
      searcher = ManagedRuntime.make(storeLayer(config) as Layer.Layer<Stores, unknown>)
    })
    afterEach(async () => {
      await searcher.dispose()
    })
    const find = async (q: Partial<SearchRequest>) => {
      const r = await searcher.runPromise(at(search(req(q), "00000000-0000-4000-8000-000000000000")))
      return { heads: r.response.bundles.map((b) => b.head.ref), variants: r.response.query.variants, answer: answerOf(r) }
    }
    /** the answer of a search that reads everything from the file (no cache) */
    const fresh = async (q: Partial<SearchRequest>) =>
      answerOf(await run(config, at(search(req(q), "00000000-0000-4000-8000-000000000000")).pipe(Effect.provide(uncached()))))

    it("a rule confirmed on another connection of this process", async () => {
      const before = await find({ text: "Gabelstapler Wartung" })
      expect(before.heads).toEqual([])
      const typo = await find({ text: "Gabelstaplr" })
      expect(typo.variants.gabelstaplr).not.toContain("gabelstapler")
      // warm: the cache now holds that the scope knows neither word, and the typo candidates of "g"
      expect(await find({ text: "Gabelstapler Wartung" })).toEqual(before)
      expect(await find({ text: "Gabelstaplr" })).toEqual(typo)
      await run(config, at(Effect.gen(function*() {
        yield* propose(manualProposal("Die Wartung der Gabelstapler macht der Hersteller", { keywords: ["Gabelstapler"], relations: [] }), agent)
        yield* decide("sales-0011", { decision: "confirm", version: 1 }, person)
      })))
      const after = await find({ text: "Gabelstapler Wartung" })
      expect(after.heads).toEqual(["rule/sales-0011@2"])
      expect(after.answer).toEqual(await fresh({ text: "Gabelstapler Wartung" }))
      // the typo correction sees the new word (the known words were read again)
      const typoAfter = await find({ text: "Gabelstaplr" })
      expect(typoAfter.variants.gabelstaplr).toContain("gabelstapler")
      expect(typoAfter.heads).toEqual(["rule/sales-0011@2"])
      expect(typoAfter.answer).toEqual(await fresh({ text: "Gabelstaplr" }))
    })

    it("a rule removed from the index by another process writing the file", async () => {
      const before = await find({ text: "Rechnung Skonto Tage" })
      expect(before.heads).toContain("rule/sales-0002@2")
      expect(await find({ text: "Rechnung Skonto Tage" })).toEqual(before)
      // another process: drops rule 2's rows of the lexical index in its own transaction
      const script = `const Database = require("better-sqlite3"); const db = new Database(${JSON.stringify(scopeFile(dir, "sales"))});
        db.transaction(() => { for (const t of ["lex_word", "lex_stem", "lex_tri"]) db.prepare("DELETE FROM " + t + " WHERE rowid = 2").run();
          db.prepare("DELETE FROM lex_doc WHERE seq = 2").run(); db.prepare("DELETE FROM lex_relation WHERE seq = 2").run() })(); db.close()`
      execFileSync(process.execPath, ["-e", script], { cwd: ROOT })
      const after = await find({ text: "Rechnung Skonto Tage" })
      expect(after.heads).not.toContain("rule/sales-0002@2")
      // another rule still answers (its coverage weighs the words by the file's counts)
      expect(after.heads).toContain("rule/sales-0004@2")
      // rule counts and frequencies (coverage, rank_a) are those of the file as it is now
      expect(after.answer).toEqual(await fresh({ text: "Rechnung Skonto Tage" }))
    })
  })
})

/** The live index, counting what stage a asks of it (analyzeCurrent, pool). */
const countingIndex = () => {
  const calls = { analyze: 0, pool: 0 }
  const live = makeLexicalIndex(lexicalOptions(config.file.search))
  const counting = Effect.provideService(LexicalIndex, {
    ...live,
    analyzeCurrent: (sql, input) => Effect.zipRight(Effect.sync(() => calls.analyze++), live.analyzeCurrent(sql, input)),
    pool: (sql, analysis, opts) => Effect.zipRight(Effect.sync(() => calls.pool++), live.pool(sql, analysis, opts))
  })
  return { calls, counting }
}

describe("stage a's answers under the stamp", () => {
  it("an input asked again is answered from memory; other options, another day or a write ask the index again", async () => {
    const { calls, counting } = countingIndex()
    const searcher = ManagedRuntime.make(storeLayer(config) as Layer.Layer<Stores, unknown>)
    try {
      const find = async (q: Partial<SearchRequest>) =>
        answerOf(await searcher.runPromise(at(search(req(q), "00000000-0000-4000-8000-000000000000")).pipe(counting)))
      const fresh = async (q: Partial<SearchRequest>) =>
        answerOf(await run(config, at(search(req(q), "00000000-0000-4000-8000-000000000000")).pipe(Effect.provide(uncached()))))
      const first = await find({ text: "Rechnung Skonto Tage" })
      expect(calls).toEqual({ analyze: 1, pool: 1 })
      expect((first as unknown as { bundles: Array<unknown> }).bundles.length).toBeGreaterThan(0)
      // the same input: from memory, the same answer
      expect(await find({ text: "Rechnung Skonto Tage" })).toEqual(first)
      expect(calls).toEqual({ analyze: 1, pool: 1 })
      // other options, another day: asked again
      await find({ text: "Rechnung Skonto Tage", include_proposals: true })
      expect(calls).toEqual({ analyze: 2, pool: 2 })
      await find({ text: "Rechnung Skonto Tage", as_of: "2026-01-05" })
      expect(calls).toEqual({ analyze: 3, pool: 3 })
      // a write on another connection: the stamp changed, asked again, and the answer is the file's
      await run(config, at(Effect.gen(function*() {
        yield* propose(manualProposal("Rechnungen mit Skonto prüft die Buchhaltung am selben Tag", { keywords: ["Rechnung", "Skonto"], relations: [] }), agent)
        yield* decide("sales-0011", { decision: "confirm", version: 1 }, person)
      })))
      const after = await find({ text: "Rechnung Skonto Tage" })
      expect(calls).toEqual({ analyze: 4, pool: 4 })
      expect(after).not.toEqual(first)
      expect(after).toEqual(await fresh({ text: "Rechnung Skonto Tage" }))
    } finally {
      await searcher.dispose()
    }
  })
})

describe("a scope's answer under both stamps", () => {
  it("the same analysis with the same filters gets the held answer until a write of what it shows, even one the index never sees", async () => {
    const { calls, counting } = countingIndex()
    const searcher = ManagedRuntime.make(storeLayer(config) as Layer.Layer<Stores, unknown>)
    const stamps = Effect.flatMap(sqlOf("sales"), (sql) =>
      sql<{ index: string; content: string }>`SELECT (SELECT seq || ':' || nonce FROM index_stamp) AS "index",
        (SELECT seq || ':' || nonce FROM content_stamp) AS content`)
    try {
      const find = (q: Partial<SearchRequest>, day = 15) =>
        searcher.runPromise(Effect.gen(function*() {
          yield* TestClock.setTime(Date.UTC(2026, 5, day, 12))
          return yield* search(req(q), "00000000-0000-4000-8000-000000000000")
        }).pipe(Effect.provide(TestContext.TestContext), counting))
      const fresh = async (q: Partial<SearchRequest>) =>
        answerOf(await run(config, at(search(req(q), "00000000-0000-4000-8000-000000000000")).pipe(Effect.provide(uncached()))))
      const first = await find({ text: "Rechnung Skonto Tage" })
      const head = first.response.bundles[0]
      expect(head?.head.ref).toBe("rule/sales-0002@2")
      expect(calls).toEqual({ analyze: 1, pool: 1 })
      // asked again: the held bundles themselves
      expect((await find({ text: "Rechnung Skonto Tage" })).response.bundles[0]).toBe(head)
      // a new input with the same analysis: analysed, not pooled, the held bundles
      const spaced = await find({ text: "  rechnung   Skonto  tage " })
      expect(spaced.response.bundles[0]).toBe(head)
      expect(answerOf(spaced)).toEqual(answerOf(first))
      expect(calls).toEqual({ analyze: 2, pool: 1 })
      // another limit: the same answer of stage a, bundles built again
      const one = await find({ text: "Rechnung Skonto Tage", limit: 1 })
      expect(one.response.bundles[0]).not.toBe(head)
      expect(one.response.bundles[0]).toEqual(head)
      expect(calls).toEqual({ analyze: 2, pool: 1 })
      // another day (the target day of stage a, and the day the ages count to): all again
      const nextDay = await find({ text: "Rechnung Skonto Tage" }, 16)
      expect(nextDay.response.bundles[0]).not.toBe(head)
      expect(nextDay.response.bundles[0]?.head.age_days).toBe((head?.head.age_days ?? 0) + 1)
      expect(calls).toEqual({ analyze: 3, pool: 2 })

      // a write of the graph only (an entity, a link, its review), on another connection: the index's stamp stays, the content's moves
      const before = await run(config, at(stamps))
      await run(config, at(Effect.gen(function*() {
        const created = yield* createEntity({ scope: "sales", type: "customer", name: "Skonto-Kunde", parent_id: null }, agent)
        const linked = yield* proposeLink({ scope: "sales", from_ref: "rule/sales-0002", to_ref: `entity/${created.id}`, type: "concerns", confidence: 0.95, reason: "the rule names it" }, { grantId: "person:1" })
        yield* applyReview({ target: `link/${linked.link.id ?? ""}`, verdict: "confirm" }, person)
      })))
      const afterWrite = await run(config, at(stamps))
      expect(afterWrite[0]?.index).toBe(before[0]?.index)
      expect(afterWrite[0]?.content).not.toBe(before[0]?.content)
      const after = await find({ text: "Rechnung Skonto Tage" })
      // stage a still held (its stamp did not move), the bundles read again: the head names the entity
      expect(calls).toEqual({ analyze: 3, pool: 2 })
      expect(after.response.bundles[0]).not.toBe(head)
      expect(after.response.bundles[0]?.head.entities.map((e) => e.name)).toEqual(["Skonto-Kunde"])
      expect(answerOf(after)).toEqual(await fresh({ text: "Rechnung Skonto Tage" }))
    } finally {
      await searcher.dispose()
    }
  })
})
