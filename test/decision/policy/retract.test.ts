/**
 * retract() (gaps.md §10, invariant 2) and a person's decisions on a rule the policy adopted:
 * retract works while the newest confirm/review decision is the policy's (confirmed →
 * superseded from today in config.zone); a person's confirm or review ends that; a person may
 * confirm (a new version, adoption person), review, revoke or reject an auto-adopted rule. The
 * triggers of migration 0004 refuse what the code must never write.
 */
import { Effect, TestClock, TestContext } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { triggerMessage } from "../../../src/db/errors.js"
import { ScopeStore } from "../../../src/db/scope-store.js"
import { decide } from "../../../src/decision/decide.js"
import { retract } from "../../../src/decision/policy/retract.js"
import { intake } from "../../../src/domain/intake.js"
import { readBundle } from "../../../src/search/bundle.js"
import { storeSource } from "../../../src/domain/sources.js"
import { approvalOf, internalMail, PLAIN, quoting } from "../../support/approval.js"
import { tempDir, testConfig } from "../../support/env.js"
import { run, runFail, sqlOf, type Stores } from "../../support/run.js"

let dir: string
let cleanup: () => void
let config: ReturnType<typeof testConfig>
const feeder = { grantId: "service:7", channel: "api" as const, requestId: null }
const agent = { grantId: "person:3", identity: "tom@acme.example" }
const person = { grantId: "person:1", identity: "anna@acme.example" }
const T0 = Date.parse("2026-01-15T08:00:00Z")

const at = <A, E>(ms: number, effect: Effect.Effect<A, E, Stores>) =>
  run(config, Effect.gen(function*() {
    yield* TestClock.setTime(ms)
    return yield* effect
  }).pipe(Effect.provide(TestContext.TestContext)))
const failAt = <A, E>(ms: number, effect: Effect.Effect<A, E, Stores>) =>
  runFail(config, Effect.gen(function*() {
    yield* TestClock.setTime(ms)
    return yield* effect
  }).pipe(Effect.provide(TestContext.TestContext)))

beforeEach(async () => {
  ;({ dir, cleanup } = tempDir())
  config = testConfig(dir, approvalOf("autonomous"))
  await run(config, Effect.gen(function*() {
    yield* (yield* ScopeStore).create("sales")
    yield* storeSource(internalMail(), feeder.grantId)
  }))
})
afterEach(() => cleanup())

/** Proposes line `i` of the plain lines; the policy adopts it (mode A): its rule id. */
const adopted = async (i = 1, over: Parameters<typeof quoting>[1] = {}) => {
  const r = await at(T0, intake(quoting(PLAIN[i] ?? "", over), feeder))
  expect(r.created.status).toBe("confirmed")
  return r.created.ref.replace(/^rule\/|@\d+$/g, "")
}

const versions = (id: string) =>
  run(config, Effect.flatMap(sqlOf("sales"), (sql) =>
    sql<{ version: number; status: string; valid_until: string | null; changed_by: string; reason: string }>`
      SELECT version, status, valid_until, changed_by, reason FROM rule_version WHERE rule_id = ${id} ORDER BY version`))

describe("retract", () => {
  it("takes back an auto-adopted rule: superseded from today (zone), decision retract with origin grant and the adoption's classification", async () => {
    const id = await adopted()
    const late = Date.parse("2026-01-20T23:30:00Z") // 00:30 on the 21st in Berlin
    const r = await at(late, retract(id, "the warehouse moved", agent))
    expect(r).toEqual({
      retracted: `rule/${id}@2`, current: `rule/${id}@3`, status: "superseded", valid_until: "2026-01-21",
      adoption: { kind: "auto", ruleset: "gn-1" },
      decision: { kind: "retract", origin: "grant", version: 2, new_version: 3, decided_by: "person:3", decided_at: "2026-01-20T23:30:00.000Z", reason: "the warehouse moved" }
    })
    expect((await versions(id)).at(-1)).toEqual({ version: 3, status: "superseded", valid_until: "2026-01-21", changed_by: "person:3", reason: "retracted: the warehouse moved" })
    const decisions = await run(config, Effect.flatMap(sqlOf("sales"), (sql) => sql`SELECT kind, origin, mode, classification_id, decided_by, decided_by_identity FROM decision ORDER BY id`))
    expect(decisions).toEqual([
      { kind: "confirm", origin: "auto", mode: "autonomous", classification_id: 1, decided_by: "policy@gn-1", decided_by_identity: "policy@gn-1" },
      { kind: "retract", origin: "grant", mode: null, classification_id: 1, decided_by: "person:3", decided_by_identity: "tom@acme.example" }
    ])
    // the bundle still marks it auto-adopted, superseded
    const bundle = await at(late, Effect.flatMap(sqlOf("sales"), (sql) =>
      readBundle(sql, id, { zone: "Europe/Berlin", recheckAfterDays: 180, nowMs: Date.parse("2026-01-20T12:00:00Z"), asOf: null, includeProposals: false })))
    expect(bundle?.head).toMatchObject({ status: "superseded", adoption: { kind: "auto", ruleset: "gn-1" }, valid_until: "2026-01-21" })
    // a second retract: already superseded
    expect(await failAt(late, retract(id, "again", agent))).toMatchObject({ code: "already-decided", current: `rule/${id}@3` })
  })

  it("a rule not yet in force is retracted from its valid_from (never in force)", async () => {
    const id = await adopted(1, { valid_from: "2026-02-01" })
    const r = await at(T0, retract(id, "too early", agent))
    expect(r.valid_until).toBe("2026-02-01")
  })

  it("is refused once a person confirmed it (a new version, adoption person) or reviewed it", async () => {
    const confirmed = await adopted(1)
    const c = await at(T0, decide(confirmed, { decision: "confirm", version: 2, reason: "checked" }, person))
    expect(c).toMatchObject({ decision: { kind: "confirm", origin: "grant", version: 2, new_version: 3 }, current: `rule/${confirmed}@3` })
    expect((await versions(confirmed)).at(-1)).toMatchObject({ version: 3, status: "confirmed", changed_by: "person:1" })
    expect(await failAt(T0, retract(confirmed, "no", agent))).toMatchObject({
      code: "already-decided", current: `rule/${confirmed}@3`, message: expect.stringContaining("a person confirmed or reviewed this rule") as unknown
    })
    const bundle = await at(T0, Effect.flatMap(sqlOf("sales"), (sql) =>
      readBundle(sql, confirmed, { zone: "Europe/Berlin", recheckAfterDays: 180, nowMs: T0, asOf: null, includeProposals: false })))
    expect(bundle?.head.adoption).toEqual({ kind: "person" })
    // a second confirm by a person is already-decided, as for any confirmed rule
    expect(await failAt(T0, decide(confirmed, { decision: "confirm", version: 3 }, person))).toMatchObject({ code: "already-decided" })

    const reviewed = await adopted(2)
    await at(T0, decide(reviewed, { decision: "review", version: 2 }, person))
    expect(await failAt(T0, retract(reviewed, "no", agent))).toMatchObject({ code: "already-decided", current: `rule/${reviewed}@2` })
  })

  it("a proposal, a person-confirmed rule, a rejected rule and an unknown or malformed id are refused", async () => {
    cleanup()
    ;({ dir, cleanup } = tempDir())
    config = testConfig(dir, approvalOf("manual"))
    await run(config, Effect.gen(function*() {
      yield* (yield* ScopeStore).create("sales")
      yield* storeSource(internalMail(), feeder.grantId)
    }))
    await at(T0, intake(quoting(PLAIN[1]), feeder))
    expect(await failAt(T0, retract("sales-0001", "x", agent))).toMatchObject({ code: "already-decided", current: "rule/sales-0001@1" })
    await at(T0, decide("sales-0001", { decision: "confirm", version: 1 }, person))
    expect(await failAt(T0, retract("sales-0001", "x", agent))).toMatchObject({ code: "already-decided" })
    await at(T0, intake(quoting(PLAIN[2]), feeder))
    await at(T0, decide("sales-0002", { decision: "reject", version: 1, reason: "no" }, person))
    expect(await failAt(T0, retract("sales-0002", "x", agent))).toMatchObject({ code: "not-found" })
    expect(await failAt(T0, retract("sales-0404", "x", agent))).toMatchObject({ code: "not-found" })
    expect(await failAt(T0, retract("nope", "x", agent))).toMatchObject({ code: "not-found" })
    expect(await failAt(T0, retract("finance-0001", "x", agent))).toMatchObject({ code: "not-found" })
  })

  it("a retracted statement from the same source is not adopted again: a person decides", async () => {
    const id = await adopted(1)
    await at(T0, retract(id, "wrong", agent))
    const again = await at(T0, intake(quoting(PLAIN[1]), { ...feeder, grantId: "service:8" }))
    expect(again.created.status).toBe("proposed")
    expect(again.created.reasons.some((r) => r.includes(`(${id}) and it was retracted`))).toBe(true)
  })
})

describe("a person decides an auto-adopted rule", () => {
  it("a reject is refused (409 already-decided, nothing written): the rule stays confirmed, readable and retractable", async () => {
    const id = await adopted()
    const before = await versions(id)
    const e = await failAt(T0, decide(id, { decision: "reject", version: 2, reason: "not a rule" }, person))
    expect(e).toMatchObject({ code: "already-decided", current: `rule/${id}@2` })
    expect((e as { remedy?: string }).remedy).toContain("revoke")
    expect(await versions(id)).toEqual(before)
    const bundle = await at(T0, Effect.flatMap(sqlOf("sales"), (sql) =>
      readBundle(sql, id, { zone: "Europe/Berlin", recheckAfterDays: 180, nowMs: T0, asOf: null, includeProposals: false })))
    expect(bundle?.head).toMatchObject({ ref: `rule/${id}@2`, adoption: { kind: "auto" } })
  })

  it("revoke works as on any confirmed rule", async () => {
    const id = await adopted()
    await at(T0, decide(id, { decision: "revoke", version: 2, reason: "ended", valid_until: "2026-01-20" }, person))
    expect((await versions(id)).at(-1)).toMatchObject({ version: 3, status: "superseded", valid_until: "2026-01-20", changed_by: "person:1" })
  })

  it("a person cannot reject a rule a person confirmed (the trigger and decide agree)", async () => {
    const id = await adopted()
    await at(T0, decide(id, { decision: "confirm", version: 2 }, person))
    expect(await failAt(T0, decide(id, { decision: "reject", version: 3, reason: "no" }, person))).toMatchObject({ code: "already-decided" })
  })
})

describe("the policy's triggers (migration 0004)", () => {
  const refused = (statements: ReadonlyArray<string>) =>
    run(config, Effect.flatMap(sqlOf("sales"), (sql) =>
      Effect.flip(sql.withTransaction(Effect.gen(function*() {
        for (const s of statements) yield* sql.unsafe(s).raw
      }))).pipe(Effect.map((e) => triggerMessage(e as never) ?? String((e as { cause?: { code?: string } }).cause?.code)))))

  it("nothing else can be written as the policy, and nobody retracts or rejects a rule a person confirmed", async () => {
    cleanup()
    ;({ dir, cleanup } = tempDir())
    config = testConfig(dir, approvalOf("manual"))
    await run(config, Effect.gen(function*() {
      yield* (yield* ScopeStore).create("sales")
      yield* storeSource(internalMail(), feeder.grantId)
    }))
    await at(T0, intake(quoting(PLAIN[1]), feeder)) // sales-0001, classified person (manual)
    const v2 = (by: string, status = "confirmed", statement = PLAIN[1]) => `INSERT INTO rule_version (rule_id, version, kind, statement, source_id, quote, said_at,
      relations, keywords, valid_from, status, reason, changed_by, changed_at)
      SELECT rule_id, 2, kind, '${statement}', source_id, quote, said_at, relations, keywords, valid_from, '${status}', 'x', '${by}', changed_at
      FROM rule_version WHERE rule_id = 'sales-0001' AND version = 1`
    // the policy confirms only a proposal classified auto
    expect(await refused([v2("policy@gn-1")])).toBe("policy-not-allowed")
    // a decision of origin auto needs its classification and its version
    expect(await refused([v2("person:1"), `INSERT INTO decision (rule_id, version, kind, origin, mode, classification_id, decided_by,
      decided_by_identity, decided_at, reason, new_version) VALUES ('sales-0001', 1, 'confirm', 'auto', 'autonomous', 1, 'policy@gn-1', 'policy@gn-1', '2026-01-15T08:00:00Z', 'x', 2)`]))
      .toBe("policy-not-allowed")
    // a person confirms, then neither a retract nor a reject of that confirmed rule passes
    await at(T0, decide("sales-0001", { decision: "confirm", version: 1 }, person))
    expect(await refused([`INSERT INTO rule_version (rule_id, version, kind, statement, source_id, quote, said_at, relations, keywords,
      valid_from, valid_until, status, reason, changed_by, changed_at) SELECT rule_id, 3, kind, statement, source_id, quote, said_at, relations,
      keywords, valid_from, '2026-01-15', 'superseded', 'x', 'person:3', changed_at FROM rule_version WHERE rule_id = 'sales-0001' AND version = 2`,
    `INSERT INTO decision (rule_id, version, kind, origin, decided_by, decided_by_identity, decided_at, reason, new_version)
      VALUES ('sales-0001', 2, 'retract', 'grant', 'person:3', 't', '2026-01-15T08:00:00Z', 'x', 3)`])).toBe("not-retractable")
    expect(await refused([`INSERT INTO rule_version (rule_id, version, kind, statement, source_id, quote, said_at, relations, keywords,
      valid_from, status, reason, changed_by, changed_at) SELECT rule_id, 3, kind, statement, source_id, quote, said_at, relations,
      keywords, valid_from, 'rejected', 'x', 'person:1', changed_at FROM rule_version WHERE rule_id = 'sales-0001' AND version = 2`])).toBe("invalid-transition")
    // the policy's decision is only that confirm (trigger); a grant's decision never names the policy (CHECK)
    expect(await refused([`INSERT INTO decision (rule_id, version, kind, origin, mode, classification_id, decided_by, decided_by_identity, decided_at, reason, new_version)
      VALUES ('sales-0001', 2, 'review', 'auto', 'autonomous', 1, 'policy@gn-1', 'p', '2026-01-15T08:00:00Z', NULL, NULL)`])).toBe("policy-not-allowed")
    expect(await refused([`INSERT INTO decision (rule_id, version, kind, origin, decided_by, decided_by_identity, decided_at, reason, new_version)
      VALUES ('sales-0001', 2, 'review', 'grant', 'policy@gn-1', 'p', '2026-01-15T08:00:00Z', NULL, NULL)`])).toBe("SQLITE_CONSTRAINT_CHECK")
    // and the new tables are append-only
    expect(await refused(["UPDATE classification SET outcome = 'auto'"])).toBe("append-only")
    expect(await refused(["DELETE FROM source_auth"])).toBe("append-only")
  })
})
