/**
 * A rewritten row's tokens and a phrase's weighted frequency in them (row-tokens.ts), against
 * FTS5 itself on a real scope file: the tokens its tokenizer stores, and bm25 bit for bit.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import fc from "fast-check"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { ScopeStore } from "../../../src/db/scope-store.js"
import { avgdlOf, idfsOf, readLengths, termOf } from "../../../src/search/lexical/bm25.js"
import { altExpr } from "../../../src/search/lexical/match.js"
import { columnTokens, instances, readRowTokens, safeAltOf, SAFE_TEXT, weightedFrequency } from "../../../src/search/lexical/row-tokens.js"
import { fold } from "../../../src/search/lexical/text.js"
import { tempDir } from "../../support/env.js"
import { run, sqlOf } from "../../support/run.js"
import { lexConfig } from "./support.js"

let dir: string
let cleanup: () => void
beforeEach(() => {
  ;({ dir, cleanup } = tempDir())
})
afterEach(() => cleanup())

const WEIGHTS = [4, 3, 2, 1] as const

const withScope = <A>(f: (sql: SqlClient) => Effect.Effect<A, unknown>) =>
  run(lexConfig(dir), Effect.gen(function*() {
    yield* Effect.flatMap(ScopeStore, (s) => s.create("sales"))
    return yield* f(yield* sqlOf("sales"))
  }))

/** The terms FTS5 stores for one keywords text in `table` (the row written, read back, taken out). */
const storedTerms = (sql: SqlClient, table: "lex_word" | "lex_stem", text: string) =>
  Effect.gen(function*() {
    yield* sql.unsafe(`INSERT INTO ${table} (rowid, keywords, statement, relations, quote) VALUES (1, ?, '', '', '')`, [text]).raw
    const terms = yield* sql.unsafe<{ term: string }>(`SELECT term FROM ${table}_vocab ORDER BY term`)
    yield* sql.unsafe(`DELETE FROM ${table} WHERE rowid = 1`).raw
    return terms.map((t) => t.term)
  })

describe("the tokens of a row", () => {
  it("are FTS5's own for every character the safe texts allow: one token, folded as fold does (lex_word, lex_stem)", async () => {
    await withScope((sql) =>
      Effect.gen(function*() {
        let checked = 0
        for (let c = 0; c <= 0x2ff; c++) {
          const ch = String.fromCodePoint(c)
          if (ch === " ") continue
          for (const table of ["lex_word", "lex_stem"] as const) {
            const safe = SAFE_TEXT[table] as RegExp
            if (!safe.test(ch)) continue
            const text = `x${ch}y zz`
            expect(yield* storedTerms(sql, table, text), `U+${c.toString(16)} in ${table}`).toEqual([...new Set(columnTokens(text, table))].sort())
            checked++
          }
        }
        // a-z, 0-9, ß-ö, ø-ÿ in both tables, "_" in lex_stem
        expect(checked).toBe(2 * (26 + 10 + 24 + 8) + 1)
      }))
  })

  it("a text with any other character is left to the probe; lex_tri always is", () => {
    expect(columnTokens("preis größe", "lex_word")).toEqual(["preis", "große"].map(fold))
    expect(columnTokens("haken _leist", "lex_stem")).toEqual(["haken", "_leist"])
    expect(columnTokens("haken _leist", "lex_word")).toBeUndefined()
    for (const other of ["λόγος", "Preis", "µm", "ſtadt", "a-b", "a\tb", "ǯ"]) expect(columnTokens(other, "lex_word"), other).toBeUndefined()
    expect(columnTokens("preis", "lex_tri")).toBeUndefined()
    expect(safeAltOf(altExpr({ tokens: ["preis"], prefix: true }), "lex_word")).toEqual({ tokens: ["preis"], prefix: true })
    expect(safeAltOf(altExpr({ tokens: ["über", "gabe"], prefix: false }), "lex_word")).toEqual({ tokens: ["uber", "gabe"], prefix: false })
    expect(safeAltOf(`${altExpr({ tokens: ["a"], prefix: false })} OR ${altExpr({ tokens: ["b"], prefix: false })}`, "lex_word")).toBeUndefined()
    expect(safeAltOf(altExpr({ tokens: ["λόγος"], prefix: false }), "lex_word")).toBeUndefined()
    expect(safeAltOf(altExpr({ tokens: ["_leist"], prefix: false }), "lex_stem")).toEqual({ tokens: ["_leist"], prefix: false })
  })

  it("reads the rows of the seqs asked (null: no row; undefined: a row holding another character)", async () => {
    await withScope((sql) =>
      Effect.gen(function*() {
        yield* sql`INSERT INTO lex_word (rowid, keywords, statement, relations, quote) VALUES (3, 'preis', 'übergabe der ware', '', 'preis preis')`.raw
        yield* sql`INSERT INTO lex_word (rowid, keywords, statement, relations, quote) VALUES (4, 'λόγος', '', '', '')`.raw
        const read = yield* readRowTokens(sql, "lex_word", [3, 9])
        expect(read).toEqual(new Map([[3, [["preis"], ["ubergabe", "der", "ware"], [], ["preis", "preis"]]], [9, null]]))
        expect(yield* readRowTokens(sql, "lex_word", [3, 4])).toEqual(new Map([[3, [["preis"], ["ubergabe", "der", "ware"], [], ["preis", "preis"]]], [4, undefined]]))
        expect(yield* readRowTokens(sql, "lex_tri", [3])).toEqual(new Map([[3, undefined]]))
      }))
  })
})

describe("a phrase's weighted frequency", () => {
  it("counts overlapping instances, a prefix on the last token, each column at its weight", () => {
    expect(instances(["a", "a", "a"], { tokens: ["a", "a"], prefix: false })).toBe(2)
    expect(instances(["preise", "preis", "preisliste"], { tokens: ["preis"], prefix: true })).toBe(3)
    expect(instances(["preise", "preis", "preisliste"], { tokens: ["preis"], prefix: false })).toBe(1)
    expect(instances(["neue", "preisliste", "neue", "preis"], { tokens: ["neue", "preis"], prefix: true })).toBe(2)
    expect(instances(["preis"], { tokens: ["neue", "preis"], prefix: false })).toBe(0)
    expect(weightedFrequency([["preis"], ["preis", "preis"], [], ["x"]], { tokens: ["preis"], prefix: false }, WEIGHTS)).toBe(4 + 2 * 3)
  })

  it("gives FTS5's bm25 of every row bit for bit (random rows and phrases, umlauts and ß among the words)", async () => {
    const WORDS = ["preis", "preise", "preisliste", "größe", "grösse", "übergabe", "ubergabe", "maße", "masse", "kunde", "kunden", "rabatt", "äpfel"]
    const column = fc.array(fc.constantFrom(...WORDS), { minLength: 0, maxLength: 7 }).map((ws) => ws.join(" "))
    const phrase = fc.record({
      tokens: fc.array(fc.constantFrom(...WORDS, "preisl", "kund", "größ", "uber", "mas"), { minLength: 1, maxLength: 3 }),
      prefix: fc.boolean()
    })
    const samples = fc.sample(fc.record({
      rows: fc.array(fc.tuple(column, column, column, column), { minLength: 5, maxLength: 60 }),
      phrases: fc.array(phrase, { minLength: 1, maxLength: 8 })
    }), { numRuns: 60, seed: 51 })
    await withScope((sql) =>
      Effect.gen(function*() {
        let compared = 0
        for (const s of samples) {
          yield* sql.withTransaction(Effect.gen(function*() {
            yield* sql`DELETE FROM lex_word`.raw
            for (const [i, c] of s.rows.entries()) {
              yield* sql`INSERT INTO lex_word (rowid, keywords, statement, relations, quote) VALUES (${i + 1}, ${c[0]}, ${c[1]}, ${c[2]}, ${c[3]})`.raw
            }
          }))
          const seqs = s.rows.map((_, i) => i + 1)
          const rows = yield* readRowTokens(sql, "lex_word", seqs)
          const lengths = yield* readLengths(sql, "lex_word", "all")
          let tokens = 0
          for (const d of lengths.values()) tokens += d
          const avgdl = avgdlOf({ rows: lengths.size, tokens })
          for (const p of s.phrases) {
            const expr = altExpr(p)
            const alt = safeAltOf(expr, "lex_word")
            expect(alt, expr).toBeDefined()
            const want = yield* sql<{ seq: number; score: number }>`SELECT rowid AS seq, bm25(lex_word, 4, 3, 2, 1) AS score
              FROM lex_word WHERE lex_word MATCH ${expr} ORDER BY rowid`
            const counted = seqs.flatMap((seq) => {
              const f = weightedFrequency(rows?.get(seq) ?? [], alt!, WEIGHTS)
              return f > 0 ? [{ seq, f }] : []
            })
            expect(counted.map((c) => c.seq), expr).toEqual(want.map((w) => Number(w.seq)))
            if (counted.length === 0) continue
            const [idf = 0] = yield* idfsOf(sql, [[lengths.size, counted.length]])
            const got = counted.map((c) => ({ seq: c.seq, score: -termOf(idf, avgdl, c.f, lengths.get(c.seq) ?? -1) }))
            expect(got, expr).toEqual(want.map((w) => ({ seq: Number(w.seq), score: w.score })))
            compared += counted.length
          }
        }
        expect(compared).toBeGreaterThan(400)
      }))
  })
})
