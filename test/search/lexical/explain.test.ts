/**
 * altMatches on a row's line (explain.ts) against the reading it replaced: each column split into
 * its tokens, an alternative matching when its tokens stand one after the other in one column (the
 * last a prefix when marked), a single word anywhere. Random rows and alternatives from a small
 * alphabet, so words, prefixes and phrases across a column's end meet often.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { altMatches, rowLine } from "../../../src/search/lexical/explain.js"
import type { Alt } from "../../../src/search/lexical/match.js"

/** The token reading: what explain.ts held per row before its line. */
const byTokens = (a: Alt, columns: ReadonlyArray<string>): boolean => {
  const cols = columns.map((c) => c.split(" ").filter((t) => t.length > 0))
  const q = a.tokens
  if (q.length === 0) return false
  const all = new Set(cols.flat())
  if (q.length === 1 && !a.prefix) return all.has(q[0] ?? "")
  if (q.length === 1) return [...all].some((t) => t.startsWith(q[0] ?? ""))
  return cols.some((toks) => {
    for (let i = 0; i + q.length <= toks.length; i++) {
      let ok = true
      for (let j = 0; j < q.length && ok; j++) {
        const d = toks[i + j] ?? ""
        ok = j === q.length - 1 && a.prefix ? d.startsWith(q[j] ?? "") : d === q[j]
      }
      if (ok) return true
    }
    return false
  })
}

const token = fc.stringMatching(/^[ab_1]{1,3}$/)
const column = fc.array(token, { maxLength: 6 }).map((ts) => ts.join(" "))
const columns = fc.array(column, { minLength: 4, maxLength: 4 })
const alt = fc.record({ tokens: fc.array(fc.oneof(token, fc.constant("")), { maxLength: 3 }), prefix: fc.boolean() })

describe("altMatches", () => {
  it("matches a row's line exactly where the columns' tokens match", () => {
    fc.assert(fc.property(columns, fc.array(alt, { minLength: 1, maxLength: 8 }), (cols, alts) => {
      const line = rowLine(cols)
      for (const a of alts) expect(altMatches(a, line), JSON.stringify({ a, cols })).toBe(byTokens(a, cols))
    }), { numRuns: 2_000, seed: 14 })
  })

  it("never matches a phrase across two columns, nor a word by a part of it", () => {
    const line = rowLine(["lieferzeit", "zeit ware", "", "ware"])
    expect(altMatches({ tokens: ["lieferzeit", "zeit"], prefix: false }, line)).toBe(false)
    expect(altMatches({ tokens: ["zeit", "ware"], prefix: false }, line)).toBe(true)
    expect(altMatches({ tokens: ["ware", "ware"], prefix: false }, line)).toBe(false)
    expect(altMatches({ tokens: ["zeit"], prefix: false }, line)).toBe(true)
    expect(altMatches({ tokens: ["liefer"], prefix: false }, line)).toBe(false)
    expect(altMatches({ tokens: ["liefer"], prefix: true }, line)).toBe(true)
    expect(altMatches({ tokens: ["eit"], prefix: true }, line)).toBe(false)
  })
})
