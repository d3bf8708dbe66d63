/**
 * The phrase rows carried through writes (src/search/lexical/phrases.ts, bm25.ts): a search of
 * words asked before keeps its phrases' rows through a write of this process and brings them up to
 * date instead of reading them again — and answers exactly what a search reading everything from
 * the file answers: a new rule with the words is found, a rejected, superseded or redacted one is
 * gone; a write whose note never arrives (another process: the CLI) starts the rows again.
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { decide } from "../../src/decision/decide.js"
import type { SearchRequest } from "../../src/domain/search-schemas.js"
import { propose } from "../../src/domain/proposals.js"
import { applyRedaction } from "../../src/redaction/apply.js"
import { previewRedaction } from "../../src/redaction/preview.js"
import { phraseTouchesFound, phrasesCarried, phrasesReadWhole } from "../../src/search/lexical/phrases.js"
import { search } from "../../src/search/search.js"
import { manualProposal } from "../support/fixtures.js"
import { run, type Stores, sqlOf } from "../support/run.js"
import { agent, answerOf, at, freshAnswer, person, salesRequest, SEARCH_ID, SALES_RULES } from "./cache-support.js"
import { salesScope } from "./cache-scope.js"

const STATEMENTS = SALES_RULES

const TEXT = "Rechnung Skonto Tage Kunden"

const req = (text: string): SearchRequest => salesRequest({ text })

const scope = salesScope(STATEMENTS)

const find = async (text = TEXT) => {
  const r = await scope.service.runPromise(at(search(req(text), SEARCH_ID)))
  return { heads: r.response.bundles.map((b) => b.head.ref), bundles: JSON.stringify(r.response.bundles), answer: answerOf(r) }
}
/** the answer of a search that reads everything from the file (no cache) */
const fresh = async (text = TEXT) =>
  freshAnswer(scope.config, req(text))
const write = <A, E>(effect: Effect.Effect<A, E, Stores>) => scope.service.runPromise(at(effect))
/**
 * The search after a write: its answer, how many phrases it read whole from FTS5, how many it
 * carried, and how many times it looked through the writes for whether a rewritten row may hold one.
 */
const afterWrite = async (text = TEXT) => {
  const [whole, carried, touches] = [phrasesReadWhole(), phrasesCarried(), phraseTouchesFound()]
  const found = await find(text)
  return {
    ...found, readWhole: phrasesReadWhole() - whole, carried: phrasesCarried() - carried, touches: phraseTouchesFound() - touches
  }
}

describe("phrase rows through writes", () => {
  it("a new rule with the words is found with FTS5's scores; rejected, superseded and redacted ones are gone — the rows carried, not read again", async () => {
    // asked three times: the third answers from the phrase rows held
    await find()
    await find()
    const steady = await find()
    expect(steady.answer).toEqual(await fresh())

    // a proposal with the words (its duplicate check runs on the same connection)
    await write(propose(manualProposal("Rechnungen mit Skonto an Kunden werden in sieben Tagen bezahlt", {
      keywords: ["Rechnung", "Skonto"], relations: []
    }), agent))
    const proposed = await afterWrite()
    expect(proposed.readWhole).toBe(0)
    // each carried phrase is looked up in the writes once (the idfs' prefetch finds it, the carry uses it)
    expect(proposed.carried).toBeGreaterThan(0)
    expect(proposed.touches).toBe(proposed.carried)
    expect(proposed.heads).toContain("rule/sales-0005@1")
    expect(proposed.answer).toEqual(await fresh())

    // confirmed, then superseded by a successor without "Skonto"
    await write(decide("sales-0005", { decision: "confirm", version: 1 }, person))
    const confirmed = await afterWrite()
    expect(confirmed.readWhole).toBe(0)
    expect(confirmed.carried).toBeGreaterThan(0)
    expect(confirmed.touches).toBe(confirmed.carried)
    expect(confirmed.answer).toEqual(await fresh())
    await write(Effect.gen(function*() {
      yield* propose(manualProposal("Rechnungen an Kunden werden in sieben Tagen bezahlt", {
        keywords: ["Rechnung"], relations: [], supersedes: "sales-0005"
      }), agent)
      yield* decide("sales-0006", { decision: "confirm", version: 1 }, person)
    }))
    const superseded = await afterWrite("Skonto")
    expect(superseded.answer).toEqual(await fresh("Skonto"))
    expect(superseded.heads).not.toContain("rule/sales-0005@2")
    expect((await afterWrite()).answer).toEqual(await fresh())

    // a proposal rejected: its rows leave the index
    await write(propose(manualProposal("Skonto gibt es für Kunden nur bei Vorkasse", { keywords: ["Skonto"], relations: [] }), agent))
    expect((await afterWrite()).heads).toContain("rule/sales-0007@1")
    await write(decide("sales-0007", { decision: "reject", version: 1, reason: "not a rule" }, person))
    const rejected = await afterWrite()
    expect(rejected.readWhole).toBe(0)
    expect(rejected.heads).not.toContain("rule/sales-0007@1")
    expect(rejected.answer).toEqual(await fresh())

    // the word redacted: no rule holds it any more
    await write(Effect.gen(function*() {
      const sql = yield* sqlOf("sales")
      const p = yield* previewRedaction(sql, "sales", "Skonto")
      yield* applyRedaction(sql, {
        scope: "sales", term: "Skonto", reason: "erasure request", preview: p.body.preview, requestedBy: "person:1",
        decidedBy: "dpo@example.com", at: "2026-06-15T12:00:00Z"
      })
    }))
    const redacted = await afterWrite("Skonto Rechnung")
    expect(redacted.answer).toEqual(await fresh("Skonto Rechnung"))
    expect(redacted.bundles).not.toMatch(/skonto/i)
    expect((await afterWrite()).answer).toEqual(await fresh())
  })

  it("a write of another connection of this process is carried; a write without a note (another process) starts the rows again", async () => {
    // the first search marks the phrases, the second (another text with the same words: no held answer) reads their rows
    await find()
    await find(`${TEXT} Post`)
    // another connection of this process (its own store, as the apply thread has): the note reaches this one
    await run(scope.config, at(propose(manualProposal("Skonto für Kunden gilt zehn Tage", { keywords: ["Skonto"], relations: [] }), agent)))
    const other = await afterWrite()
    expect(other.readWhole).toBe(0)
    expect(other.heads).toContain("rule/sales-0005@1")
    expect(other.answer).toEqual(await fresh())

    // another process (the CLI): its write moves the stamps, but no note arrives
    await run(scope.config, Effect.gen(function*() {
      const sql = yield* sqlOf("sales")
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`DELETE FROM lex_word WHERE rowid = (SELECT seq FROM lex_doc WHERE rule_id = 'sales-0005')`.raw
        yield* sql`DELETE FROM lex_stem WHERE rowid = (SELECT seq FROM lex_doc WHERE rule_id = 'sales-0005')`.raw
        yield* sql`DELETE FROM lex_doc WHERE rule_id = 'sales-0005'`.raw
      }))
    }))
    const unnoted = await afterWrite()
    expect(unnoted.readWhole).toBeGreaterThan(0)
    expect(unnoted.heads).not.toContain("rule/sales-0005@1")
    expect(unnoted.answer).toEqual(await fresh())
  })
})
