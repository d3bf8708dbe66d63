/**
 * The digest and the recheck list on real SQLite files (gaps.md §13): fixtures are written with
 * the real writers (storeSource, intake with the approval policy in mode B, decide) on a
 * TestClock fixed at chosen instants, so classification days, decided_at and with them
 * last_reviewed_at are known. The recheck list is checked against the search heads' own
 * "still valid?" (buildBundle) at the same instants: one definition.
 */
import { Effect, TestClock, TestContext } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ScopeStore } from "../../src/db/scope-store.js"
import { decide } from "../../src/decision/decide.js"
import { intake } from "../../src/domain/intake.js"
import type { RuleVersionRow } from "../../src/domain/rules.js"
import { storeSource } from "../../src/domain/sources.js"
import { structureWaiting } from "../../src/approval/structure-view.js"
import { createEntity } from "../../src/graph/entities.js"
import { digestJson, digestOf, parseDigestQuery } from "../../src/operations/digest.js"
import { buildBundle } from "../../src/search/bundle.js"
import { dueForRecheck } from "../../src/search/due-for-recheck.js"
import { approvalOf, EXCEPTION_LINES, internalMail, PLAIN, quoting } from "../support/approval.js"
import { tempDir, testConfig } from "../support/env.js"
import { run, type Stores, sqlOf } from "../support/run.js"

const DAY_MS = 86_400_000
const ZONE = "Europe/Berlin"
/** 2026-01-20 11:00 in Berlin */
const T_OLD = Date.parse("2026-01-20T10:00:00Z")
/** 2026-03-01 11:00 in Berlin: 40 calendar days after T_OLD */
const T_NOW = T_OLD + 40 * DAY_MS
const person = { grantId: "person:1", identity: "anna@example.com" }
const by = { grantId: "service:1", channel: "api" as const, requestId: null }

let cleanup: () => void
let config: ReturnType<typeof testConfig>
const ids: Record<string, string> = {}

const at = <A, E>(ms: number, effect: Effect.Effect<A, E, Stores>) =>
  run(config, Effect.gen(function*() {
    yield* TestClock.setTime(ms)
    return yield* effect
  }).pipe(Effect.provide(TestContext.TestContext)))

const propose = async (ms: number, line: string) => {
  const created = await at(ms, Effect.map(intake(quoting(line), by), (r) => r.created))
  return { id: created.ref.replace(/^rule\/|@\d+$/g, ""), status: created.status }
}

beforeAll(async () => {
  const t = tempDir("gn-digest-")
  cleanup = t.cleanup
  // recheck after 30 days; scope ops is configured but has no file
  config = testConfig(t.dir, { ...approvalOf("classified"), recheck_after_days: 30 })
  await run(config, Effect.flatMap(ScopeStore, (s) => s.create("sales")))
  await at(T_OLD, storeSource(internalMail(), "service:1"))
  // 2026-01-20: the policy adopts one rule; a person confirms a doubtful one an hour later
  const oldAuto = await propose(T_OLD, PLAIN[0])
  const doubt = await propose(T_OLD, EXCEPTION_LINES.doubt)
  await at(T_OLD + 3_600_000, decide(doubt.id, { decision: "confirm", version: 1 }, person))
  // 2026-02-28: one more adoption, and a payment rule that waits; 2026-03-01: a rule confirmed today (not due)
  const recentAuto = await propose(T_NOW - DAY_MS, PLAIN[1])
  const payment = await propose(T_NOW - DAY_MS, EXCEPTION_LINES.payment)
  const fresh = await propose(T_NOW, EXCEPTION_LINES.external)
  await at(T_NOW, decide(fresh.id, { decision: "confirm", version: 1 }, person))
  // an agent's new entity waits for a person's review (a structure change the policy holds: its reason doubts)
  await at(T_NOW, createEntity({ scope: "sales", type: "department", name: "Lager", parent_id: null, reason: "Gehört das Lager vielleicht zum Vertrieb?" }, { grantId: "service:1", channel: "mcp" }))
  expect([oldAuto.status, doubt.status, recentAuto.status, payment.status, fresh.status]).toEqual(["confirmed", "proposed", "confirmed", "proposed", "proposed"])
  Object.assign(ids, { oldAuto: oldAuto.id, doubt: doubt.id, recentAuto: recentAuto.id, payment: payment.id, fresh: fresh.id })
}, 60_000)
afterAll(() => cleanup())

describe("the digest", () => {
  it("per scope: the rules the policy adopted since the day (newest first), what waits, what is due for recheck (oldest first)", async () => {
    const d = await at(T_NOW, digestOf(["sales", "ops"], "2026-02-28", structureWaiting))
    expect(d).toMatchObject({ instance: "acme", since: "2026-02-28", today: "2026-03-01" })
    expect(digestJson(d)).toEqual({
      instance: "acme", since: "2026-02-28", today: "2026-03-01",
      scopes: [
        {
          scope: "sales", available: true, message: null,
          adopted: [`rule/${ids.recentAuto}@2`],
          waiting: { rules: 1, structure: 1 },
          due_for_recheck: [`rule/${ids.oldAuto}@2`, `rule/${ids.doubt}@2`]
        },
        { scope: "ops", available: false, message: "this scope has no file yet; create it with groundnote scope create", adopted: [], waiting: { rules: 0, structure: 0 }, due_for_recheck: [] }
      ]
    })
    const sales = d.scopes[0]
    expect(sales?.adopted[0]).toMatchObject({ rule_id: ids.recentAuto, version: 2, status: "confirmed", day: "2026-02-28", mode: "classified", class: "general", newest_origin: "auto", statement: PLAIN[1] })
    expect(sales?.dueForRecheck.map((r) => [r.rule_id, r.age_days, r.adoption.kind])).toEqual([[ids.oldAuto, 40, "auto"], [ids.doubt, 40, "person"]])
  })

  it("an earlier day takes in the older adoptions; a later one none; the day is the policy's day in config.zone", async () => {
    const all = digestJson(await at(T_NOW, digestOf(["sales"], "2026-01-20", structureWaiting)))
    expect(all.scopes[0]?.adopted).toEqual([`rule/${ids.recentAuto}@2`, `rule/${ids.oldAuto}@2`])
    const none = digestJson(await at(T_NOW, digestOf(["sales"], "2026-03-01", structureWaiting)))
    expect(none.scopes[0]?.adopted).toEqual([])
    expect(digestJson(await at(T_NOW, digestOf(["sales"], "2026-01-21", structureWaiting))).scopes[0]?.adopted).toEqual([`rule/${ids.recentAuto}@2`])
  })

  it("refuses a missing or bad since, or another key, as 400 validation-failed naming the field", async () => {
    for (const query of [{}, { since: "2026-02-30" }, { since: "yesterday" }, { since: "2026-03-01", scope: "sales" }]) {
      const e = await Effect.runPromise(Effect.flip(parseDigestQuery(query)))
      expect(e.code).toBe("validation-failed")
      expect(e.issues?.[0]?.path).toBe("since" in query && query.since === "2026-03-01" ? "scope" : "since")
    }
    expect(await Effect.runPromise(parseDigestQuery({ since: "2026-02-28" }))).toEqual({ since: "2026-02-28" })
  })
})

describe("due for recheck", () => {
  /** The rules whose search head says "still valid?" at `nowMs`, by buildBundle. */
  const stillValidByHeads = (nowMs: number) =>
    at(nowMs, Effect.gen(function*() {
      const sql = yield* sqlOf("sales")
      const rows = yield* sql<RuleVersionRow>`SELECT * FROM current_version WHERE status <> 'rejected' ORDER BY rule_id`
      const out: Array<string> = []
      for (const version of rows) {
        const b = yield* buildBundle(sql, { version, scope: "sales", rank: { a: 1, b: null, rrf: null, reranker: null }, found_via: [], coverage: null, matched_terms: null }, {
          zone: ZONE, recheckAfterDays: 30, nowMs, targetDay: "2026-03-01", includeProposals: true, minConfidence: null
        })
        if (b.head.recheck !== null) out.push(b.head.ref)
      }
      return out.sort()
    }))
  const dueAt = (nowMs: number) =>
    at(nowMs, Effect.flatMap(sqlOf("sales"), (sql) => dueForRecheck(sql, { zone: ZONE, recheckAfterDays: 30, nowMs })))

  it("lists exactly the rules whose search head carries recheck, at the edge of the day in config.zone too", async () => {
    // 2026-01-20 + 30 calendar days = 2026-02-19: not yet due; 2026-02-20 00:00 in Berlin: due
    const edges = [Date.parse("2026-02-19T22:59:59Z"), Date.parse("2026-02-19T23:00:00Z"), T_NOW, T_NOW + 30 * DAY_MS, T_NOW + 31 * DAY_MS]
    const seen: Array<number> = []
    for (const nowMs of edges as ReadonlyArray<number>) {
      const due = await dueAt(nowMs)
      expect(due.map((r) => `rule/${r.rule_id}@${r.version}`).sort(), new Date(nowMs).toISOString()).toEqual(await stillValidByHeads(nowMs))
      seen.push(due.length)
    }
    expect(seen).toEqual([0, 2, 2, 3, 4])
  })

  it("oldest review first; a review takes a rule off the list", async () => {
    const later = T_NOW + 31 * DAY_MS
    expect((await dueAt(later)).map((r) => r.rule_id)).toEqual([ids.oldAuto, ids.doubt, ids.recentAuto, ids.fresh])
    await at(T_NOW + DAY_MS, decide(ids.doubt ?? "", { decision: "review", version: 2 }, person))
    expect((await dueAt(later)).map((r) => r.rule_id)).toEqual([ids.oldAuto, ids.recentAuto, ids.fresh])
    expect((await dueAt(T_NOW + 2 * DAY_MS)).map((r) => r.rule_id)).toEqual([ids.oldAuto])
  })
})
