/**
 * search() with the shipped lexicon on a real scope file: a question none of whose own words
 * occurs in the scope, found only through a weak lexicon expansion, has no candidate (as before
 * the lexicon); one found through a strong expansion, or through one of its own words, keeps its
 * answer.
 */
import { randomUUID } from "node:crypto"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import type { SearchRequest } from "../../src/domain/search-schemas.js"
import { EXPANSION_ONLY_MIN } from "../../src/search/expansion-only.js"
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
  it("has no candidate when no word of the question occurs in the scope and only a weak expansion (travel → move) does", async () => {
    const config = lexConfig(dir)
    await seed(config, RULES)
    const r = await run(config, search(req("travel expenses per diem Japan"), randomUUID()))
    expect(r.response.query.variants["~travel"]).toContain("move")
    expect(r.response.bundles).toEqual([])
    expect(r.response.abstained).toEqual({ reason: "no-candidate", best_coverage: null, min_coverage: 0 })
  })

  it("keeps an answer found through a strong expansion alone (Ferien → Urlaub), or through a word of the question itself", async () => {
    const config = lexConfig(dir)
    const ids = await seed(config, RULES)
    const holiday = await run(config, search(req("Ferien"), randomUUID()))
    expect(holiday.response.bundles[0]?.head.ref).toContain(ids[1])
    expect(holiday.response.bundles[0]?.head.coverage).toBeGreaterThanOrEqual(EXPANSION_ONLY_MIN)
    // the own word "warehouse" matches, with little coverage: kept
    const own = await run(config, search(req("travel expenses per diem Japan warehouse"), randomUUID()))
    expect(own.response.bundles[0]?.head.ref).toContain(ids[0])
    expect(own.response.abstained).toBeNull()
  })
})
