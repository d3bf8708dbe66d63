/**
 * Verbs with a particle (particles.ts): the infinitives a present-tense form may have, and the
 * German separable verbs of a question's segment that a lexicon holds.
 */
import { describe, expect, it } from "vitest"
import { infinitivesOf, isPhrasalVerb, joinedVerbs } from "../../../src/search/lexical/particles.js"

const held = (verbs: ReadonlyArray<string>) => (v: string) => verbs.includes(v)
const FUNCTION_WORDS = new Set(["wer", "die", "wir", "der", "aus", "wie", "ich", "den"])
const isFunctionWord = (w: string) => FUNCTION_WORDS.has(w)

describe("infinitivesOf", () => {
  it("gives back the infinitive of regular and strong present-tense forms", () => {
    for (const [form, inf] of [["legt", "legen"], ["heben", "heben"], ["rechnet", "rechnen"], ["reiche", "reichen"], ["gibt", "geben"], ["sieht", "sehen"], ["hält", "halten"], ["läuft", "laufen"], ["fährt", "fahren"], ["sammeln", "sammeln"]] as const) {
      expect(infinitivesOf(form), form).toContain(inf)
    }
  })
})

describe("joinedVerbs", () => {
  it("joins a particle that ends the segment to the verb before it that the lexicon holds (gibt … frei → freigeben)", () => {
    const found = joinedVerbs(["wer", "gibt", "die", "rechnung", "frei"], held(["freigeben"]), isFunctionWord)
    expect(found).toEqual([{ surface: "gibt frei", verb: "freigeben", at: 1 }])
    expect(joinedVerbs(["wie", "lange", "heben", "wir", "muster", "aus", "der", "produktion", "auf"], held(["aufheben"]), isFunctionWord))
      .toEqual([{ surface: "heben auf", verb: "aufheben", at: 2 }])
  })

  it("joins a particle, zu and a verb in one word (einzureichen → einreichen)", () => {
    expect(joinedVerbs(["bis", "wann", "ist", "der", "antrag", "einzureichen"], held(["einreichen"]), isFunctionWord))
      .toEqual([{ surface: "einzureichen", verb: "einreichen", at: 5 }])
  })

  it("joins nothing the lexicon does not hold, no function word, and no particle that does not end the segment", () => {
    expect(joinedVerbs(["wer", "gibt", "die", "rechnung", "frei"], held([]), isFunctionWord)).toEqual([])
    expect(joinedVerbs(["wir", "den", "auf"], held(["aufwiren", "aufwir"]), isFunctionWord)).toEqual([])
    expect(joinedVerbs(["gibt", "frei", "die", "rechnung"], held(["freigeben"]), isFunctionWord)).toEqual([])
  })
})

describe("isPhrasalVerb", () => {
  it("is a word and an English particle", () => {
    expect(isPhrasalVerb(["hand", "in"])).toBe(true)
    expect(isPhrasalVerb(["hand", "to"])).toBe(false)
    expect(isPhrasalVerb(["fill", "it", "in"])).toBe(false)
  })
})
