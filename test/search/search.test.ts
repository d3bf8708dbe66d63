/**
 * search() end to end on real files: validity by dates on the target day, superseded heads
 * followed to their successor, proposals only when asked, rejected never, the relation filter,
 * limit, abstained, cross-scope interleaving; over HTTP the search_log row and feedback.
 */
import { Effect, Schema, TestClock, TestContext } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { ScopeStore } from "../../src/db/scope-store.js"
import { parseRuleRef } from "../../src/contracts/ids.js"
import { decide } from "../../src/decision/decide.js"
import { SearchRequest } from "../../src/domain/search-schemas.js"
import { propose } from "../../src/domain/proposals.js"
import { storeSource } from "../../src/domain/sources.js"
import { createEntity } from "../../src/graph/entities.js"
import { proposeLink } from "../../src/graph/links.js"
import { interleave, search } from "../../src/search/search.js"
import { applyReview } from "../../src/structure/review.js"
import { tempDir, testConfig } from "../support/env.js"
import { mailProposal, mailSource, manualProposal } from "../support/fixtures.js"
import { run } from "../support/run.js"

let dir: string
let cleanup: () => void
let config: ReturnType<typeof testConfig>
const agent = { grantId: "person:1", channel: "mcp" as const }
const person = { grantId: "person:2", identity: "anna@example.com" }

const req = (over: Partial<SearchRequest>): SearchRequest => ({
  scopes: ["sales"], cross_scope: false, as_of: null, include_proposals: false, limit: 10, ...over
})
const heads = (r: { response: { bundles: ReadonlyArray<{ head: { ref: string } }> } }) => r.response.bundles.map((b) => b.head.ref)

/** Runs at 2026-06-15 12:00 UTC (TestClock), so "today" is fixed. */
const at = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(Date.UTC(2026, 5, 15, 12))
    return yield* effect
  }).pipe(Effect.provide(TestContext.TestContext))

beforeEach(async () => {
  ;({ dir, cleanup } = tempDir())
  config = testConfig(dir)
  await run(config, at(Effect.gen(function*() {
    const store = yield* ScopeStore
    yield* store.create("sales")
    yield* store.create("ops")
    yield* storeSource(mailSource(), "service:1")
    // sales-0001: confirmed from 2026-03-12, superseded by sales-0002 from 2026-07-01
    yield* propose(mailProposal(), agent)
    yield* decide("sales-0001", { decision: "confirm", version: 1 }, person)
    yield* propose(manualProposal("From July on ask the supplier for the delivery time by phone", { supersedes: "sales-0001", valid_from: "2026-07-01", keywords: ["Lieferzeit"] }), agent)
    yield* decide("sales-0002", { decision: "confirm", version: 1 }, person)
    // sales-0003: a proposal about the delivery time
    yield* propose(manualProposal("Delivery time questions go to purchasing first", { keywords: ["Lieferzeit"], relations: [] }), agent)
    // sales-0004: rejected
    yield* propose(manualProposal("Delivery time is never asked for at all", { keywords: ["Lieferzeit"], relations: [] }), agent)
    yield* decide("sales-0004", { decision: "reject", version: 1, reason: "wrong" }, person)
    // sales-0005: confirmed, not valid before 2026-09-01
    yield* propose(manualProposal("From September the delivery time is confirmed in writing", { keywords: ["Lieferzeit"], relations: [], valid_from: "2026-09-01" }), agent)
    yield* decide("sales-0005", { decision: "confirm", version: 1 }, person)
    // ops-0001: confirmed in the other scope
    yield* propose(manualProposal("Ops asks the carrier for the delivery time of pallets", { scope: "ops", keywords: ["Lieferzeit"], relations: [] }), agent)
    yield* decide("ops-0001", { decision: "confirm", version: 1 }, person)
  })))
})
afterEach(() => cleanup())

const searchAt = (r: SearchRequest) => run(config, at(search(r, "00000000-0000-4000-8000-000000000000")))

describe("search", () => {
  it("today: the predecessor is still the head (its successor starts in July); proposals, rejected and not-yet-valid rules are not", async () => {
    const r = await searchAt(req({ text: "Lieferzeit" }))
    expect(heads(r)).toEqual(["rule/sales-0001@3"])
    const b = r.response.bundles[0]
    expect(b?.head).toMatchObject({ status: "superseded", superseded_by: "sales-0002", valid_until: "2026-07-01", unconfirmed: false })
    expect(b?.groups.map((g) => g.kind)).toContain("successor")
    expect(r.response.stages).toEqual({
      a: { state: "ran", duration_ms: expect.any(Number), reason: null },
      b: { state: "off", duration_ms: null, reason: "disabled in config" },
      c: { state: "off", duration_ms: null, reason: "disabled in config" }
    })
    expect(r.response.abstained).toBeNull()
  })
  it("as_of after the successor starts follows superseded_by to the successor; a rule not yet valid appears once it is", async () => {
    expect(heads(await searchAt(req({ text: "Lieferzeit", as_of: "2026-07-15" })))).toEqual(["rule/sales-0002@2"])
    const later = heads(await searchAt(req({ text: "Lieferzeit", as_of: "2026-10-01" })))
    expect(later.sort()).toEqual(["rule/sales-0002@2", "rule/sales-0005@2"])
  })
  it("a followed successor: found_via names what matched the hit, coverage and matched_terms are what the head matches (§7.6, §7.6a)", async () => {
    // "hook rails" is in sales-0001's statement only; on 2026-07-15 its head is sales-0002
    const today = (await searchAt(req({ text: "hook rails" }))).response.bundles[0]?.head
    // "haken": the lexicon's translation of "hook" (the rule's keyword Hakenleiste)
    expect(today).toMatchObject({ ref: "rule/sales-0001@3", found_via: ["haken", "hook", "rails"], coverage: 1, matched_terms: 2 })
    const followed = (await searchAt(req({ text: "hook rails", as_of: "2026-07-15" }))).response.bundles[0]?.head
    // the successor says Haken (hook's translation) and neither hook nor rails: "hook" counts only for the
    // translation's weight (one of hook's many senses), so the coverage stays well below half
    expect(followed).toMatchObject({ ref: "rule/sales-0002@2", found_via: ["haken", "hook", "rails"], matched_terms: 1 })
    expect(followed?.coverage).toBeGreaterThan(0)
    expect(followed?.coverage).toBeLessThan(0.5)
    // min_coverage reads the head's coverage: the successor matches less than half of the words and is dropped
    const strict = await run(testConfig(dir, { search: { min_coverage: 0.6 } }),
      at(search(req({ text: "hook rails", as_of: "2026-07-15" }), "00000000-0000-4000-8000-000000000002")))
    expect(strict.response.bundles).toEqual([])
    expect(strict.response.abstained).toEqual({ reason: "below-min-coverage", best_coverage: followed?.coverage, min_coverage: 0.6 })
  })
  it("as_of before the first rule starts finds nothing: abstained no-candidate", async () => {
    const r = await searchAt(req({ text: "Lieferzeit", as_of: "2026-01-01" }))
    expect(r.response.bundles).toEqual([])
    expect(r.response.abstained).toEqual({ reason: "no-candidate", best_coverage: null, min_coverage: 0 })
  })
  it("include_proposals adds proposals with unconfirmed: true; a rejected rule never appears", async () => {
    const r = await searchAt(req({ text: "Lieferzeit", include_proposals: true }))
    expect(heads(r)).toContain("rule/sales-0003@1")
    expect(r.response.bundles.find((b) => b.head.ref === "rule/sales-0003@1")?.head.unconfirmed).toBe(true)
    for (const over of [{}, { include_proposals: true }, { as_of: "2026-10-01" }, { include_proposals: true, as_of: "2026-05-01" }]) {
      expect(heads(await searchAt(req({ text: "never asked delivery time", ...over }))).some((h) => h.startsWith("rule/sales-0004"))).toBe(false)
    }
  })
  it("the relation filter keeps heads with a relation of equal kind and case-insensitive name", async () => {
    expect(heads(await searchAt(req({ text: "Lieferzeit", relation: { kind: "product", name: "HAKENLEISTE SCHWARZ" } })))).toEqual(["rule/sales-0001@3"])
    expect(heads(await searchAt(req({ text: "Lieferzeit", relation: { kind: "customer", name: "Hakenleiste schwarz" } })))).toEqual([])
  })
  it("limit counts bundles", async () => {
    expect(heads(await searchAt(req({ text: "Lieferzeit", include_proposals: true, as_of: "2026-10-01", limit: 1 }))).length).toBe(1)
  })
  it("cross-scope: each scope searched separately, bundles interleaved, terms of all scopes", async () => {
    const r = await searchAt(req({ scopes: ["sales", "ops"], cross_scope: true, text: "Lieferzeit" }))
    expect(heads(r)).toEqual(["rule/sales-0001@3", "rule/ops-0001@2"])
    expect(r.perScope.map((p) => p.scope)).toEqual(["sales", "ops"])
    expect(interleave([["a1", "a2", "a3"], ["b1"], ["c1", "c2"]], 5)).toEqual(["a1", "b1", "c1", "a2", "c2"])
  })
  it("a query with no term (only stopwords) ran stage a with zero bundles", async () => {
    const r = await searchAt(req({ text: "the and of" }))
    expect(r.response.bundles).toEqual([])
    expect(r.response.stages.a.state).toBe("ran")
  })
  it("min_coverage reads the coverage of the first 50 heads, not only of those a limit shows", async () => {
    await run(config, at(Effect.gen(function*() {
      // the first head matches one word (three times); the second both
      const rules: Array<[string, Array<string>]> = [
        ["Gantry gantry gantry inspections are monthly", ["Gantry"]],
        ["The vendor services the crane and the gantry after every long shift in the yard, at the quay and in the depot, and writes a report", []],
        ...["checks", "logs", "keys", "locks", "paint", "oil"].map((w): [string, Array<string>] => [`Crane ${w} are looked at by the day shift`, []])
      ]
      for (const [statement, keywords] of rules) {
        const { ref } = yield* propose(manualProposal(statement, { keywords, relations: [] }), agent)
        yield* decide(parseRuleRef(ref)?.id ?? ref, { decision: "confirm", version: 1 }, person)
      }
    })))
    const all = await searchAt(req({ text: "gantry crane" }))
    const coverages = all.response.bundles.map((b) => b.head.coverage)
    expect(coverages[0]).toBeLessThan(0.99)
    expect(coverages[1]).toBe(1)
    const second = heads(all)[1]
    // with min_coverage 0.99 the second head passes, though limit 1 shows one head
    const strict = await run(testConfig(dir, { search: { min_coverage: 0.99 } }), at(search(req({ text: "gantry crane", limit: 1 }), "00000000-0000-4000-8000-000000000001")))
    expect(heads(strict)).toEqual([second])
  })
})

describe("the entity filter (graph.md §11, G8)", () => {
  const MCP = { grantId: "person:1", channel: "mcp" as const }
  let tree: { vertrieb: string; nord: string; einkauf: string }

  const link = (ruleId: string, entityId: string, confidence: number) =>
    Effect.map(proposeLink({
      scope: "sales", from_ref: `rule/${ruleId}`, to_ref: `entity/${entityId}`, type: "concerns", confidence, reason: "the mail names it"
    }, { grantId: "person:1" }), (r) => r.link.id ?? "")
  const review = (linkId: string, verdict: "confirm" | "reject") =>
    applyReview({ target: `link/${linkId}`, verdict, ...(verdict === "reject" ? { reason: "not about this" } : {}) }, person)

  beforeEach(async () => {
    tree = await run(config, at(Effect.gen(function*() {
      const entity = (name: string, type: string, parent: string | null) =>
        Effect.map(createEntity({ scope: "sales", type, name, parent_id: parent }, MCP), (a) => a.id)
      const vertrieb = yield* entity("Vertrieb", "department", null)
      const nord = yield* entity("Nord", "department", vertrieb)
      const einkauf = yield* entity("Einkauf", "department", null)
      return { vertrieb, nord, einkauf }
    })))
  })

  it("keeps heads with a counted link to the entity or one of its ancestors; a link to an entity below it does not pass", async () => {
    const l = await run(config, at(link("sales-0001", tree.vertrieb, 0.9)))
    // proposed and not confirmed: it does not count yet
    expect(heads(await searchAt(req({ text: "Lieferzeit", entity: tree.vertrieb })))).toEqual([])
    await run(config, at(review(l, "confirm")))
    expect(heads(await searchAt(req({ text: "Lieferzeit", entity: tree.vertrieb })))).toEqual(["rule/sales-0001@3"])
    // Nord lies under Vertrieb: a rule filed at Vertrieb applies to Nord
    const fromAncestor = await searchAt(req({ text: "Lieferzeit", entity: tree.nord }))
    expect(heads(fromAncestor)).toEqual(["rule/sales-0001@3"])
    expect(fromAncestor.response.bundles[0]?.head.entities.map((e) => e.ref)).toEqual([`entity/${tree.vertrieb}`])
    expect(fromAncestor.response.bundles[0]?.line).toContain(", 1 entity, superseded by sales-0002; ")
    const unrelated = await searchAt(req({ text: "Lieferzeit", entity: tree.einkauf }))
    expect(heads(unrelated)).toEqual([])
    expect(unrelated.response.abstained).toEqual({ reason: "no-candidate", best_coverage: null, min_coverage: 0 })
    // sales-0002 (the head from July on) is linked to Nord only: found under Nord, not under its ancestor Vertrieb
    await run(config, at(Effect.flatMap(link("sales-0002", tree.nord, 0.9), (id) => review(id, "confirm"))))
    expect(heads(await searchAt(req({ text: "Lieferzeit", as_of: "2026-07-15", entity: tree.nord })))).toEqual(["rule/sales-0002@2"])
    expect(heads(await searchAt(req({ text: "Lieferzeit", as_of: "2026-07-15", entity: tree.vertrieb })))).toEqual([])
    // links open on the target day only: before the link was written it does not count
    expect(heads(await searchAt(req({ text: "Lieferzeit", as_of: "2026-06-14", entity: tree.nord })))).toEqual([])
  })

  it("G5: an unreviewed proposed link counts at the configured confidence; a rejected one never", async () => {
    const l = await run(config, at(link("sales-0001", tree.einkauf, 0.6)))
    const withMin = (min: number) => testConfig(dir, { graph: { proposed_min_confidence: min } })
    const searchWith = (c: ReturnType<typeof testConfig>) =>
      run(c, at(search(req({ text: "Lieferzeit", entity: tree.einkauf }), "00000000-0000-4000-8000-000000000000")))
    expect(heads(await searchWith(config))).toEqual([])
    expect(heads(await searchWith(withMin(0.61)))).toEqual([])
    const found = await searchWith(withMin(0.6))
    expect(heads(found)).toEqual(["rule/sales-0001@3"])
    expect(found.response.bundles[0]?.head.entities).toEqual([{
      ref: `entity/${tree.einkauf}`, name: "Einkauf", type: "department",
      path: [{ ref: `entity/${tree.einkauf}`, name: "Einkauf", type: "department" }], proposed: true
    }])
    expect(found.response.bundles[0]?.line).toContain(", 1 entity, superseded by sales-0002 (of which 1 proposed); ")
    await run(config, at(review(l, "reject")))
    expect(heads(await searchWith(withMin(0)))).toEqual([])
  })

  it("an unknown entity of the scope has no links: no head passes; another scope or several scopes are refused by the schema (400)", async () => {
    await run(config, at(Effect.flatMap(link("sales-0001", tree.nord, 0.9), (id) => review(id, "confirm"))))
    const unknown = await searchAt(req({ text: "Lieferzeit", entity: "sales-e0099" }))
    expect(heads(unknown)).toEqual([])
    expect(unknown.response.abstained).toEqual({ reason: "no-candidate", best_coverage: null, min_coverage: 0 })
    const decode = Schema.decodeUnknownEither(SearchRequest)
    expect(decode({ scopes: ["sales"], text: "x", entity: tree.nord })._tag).toBe("Right")
    expect(decode({ scopes: ["sales"], text: "x", entity: "ops-e0001" })._tag).toBe("Left")
    expect(decode({ scopes: ["sales", "ops"], cross_scope: true, text: "x", entity: tree.nord })._tag).toBe("Left")
    expect(decode({ scopes: ["sales"], text: "x", entity: "sales-0001" })._tag).toBe("Left")
  })
})
