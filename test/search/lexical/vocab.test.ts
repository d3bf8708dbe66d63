/**
 * vocabularyHas (src/search/lexical/vocab.ts) on a real scope file: whether words occur, and
 * start words, asked of the index's instances (a temp fts5vocab table of the connection), the same
 * answers as lex_word_vocab's rows give, also after a transaction that made that table rolled back.
 */
import { Effect, Either } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { vocabularyHas, WORD_INSTANCES } from "../../../src/search/lexical/vocab.js"
import { tempDir } from "../../support/env.js"
import { run, sqlOf } from "../../support/run.js"
import { lexConfig, ruleReq, seed } from "./support.js"

let dir: string
let cleanup: () => void
beforeEach(() => {
  ;({ dir, cleanup } = tempDir())
})
afterEach(() => cleanup())

const RULES = [
  ruleReq("Schwarze Hakenleisten in RAL-9005 nur nach Rückfrage beim Lieferanten bestellen", ["Lieferzeit"]),
  ruleReq("Rechnungen der Müller GmbH zahlen wir innerhalb von 30 Tagen netto", ["Zahlungsziel"])
]

/** What lex_word_vocab's rows say of the same words: a term equal to each, a term starting with each. */
const fromRows = (exact: ReadonlyArray<string>, prefixes: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const sql = yield* sqlOf("sales")
    const e = yield* sql<{ term: string }>`SELECT term FROM lex_word_vocab WHERE term IN ${sql.in(exact)}`
    const p: Array<string> = []
    for (const w of prefixes) {
      const rows = yield* sql<{ term: string }>`SELECT term FROM lex_word_vocab WHERE term >= ${w} AND term < ${w} || char(1114111) LIMIT 1`
      if (rows.length > 0) p.push(w)
    }
    return { exact: e.map((r) => r.term).sort(), prefixes: p.sort() }
  })

const sorted = (has: { readonly exact: ReadonlySet<string>; readonly prefixes: ReadonlySet<string> }) =>
  ({ exact: [...has.exact].sort(), prefixes: [...has.prefixes].sort() })

describe("vocabularyHas", () => {
  it("answers as lex_word_vocab's rows do, from a temp table of the index's instances", async () => {
    const config = lexConfig(dir)
    await seed(config, RULES)
    // folded, as the index stores them (Müller → muller)
    const exact = ["hakenleisten", "rechnungen", "muller", "lieferzeit", "hakenleiste", "nirgends"]
    const prefixes = ["hak", "rechn", "zahlungsz", "xyz", "netto"]
    const { has, rows, made } = await run(config, Effect.gen(function*() {
      const sql = yield* sqlOf("sales")
      const has = yield* sql.withTransaction(vocabularyHas(sql, exact, prefixes))
      const made = yield* sql<{ name: string }>`SELECT name FROM temp.sqlite_master WHERE type = 'table' AND name = ${WORD_INSTANCES}`
      return { has: sorted(has), rows: yield* fromRows(exact, prefixes), made: made.map((r) => r.name) }
    }))
    expect(has).toEqual(rows)
    expect(has.exact).toEqual(["hakenleisten", "lieferzeit", "muller", "rechnungen"])
    expect(has.prefixes).toEqual(["hak", "netto", "rechn", "zahlungsz"])
    expect(made).toEqual([WORD_INSTANCES])
  })

  it("makes the instance table again after the transaction that made it rolled back", async () => {
    const config = lexConfig(dir)
    await seed(config, RULES)
    const { failed, after, rows } = await run(config, Effect.gen(function*() {
      const sql = yield* sqlOf("sales")
      const failed = yield* Effect.either(sql.withTransaction(
        Effect.flatMap(vocabularyHas(sql, ["hakenleisten"], []), () => Effect.fail("rolled back" as const))
      ))
      // other words than the first call's: nothing of them is held, so the table is asked again
      const after = yield* sql.withTransaction(vocabularyHas(sql, ["rechnungen", "skonto"], ["lief"]))
      return { failed, after: sorted(after), rows: yield* fromRows(["rechnungen", "skonto"], ["lief"]) }
    }))
    expect(Either.isLeft(failed)).toBe(true)
    expect(after).toEqual(rows)
    expect(after).toEqual({ exact: ["rechnungen"], prefixes: ["lief"] })
  })
})
