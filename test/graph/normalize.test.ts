import { Either, ParseResult, Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { validationFailed } from "../../src/contracts/errors.js"
import {
  BoundedName,
  BoundedQuery,
  charLength,
  damerauLevenshteinBanded,
  initialsOf,
  MATCH_ORDER,
  normalize,
  scoreAgainst,
  trigramDice
} from "../../src/graph/normalize.js"

/** Plain full optimal string alignment distance over code points (the reference). */
const osa = (a: string, b: string): number => {
  const x = Array.from(a)
  const y = Array.from(b)
  const d: Array<Array<number>> = []
  for (let i = 0; i <= x.length; i++) {
    d.push([])
    for (let j = 0; j <= y.length; j++) {
      if (i === 0) d[i]![j] = j
      else if (j === 0) d[i]![j] = i
      else {
        let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (x[i - 1] === y[j - 1] ? 0 : 1))
        if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1)
        d[i]![j] = v
      }
    }
  }
  return d[x.length]![y.length]!
}

const decode = <A>(schema: Schema.Schema<A, string>, s: string) => Schema.decodeUnknownEither(schema)(s)
const messageOf = <A>(schema: Schema.Schema<A, string>, s: string): string => {
  const r = decode(schema, s)
  if (Either.isRight(r)) throw new Error(`expected a refusal of ${JSON.stringify(s)}`)
  return ParseResult.ArrayFormatter.formatErrorSync(r.left).map((i) => i.message).join("; ")
}

describe("normalize (graph.md §5.1)", () => {
  it.each([
    ["Mueller GmbH", "mueller"],
    ["Müller", "mueller"],
    ["Mu\u0308ller", "mueller"], // decomposed umlaut: NFKC composes it first
    ["MÜLLER", "mueller"],
    ["Straße", "strasse"],
    ["Öl & Gas", "oel gas"],
    ["Café Crème", "cafe creme"],
    ["  Vertrieb -- Nord!  ", "vertrieb nord"],
    ["ACME Holding GmbH & Co. KG", "acme holding"],
    ["Foo Inc.", "foo"],
    ["Bar Ltd", "bar"],
    ["Baz LLC", "baz"],
    ["Verein eV", "verein"],
    ["Verein e.V.", "verein e v"], // e.V. becomes two tokens, neither is a legal form
    ["GmbH", "gmbh"], // the last token stays
    ["AG KG", "ag"],
    ["ﬁnance", "finance"], // NFKC ligature
    ["Ｖｅｒｔｒｉｅｂ", "vertrieb"], // full-width
    ["Nord_West/Ost", "nord west ost"],
    ["Co Working", "co working"], // only trailing tokens go
    ["---", ""]
  ])("%j → %j", (input, out) => {
    expect(normalize(input)).toBe(out)
  })

  it("expands the U+FDFA ligature to 18 characters", () => {
    expect(charLength(normalize("\uFDFA"))).toBe(18)
  })

  it("is idempotent and yields only letters, digits and single spaces", () => {
    fc.assert(fc.property(fc.string({ unit: "binary", maxLength: 40 }), (s) => {
      const n = normalize(s)
      expect(normalize(n)).toBe(n)
      expect(n).toBe(n.trim())
      expect(n.includes("  ")).toBe(false)
      expect(/^[\p{L}\p{N} ]*$/u.test(n)).toBe(true)
    }), { numRuns: 2000 })
  })
})

describe("BoundedName and BoundedQuery (graph.md §5.3 bounds)", () => {
  it("accepts 200 characters and keeps the value as given", () => {
    const s = "a".repeat(200)
    expect(decode(BoundedName, s)).toEqual(Either.right(s))
    expect(decode(BoundedName, " Vertrieb Nord ")).toEqual(Either.right(" Vertrieb Nord "))
  })

  it("refuses 201 characters as given, naming the bound", () => {
    expect(messageOf(BoundedName, "a".repeat(201))).toBe("must be at most 200 characters (has 201)")
    expect(messageOf(BoundedQuery, "a".repeat(201))).toBe("must be at most 200 characters (has 201)")
  })

  it("counts characters (code points), not UTF-16 units", () => {
    const s = "😀".repeat(200) // 400 UTF-16 units, 200 characters
    expect(Either.isRight(decode(BoundedName, s))).toBe(true)
  })

  it("refuses a blank name", () => {
    expect(messageOf(BoundedName, "   ")).toBe("must contain at least one character that is not a space")
    expect(messageOf(BoundedName, "")).toBe("must contain at least one character that is not a space")
  })

  it("refuses one ligature that makes the name longer than 200 after normalization (400 validation-failed)", () => {
    const s = `${"a".repeat(182)} \uFDFA` // 184 characters as given
    expect(charLength(s)).toBe(184)
    expect(charLength(normalize(s))).toBe(201)
    const message = messageOf(BoundedName, s)
    expect(message).toContain("at most 200 characters after normalization")
    expect(message).toContain("becomes 201")
    const r = Schema.decodeUnknownEither(Schema.Struct({ name: BoundedName }))({ name: s })
    if (Either.isRight(r)) throw new Error("expected a refusal")
    const refusal = validationFailed(r.left, "entity")
    expect(refusal.code).toBe("validation-failed")
    expect(refusal.issues?.[0]?.path).toBe("name")
    expect(messageOf(BoundedQuery, s)).toContain("after normalization")
    // one character less after normalization passes
    expect(Either.isRight(decode(BoundedName, `${"a".repeat(181)} \uFDFA`))).toBe(true)
  })

  it("refuses a query with nothing left after normalization", () => {
    expect(messageOf(BoundedQuery, "-- !")).toBe("must contain a letter or a digit (nothing is left after normalization)")
    expect(Either.isRight(decode(BoundedQuery, "VN"))).toBe(true)
    expect(Either.isRight(decode(BoundedName, "-- !"))).toBe(true) // a name only needs the raw bounds
  })
})

describe("damerauLevenshteinBanded (graph.md §5.3)", () => {
  it.each([
    ["vetrieb nord", "vertrieb nord", 1],
    ["ab", "ba", 1],
    ["abcdef", "abdcef", 1],
    ["kitten", "sitting", 3], // 3 is beyond 2: reported as max + 1
    ["ca", "abc", 3], // OSA, not unrestricted Damerau (which gives 2)
    ["", "ab", 2],
    ["", "abc", 3],
    ["nord", "nordwest", 3], // lengths differ by 4: not compared
    ["same", "same", 0]
  ])("%j ~ %j = %i", (a, b, d) => {
    expect(damerauLevenshteinBanded(a, b)).toBe(d)
  })

  it("equals the full optimal string alignment distance when that is ≤ 2, and is > 2 otherwise", () => {
    const word = fc.string({ unit: fc.constantFrom("a", "b", "c", "ä", "😀"), maxLength: 12 })
    fc.assert(fc.property(word, word, (a, b) => {
      const full = osa(a, b)
      const banded = damerauLevenshteinBanded(a, b)
      if (full <= 2) expect(banded).toBe(full)
      else expect(banded).toBe(3)
    }), { numRuns: 5000 })
  })

  it("honours other limits the same way", () => {
    const word = fc.string({ unit: fc.constantFrom("a", "b", "c"), maxLength: 10 })
    fc.assert(fc.property(word, word, fc.integer({ min: 0, max: 4 }), (a, b, max) => {
      const full = osa(a, b)
      expect(damerauLevenshteinBanded(a, b, max)).toBe(full <= max ? full : max + 1)
    }), { numRuns: 3000 })
  })

  it("stays linear: 200-character strings far apart are compared in the band only", () => {
    const a = "a".repeat(200)
    const b = "b".repeat(200)
    const started = performance.now()
    for (let i = 0; i < 2000; i++) expect(damerauLevenshteinBanded(a, b)).toBe(3)
    expect(performance.now() - started).toBeLessThan(2000)
  })
})

describe("scoreAgainst (gaps.md §7)", () => {
  it("Mueller GmbH = Müller (exact, 1.00)", () => {
    expect(scoreAgainst(normalize("Mueller GmbH"), "Müller", [])).toEqual({ score: 1, match: "exact" })
  })

  it("Vetrieb Nord → Vertrieb Nord (typo, 1 − 1/13)", () => {
    expect(scoreAgainst(normalize("Vetrieb Nord"), "Vertrieb Nord", [])).toEqual({ score: 0.923, match: "typo" })
  })

  it("VN → alias VN (0.98) or Vertrieb Nord without alias (initials, 0.80)", () => {
    expect(scoreAgainst(normalize("VN"), "Vertrieb Nord", ["VN"])).toEqual({ score: 0.98, match: "alias" })
    expect(scoreAgainst(normalize("VN"), "Vertrieb Nord", [])).toEqual({ score: 0.8, match: "initials" })
    expect(scoreAgainst(normalize("VN"), "Vertrieb Nord GmbH", [])).toEqual({ score: 0.8, match: "initials" })
  })

  it("Nord Vertrieb → Vertrieb Nord (tokens, 0.95)", () => {
    expect(scoreAgainst(normalize("Nord Vertrieb"), "Vertrieb Nord", [])).toEqual({ score: 0.95, match: "tokens" })
  })

  it("Nord vs Nordwest stays below the duplicate threshold 0.85", () => {
    const s = scoreAgainst(normalize("Nord"), "Nordwest", [])
    expect(s?.match).toBe("similar")
    expect(s?.score).toBe(0.45) // Dice of {nor, ord} and 6 trigrams = 0.5, × 0.9
    expect(scoreAgainst(normalize("Nordwest"), "Nord", [])?.score).toBe(0.45)
  })

  it("caps typo at 0.94", () => {
    const name = "Vertriebsgesellschaft Norddeutschland"
    expect(scoreAgainst(normalize("Vertriebsgesellschaft Norddeutschlnd"), name, [])).toEqual({ score: 0.94, match: "typo" })
  })

  it("similar is the trigram Dice coefficient × 0.9, best over name and aliases", () => {
    const key = normalize("Vertrieb Nordwest")
    const dice = trigramDice(key, "vertrieb nord")
    expect(scoreAgainst(key, "Vertrieb Nord", [])).toEqual({ score: Math.round(dice * 0.9 * 1000) / 1000, match: "similar" })
    expect(scoreAgainst(key, "Unrelated", ["Vertrieb Nord"])).toEqual(scoreAgainst(key, "Vertrieb Nord", []))
  })

  it("ties between kinds keep the kind earlier in exact, alias, tokens, typo, initials, similar", () => {
    expect(MATCH_ORDER).toEqual(["exact", "alias", "tokens", "typo", "initials", "similar"])
    // typo "abcde"~"abcdf" = 1 − 1/5 = 0.80, initials of "a b c d e" = 0.80
    expect(scoreAgainst("abcde", "abcdf", ["a b c d e"])).toEqual({ score: 0.8, match: "typo" })
    expect(scoreAgainst("abcde", "a b c d e", ["abcdf"])).toEqual({ score: 0.8, match: "typo" })
    expect(initialsOf("a b c d e")).toBe("abcde")
  })

  it("initials need a key of one token of 2–6 letters", () => {
    expect(scoreAgainst("v", "Vertrieb", [])?.match).not.toBe("initials")
    expect(scoreAgainst("abcdefg", "a b c d e f g", [])).toBeNull()
    expect(scoreAgainst("v2", "Vertrieb 2", [])).toBeNull()
  })

  it("null when nothing matches at all", () => {
    expect(scoreAgainst("einkauf", "Vertrieb Nord", [])).toBeNull()
    expect(scoreAgainst("", "Vertrieb Nord", [])).toBeNull()
  })
})
