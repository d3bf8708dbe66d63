/**
 * The explained rows carried through writes (src/search/lexical/explain.ts): the folded rows a
 * search explained its heads from stay held through a write of this process, except the rows the
 * write rewrote — and every answer equals one read wholly from the file: a rule whose keywords a
 * review changed is explained from its new row, a rejected or superseded one is gone, a redacted
 * word is matched nowhere; a write whose note never arrives (another process) starts them again.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { decide } from "../../src/decision/decide.js"
import type { SearchRequest } from "../../src/domain/search-schemas.js"
import { propose } from "../../src/domain/proposals.js"
import { applyRedaction } from "../../src/redaction/apply.js"
import { previewRedaction } from "../../src/redaction/preview.js"
import { explainRowsRead } from "../../src/search/lexical/explain.js"
import { search } from "../../src/search/search.js"
import { manualProposal } from "../support/fixtures.js"
import { type Stores, sqlOf } from "../support/run.js"
import { agent, answerOf, at, freshAnswer, person, salesRequest, SEARCH_ID, SALES_RULES } from "./cache-support.js"
import { salesScope } from "./cache-scope.js"

const STATEMENTS = SALES_RULES

const TEXT = "Rechnung Skonto Versand Kunden"

const req = (text: string): SearchRequest => salesRequest({ text })

const scope = salesScope(STATEMENTS)

/** A search on the service's connection: its heads, its answer and how many lexical rows it read to explain them. */
const find = async (text = TEXT) => {
  const before = explainRowsRead()
  const r = await scope.service.runPromise(at(search(req(text), SEARCH_ID)))
  const head = (ref: string) => r.response.bundles.find((b) => b.head.ref === ref)?.head
  return {
    heads: r.response.bundles.map((b) => b.head.ref), head, bundles: JSON.stringify(r.response.bundles), answer: answerOf(r),
    rowsRead: explainRowsRead() - before
  }
}
/** the answer of a search that reads everything from the file (no cache) */
const fresh = async (text = TEXT) => freshAnswer(scope.config, req(text))
const write = <A, E>(effect: Effect.Effect<A, E, Stores>) => scope.service.runPromise(at(effect))

describe("explained rows through writes", () => {
  it("a write keeps the rows it did not rewrite; a rewritten, rejected, superseded or redacted rule is explained from the file", async () => {
    const first = await find()
    expect(first.heads).toEqual(expect.arrayContaining(["rule/sales-0001@2", "rule/sales-0004@2"]))
    expect(first.rowsRead).toBeGreaterThan(0)
    expect(first.head("rule/sales-0001@2")?.found_via).not.toContain("versand")

    // a proposal of other words: the heads' rows stay held, none is read again
    await write(propose(manualProposal("Paletten stapelt das Lager höchstens dreifach", { keywords: ["Palette"], relations: [] }), agent))
    const unrelated = await find()
    expect(unrelated.rowsRead).toBe(0)
    expect(unrelated.answer).toEqual(await fresh())

    // a review gives rule 1 the keyword "Versand": its row is read again, and the answer has it
    await write(decide("sales-0001", { decision: "review", version: 2, change: { keywords: ["Rechnung", "Skonto", "Versand"] } }, person))
    const reviewed = await find()
    expect(reviewed.rowsRead).toBeGreaterThan(0)
    expect(reviewed.head("rule/sales-0001@3")?.found_via).toContain("versand")
    expect(reviewed.answer).toEqual(await fresh())

    // a proposal with the words, then rejected: its rows leave the index
    await write(propose(manualProposal("Skonto auf Versand gibt es für Kunden nur bei Vorkasse", { keywords: ["Skonto", "Versand"], relations: [] }), agent))
    expect((await find()).heads).toContain("rule/sales-0006@1")
    await write(decide("sales-0006", { decision: "reject", version: 1, reason: "not a rule" }, person))
    const rejected = await find()
    expect(rejected.heads).not.toContain("rule/sales-0006@1")
    expect(rejected.answer).toEqual(await fresh())

    // rule 4 superseded by a successor without "Kunden"
    await write(Effect.gen(function*() {
      yield* propose(manualProposal("Rechnungen gehen per Post", { keywords: ["Rechnung"], relations: [], supersedes: "sales-0004" }), agent)
      yield* decide("sales-0007", { decision: "confirm", version: 1 }, person)
    }))
    const superseded = await find()
    expect(superseded.heads).not.toContain("rule/sales-0004@2")
    expect(superseded.answer).toEqual(await fresh())

    // the word redacted: no explained row matches it any more
    await write(Effect.gen(function*() {
      const sql = yield* sqlOf("sales")
      const p = yield* previewRedaction(sql, "sales", "Versand")
      yield* applyRedaction(sql, {
        scope: "sales", term: "Versand", reason: "erasure request", preview: p.body.preview, requestedBy: "person:1",
        decidedBy: "dpo@example.com", at: "2026-06-15T12:00:00Z"
      })
    }))
    const redacted = await find()
    expect(redacted.answer).toEqual(await fresh())
    expect(redacted.bundles).not.toMatch(/versand/i)
  })
})
