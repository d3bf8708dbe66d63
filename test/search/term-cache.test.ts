/**
 * A word's analysis kept under the index stamp (src/search/lexical/query.ts): a later question
 * with the same word does not analyse it again, and a write of this process carries it only for
 * the words it did not touch — a word the write brings is known to the next search (its typo
 * correction gone), a word the write takes away is unknown again (corrected again); every answer
 * equals one read wholly from the file.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { decide } from "../../src/decision/decide.js"
import type { SearchRequest } from "../../src/domain/search-schemas.js"
import { propose } from "../../src/domain/proposals.js"
import { heldTermCount, heldTermTexts, termsAnalysedCount } from "../../src/search/lexical/query.js"
import { refreshStampCache } from "../../src/search/lexical/stamp-cache.js"
import { search } from "../../src/search/search.js"
import { manualProposal } from "../support/fixtures.js"
import { sqlOf } from "../support/run.js"
import { agent, answerOf, at, freshAnswer, person, salesRequest, SEARCH_ID, SALES_RULES } from "./cache-support.js"
import { salesScope } from "./cache-scope.js"

const STATEMENTS = SALES_RULES.slice(0, 3)

const req = (text: string): SearchRequest => salesRequest({ text })

const scope = salesScope(STATEMENTS)

const find = async (text: string) => {
  const r = await scope.service.runPromise(at(search(req(text), SEARCH_ID)))
  return { heads: r.response.bundles.map((b) => b.head.ref), variants: r.response.query.variants, answer: answerOf(r) }
}
/** the answer of a search that reads everything from the file (no cache) */
const fresh = async (text: string) =>
  freshAnswer(scope.config, req(text))
const heldTerms = () => scope.service.runPromise(Effect.map(sqlOf("sales"), (sql) => heldTermCount(sql)))
/** The terms the connection holds after it read the file's stamp (carried through a write of this process, or started empty). */
const heldTexts = () =>
  scope.service.runPromise(Effect.gen(function*() {
    const sql = yield* sqlOf("sales")
    yield* sql.withTransaction(refreshStampCache(sql))
    return heldTermTexts(sql)
  }))

describe("a word's analysis kept under the stamp", () => {
  it("a later question with the same word does not analyse it again", async () => {
    const first = await find("Rechnug Skonto")
    expect(first.variants["rechnug"]).toContain("rechnung")
    const count = await heldTerms()
    expect(count).toBe(2)
    // the same typo beside another word: only the other word is analysed
    const second = await find("Rechnug Lieferzeit")
    expect(await heldTerms()).toBe(3)
    expect(second.answer).toEqual(await fresh("Rechnug Lieferzeit"))
    expect(second.heads).toEqual(expect.arrayContaining(["rule/sales-0001@2", "rule/sales-0002@2"]))
  })

  it("a word a write brings is known to the next search; a word it takes away is corrected again", async () => {
    const before = await find("Rechnug Skonto")
    expect(before.variants["rechnug"]).toContain("rechnung")
    expect(before.answer).toEqual(await fresh("Rechnug Skonto"))

    expect(await heldTexts()).toEqual(expect.arrayContaining(["rechnug", "skonto"]))
    // a proposal that holds the word itself: it is known now, no typo of "Rechnung" any more
    await scope.service.runPromise(at(propose(manualProposal("Die Rechnug der Spedition prüft der Einkauf", { keywords: ["Rechnug"], relations: [] }), agent)))
    // carried through the write: the word it did not touch stays analysed
    expect(await heldTexts()).toContain("skonto")
    const added = await find("Rechnug Skonto")
    expect(added.variants["rechnug"]).not.toContain("rechnung")
    expect(added.heads).toContain("rule/sales-0004@1")
    expect(added.answer).toEqual(await fresh("Rechnug Skonto"))

    // rejected: its rows leave the index, and the word with them: corrected again
    await scope.service.runPromise(at(decide("sales-0004", { decision: "reject", version: 1, reason: "not a rule" }, person)))
    const removed = await find("Rechnug Skonto")
    expect(removed.variants["rechnug"]).toContain("rechnung")
    expect(removed.heads).not.toContain("rule/sales-0004@1")
    expect(removed.answer).toEqual(await fresh("Rechnug Skonto"))
    expect(removed.answer).toEqual(before.answer)
  })
})

describe("a word's analysis through a write of this process", () => {
  // known words (kunde: its stem "kund" is the write's "Kunden"'s; lieferzeit, zahlungsziele: untouched) and
  // typos (skontp: a typo of "s", the first letter of the write's "said"; lieferzeiz: of "l", untouched)
  const text = "Kunde Lieferzeit Lieferzeiz Skontp Zahlungsziele"

  it("drops exactly the terms whose forms, stems or typo candidates the write touched; the next search answers as the file does", async () => {
    const before = await find(text)
    expect(before.answer).toEqual(await fresh(text))
    expect(await heldTexts()).toEqual(expect.arrayContaining(["kunde", "lieferzeit", "lieferzeiz", "skontp", "zahlungsziele"]))

    await scope.service.runPromise(at(propose(manualProposal("Kunden holen ihre Ware montags ab", { keywords: ["Abholung"], relations: [] }), agent)))
    const kept = await heldTexts()
    expect(kept).toEqual(expect.arrayContaining(["lieferzeit", "lieferzeiz", "zahlungsziele"]))
    expect(kept).not.toContain("kunde")
    expect(kept).not.toContain("skontp")
    const analysed0 = termsAnalysedCount()
    const after = await find(text)
    // only the two dropped terms are analysed again
    expect(termsAnalysedCount() - analysed0).toBe(2)
    expect(after.answer).toEqual(await fresh(text))

    // a word one edit from the typo: its corrections change with the write, though none of its forms is touched
    await scope.service.runPromise(at(propose(manualProposal("Skonti gewährt der Einkauf nur auf Rechnungen über tausend Euro", { keywords: ["Skonti"], relations: [] }), agent)))
    const near = await find(text)
    expect(near.variants["skontp"]).toContain("skonti")
    expect(near.answer).toEqual(await fresh(text))
  })
})
