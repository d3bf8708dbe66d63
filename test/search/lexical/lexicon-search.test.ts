/**
 * Stage a with the lexicon (lexicon-expand.ts): the matching and weighting on small lexicons in
 * memory, and search on real scope files with the shipped lexicon — a rule found through a
 * same-language synonym and through a Ding translation of a phrase, the query's own word ranked
 * above a synonym-only match, a word of many senses capped, the switches of
 * search.lexical.features.
 */
import { join } from "node:path"
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { lexiconOf } from "../../../src/search/lexical/lexicon.js"
import { MAX_PER_WORD, matchLexicon, PIVOT_FACTOR, senseWeight } from "../../../src/search/lexical/lexicon-expand.js"
import { HEAD_FACTOR, planSubQueries, WEAK_FACTOR } from "../../../src/search/lexical/rank.js"
import { LexicalIndex } from "../../../src/search/lexical/index.js"
import { tempDir } from "../../support/env.js"
import { run, sqlOf } from "../../support/run.js"
import { lexConfig, ruleReq, search, seed } from "./support.js"

let dir: string
let cleanup: () => void
beforeEach(() => {
  ;({ dir, cleanup } = tempDir())
})
afterEach(() => cleanup())

const BOTH = { synonyms: true, translations: true, languages: ["de", "en"] } as const

describe("matching the lexicon", () => {
  const lexicon = lexiconOf([
    { de: ["Zahlungsfrist", "Zahlungsziel"], en: ["payment term", "period of payment"] },
    { de: ["Zahlungsfristen"], en: ["payment terms"] },
    { de: ["Bank"], en: ["bank"] },
    { de: ["Bank", "Sitzbank"], en: ["bench"] },
    { de: ["Bank", "Geldinstitut"], en: [] },
    { de: ["Bank"], en: ["bank", "sandbank"] }
  ])

  it("matches a multi-word entry as a phrase, its plural too, and gives synonyms and translations at full weight for one sense", () => {
    const hits = matchLexicon([["who", "sets", "the", "payment", "terms"]], lexicon, BOTH)
    expect(hits.map((h) => h.surface)).toEqual(["payment terms"])
    expect(hits[0]?.candidates.map((c) => [c.text, c.weight])).toEqual([["zahlungsfristen", 1]])
    const one = matchLexicon([["zahlungsfrist"]], lexicon, BOTH)[0]
    expect(one?.candidates.map((c) => c.text).sort()).toEqual(["payment term", "period of payment", "zahlungsziel"])
    expect(one?.candidates.every((c) => c.weight === 1)).toBe(true)
    // words apart are no phrase
    expect(matchLexicon([["payment", "of", "terms"]], lexicon, BOTH).map((h) => h.surface)).not.toContain("payment terms")
  })

  it("weights by the share of the word's senses that hold an expansion", () => {
    expect(senseWeight(1, 1)).toBe(1)
    expect(senseWeight(1, 4)).toBe(0.5)
    expect(senseWeight(2, 4)).toBeCloseTo(0.707, 3)
    const bank = matchLexicon([["bank"]], lexicon, BOTH).map((h) => h.candidates.map((c) => [c.text, Math.round(c.weight * 1000) / 1000]))
    // de: Bank has 4 senses, each expansion in one of them; en: bank has 2, sandbank in one of them
    expect(bank).toEqual([[["sandbank", 0.707], ["bench", 0.5], ["geldinstitut", 0.5], ["sitzbank", 0.5]]])
  })

  it("gives a same-language synonym the groups hold only by way of the other language, below its direct synonyms and translations", () => {
    const gifts = lexiconOf([
      { de: ["Geschenke"], en: ["presents", "prezzies"] },
      { de: ["Geschenke", "Gaben"], en: ["gifts"] },
      { de: ["Geschenke"], en: ["bestowments"] }
    ])
    const hit = matchLexicon([["presents"]], gifts, BOTH)[0]
    const weights = Object.fromEntries(hit?.candidates.map((c) => [c.text, Math.round(c.weight * 1000) / 1000]) ?? [])
    // presents → Geschenke (its one sense: 1) → gifts and bestowments (1 of Geschenke's 3 senses each: √⅓)
    expect(weights).toEqual({ prezzies: 1, geschenke: 1, gifts: 0.346, bestowments: 0.346 })
    expect(PIVOT_FACTOR * senseWeight(1, 3)).toBeCloseTo(0.346, 3)
    // a same-language word: with translations off it still comes, the translation itself does not
    const own = matchLexicon([["presents"]], gifts, { ...BOTH, translations: false })[0]
    expect(own?.candidates.map((c) => c.text).sort()).toEqual(["bestowments", "gifts", "prezzies"])
    // synonyms off: none by way of the other language either
    expect(matchLexicon([["presents"]], gifts, { ...BOTH, synonyms: false })[0]?.candidates.map((c) => c.text)).toEqual(["geschenke"])
  })

  it("gives only synonyms without translations, and nothing for a stopword or a word the lexicon lacks", () => {
    const hits = matchLexicon([["zahlungsfrist"]], lexicon, { ...BOTH, translations: false })
    expect(hits[0]?.candidates.map((c) => c.text)).toEqual(["zahlungsziel"])
    expect(matchLexicon([["the"], ["hakenleiste"]], lexicon, BOTH)).toEqual([])
  })
})

describe("an English verb and its particle", () => {
  const phrasal = lexiconOf([
    { de: ["einreichen", "abgeben"], en: ["hand in", "give in", "submit"] },
    { de: [], en: ["hand", "pass", "hand over"] },
    { de: [], en: ["rail in", "rail"] },
    { de: [], en: ["fill", "fill up", "fill in"] }
  ])

  it("looks up a verb with a particle as a phrase (hand in → submit), the inflected verb too, and the verb alone only inside it", () => {
    const hits = matchLexicon([["when", "must", "i", "hand", "in", "my", "travel", "costs"]], phrasal, BOTH)
    const handIn = hits.find((h) => h.surface === "hand in")
    expect(handIn?.candidates.map((c) => c.text).sort()).toEqual(["abgeben", "einreichen", "give in", "submit"])
    // the verb alone is expanded only when the phrase brings nothing the scope holds
    expect(hits.find((h) => h.surface === "hand")?.inside).toEqual(["hand in"])
    expect(matchLexicon([["handed", "in"]], phrasal, BOTH).find((h) => h.surface === "handed in")?.candidates.map((c) => c.text)).toContain("submit")
    // a stopword that is no particle does not end a phrase; German alone has no phrasal verbs
    expect(matchLexicon([["hand", "to"]], phrasal, BOTH).map((h) => h.surface)).toEqual(["hand"])
    expect(matchLexicon([["hand", "in"]], phrasal, { ...BOTH, languages: ["de"] }).map((h) => h.surface)).toEqual([])
  })

  it("does not bring the verb alone as an expansion of its phrase (rails in → rail is the word sub-query's)", () => {
    // "rails in" brings only "rail": no phrase; the noun alone is looked up as before
    expect(matchLexicon([["rails", "in"]], phrasal, BOTH).map((h) => h.surface)).toEqual(["rails"])
    const fill = matchLexicon([["fill", "in"]], phrasal, BOTH).find((h) => h.surface === "fill in")
    expect(fill?.candidates.map((c) => c.text)).toEqual(["fill up"])
  })
})

describe("a German separable verb", () => {
  const separable = lexiconOf([
    { de: ["freigeben", "genehmigen"], en: ["release", "approve"] },
    { de: ["heben", "anheben"], en: ["lift"] },
    { de: ["aufheben", "aufbewahren"], en: ["keep"] },
    { de: ["einreichen", "abgeben"], en: ["submit"] }
  ])

  it("is looked up as the verb the lexicon holds (gibt … frei → freigeben), which comes first with its expansions, the verb alone only inside it", () => {
    const hits = matchLexicon([["wer", "gibt", "die", "rechnung", "frei"]], separable, BOTH)
    const joined = hits.find((h) => h.surface === "gibt frei")
    expect(joined?.candidates.slice(0, 4).map((c) => c.text)).toEqual(["freigeben", "approve", "genehmigen", "release"])
    expect(joined?.candidates[0]?.weight).toBe(1)
    const kept = matchLexicon([["wie", "lange", "heben", "wir", "muster", "auf"]], separable, BOTH)
    expect(kept.map((h) => h.surface)).toEqual(["heben auf", "heben"])
    expect(kept[1]?.inside).toEqual(["heben auf"])
    expect(matchLexicon([["bis", "wann", "ist", "der", "antrag", "einzureichen"]], separable, BOTH).map((h) => h.surface)).toEqual(["einzureichen"])
    // English alone joins no German verb
    expect(matchLexicon([["wer", "gibt", "die", "rechnung", "frei"]], separable, { ...BOTH, languages: ["en"] }).map((h) => h.surface)).toEqual([])
  })
})

describe("a word's expansions, computed once", () => {
  it("looks a phrase up in the lexicon once: a later question with the same word gets the same candidates without a lookup", () => {
    const inner = lexiconOf([
      { de: ["Urlaub", "Ferien"], en: ["vacation", "holiday"] },
      { de: ["Schicht"], en: ["shift", "layer"] }
    ])
    const asked: Array<string> = []
    const counting = { ...inner, groupsOf: (lang: "de" | "en", term: string) => (asked.push(`${lang}:${term}`), inner.groupsOf(lang, term)) }
    const first = matchLexicon([["urlaub", "schicht"]], counting, BOTH)
    expect(first.map((h) => h.surface).sort()).toEqual(["schicht", "urlaub"])
    expect(asked.length).toBeGreaterThan(0)
    asked.length = 0
    // another question holding the same words (and a word the lexicon lacks, asked before too)
    const again = matchLexicon([["schicht"], ["urlaub"]], counting, BOTH)
    expect(asked).toEqual([])
    expect(again.find((h) => h.surface === "urlaub")?.candidates).toEqual(first.find((h) => h.surface === "urlaub")?.candidates)
    // what the lexicon may bring is part of the key: without translations it is looked up anew
    matchLexicon([["urlaub"]], counting, { ...BOTH, translations: false })
    expect(asked.length).toBeGreaterThan(0)
  })
})

const GERMAN = [
  ruleReq("Urlaub für den Sommer bis Ende März beim Teamleiter beantragen", ["Urlaub"]),
  ruleReq("In den Ferien der Berufsschule arbeiten Auszubildende ganztags", ["Auszubildende"]),
  ruleReq("Feuerlöscher werden jedes Jahr von der Haustechnik geprüft", ["Brandschutz"]),
  ruleReq("Hakenleisten werden in Kartons zu 20 Stück verpackt", ["Verpackung"])
]

describe("search with the shipped lexicon", () => {
  it("finds a German rule through a same-language synonym (Urlaub ~ Ferien) and ranks the query's own word above it", async () => {
    const config = lexConfig(dir)
    const ids = await seed(config, GERMAN)
    const r = await search(config, { text: "Urlaub" })
    expect(r.result.variants["~urlaub"]).toContain("ferien")
    // the rule with the word itself first, the synonym-only rule after it
    expect(r.ids[0]).toBe(ids[0])
    expect(r.ids).toContain(ids[1])
    expect(r.explained[ids[1] ?? ""]?.found_via).toEqual(["ferien"])
  })

  it("finds a German rule through a Ding translation of an English phrase (fire extinguisher → Feuerlöscher)", async () => {
    const config = lexConfig(dir)
    const ids = await seed(config, GERMAN)
    const r = await search(config, { text: "Who checks the fire extinguisher?" })
    expect(r.result.variants["~fire extinguisher"]).toContain("feuerlöscher")
    expect(r.ids[0]).toBe(ids[2])
    expect(r.explained[ids[2] ?? ""]?.found_via).toContain("feuerlöscher")
  })

  it("finds an English rule through a synonym the dictionaries hold only by way of German (presents → Geschenke → gifts)", async () => {
    const config = lexConfig(dir, { languages: ["en"] })
    const ids = await seed(config, [
      ruleReq("Gifts to customers or suppliers are worth at most EUR 35 per person and year", ["compliance"]),
      ruleReq("Hotel rooms cost at most EUR 140 a night", ["travel"])
    ])
    const r = await search(config, { text: "presents for clients" })
    expect(r.result.variants["~presents"]).toContain("gifts")
    expect(r.ids[0]).toBe(ids[0])
    expect(r.explained[ids[0] ?? ""]?.found_via).toContain("gifts")
  })

  it("finds an English rule through a phrasal verb of the question (hand in → submit)", async () => {
    const config = lexConfig(dir, { languages: ["en"] })
    const ids = await seed(config, [
      ruleReq("Submit the expense report within 30 days after the trip", ["expenses"]),
      ruleReq("Train journeys longer than four hours may be booked in first class", ["travel"]),
      ruleReq("Hotel costs are reimbursed up to EUR 140 a night", ["travel"])
    ])
    const r = await search(config, { text: "How long do I have to hand in my travel costs after a trip?" })
    expect(r.result.variants["~hand in"]).toContain("submit")
    expect(r.explained[ids[0] ?? ""]?.found_via).toContain("submit")
    expect(r.ids.slice(0, 2)).toContain(ids[0])
  })

  it("finds a German rule through a separable verb of the question (heben … auf → aufheben → aufbewahren)", async () => {
    const config = lexConfig(dir)
    const ids = await seed(config, [
      ruleReq("Reklamierte Teile zwei Jahre im Rückstellmusterlager aufbewahren", ["Reklamation"]),
      ruleReq("Hakenleisten werden in Kartons zu 20 Stück verpackt", ["Verpackung"])
    ])
    const r = await search(config, { text: "Wie lange heben wir reklamierte Teile auf?" })
    expect(r.result.variants["~heben auf"]).toContain("aufbewahren")
    expect(r.ids[0]).toBe(ids[0])
    expect(r.explained[ids[0] ?? ""]?.found_via).toContain("aufbewahren")
  })

  it("finds a German rule in the passive through a derivation of the question's noun (Prüfung → geprüft), in the weak tier, not with synonyms off", async () => {
    const config = lexConfig(dir)
    const ids = await seed(config, GERMAN.slice(2))
    const r = await search(config, { text: "Prüfung" })
    expect(r.result.variants["~prüfung"]).toContain("geprüft")
    expect(r.ids).toEqual([ids[0]])
    expect(r.explained[ids[0] ?? ""]?.found_via).toEqual(["geprüft"])
    const off = await search(lexConfig(dir, { lexical: { features: { synonyms: false } } }), { text: "Prüfung" })
    expect(off.ids).toEqual([])
  })

  it("caps the expansions of a word of many senses (shift: 40) to the best weighted the scope holds, searched as the weaker syn tier", async () => {
    const config = lexConfig(dir, { languages: ["en"] })
    const words = ["displacement", "fault", "switch", "break", "move", "transfer", "transformation", "thrust"]
    const ids = await seed(config, [
      ruleReq("Every shift starts with a safety briefing", ["shift"]),
      ...words.map((w) => ruleReq(`A ${w} is logged in the maintenance book`, [w]))
    ])
    const r = await search(config, { text: "shift" })
    const expansions = r.result.variants["~shift"] ?? []
    expect(expansions).toHaveLength(MAX_PER_WORD)
    expect(words).toEqual(expect.arrayContaining(expansions))
    expect(r.ids[0]).toBe(ids[0])
    // a word of 40 senses gives each expansion little weight: they run in the weak tier
    const subs = await run(config, Effect.gen(function*() {
      const sql = yield* sqlOf("sales")
      const lex = yield* LexicalIndex
      return yield* planSubQueries(sql, yield* lex.analyze(sql, { text: "shift" }), lex.options)
    }))
    expect(subs.filter((q) => q.name === "syn").map((q) => q.factor)).toEqual([WEAK_FACTOR])
  })

  it("searches the strong expansions of a word the scope lacks at the word's own weight; a word the scope holds keeps them at the syn weight", async () => {
    const synOf = (config: ReturnType<typeof lexConfig>, text: string) => run(config, Effect.gen(function*() {
      const sql = yield* sqlOf("sales")
      const lex = yield* LexicalIndex
      const subs = yield* planSubQueries(sql, yield* lex.analyze(sql, { text }), lex.options)
      return { weights: lex.options.subWeights, syn: subs.filter((q) => q.name === "syn").map((q) => [q.full ?? q.match, q.factor ?? 1] as const) }
    }))
    const stapler = ruleReq("Gabelstapler fahren nur Beschäftigte mit Staplerschein", ["Gabelstapler"])
    // no rule holds "forklift": Gabelstapler (its one sense) stands in for it at the word's weight (1 / 0.8)
    const lacking = lexConfig(join(dir, "lacking"))
    const ids = await seed(lacking, [stapler, GERMAN[3] ?? stapler])
    const absent = await synOf(lacking, "forklift")
    expect(absent.syn).toContainEqual([expect.stringContaining("\"gabelstapler\""), absent.weights.word / absent.weights.syn])
    expect((await search(lacking, { text: "forklift" })).ids[0]).toBe(ids[0])
    // a scope that holds "forklift": the same expansion searches at the syn weight, below the word
    const holding = lexConfig(join(dir, "holding"))
    await seed(holding, [stapler, ruleReq("Forklift keys stay in the shift office", ["forklift"])])
    const present = await synOf(holding, "forklift")
    expect(present.syn).toContainEqual([expect.stringContaining("\"gabelstapler\""), 1])
    // the plural: the scope holds the word in another form (its inflection strip), so it is no stand-in either
    const plural = await synOf(holding, "forklifts")
    expect(plural.syn).toContainEqual([expect.stringContaining("\"gabelstapler\""), 1])
  })

  it("searches a multi-word expansion's last word in its other forms too: a plural entry (Kostenvoranschläge → cost estimates) finds the singular", async () => {
    const config = lexConfig(dir)
    const ids = await seed(config, [
      ruleReq("Every repair above EUR 500 needs a written cost estimate first", ["repairs"]),
      ruleReq("Pallets are stacked at most two high in the truck", ["pallets"])
    ])
    const r = await search(config, { text: "Kostenvoranschläge" })
    expect(r.result.variants["~kostenvoranschläge"]).toContain("cost estimates")
    expect(r.ids).toEqual([ids[0]])
    expect(r.explained[ids[0] ?? ""]?.found_via).toContain("cost estimates")
  })

  it("finds a German compound through a one-word expansion as its head (vacation → Urlaub → Sommerurlaub), below the whole word, not without decompound", async () => {
    const rules = [
      ruleReq("Den Sommerurlaub bis Ende März beim Teamleiter beantragen", ["Antrag"]),
      ruleReq("Paletten höchstens zweifach im Lkw stapeln", ["Paletten"])
    ]
    const config = lexConfig(dir)
    const ids = await seed(config, rules)
    const r = await search(config, { text: "vacation" })
    expect(r.result.variants["~vacation"]).toContain("urlaub")
    expect(r.ids).toEqual([ids[0]])
    expect(r.explained[ids[0] ?? ""]?.found_via).toContain("urlaub")
    const subs = await run(config, Effect.gen(function*() {
      const sql = yield* sqlOf("sales")
      const lex = yield* LexicalIndex
      return yield* planSubQueries(sql, yield* lex.analyze(sql, { text: "vacation" }), lex.options)
    }))
    expect(subs.filter((q) => q.name === "syn").map((q) => [q.table, q.factor])).toContainEqual(["lex_stem", HEAD_FACTOR])
    // without decompound the index stores no compound heads: nothing is searched for them
    const flat = lexConfig(join(dir, "flat"), { lexical: { features: { decompound: false } } })
    await seed(flat, rules)
    expect((await search(flat, { text: "vacation" })).ids).toEqual([])
  })

  it("is off with features.synonyms false; features.bilingual false keeps same-language synonyms and drops translations", async () => {
    const on = lexConfig(dir)
    const ids = await seed(on, GERMAN)
    const noBilingual = lexConfig(dir, { lexical: { features: { bilingual: false } } })
    const noSynonyms = lexConfig(dir, { lexical: { features: { synonyms: false } } })
    const fire = { text: "Who checks the fire extinguisher?" }
    expect((await search(noBilingual, fire)).result.variants["~fire extinguisher"]).toBeUndefined()
    expect((await search(noBilingual, fire)).ids).not.toContain(ids[2])
    expect((await search(noBilingual, { text: "Urlaub" })).result.variants["~urlaub"]).toContain("ferien")
    const off = await search(noSynonyms, { text: "Urlaub" })
    expect(Object.keys(off.result.variants).filter((k) => k.startsWith("~"))).toEqual([])
    expect(off.ids).toEqual([ids[0]])
  })
})
