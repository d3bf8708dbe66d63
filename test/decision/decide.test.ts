import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { ScopeStore, scopeFile } from "../../src/db/scope-store.js"
import { decide } from "../../src/decision/decide.js"
import { propose } from "../../src/domain/proposals.js"
import { lastReviewedAt } from "../../src/domain/rules.js"
import { storeSource } from "../../src/domain/sources.js"
import { tempDir, testConfig } from "../support/env.js"
import { mailProposal, mailSource, manualProposal } from "../support/fixtures.js"
import { counts, fileHash, run, runFail, sqlOf } from "../support/run.js"

let dir: string
let cleanup: () => void
let config: ReturnType<typeof testConfig>
const agent = { grantId: "person:1", channel: "mcp" as const }
const person = { grantId: "person:2", identity: "anna@example.com" }

const versions = (ruleId: string) =>
  Effect.flatMap(sqlOf("sales"), (sql) =>
    sql<Record<string, unknown>>`SELECT * FROM rule_version WHERE rule_id = ${ruleId} ORDER BY version`)
const decisions = () => Effect.flatMap(sqlOf("sales"), (sql) => sql<Record<string, unknown>>`SELECT * FROM decision ORDER BY id`)
const fts = (table: "rule_fts" | "rejected_fts") =>
  Effect.flatMap(sqlOf("sales"), (sql) => sql.unsafe<{ rowid: number; statement: string; keywords: string }>(`SELECT rowid, statement, keywords FROM ${table} ORDER BY rowid`))

beforeEach(async () => {
  ;({ dir, cleanup } = tempDir())
  config = testConfig(dir)
  await run(config, Effect.gen(function*() {
    const store = yield* ScopeStore
    yield* store.create("sales")
    yield* storeSource(mailSource(), "service:1")
    yield* propose(mailProposal(), agent)
  }))
})
afterEach(() => cleanup())

describe("confirm", () => {
  it("writes version 2 confirmed with the change, one decision row, and the FTS row of the new version", async () => {
    const result = await run(config, decide("sales-0001", {
      decision: "confirm", version: 1, reason: "agreed in the weekly",
      change: { statement: "Ask the supplier for the delivery time before every order of black hook rails", keywords: ["Lieferzeit", "Bestellung"] }
    }, person))
    expect(result.current).toBe("rule/sales-0001@2")
    expect(result.decision).toMatchObject({ kind: "confirm", version: 1, decided_by: "person:2", reason: "agreed in the weekly", new_version: 2 })
    const [v, d, f] = await run(config, Effect.all([versions("sales-0001"), decisions(), fts("rule_fts")]))
    expect(v[1]).toMatchObject({
      version: 2, status: "confirmed", changed_by: "person:2", reason: "agreed in the weekly",
      statement: "Ask the supplier for the delivery time before every order of black hook rails",
      quote: v[0]?.quote, source_id: v[0]?.source_id
    })
    expect(d).toMatchObject([{ rule_id: "sales-0001", version: 1, kind: "confirm", decided_by_identity: "anna@example.com", new_version: 2 }])
    expect(f).toEqual([{ rowid: 1, statement: "Ask the supplier for the delivery time before every order of black hook rails", keywords: "Lieferzeit Bestellung" }])
  })

  it("supersedes in one transaction: successor confirmed, predecessor superseded from the successor's valid_from", async () => {
    await run(config, decide("sales-0001", { decision: "confirm", version: 1 }, person))
    await run(config, propose(manualProposal("From April on the delivery time is asked by phone", { supersedes: "sales-0001", valid_from: "2026-04-01" }), agent))
    const result = await run(config, decide("sales-0002", { decision: "confirm", version: 1 }, person))
    expect(result.current).toBe("rule/sales-0002@2")
    const [pred, succ, d] = await run(config, Effect.all([versions("sales-0001"), versions("sales-0002"), decisions()]))
    expect(pred[2]).toMatchObject({ version: 3, status: "superseded", valid_until: "2026-04-01", superseded_by: "sales-0002", changed_by: "person:2" })
    expect(succ[1]).toMatchObject({ version: 2, status: "confirmed", supersedes: "sales-0001", valid_until: null })
    expect(d.length).toBe(2)
    const f = await run(config, fts("rule_fts"))
    expect(f.map((r) => r.rowid)).toEqual([1, 2])
  })

  it("superseding is atomic: a failure injected after the first insert leaves nothing behind", async () => {
    await run(config, decide("sales-0001", { decision: "confirm", version: 1 }, person))
    await run(config, propose(manualProposal("From April on the delivery time is asked by phone", { supersedes: "sales-0001", valid_from: "2026-04-01" }), agent))
    const file = scopeFile(dir, "sales")
    const before = { hash: fileHash(file), counts: await run(config, Effect.flatMap(sqlOf("sales"), counts)) }
    const err = await runFail(config, Effect.gen(function*() {
      const sql = yield* sqlOf("sales")
      // The successor's version is inserted first; the predecessor's superseded version then fails.
      yield* sql.unsafe(`CREATE TEMP TRIGGER inject_failure BEFORE INSERT ON main.rule_version
        WHEN NEW.status = 'superseded' BEGIN SELECT RAISE(ABORT, 'injected'); END`).raw
      return yield* decide("sales-0002", { decision: "confirm", version: 1 }, person)
    }))
    expect(String((err as { cause?: unknown }).cause)).toContain("injected")
    expect(await run(config, Effect.flatMap(sqlOf("sales"), counts))).toEqual(before.counts)
    expect(fileHash(file)).toBe(before.hash)
    const succ = await run(config, versions("sales-0002"))
    expect(succ.map((v) => v.status)).toEqual(["proposed"])
  })

  it("refuses a predecessor that is not confirmed (reference-unknown) and a successor starting before it (validation-failed)", async () => {
    await run(config, propose(manualProposal("Another rule that supersedes a proposal", { supersedes: null }), agent))
    const e1 = await runFail(config, decide("sales-0002", { decision: "confirm", version: 1, change: { supersedes: "sales-0001" } }, person))
    expect(e1._tag).toBe("ReferenceUnknown")
    await run(config, decide("sales-0001", { decision: "confirm", version: 1 }, person))
    const e2 = await runFail(config, decide("sales-0002", { decision: "confirm", version: 1, change: { supersedes: "sales-0001", valid_from: "2026-01-01" } }, person))
    expect(e2._tag).toBe("ValidationFailed")
    const e3 = await runFail(config, decide("sales-0002", { decision: "confirm", version: 1, change: { supersedes: "sales-0002" } }, person))
    expect(e3._tag).toBe("ReferenceUnknown")
  })
})

describe("reject, revoke, review", () => {
  it("reject: version 2 rejected, the rule leaves rule_fts and enters rejected_fts", async () => {
    const r = await run(config, decide("sales-0001", { decision: "reject", version: 1, reason: "not a rule" }, person))
    expect(r.decision).toMatchObject({ kind: "reject", reason: "not a rule", new_version: 2 })
    expect(await run(config, fts("rule_fts"))).toEqual([])
    expect((await run(config, fts("rejected_fts"))).map((x) => x.rowid)).toEqual([1])
    expect((await run(config, versions("sales-0001")))[1]).toMatchObject({ status: "rejected", reason: "not a rule" })
  })

  it("revoke: superseded with valid_until and the reason; valid_until before valid_from is refused", async () => {
    await run(config, decide("sales-0001", { decision: "confirm", version: 1 }, person))
    const bad = await runFail(config, decide("sales-0001", { decision: "revoke", version: 2, reason: "outdated", valid_until: "2026-01-01" }, person))
    expect(bad._tag).toBe("ValidationFailed")
    await run(config, decide("sales-0001", { decision: "revoke", version: 2, reason: "outdated", valid_until: "2026-06-30" }, person))
    expect((await run(config, versions("sales-0001")))[2]).toMatchObject({ status: "superseded", valid_until: "2026-06-30", superseded_by: null, reason: "outdated" })
    expect((await run(config, fts("rule_fts"))).length).toBe(1)
    // a decision on it afterwards names what happened to it: revoked, not "superseded" by a rule it does not have
    const again = await runFail(config, decide("sales-0001", { decision: "review", version: 3 }, person))
    expect(again).toMatchObject({ _tag: "AlreadyDecided", message: "rule sales-0001 is revoked (valid until 2026-06-30)" })
  })

  it("review: without a change only a decision row; with new keywords a new version and FTS; last_reviewed_at follows", async () => {
    await run(config, decide("sales-0001", { decision: "confirm", version: 1 }, person))
    const created = (await run(config, Effect.flatMap(sqlOf("sales"), (sql) => sql<{ created_at: string }>`SELECT created_at FROM rule`)))[0]?.created_at
    const plain = await run(config, decide("sales-0001", { decision: "review", version: 2 }, person))
    expect(plain).toMatchObject({ decision: { kind: "review", new_version: null }, current: "rule/sales-0001@2" })
    const same = await run(config, decide("sales-0001", { decision: "review", version: 2, change: { keywords: ["Lieferzeit", "Hakenleiste"] } }, person))
    expect(same.decision.new_version).toBeNull()
    const changed = await run(config, decide("sales-0001", { decision: "review", version: 2, change: { keywords: ["Lieferzeit", "RAL 9005"] } }, person))
    expect(changed).toMatchObject({ decision: { new_version: 3 }, current: "rule/sales-0001@3" })
    expect((await run(config, fts("rule_fts")))[0]?.keywords).toBe("Lieferzeit RAL 9005")
    const last = await run(config, Effect.flatMap(sqlOf("sales"), (sql) => lastReviewedAt(sql, "sales-0001")))
    expect(last).toBe(changed.decision.decided_at)
    expect(last! > created!).toBe(true)
  })

  it("last_reviewed_at of a rule without a confirm or review is its created_at", async () => {
    const [last, rows] = await run(config, Effect.flatMap(sqlOf("sales"), (sql) =>
      Effect.all([lastReviewedAt(sql, "sales-0001"), sql<{ created_at: string }>`SELECT created_at FROM rule`])))
    expect(last).toBe(rows[0]?.created_at)
  })
})

describe("the check order of §6.4", () => {
  it("source-immutable comes first, even before reason-missing and the schema", async () => {
    for (const field of ["source", "quote", "timestamp_s", "source_link", "link"]) {
      const e = await runFail(config, decide("sales-0099", { decision: "reject", version: 0, change: { [field]: "x" } }, person))
      expect(e._tag).toBe("SourceImmutable")
    }
  })
  it("reason-missing before validation-failed", async () => {
    expect((await runFail(config, decide("sales-0001", { decision: "reject", version: "x", reason: "  " }, person)))._tag).toBe("ReasonMissing")
    expect((await runFail(config, decide("sales-0001", { decision: "revoke", version: 1, valid_until: "2026-01-01" }, person)))._tag).toBe("ReasonMissing")
  })
  it("validation-failed before not-found, naming the path", async () => {
    const e = await runFail(config, decide("sales-0099", { decision: "confirm", version: 1, extra: true }, person))
    expect(e).toMatchObject({ _tag: "ValidationFailed" })
    expect(JSON.stringify(e)).toContain("extra")
  })
  it("not-found for an unknown rule, a rule of an unconfigured scope and a malformed id", async () => {
    for (const id of ["sales-0099", "nowhere-0001", "bad id"]) {
      expect((await runFail(config, decide(id, { decision: "confirm", version: 1 }, person)))._tag).toBe("NotFound")
    }
  })
  it("already-decided on a rejected rule, with current", async () => {
    await run(config, decide("sales-0001", { decision: "reject", version: 1, reason: "no" }, person))
    const e = await runFail(config, decide("sales-0001", { decision: "confirm", version: 1 }, person))
    expect(e).toMatchObject({ _tag: "AlreadyDecided", current: "rule/sales-0001@2" })
  })
  it("version-outdated with current", async () => {
    await run(config, decide("sales-0001", { decision: "confirm", version: 1 }, person))
    const e = await runFail(config, decide("sales-0001", { decision: "review", version: 1 }, person))
    expect(e).toMatchObject({ _tag: "VersionOutdated", current: "rule/sales-0001@2" })
  })
  it("confirm or reject on a confirmed rule is already-decided, with current", async () => {
    await run(config, decide("sales-0001", { decision: "confirm", version: 1 }, person))
    for (const body of [{ decision: "confirm", version: 2 }, { decision: "reject", version: 2, reason: "late" }]) {
      expect(await runFail(config, decide("sales-0001", body, person))).toMatchObject({ _tag: "AlreadyDecided", current: "rule/sales-0001@2" })
    }
  })
  it("revoke or review on a proposal is validation-failed", async () => {
    expect((await runFail(config, decide("sales-0001", { decision: "revoke", version: 1, reason: "x", valid_until: "2026-12-31" }, person)))._tag).toBe("ValidationFailed")
    expect((await runFail(config, decide("sales-0001", { decision: "review", version: 1 }, person)))._tag).toBe("ValidationFailed")
  })
  it("a refused decision leaves the file byte-for-byte as it was", async () => {
    const file = scopeFile(dir, "sales")
    const before = fileHash(file)
    await runFail(config, decide("sales-0001", { decision: "review", version: 1 }, person))
    await runFail(config, decide("sales-0001", { decision: "confirm", version: 7 }, person))
    expect(fileHash(file)).toBe(before)
  })
})
