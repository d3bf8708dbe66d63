/**
 * shortExcerpt (src/domain/provenance.ts) reads only the first 301 code points (the
 * bundles of a search showed a mail's excerpt ten times); its answer equals the definition — the
 * text as code points, at most 300, else the first 299 and "…" — for any text, surrogate pairs
 * and lone surrogates included.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { EXCERPT_CHARS, shortExcerpt } from "../../src/domain/provenance.js"

const definition = (text: string | null): string | null => {
  if (text === null) return null
  const chars = [...text]
  return chars.length <= EXCERPT_CHARS ? text : `${chars.slice(0, EXCERPT_CHARS - 1).join("")}…`
}

const piece = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom("😀", "👩‍👩‍👧", "\uD83D", "\uDE00", "ä", "ß", " "),
  fc.string({ unit: "grapheme", maxLength: 20 })
)

describe("shortExcerpt", () => {
  it("equals the definition over texts around 300 code points and far beyond", () => {
    fc.assert(fc.property(fc.array(piece, { maxLength: 60 }), fc.nat({ max: 320 }), (parts, pad) => {
      const text = "x".repeat(pad) + parts.join("")
      expect(shortExcerpt(text)).toBe(definition(text))
    }), { numRuns: 2000 })
    for (const text of [null, "", "a".repeat(300), "a".repeat(301), "😀".repeat(300), "😀".repeat(301), `${"a".repeat(299)}😀b`, "a".repeat(5_000_000)]) {
      expect(shortExcerpt(text)).toBe(definition(text))
    }
  })
})
