/**
 * German derivations (derivations.ts): a verb's noun in -ung and its past participle, and back,
 * by the regular patterns.
 */
import { describe, expect, it } from "vitest"
import { derivationsOf } from "../../../src/search/lexical/derivations.js"

describe("derivationsOf", () => {
  it("gives a verb's noun in -ung and its past participle (weak, inseparable, separable, -ieren)", () => {
    for (const [word, forms] of [
      ["melden", ["meldung", "gemeldet"]],
      ["prüfen", ["prüfung", "geprüft"]],
      ["lagern", ["lagerung", "gelagert"]],
      ["genehmigen", ["genehmigung", "genehmigt"]],
      ["bestellen", ["bestellung", "bestellt"]],
      ["einreichen", ["einreichung", "eingereicht"]],
      ["kalibrieren", ["kalibrierung", "kalibriert"]]
    ] as const) {
      expect(derivationsOf(word), word).toEqual(expect.arrayContaining([...forms]))
    }
  })

  it("gives the verb and the participle of a noun in -ung (its plural too), and the verb and noun of a participle", () => {
    expect(derivationsOf("meldung")).toEqual(expect.arrayContaining(["melden", "gemeldet"]))
    expect(derivationsOf("bestellungen")).toEqual(expect.arrayContaining(["bestellen", "bestellt", "bestellung"]))
    expect(derivationsOf("gemeldet")).toEqual(expect.arrayContaining(["melden", "meldung"]))
    expect(derivationsOf("eingereicht")).toEqual(expect.arrayContaining(["einreichen", "einreichung"]))
    expect(derivationsOf("kalibriert")).toEqual(expect.arrayContaining(["kalibrieren", "kalibrierung"]))
  })

  it("leaves out the word itself, and gives nothing for a short word, a code or a word of no pattern", () => {
    expect(derivationsOf("meldung")).not.toContain("meldung")
    expect(derivationsOf("haken")).toEqual([])
    expect(derivationsOf("pa6gf30")).toEqual([])
    expect(derivationsOf("lieferant")).toEqual([])
  })
})
