/**
 * Same-relation groups kept under the file's stamp (bundle-groups.ts ruleSetGroups): asked again
 * on one connection, the same groups; a write that adds a rule of the relation changes the next
 * answer on that connection; a group with a stored link is read every time.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { ScopeStore } from "../../src/db/scope-store.js"
import { decide } from "../../src/decision/decide.js"
import type { RuleVersionRow } from "../../src/domain/rules.js"
import { propose } from "../../src/domain/proposals.js"
import { type BundleOptions, buildBundles } from "../../src/search/bundle.js"
import { type Mark, ruleSetGroups } from "../../src/search/bundle-groups.js"
import { tempDir, testConfig } from "../support/env.js"
import { manualProposal } from "../support/fixtures.js"
import { run, sqlOf } from "../support/run.js"

let dir: string
let cleanup: () => void
beforeEach(() => {
  ;({ dir, cleanup } = tempDir())
})
afterEach(() => cleanup())

const agent = { grantId: "person:1", channel: "mcp" as const }
const person = { grantId: "person:2", identity: "anna@example.com" }
const ACME = [{ kind: "supplier" as const, name: "Acme GmbH", ref: null }]
const OPTS: BundleOptions = {
  zone: "Europe/Berlin", recheckAfterDays: 180, nowMs: Date.parse("2026-06-01T10:00:00Z"), targetDay: "2026-06-01", includeProposals: false
}

/** A rule (of the relation, unless told otherwise), proposed and confirmed; its id. */
const confirmedRule = (statement: string, relations: typeof ACME | [] = ACME) =>
  Effect.gen(function*() {
    const created = yield* propose(manualProposal(statement, { relations, valid_from: "2026-01-01" }), agent)
    const id = created.ref.slice("rule/".length, created.ref.indexOf("@"))
    yield* decide(id, { decision: "confirm", version: 1 }, person)
    return id
  })

const headOf = (sql: SqlClient, id: string) =>
  Effect.map(sql<RuleVersionRow>`SELECT * FROM current_version WHERE rule_id = ${id}`, (rows) => rows[0] as RuleVersionRow)

const sameRelation = (sql: SqlClient, id: string) =>
  Effect.gen(function*() {
    const head = yield* headOf(sql, id)
    const [bundle] = yield* sql.withTransaction(buildBundles(sql, [{
      version: head, scope: "sales", rank: { a: null, b: null, rrf: null, reranker: null }, found_via: [], coverage: null, matched_terms: null
    }], OPTS))
    return bundle?.groups.find((g) => g.kind === "same-relation") ?? null
  })

/** The scope sales with two confirmed rules of the relation Acme; its connection and the first rule's id. */
const salesWithTwoAcmeRules = Effect.gen(function*() {
  yield* Effect.flatMap(ScopeStore, (s) => s.create("sales"))
  const sql = yield* sqlOf("sales")
  const first = yield* confirmedRule("Acme liefert montags")
  yield* confirmedRule("Acme liefert nur auf Paletten")
  return { sql, first }
})

describe("same-relation groups under the stamp", () => {
  it("are the same asked again, and a write adding a rule of the relation changes the next answer", async () => {
    await run(testConfig(dir), Effect.gen(function*() {
      const { sql, first } = yield* salesWithTwoAcmeRules
      yield* confirmedRule("Acme gewährt zwei Prozent Skonto")
      // a fourth rule of the relation, proposed (not shown: proposals are not asked for)
      const created = yield* propose(manualProposal("Acme nimmt Retouren binnen 14 Tagen an", { relations: ACME, valid_from: "2026-01-01" }), agent)
      const fourth = created.ref.slice("rule/".length, created.ref.indexOf("@"))
      const before = yield* sameRelation(sql, first)
      expect(before?.count).toBe(2)
      expect(yield* sameRelation(sql, first)).toEqual(before)
      // confirmed on the same connection (a write that runs no search): a new stamp, read by the bundles
      yield* decide(fourth, { decision: "confirm", version: 1 }, person)
      const after = yield* sameRelation(sql, first)
      expect(after?.count).toBe(3)
      expect(after?.entries.map((e) => e.title)).toContain("Acme nimmt Retouren binnen 14 Tagen an")
    }))
  })

  it("a group with a stored link is read again every time (links are not behind the stamp)", async () => {
    await run(testConfig(dir), Effect.gen(function*() {
      const { sql, first } = yield* salesWithTwoAcmeRules
      const third = yield* confirmedRule("Boxen werden gestapelt", [])
      const head = yield* headOf(sql, first)
      const ask = (linked: ReadonlyMap<string, Mark>) =>
        sql.withTransaction(ruleSetGroups(sql, [{ kind: "same-relation", head, relations: ACME, linked }], { targetDay: "2026-06-01", includeProposals: false }))
      expect((yield* ask(new Map()))[0]?.count).toBe(1)
      // the same head and relation with a stored link to a rule of no relation: that rule too, with its mark
      const linked = yield* ask(new Map([[third, { origin: "human", proposed: false }]]))
      expect(linked[0]?.count).toBe(2)
      expect(linked[0]?.entries.find((e) => e.title === "Boxen werden gestapelt")).toMatchObject({ origin: "human", proposed: false })
      expect((yield* ask(new Map()))[0]?.count).toBe(1)
    }))
  })
})
