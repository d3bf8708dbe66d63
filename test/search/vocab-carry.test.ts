/**
 * The vocabulary carried through a write (src/search/lexical/stamp-cache.ts noteIndexChange and
 * carryPart, vocab.ts): a write of this process that changes some rules' rows keeps on every
 * connection what the changed words cannot have changed and drops the rest. A word the write
 * brings is found by the next search, a word it removes is gone from it, and every answer equals
 * one read wholly from the file; a word the write did not touch is still held, not read again. So
 * is whether a lexicon expansion's words occur (lexicon-expand.ts, kept per connection).
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { decide } from "../../src/decision/decide.js"
import { propose } from "../../src/domain/proposals.js"
import { refreshStampCache } from "../../src/search/lexical/stamp-cache.js"
import { matchCountsFromHeldRows } from "../../src/search/lexical/phrases.js"
import { heldFrequency, heldPrefix, ruleCountsReadFromFile, typoListsReadWhole, vocabularyHas } from "../../src/search/lexical/vocab.js"
import { search } from "../../src/search/search.js"
import { manualProposal } from "../support/fixtures.js"
import { run, sqlOf } from "../support/run.js"
import { agent, answerOf, at, freshAnswer, person, salesRequest, SEARCH_ID, SALES_RULES } from "./cache-support.js"
import { salesScope } from "./cache-scope.js"

const STATEMENTS = SALES_RULES.slice(0, 3)

const req = salesRequest

const scope = salesScope(STATEMENTS)

const find = async (text: string) => {
  const r = await scope.service.runPromise(at(search(req({ text }), SEARCH_ID)))
  return { heads: r.response.bundles.map((b) => b.head.ref), variants: r.response.query.variants, answer: answerOf(r) }
}
/** the answer of a search that reads everything from the file (no cache) */
const fresh = async (text: string) =>
  freshAnswer(scope.config, req({ text }))
/** What the connection holds of each word after it read the file's stamp (nothing else read). */
const held = (...words: ReadonlyArray<string>) =>
  scope.service.runPromise(Effect.gen(function*() {
    const sql = yield* sqlOf("sales")
    yield* sql.withTransaction(refreshStampCache(sql))
    return words.map((w) => heldFrequency(sql, "lex_word_vocab", w))
  }))

describe("the vocabulary through a write of this process", () => {
  it("a new word is found and a removed one is gone; the words the write did not touch stay held", async () => {
    const before = await find("Zaunpfahl Rechnung")
    expect(before.heads).toContain("rule/sales-0001@2")
    const [rechnung] = await held("rechnung", "zaunpfahl")
    expect(rechnung).toBe(1)
    expect(await held("zaunpfahl")).toEqual([0])

    // a proposal with the new word, on the same connection
    await scope.service.runPromise(at(propose(manualProposal("Zaunpfähle liefert der Hersteller frei Baustelle", { keywords: ["Zaunpfahl"], relations: [] }), agent)))
    // carried: the untouched word is still held; the new word's 0 is gone (dropped, or read again by the proposal's duplicate check)
    const [stillHeld, added0] = await held("rechnung", "zaunpfahl")
    expect(stillHeld).toBe(1)
    expect(added0).not.toBe(0)
    const added = await find("Zaunpfahl Rechnung")
    expect(added.heads).toContain("rule/sales-0004@1")
    expect(added.answer).toEqual(await fresh("Zaunpfahl Rechnung"))
    expect(await held("zaunpfahl")).toEqual([1])

    // rejected: its rows leave the index, and the word with them
    await scope.service.runPromise(at(decide("sales-0004", { decision: "reject", version: 1, reason: "not a rule" }, person)))
    const [heldAfter, removed1] = await held("rechnung", "zaunpfahl")
    expect(heldAfter).toBe(1)
    expect(removed1).not.toBe(1)
    const removed = await find("Zaunpfahl Rechnung")
    expect(removed.heads).not.toContain("rule/sales-0004@1")
    expect(removed.answer).toEqual(await fresh("Zaunpfahl Rechnung"))
    expect(removed.answer).toEqual(before.answer)
    expect(await held("zaunpfahl")).toEqual([0])
  })

  it("a word the write takes out of a rule that stays indexed is gone from the next answer", async () => {
    expect((await find("Skonto")).heads).toContain("rule/sales-0001@2")
    expect(await held("skonto")).toEqual([1])
    // a successor without the word supersedes rule 1 from today on
    await scope.service.runPromise(at(Effect.gen(function*() {
      yield* propose(manualProposal("Rechnungen werden innerhalb von zehn Tagen bezahlt", {
        keywords: ["Rechnung"], relations: [], supersedes: "sales-0001"
      }), agent)
      yield* decide("sales-0004", { decision: "confirm", version: 1 }, person)
    })))
    const after = await find("Skonto")
    expect(after.answer).toEqual(await fresh("Skonto"))
    expect(after.heads).not.toContain("rule/sales-0001@2")
  })
})

describe("the starts of words through a write of this process", () => {
  /** Whether words of the vocabulary start with each prefix (read once, then held), and what the connection holds of them after. */
  const starts = (...prefixes: ReadonlyArray<string>) =>
    scope.service.runPromise(Effect.gen(function*() {
      const sql = yield* sqlOf("sales")
      return yield* sql.withTransaction(Effect.gen(function*() {
        yield* refreshStampCache(sql)
        const held = prefixes.map((p) => heldPrefix(sql, p))
        const has = yield* vocabularyHas(sql, [], prefixes)
        return { held, has: prefixes.map((p) => has.prefixes.has(p)) }
      }))
    }))

  it("a start of a word a new rule holds is known at once; a start of a word a rule took out is asked again", async () => {
    expect(await starts("zaunpf", "rechn")).toEqual({ held: [undefined, undefined], has: [false, true] })
    expect((await starts("zaunpf", "rechn")).held).toEqual([false, true])
    await scope.service.runPromise(at(propose(manualProposal("Zaunpfähle liefert der Hersteller frei Baustelle", { keywords: ["Zaunpfahl"], relations: [] }), agent)))
    // the new rule's rows hold zaunpfahl: its starts are known without a read; the untouched one still held
    expect(await starts("zaunpf", "rechn")).toEqual({ held: [true, true], has: [true, true] })
    // rejected: the rows leave the index; whether another word starts so is asked of the file again
    await scope.service.runPromise(at(decide("sales-0004", { decision: "reject", version: 1, reason: "not a rule" }, person)))
    expect(await starts("zaunpf", "rechn")).toEqual({ held: [undefined, true], has: [false, true] })
  })
})

describe("the lexicon's expansions through a write of this process", () => {
  it("an expansion whose word a write brings is searched at once; one whose word a write takes away is gone", async () => {
    // Urlaub's synonym Ferien (shipped lexicon): no rule holds it, so it is no expansion
    const before = await find("Urlaub")
    expect(before.variants["~urlaub"] ?? []).not.toContain("ferien")
    expect(before.answer).toEqual(await fresh("Urlaub"))
    await scope.service.runPromise(at(propose(manualProposal("In den Ferien der Berufsschule arbeiten Auszubildende ganztags", { keywords: ["Ausbildung"], relations: [] }), agent)))
    const added = await find("Urlaub")
    expect(added.variants["~urlaub"]).toContain("ferien")
    expect(added.heads).toContain("rule/sales-0004@1")
    expect(added.answer).toEqual(await fresh("Urlaub"))
    // rejected: its rows leave the index, and the expansion with them
    await scope.service.runPromise(at(decide("sales-0004", { decision: "reject", version: 1, reason: "not a rule" }, person)))
    const removed = await find("Urlaub")
    expect(removed.variants["~urlaub"] ?? []).not.toContain("ferien")
    expect(removed.answer).toEqual(await fresh("Urlaub"))
    expect(removed.answer).toEqual(before.answer)
  })
})

describe("document frequencies through a write of this process", () => {
  it("move by the rewritten rule's rows, not read again: each step held as the file counts it", async () => {
    const text = "Zahlungseingang Rechnung"
    expect((await find(text)).answer).toEqual(await fresh(text))
    const [rechnung, eingang] = await held("rechnung", "zahlungseingang")
    expect(rechnung).toBe(1)
    expect(eingang).toBe(0)
    // each write alone (its note read by the next refresh, no search between): the words of the
    // rewritten rule move by one, the others stay
    await scope.service.runPromise(at(propose(manualProposal("Den Zahlungseingang jeder Rechnung bucht die Buchhaltung", {
      keywords: ["Zahlungseingang"], relations: []
    }), agent)))
    expect(await held("rechnung", "zahlungseingang")).toEqual([2, 1])
    await scope.service.runPromise(at(decide("sales-0004", { decision: "confirm", version: 1 }, person)))
    expect(await held("rechnung", "zahlungseingang")).toEqual([2, 1])
    const confirmed = await find(text)
    expect(confirmed.heads).toContain("rule/sales-0004@2")
    expect(confirmed.answer).toEqual(await fresh(text))
    // another rule with the word, then rejected: its rows leave the index
    await scope.service.runPromise(at(propose(manualProposal("Jede Rechnung trägt die Bestellnummer", { keywords: ["Rechnung"], relations: [] }), agent)))
    expect(await held("rechnung", "zahlungseingang")).toEqual([3, 1])
    await scope.service.runPromise(at(decide("sales-0005", { decision: "reject", version: 1, reason: "not a rule" }, person)))
    expect(await held("rechnung", "zahlungseingang")).toEqual([2, 1])
    expect((await find(text)).answer).toEqual(await fresh(text))
  })
})

describe("typo candidates through a write of this process", () => {
  it("a word near a typo that a write brings is a correction at once; a far one keeps the list held; a rejected one is gone", async () => {
    const typo = "Skontp Rechnung"
    const before = await find(typo)
    expect(before.answer).toEqual(await fresh(typo))
    expect(before.variants["skontp"]).toContain("skonto")

    // a rule with a word of the same first letter, far from the typo: the typo's list and candidates stay held
    await scope.service.runPromise(at(propose(manualProposal("Speditionen holen montags ab", { keywords: ["Spedition"], relations: [] }), agent)))
    const read0 = typoListsReadWhole()
    const far = await find(typo)
    expect(typoListsReadWhole() - read0).toBe(0)
    expect(far.answer).toEqual(await fresh(typo))

    // a rule with "Skonti", one edit from the typo: a correction now, the list brought up to date without reading it whole
    await scope.service.runPromise(at(propose(manualProposal("Skonti gewährt der Einkauf nur auf Rechnungen über tausend Euro", { keywords: ["Skonti"], relations: [] }), agent)))
    const read1 = typoListsReadWhole()
    const near = await find(typo)
    expect(typoListsReadWhole() - read1).toBe(0)
    expect(near.variants["skontp"]).toContain("skonti")
    expect(near.answer).toEqual(await fresh(typo))

    // rejected: the word leaves the vocabulary and the corrections
    await scope.service.runPromise(at(decide("sales-0005", { decision: "reject", version: 1, reason: "not a rule" }, person)))
    const gone = await find(typo)
    expect(gone.variants["skontp"]).not.toContain("skonti")
    expect(gone.answer).toEqual(await fresh(typo))
  })
})

describe("the rule counts of term weights through a write of this process", () => {
  it("move by the rewritten rule's rows, not read again: a confirmed and a rejected rule count as the file does", async () => {
    // the weights of a question of several words: each word's rule count
    const text = "Rechnung Skonto Lieferzeit"
    await scope.service.runPromise(at(Effect.gen(function*() {
      yield* propose(manualProposal("Skonto auf Rechnungen gibt es nur bei Lastschrift", { keywords: ["Skonto"], relations: [] }), agent)
      yield* propose(manualProposal("Die Lieferzeit der Rechnungen mit Skonto prüft der Einkauf", { keywords: ["Lieferzeit"], relations: [] }), agent)
    })))
    const before = await find(text)
    expect(before.heads).toEqual(expect.arrayContaining(["rule/sales-0004@1", "rule/sales-0005@1"]))
    expect(before.answer).toEqual(await fresh(text))

    // confirmed: the same words in rewritten rows; rejected: its rows leave the index
    for (const [id, decision] of [["sales-0004", { decision: "confirm", version: 1 }], ["sales-0005", { decision: "reject", version: 1, reason: "not a rule" }]] as const) {
      const read0 = ruleCountsReadFromFile()
      await scope.service.runPromise(at(decide(id, decision, person)))
      const after = await find(text)
      expect(ruleCountsReadFromFile() - read0).toBe(0)
      expect(after.answer).toEqual(await fresh(text))
    }
    const end = await find(text)
    expect(end.heads).toContain("rule/sales-0004@2")
    expect(end.heads.filter((h) => h.startsWith("rule/sales-0005"))).toEqual([])

    // two writes of one rule on another connection of this process before the next search (a chain
    // of notes): proposed, then rejected — its row before the first and after the last are both none
    await run(scope.config, at(Effect.gen(function*() {
      yield* propose(manualProposal("Skonto auf Lieferzeit-Rechnungen gibt der Einkauf", { keywords: ["Skonto"], relations: [] }), agent)
      yield* decide("sales-0006", { decision: "reject", version: 1, reason: "not a rule" }, person)
    })))
    const read0 = ruleCountsReadFromFile()
    const chained = await find(text)
    expect(ruleCountsReadFromFile() - read0).toBe(0)
    expect(chained.answer).toEqual(await fresh(text))
    expect(chained.answer).toEqual(end.answer)
  })

  it("a question's counts come from the phrase rows its pool holds, as FTS5 counts them: none read from the file", async () => {
    // the business words asked once (FTS5 answers; their phrases seen), then with a word no question
    // asked: the pool reads every phrase's rows, and the new word's rule count is the union of its phrases' rows
    await find("Rechnungen Einkauf")
    const text = "Rechnungen Einkauf Lastschrift"
    const read0 = ruleCountsReadFromFile()
    const held0 = matchCountsFromHeldRows()
    const got = await find(text)
    expect(ruleCountsReadFromFile() - read0).toBe(0)
    expect(matchCountsFromHeldRows() - held0).toBeGreaterThanOrEqual(1)
    expect(got.answer).toEqual(await fresh(text))
  })

  it("a count of stems (a word the rules hold only inside compounds) moves as well", async () => {
    // "Leisten": no rule holds the word, the stem sub-query finds "Hakenleisten" by its tail
    const text = "Leisten Rechnung"
    const before = await find(text)
    expect(before.heads).toContain("rule/sales-0002@2")
    expect(before.answer).toEqual(await fresh(text))

    // another connection of this process proposes a rule with another compound of the same tail
    await run(scope.config, at(propose(manualProposal("Fußleisten liefert der Schreiner mit Rechnung", { keywords: ["Fußleiste"], relations: [] }), agent)))
    const read0 = ruleCountsReadFromFile()
    const after = await find(text)
    expect(ruleCountsReadFromFile() - read0).toBe(0)
    expect(after.heads).toContain("rule/sales-0004@1")
    expect(after.answer).toEqual(await fresh(text))
  })
})
