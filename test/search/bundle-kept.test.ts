/**
 * Bundles kept under the file's stamps (bundle.ts buildBundles with keep): a head shown again by
 * another question gets the bundle the file gives, with this question's rank, found_via, coverage
 * and matched_terms; a write to a table the bundle reads (a decision, a link) and a new day each
 * give the bundle read from the file again.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { dayIn } from "../../src/contracts/time.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { decide } from "../../src/decision/decide.js"
import type { RuleVersionRow } from "../../src/domain/rules.js"
import { propose } from "../../src/domain/proposals.js"
import { storeSource } from "../../src/domain/sources.js"
import { createEntity } from "../../src/graph/entities.js"
import { proposeLink } from "../../src/graph/links.js"
import { type BundleOptions, buildBundles, type HeadInput } from "../../src/search/bundle.js"
import { tempDir, testConfig } from "../support/env.js"
import { mailProposal, mailSource, manualProposal } from "../support/fixtures.js"
import { run, sqlOf } from "../support/run.js"

let dir: string
let cleanup: () => void
beforeEach(() => {
  ;({ dir, cleanup } = tempDir())
})
afterEach(() => cleanup())

const agent = { grantId: "person:1", channel: "mcp" as const }
const person = { grantId: "person:2", identity: "anna@example.com" }
const ZONE = "Europe/Berlin"
/** a day after the writes (they run on the real clock) */
const NOW = Date.now() + 86_400_000
const OPTS: BundleOptions = { zone: ZONE, recheckAfterDays: 180, nowMs: NOW, targetDay: dayIn(ZONE, NOW), includeProposals: false, minConfidence: 0.5 }

const idOf = (ref: string) => ref.slice("rule/".length, ref.indexOf("@"))

const confirmed = (proposal: Parameters<typeof propose>[0]) =>
  Effect.gen(function*() {
    const id = idOf((yield* propose(proposal, agent)).ref)
    yield* decide(id, { decision: "confirm", version: 1 }, person)
    return id
  })

/** The heads as a search would hand them over: the current version, and how the question found it. */
const inputsOf = (sql: SqlClient, ids: ReadonlyArray<string>, word: string) =>
  Effect.map(sql<RuleVersionRow>`SELECT * FROM current_version WHERE rule_id IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`, (rows) =>
    ids.map((id, i): HeadInput => ({
      version: rows.find((r) => r.rule_id === id) as RuleVersionRow,
      scope: "sales",
      rank: { a: 1 - i / 10, b: null, rrf: null, reranker: null },
      found_via: [word],
      coverage: 0.5 + i / 100,
      matched_terms: 1
    })))

/** The bundles kept (keep) and read from the file, each in a read transaction of its own. */
const both = (sql: SqlClient, inputs: ReadonlyArray<HeadInput>, opts: BundleOptions = OPTS) =>
  Effect.gen(function*() {
    const kept = yield* sql.withTransaction(buildBundles(sql, inputs, { ...opts, keep: true }))
    const read = yield* sql.withTransaction(buildBundles(sql, inputs, opts))
    return { kept, read }
  })

/** The scope sales: a mail, a rule quoting it, a rule of own words; its connection and the rules' ids. */
const sales = Effect.gen(function*() {
  yield* Effect.flatMap(ScopeStore, (s) => s.create("sales"))
  const sql = yield* sqlOf("sales")
  yield* storeSource(mailSource(), "feeder:1")
  const mail = yield* confirmed(mailProposal())
  const own = yield* confirmed(manualProposal("Boxes are stacked on pallets before shipping", { valid_from: "2026-01-01" }))
  return { sql, mail, own }
})

describe("bundles kept under the stamps", () => {
  it("a head shown again by another question: the file's bundle with this question's finding, its groups not read again", async () => {
    await run(testConfig(dir), Effect.gen(function*() {
      const { sql, mail, own } = yield* sales
      const first = yield* both(sql, yield* inputsOf(sql, [mail, own], "hook"))
      expect(JSON.stringify(first.kept)).toBe(JSON.stringify(first.read))
      // another question: the same two heads in the other order, found through another word
      const second = yield* both(sql, yield* inputsOf(sql, [own, mail], "rails"))
      expect(JSON.stringify(second.kept)).toBe(JSON.stringify(second.read))
      expect(second.kept.map((b) => b.head.found_via)).toEqual([["rails"], ["rails"]])
      expect(second.kept[1]?.head.rank.a).toBe(0.9)
      // kept: the groups are the objects the first question read, not read again
      expect(second.kept[1]?.groups).toBe(first.kept[0]?.groups)
      expect(second.kept[1]?.groups.length).toBeGreaterThan(0)
    }))
  })

  it("a decision or a link written since gives the bundle read from the file again", async () => {
    await run(testConfig(dir), Effect.gen(function*() {
      const { sql, mail, own } = yield* sales
      const before = yield* both(sql, yield* inputsOf(sql, [mail, own], "hook"))
      expect(before.kept[0]?.head.entities).toEqual([])
      // a link of the head to a new entity (counted: confidence ≥ minConfidence)
      const acme = (yield* createEntity({ scope: "sales", type: "organisation", name: "Acme", parent_id: null }, agent)).id
      yield* proposeLink({ scope: "sales", from_ref: `rule/${mail}`, to_ref: `entity/${acme}`, type: "concerns", confidence: 0.9, reason: "orders from Acme" }, agent)
      const linked = yield* both(sql, yield* inputsOf(sql, [mail, own], "hook"))
      expect(JSON.stringify(linked.kept)).toBe(JSON.stringify(linked.read))
      expect(linked.kept[0]?.head.entities.map((e) => e.name)).toEqual(["Acme"])
      expect(linked.kept[0]?.groups.map((g) => g.kind)).toContain("entity")
      // a review: last_reviewed_at moves
      yield* decide(own, { decision: "review", version: 2 }, person)
      const reviewed = yield* both(sql, yield* inputsOf(sql, [mail, own], "hook"))
      expect(JSON.stringify(reviewed.kept)).toBe(JSON.stringify(reviewed.read))
      expect(reviewed.kept[1]?.head.last_reviewed_at).not.toBe(before.kept[1]?.head.last_reviewed_at)
    }))
  })

  it("on another day the ages count to that day", async () => {
    await run(testConfig(dir), Effect.gen(function*() {
      const { sql, mail } = yield* sales
      const inputs = yield* inputsOf(sql, [mail], "hook")
      const today = yield* both(sql, inputs)
      const later = yield* both(sql, inputs, { ...OPTS, nowMs: NOW + 3 * 86_400_000 })
      expect(JSON.stringify(later.kept)).toBe(JSON.stringify(later.read))
      expect(later.kept[0]?.head.age_days).toBe((today.kept[0]?.head.age_days ?? 0) + 3)
    }))
  })
})
