/**
 * search() with the shipped lexicon on a real scope file: a question none of whose own words
 * occurs in the scope, found only through a weak lexicon expansion, keeps its heads with their
 * coverage (architecture.md §7 step 6a: no default threshold; search.min_coverage is the only
 * relevance threshold). The caller judges them by coverage and found_via; an operator who wants
 * weak heads dropped sets search.min_coverage.
 */
import { randomUUID } from "node:crypto"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import type { SearchRequest } from "../../src/domain/search-schemas.js"
import { search } from "../../src/search/search.js"
import { tempDir } from "../support/env.js"
import { run } from "../support/run.js"
import { lexConfig, ruleReq, seed } from "./lexical/support.js"

let dir: string
let cleanup: () => void
beforeEach(() => {
  ;({ dir, cleanup } = tempDir())
})
afterEach(() => cleanup())

const req = (text: string): SearchRequest => ({ scopes: ["sales"], cross_scope: false, as_of: null, include_proposals: false, limit: 10, text })

const RULES = [
  ruleReq("Pallets move to the second warehouse every Friday", ["warehouse"]),
  ruleReq("Urlaub für den Sommer bis Ende März beim Teamleiter beantragen", ["Urlaub"]),
  ruleReq("Hakenleisten werden in Kartons zu 20 Stück verpackt", ["Verpackung"])
]

describe("an answer found only through weak lexicon expansions", () => {
  it("keeps its heads with their low coverage when no word of the question occurs in the scope (travel → move)", async () => {
    const config = lexConfig(dir)
    const ids = await seed(config, RULES)
    const r = await run(config, search(req("travel expenses per diem Japan"), randomUUID()))
    expect(r.response.query.variants["~travel"]).toContain("move")
    const head = r.response.bundles[0]?.head
    expect(head?.ref).toContain(ids[0])
    expect(head?.found_via).toEqual(["move"])
    expect(head?.coverage).toBeGreaterThan(0)
    expect(head?.coverage).toBeLessThan(0.2)
    expect(r.response.abstained).toBeNull()
  })

  it("is dropped only by a configured search.min_coverage, which says so with the best coverage", async () => {
    const config = lexConfig(dir, { min_coverage: 0.2 })
    const ids = await seed(config, RULES)
    const weak = await run(config, search(req("travel expenses per diem Japan"), randomUUID()))
    expect(weak.response.bundles).toEqual([])
    expect(weak.response.abstained?.reason).toBe("below-min-coverage")
    expect(weak.response.abstained?.best_coverage).toBeGreaterThan(0)
    // a strong expansion alone (Ferien → Urlaub) covers its word: kept
    const holiday = await run(config, search(req("Ferien"), randomUUID()))
    expect(holiday.response.bundles[0]?.head.ref).toContain(ids[1])
  })
})
