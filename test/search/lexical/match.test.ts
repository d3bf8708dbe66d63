/** altsOfMatch reads back what altExpr and orExpr write, as each table's tokenizer splits it. */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { type Alt, altExpr, altsOfMatch, orExpr } from "../../../src/search/lexical/match.js"

const parsed = (alts: ReadonlyArray<Alt>, table: "lex_word" | "lex_stem"): Array<Alt> => altsOfMatch(orExpr(alts) ?? "", table)

describe("altsOfMatch", () => {
  it("gives back the alternatives of an OR of words, phrases and prefixes", () => {
    const alts: Array<Alt> = [
      { tokens: ["ral9005"], prefix: false },
      { tokens: ["schwarz", "matt"], prefix: true },
      { tokens: ["lieferung"], prefix: true },
      { tokens: ["30d", "frist", "netto"], prefix: false }
    ]
    expect(parsed(alts, "lex_word")).toEqual(alts)
    expect(parsed(alts, "lex_stem")).toEqual(alts)
  })

  it("reads a doubled quote as the tokenizer does: a separator between two tokens", () => {
    const alts: Array<Alt> = [{ tokens: ["o\"neil"], prefix: false }, { tokens: ["x", "a\"\"b"], prefix: true }]
    expect(orExpr(alts)).toBe("\"o\"\"neil\" OR \"x\" + \"a\"\"\"\"b\" *")
    const back: Array<Alt> = [{ tokens: ["o", "neil"], prefix: false }, { tokens: ["x", "a", "b"], prefix: true }]
    expect(parsed(alts, "lex_word")).toEqual(back)
    expect(parsed(alts, "lex_stem")).toEqual(back)
  })

  it("keeps \"_\" in a lex_stem token and splits at it in lex_word", () => {
    const alts: Array<Alt> = [{ tokens: ["_leist"], prefix: false }, { tokens: ["haken_leist", "x"], prefix: true }]
    expect(parsed(alts, "lex_stem")).toEqual(alts)
    expect(parsed(alts, "lex_word")).toEqual([{ tokens: ["leist"], prefix: false }, { tokens: ["haken", "leist", "x"], prefix: true }])
  })

  it("takes quoted operators as words, and folds case and diacritics as the index does", () => {
    const alts: Array<Alt> = [{ tokens: ["OR"], prefix: false }, { tokens: ["a*b", "NEAR"], prefix: false }, { tokens: ["Café"], prefix: true }]
    expect(parsed(alts, "lex_word")).toEqual([
      { tokens: ["or"], prefix: false },
      { tokens: ["a", "b", "near"], prefix: false },
      { tokens: ["cafe"], prefix: true }
    ])
  })

  it("reads one alternative written alone (altExpr) as that alternative", () => {
    const a: Alt = { tokens: ["schwarz", "matt"], prefix: true }
    expect(altsOfMatch(altExpr(a), "lex_word")).toEqual([a])
    expect(altsOfMatch(altExpr({ tokens: ["_leist"], prefix: false }), "lex_word")).toEqual([{ tokens: ["leist"], prefix: false }])
  })

  it("round-trips any OR of folded lower-case tokens (\"_\" inside lex_stem's)", () => {
    const token = (chars: string) => fc.string({ unit: fc.constantFrom(...chars), minLength: 1, maxLength: 8 })
    for (const [table, chars] of [["lex_word", "abcdeß0129"], ["lex_stem", "abcdeß0129_"]] as const) {
      fc.assert(fc.property(
        fc.array(fc.record({ tokens: fc.array(token(chars), { minLength: 1, maxLength: 4 }), prefix: fc.boolean() }), { minLength: 1, maxLength: 6 }),
        (alts) => {
          const distinct = [...new Map(alts.map((a) => [altExpr(a), a])).values()]
          expect(parsed(alts, table)).toEqual(distinct)
        }
      ), { numRuns: 300, seed: 7 })
    }
  })
})
