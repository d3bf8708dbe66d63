/**
 * The reranker's spend in ops.sqlite (migration 0005-reranker-usage, db/reranker-usage.ts): rows
 * are append-only, months are calendar months in the instance zone, and a reservation is written
 * only while the month's sum stays within the cap — also when two are made at once.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect, TestClock, TestContext } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { triggerMessage } from "../../src/db/errors.js"
import { OpsStore } from "../../src/db/ops-store.js"
import { monthIn, type RerankerSpend, reserveRerankerSpend, spentThisMonthUsd } from "../../src/db/reranker-usage.js"
import { tempDir, testConfig } from "../support/env.js"
import { run } from "../support/run.js"

let dir: string
let cleanup: () => void
let config: ReturnType<typeof testConfig>
beforeEach(() => {
  ;({ dir, cleanup } = tempDir())
  config = testConfig(dir)
})
afterEach(() => cleanup())

const ZONE = "Europe/Berlin"
const withOps = <A, E>(f: (sql: SqlClient) => Effect.Effect<A, E>) => run(config, Effect.flatMap(OpsStore, (o) => f(o.sql)))
/** f at the instant `iso` (TestClock). */
const at = <A, E>(iso: string, f: Effect.Effect<A, E>) =>
  Effect.zipRight(TestClock.setTime(Date.parse(iso)), f).pipe(Effect.provide(TestContext.TestContext))
const spend = (costUsd: number): RerankerSpend => ({ scope: "sales", provider: "typesafe", model: "jev-1.14.0", documents: 3, tokens: 900, costUsd })

describe("reranker_usage", () => {
  it("months are calendar months in the zone", () => {
    expect(monthIn(ZONE, Date.parse("2026-03-31T21:59:59Z"))).toBe("2026-03")
    expect(monthIn(ZONE, Date.parse("2026-03-31T22:00:00Z"))).toBe("2026-04")
    expect(monthIn("UTC", Date.parse("2026-03-31T22:00:00Z"))).toBe("2026-03")
  })

  it("records each reservation with the zone's month; the month's spend sums that month only", async () => {
    const r = await withOps((sql) => Effect.all([
      at("2026-03-31T21:00:00Z", reserveRerankerSpend(sql, ZONE, 5, spend(0.25))),
      at("2026-03-31T23:00:00Z", reserveRerankerSpend(sql, ZONE, 5, spend(0.5))),
      at("2026-04-10T12:00:00Z", reserveRerankerSpend(sql, ZONE, 5, spend(0.125))),
      at("2026-04-30T12:00:00Z", spentThisMonthUsd(sql, ZONE)),
      at("2026-03-15T12:00:00Z", spentThisMonthUsd(sql, ZONE)),
      at("2026-05-01T12:00:00Z", spentThisMonthUsd(sql, ZONE)),
      sql<{ month: string; at: string; scope: string; documents: number; tokens: number }>`SELECT month, at, scope, documents, tokens FROM reranker_usage ORDER BY seq`
    ]))
    expect(r.slice(0, 3)).toMatchObject([
      { _tag: "reserved", month: "2026-03", spentUsd: 0.25 },
      { _tag: "reserved", month: "2026-04", spentUsd: 0.5 },
      { _tag: "reserved", month: "2026-04", spentUsd: 0.625 }
    ])
    expect(r.slice(3, 6)).toEqual([0.625, 0.25, 0])
    expect(r[6]).toEqual([
      { month: "2026-03", at: "2026-03-31T21:00:00.000Z", scope: "sales", documents: 3, tokens: 900 },
      { month: "2026-04", at: "2026-03-31T23:00:00.000Z", scope: "sales", documents: 3, tokens: 900 },
      { month: "2026-04", at: "2026-04-10T12:00:00.000Z", scope: "sales", documents: 3, tokens: 900 }
    ])
  })

  it("refuses a reservation past the cap and writes nothing; cap 0 refuses everything that costs", async () => {
    const { r, rows } = await withOps((sql) => Effect.all({
      r: Effect.all([
        at("2026-04-01T10:00:00Z", reserveRerankerSpend(sql, ZONE, 1, spend(0.6))),
        at("2026-04-01T10:01:00Z", reserveRerankerSpend(sql, ZONE, 1, spend(0.6))),
        at("2026-04-01T10:02:00Z", reserveRerankerSpend(sql, ZONE, 1, spend(0.4))),
        at("2026-04-01T10:03:00Z", reserveRerankerSpend(sql, ZONE, 1, spend(0.000001))),
        at("2026-04-01T10:04:00Z", reserveRerankerSpend(sql, ZONE, 0, spend(0.000001)))
      ]),
      rows: sql<{ n: number }>`SELECT count(*) AS n FROM reranker_usage`
    }))
    expect(r.map((x) => x._tag)).toEqual(["reserved", "exhausted", "reserved", "exhausted", "exhausted"])
    expect(r[1]).toEqual({ _tag: "exhausted", month: "2026-04", spentUsd: 0.6, capUsd: 1 })
    expect(rows).toEqual([{ n: 2 }])
  })

  it("of concurrent reservations that fit the cap once, exactly one is written", async () => {
    const r = await withOps((sql) =>
      Effect.all(Array.from({ length: 8 }, () => reserveRerankerSpend(sql, ZONE, 1, spend(0.7))), { concurrency: "unbounded" }))
    expect(r.filter((x) => x._tag === "reserved")).toHaveLength(1)
  })

  it("rows are never changed or deleted", async () => {
    const refusals = await withOps((sql) => Effect.gen(function*() {
      yield* reserveRerankerSpend(sql, ZONE, 1, spend(0.1))
      return [
        triggerMessage(yield* Effect.flip(sql`UPDATE reranker_usage SET cost_usd = 0`.raw)),
        triggerMessage(yield* Effect.flip(sql`DELETE FROM reranker_usage`.raw))
      ]
    }))
    expect(refusals).toEqual(["append-only", "append-only"])
  })
})
