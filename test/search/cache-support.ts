/**
 * The setting of the tests of what a search keeps per connection through writes (vocab-carry,
 * term-cache, phrases-carry, explain-carry, carry-other-process; write-child.ts writes with it from
 * another process, so it imports nothing of vitest — the hooks are in cache-scope.ts): a scope "sales" of confirmed rules written on a fixed day, one
 * service whose writes and searches share the scope's connection (as the running service's main
 * thread does), and the same search read wholly from the file (no cache) to compare with.
 */
import { Effect, type Layer, ManagedRuntime, TestClock, TestContext } from "effect"
import { ScopeStore } from "../../src/db/scope-store.js"
import { decide } from "../../src/decision/decide.js"
import type { SearchRequest } from "../../src/domain/search-schemas.js"
import { propose } from "../../src/domain/proposals.js"
import { storeSource } from "../../src/domain/sources.js"
import { lexicalIndexLayer } from "../../src/search/lexical/index.js"
import { lexicalOptions } from "../../src/search/lexical/options.js"
import { search } from "../../src/search/search.js"
import { storeLayer, type testConfig } from "../support/env.js"
import { mailSource, manualProposal } from "../support/fixtures.js"
import { run, type Stores } from "../support/run.js"

export const agent = { grantId: "person:1", channel: "mcp" as const }
export const person = { grantId: "person:2", identity: "anna@example.com" }
export const SEARCH_ID = "00000000-0000-4000-8000-000000000000"

/** Runs `effect` with Effect's clock on 2026-06-15 12:00 UTC. */
export const at = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(Date.UTC(2026, 5, 15, 12))
    return yield* effect
  }).pipe(Effect.provide(TestContext.TestContext))

/** A search of the scope sales, proposals included. */
export const salesRequest = (over: Partial<SearchRequest>): SearchRequest => ({
  scopes: ["sales"], cross_scope: false, as_of: null, include_proposals: true, limit: 10, ...over
})

/** The answer without what differs from run to run (durations). */
export const answerOf = (r: { response: { stages: unknown } & Record<string, unknown> }) => ({ ...r.response, stages: null })

/** The rules of the scope sales the tests write (each test takes all or the first of them: sales-0001, …). */
export const SALES_RULES = [
  ["Rechnungen mit Skonto werden innerhalb von zehn Tagen bezahlt", ["Rechnung", "Skonto"]],
  ["Die Lieferzeit für Hakenleisten erfragt der Einkauf beim Lieferanten", ["Lieferzeit", "Hakenleiste"]],
  ["Zahlungsziele für Neukunden betragen dreißig Tage netto", ["Zahlungsziel", "Kunde"]],
  ["Rechnungen an Neukunden gehen per Post", ["Rechnung", "Kunde"]]
] as const

/** Writes the scope sales: a mail, then each statement with its keywords proposed and confirmed (sales-0001, …). */
export const writeSales = (config: ReturnType<typeof testConfig>, statements: ReadonlyArray<readonly [string, ReadonlyArray<string>]>) =>
  run(config, at(Effect.gen(function*() {
    yield* (yield* ScopeStore).create("sales")
    yield* storeSource(mailSource(), "service:1")
    for (const [i, [statement, keywords]] of statements.entries()) {
      yield* propose(manualProposal(statement, { keywords: [...keywords], relations: [] }), agent)
      yield* decide(`sales-${String(i + 1).padStart(4, "0")}`, { decision: "confirm", version: 1 }, person)
    }
  })))

/** One service on the data dir: its writes and its searches share the scope's connection. */
export const serviceOf = (config: ReturnType<typeof testConfig>) => ManagedRuntime.make(storeLayer(config) as Layer.Layer<Stores, unknown>)

/** The answer of a search that reads everything from the file (no cache), on a store of its own. */
export const freshAnswer = async (config: ReturnType<typeof testConfig>, req: SearchRequest) =>
  answerOf(await run(config, at(search(req, SEARCH_ID)).pipe(
    Effect.provide(lexicalIndexLayer(lexicalOptions(config.file.search), { cache: false }))
  )))
