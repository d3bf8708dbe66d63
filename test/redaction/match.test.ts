import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { REDACTED_MARKER } from "../../src/contracts/redaction.js"
import { findInJson, findInText, normalizeTerm, replaceRanges } from "../../src/redaction/match.js"

const find = (text: string, term: string) => findInText(text, normalizeTerm(term))
const covered = (text: string, term: string) => find(text, term).map(([s, e]) => text.slice(s, e))

describe("normalizeTerm", () => {
  it("folds case, umlauts, ß, diacritics, NFKC, punctuation and whitespace", () => {
    expect(normalizeTerm("  Petra  MÜLLER ")).toBe("petra mueller")
    expect(normalizeTerm("Straße")).toBe("strasse")
    expect(normalizeTerm("René Dupré")).toBe("rene dupre")
    expect(normalizeTerm("Ｍüller")).toBe("mueller")
    expect(normalizeTerm("O’Brien")).toBe("o brien")
    expect(normalizeTerm("+49 (0)171-555 12")).toBe("49 0 171 555 12")
    expect(normalizeTerm("€ 500 | Rabatt")).toBe("500 rabatt")
  })
})

describe("findInText", () => {
  it("finds every spelling of a name and answers ranges of the original text", () => {
    const text = "Petra Müller, petra mueller und PETRA MUELLER; Frau Mu\u0308ller schrieb."
    expect(covered(text, "Petra Müller")).toEqual(["Petra Müller", "petra mueller", "PETRA MUELLER"])
    expect(covered(text, "Müller")).toEqual(["Müller", "mueller", "MUELLER", "Mu\u0308ller"])
  })

  it("a range covers whole characters: a match inside a folded character takes the character", () => {
    expect(covered("Grüße", "uesse")).toEqual(["üße"])
    expect(covered("ﬁsh and ﬁne", "ish")).toEqual(["ﬁsh"])
  })

  it("punctuation and whitespace runs compare as one space", () => {
    expect(covered("Ruf an: 0171 / 555-12 34", "0171 555 12 34")).toEqual(["0171 / 555-12 34"])
    expect(covered("petra.mueller@example.com", "petra mueller")).toEqual(["petra.mueller"])
  })

  it("merges overlapping and touching occurrences, ascending", () => {
    expect(find("aaaaa", "aaa")).toEqual([[0, 5]])
    expect(find("abcabc xabc", "abc")).toEqual([[0, 6], [8, 11]])
  })

  it("never matches across or inside a marker", () => {
    expect(find(`Anna ${REDACTED_MARKER} Roth`, "anna roth")).toEqual([])
    expect(find(REDACTED_MARKER, "redacted")).toEqual([])
    expect(find(`Anna Anna ${REDACTED_MARKER}`, "Anna R")).toEqual([])
  })

  const alphabet = fc.constantFrom(..."aAäÄuUüÜeEsßSrRdD .,-'’[]\u0308\u00a0xyz".split(""))
  const text = fc.array(fc.oneof({ weight: 6, arbitrary: alphabet }, { weight: 1, arbitrary: fc.constant(REDACTED_MARKER) }), { maxLength: 40 }).map((a) => a.join(""))
  const term = fc.array(alphabet, { minLength: 3, maxLength: 8 }).map((a) => a.join("")).filter((t) => [...normalizeTerm(t)].length >= 3)

  it("property: the ranges found, replaced by the marker, leave no occurrence", () => {
    fc.assert(fc.property(text, term, (t, q) => {
      const folded = normalizeTerm(q)
      const ranges = findInText(t, folded)
      for (let k = 0; k < ranges.length; k++) {
        const [s, e] = ranges[k]!
        expect(s).toBeLessThan(e)
        if (k > 0) expect(s).toBeGreaterThan(ranges[k - 1]![1])
      }
      expect(findInText(replaceRanges(t, ranges), folded)).toEqual([])
    }), { numRuns: 3000 })
  })

  it("property: marker text never matches a term", () => {
    fc.assert(fc.property(term, fc.nat(3), (q, n) => {
      expect(findInText(REDACTED_MARKER.repeat(n + 1), normalizeTerm(q))).toEqual([])
    }), { numRuns: 2000 })
  })

  it("property: a range never splits a character and its marks", () => {
    fc.assert(fc.property(text, term, (t, q) => {
      for (const [s, e] of findInText(t, normalizeTerm(q))) {
        expect(/^\p{M}/u.test(t.slice(s))).toBe(false)
        expect(/^\p{M}/u.test(t.slice(e))).toBe(false)
      }
    }), { numRuns: 2000 })
  })
})

describe("findInJson", () => {
  const shape = { keys: false, skipMembers: ["kind", "ref"] }
  it("matches inside string values only and keeps the JSON and its shape", () => {
    const relations = JSON.stringify([{ kind: "customer", name: "Müller GmbH", ref: "entity/sales-e0001" }, { kind: "product", name: "Kunde Mueller", ref: null }])
    const ranges = findInJson(relations, normalizeTerm("Müller"), shape)
    expect(ranges.length).toBe(2)
    const out = JSON.parse(replaceRanges(relations, ranges)) as Array<{ kind: string; name: string; ref: string | null }>
    expect(out).toEqual([
      { kind: "customer", name: "[redacted] GmbH", ref: "entity/sales-e0001" },
      { kind: "product", name: "Kunde [redacted]", ref: null }
    ])
    expect(findInJson(relations, normalizeTerm("customer"), shape)).toEqual([])
    expect(findInJson(relations, normalizeTerm("name"), shape)).toEqual([])
  })

  it("decodes escapes: a \\u escape matches and is replaced whole", () => {
    const json = "[\"M\\u00fcller\", \"x\\\"Müller\\\"y\"]"
    const out = JSON.parse(replaceRanges(json, findInJson(json, normalizeTerm("müller"), { keys: false, skipMembers: [] }))) as unknown
    expect(out).toEqual(["[redacted]", "x\"[redacted]\"y"])
  })

  it("keys of a column whose keys are data", () => {
    const json = JSON.stringify({ mueller: ["müller", "muller"], other: ["x"] })
    const out = JSON.parse(replaceRanges(json, findInJson(json, normalizeTerm("Müller"), { keys: true, skipMembers: [] })))
    expect(out).toEqual({ "[redacted]": ["[redacted]", "muller"], other: ["x"] })
  })

  it("property: the result is valid JSON of the same shape with no occurrence left", () => {
    const value: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
      v: fc.oneof({ depthSize: "small" }, fc.string({ unit: fc.constantFrom(..."aüeß \"\\\n".split("")), maxLength: 12 }), fc.integer(), fc.constant(null),
        fc.array(tie("v"), { maxLength: 4 }), fc.dictionary(fc.constantFrom("name", "kind", "x"), tie("v"), { maxKeys: 3 }))
    })).v
    const shapeOf = (v: unknown): unknown => Array.isArray(v) ? v.map(shapeOf) : v !== null && typeof v === "object"
      ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shapeOf(x)])) : typeof v
    fc.assert(fc.property(value, fc.constantFrom("aue", "üe", "ess", "a a"), (v, q) => {
      const json = JSON.stringify(v)
      const folded = normalizeTerm(q)
      const sh = { keys: false, skipMembers: [] }
      const out = replaceRanges(json, findInJson(json, folded, sh))
      expect(shapeOf(JSON.parse(out))).toEqual(shapeOf(v))
      expect(findInJson(out, folded, sh)).toEqual([])
    }), { numRuns: 1500 })
  })
})

describe("findInJson, variants", () => {
  it("a value under a key that holds the term goes with it", () => {
    const json = JSON.stringify({ "müller": ["mueller", "muller"], rabatt: ["rabatte"] })
    const shape = { keys: true, skipMembers: [], valuesOfMatchedKey: true }
    expect(JSON.parse(replaceRanges(json, findInJson(json, normalizeTerm("Müller"), shape)))).toEqual({ "[redacted]": ["[redacted]", "[redacted]"], rabatt: ["rabatte"] })
  })
})

describe("findInJson, a search's terms (one word per string)", () => {
  const terms = { keys: false, skipMembers: [], phrase: true }
  const variants = { keys: true, skipMembers: [], valuesOfMatchedKey: true, phrase: true }

  it("a name is found across the words a search logged, and every word it touches goes", () => {
    const json = JSON.stringify(["rabatt", "petra", "müller", "skonto"])
    expect(JSON.parse(replaceRanges(json, findInJson(json, normalizeTerm("Petra Müller"), terms)))).toEqual(["rabatt", "[redacted]", "[redacted]", "skonto"])
    // without the phrase reading the words stay
    expect(findInJson(json, normalizeTerm("Petra Müller"), { keys: false, skipMembers: [] })).toEqual([])
  })

  it("a phone number is found in the digits a search logged without its + and spaces", () => {
    const json = JSON.stringify(["49", "151", "73928461"])
    expect(JSON.parse(replaceRanges(json, findInJson(json, normalizeTerm("+49 151 73928461"), terms)))).toEqual(["[redacted]", "[redacted]", "[redacted]"])
    expect(findInJson(json, normalizeTerm("+49 151 555"), terms)).toEqual([])
  })

  it("variants: the keys are the words; a name across keys takes the keys and their variants", () => {
    const json = JSON.stringify({ petra: ["petras"], "müller": ["mueller", "muller"], rabatt: ["rabatte"] })
    expect(JSON.parse(replaceRanges(json, findInJson(json, normalizeTerm("Petra Müller"), variants))))
      .toEqual({ "[redacted]": ["[redacted]", "[redacted]"], rabatt: ["rabatte"] })
    const raw = replaceRanges(json, findInJson(json, normalizeTerm("Petra Müller"), variants))
    expect(raw).not.toMatch(/petra|m(ü|ue|u)ller/i)
  })
})
