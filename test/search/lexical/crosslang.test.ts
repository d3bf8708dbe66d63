/**
 * Cross-language expansion of stage a with the de↔en vocabulary: the pair index (pure) and the
 * expansion on real scope files — only where the other language's words occur in the scope,
 * listed under query.variants "~<matched words>", named in found_via, switched by
 * search.lexical.features.bilingual (and synonyms).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { bilingualLexicon, builtinBilingualLexicon, matchBilingual } from "../../../src/search/lexical/crosslang.js"
import { tempDir } from "../../support/env.js"
import { lexConfig, ruleReq, search, seed } from "./support.js"

let dir: string
let cleanup: () => void
beforeEach(() => {
  ;({ dir, cleanup } = tempDir())
})
afterEach(() => cleanup())

const LANGS = ["de", "en"] as const

describe("the pair index", () => {
  const lexicon = bilingualLexicon([
    ["Rücksendekosten", "return shipping costs"],
    ["Urlaubsantrag", "leave request"],
    ["Beschwerde", "complaint"],
    ["Reklamation", "complaint"],
    ["ab Werk", "ex works"]
  ])

  it("matches either side, phrases in order, one inflection away, and gives the other side", () => {
    expect(matchBilingual([["who", "pays", "return", "shipping", "costs"]], lexicon, LANGS))
      .toEqual([{ surface: "return shipping costs", others: [["rücksendekosten"]] }])
    expect(matchBilingual([["two", "leave", "requests"]], lexicon, LANGS))
      .toEqual([{ surface: "leave requests", others: [["urlaubsantrag"]] }])
    // diacritics fold as in the index: Urlaubsanträge → urlaubsantrage, one strip from urlaubsantrag
    expect(matchBilingual([["die", "urlaubsanträge"]], lexicon, LANGS)).toEqual([{ surface: "urlaubsanträge", others: [["leave", "request"]] }])
    expect(matchBilingual([["urlaubsantrag"]], lexicon, LANGS)).toEqual([{ surface: "urlaubsantrag", others: [["leave", "request"]] }])
    expect(matchBilingual([["ab", "werk", "preise"]], lexicon, LANGS)).toEqual([{ surface: "ab werk", others: [["ex", "works"]] }])
    // words apart or out of order are no phrase
    expect(matchBilingual([["request", "for", "leave"]], lexicon, LANGS)).toEqual([])
  })

  it("lists every translation of a word once, one hop only (complaint → Beschwerde, Reklamation; never on to a third word)", () => {
    expect(matchBilingual([["complaints"], ["complaint"]], lexicon, LANGS))
      .toEqual([{ surface: "complaints", others: [["beschwerde"], ["reklamation"]] }, { surface: "complaint", others: [["beschwerde"], ["reklamation"]] }])
    expect(matchBilingual([["beschwerde"]], lexicon, LANGS)).toEqual([{ surface: "beschwerde", others: [["complaint"]] }])
  })

  it("never matches a one-word side on a stopword", () => {
    const withStop = bilingualLexicon([["Notiz", "will"]])
    expect(matchBilingual([["we", "will", "see"]], withStop, LANGS)).toEqual([])
  })

  it("indexes the built-in vocabulary once", () => {
    expect(builtinBilingualLexicon()).toBe(builtinBilingualLexicon())
    // a curated pair (one the lexicon lacks)
    expect(matchBilingual([["retail"]], builtinBilingualLexicon(), LANGS)[0]?.others).toContainEqual(["einzelhandel"])
  })
})

const GERMAN = [
  ruleReq("Urlaubsanträge für die Sommermonate bis zum 31. März beim Teamleiter einreichen", ["Urlaub"]),
  ruleReq("Die Rücksendekosten trägt der Kunde, wenn die Ware unbeschädigt zurückkommt", ["Rücksendung"]),
  ruleReq("Beschwerden von Kunden innerhalb eines Werktags beantworten", ["Kundenservice"]),
  ruleReq("Hakenleisten werden in Kartons zu 20 Stück verpackt", ["Verpackung"])
]

const ENGLISH = [
  ruleReq("Submit every leave request to your team leader two weeks ahead", ["leave"]),
  ruleReq("Customers pay the return shipping costs unless the goods are faulty", ["returns"]),
  ruleReq("Hook rails are packed in cartons of 20", ["packaging"])
]

describe("expansion in a scope", () => {
  it("an English query finds a German rule through the vocabulary, listed under ~<matched words> and named in found_via", async () => {
    const config = lexConfig(dir)
    const ids = await seed(config, GERMAN)
    const r = await search(config, { text: "How do I hand in a leave request?" })
    expect(r.result.variants["~leave request"]).toEqual(["urlaubsantrag"])
    expect(r.ids[0]).toBe(ids[0])
    expect(r.explained[ids[0] ?? ""]?.found_via).toContain("urlaubsantrag")
    // the expansion counts for the words it translates (leave, request); "hand" counts only through
    // the lexicon's expansion of the phrasal verb it is part of: hand in → einreichen, the rule's word
    expect(r.result.variants["~hand in"]).toContain("einreichen")
    expect(r.result.variants["~hand"]).toBeUndefined()
    expect(r.explained[ids[0] ?? ""]?.found_via).toContain("einreichen")
    expect(r.explained[ids[0] ?? ""]?.matched_terms).toBe(3)

    const costs = await search(config, { text: "Who pays the return shipping costs?" })
    expect(costs.result.variants["~return shipping costs"]).toEqual(["rücksendekosten"])
    expect(costs.ids[0]).toBe(ids[1])
    expect(costs.explained[ids[1] ?? ""]?.found_via).toContain("rücksendekosten")
  })

  it("the same query against a scope without the German words gets no expansion", async () => {
    const config = lexConfig(dir)
    const ids = await seed(config, ENGLISH)
    const off = lexConfig(dir, { lexical: { features: { bilingual: false } } })
    for (const text of ["How do I hand in a leave request?", "Who pays the return shipping costs?"]) {
      const r = await search(config, { text })
      // exactly what the query gets without the vocabulary (the built-in groups still expand)
      expect(r.result.variants, text).toEqual((await search(off, { text })).result.variants)
      expect(Object.values(r.result.variants).flat(), text).not.toContain("urlaubsantrag")
      expect(Object.values(r.result.variants).flat(), text).not.toContain("rücksendekosten")
    }
    const r = await search(config, { text: "How do I hand in a leave request?" })
    expect(r.result.variants["~leave request"]).toBeUndefined()
    expect(r.ids[0]).toBe(ids[0])
  })

  it("a German query finds an English rule the same way", async () => {
    const config = lexConfig(dir)
    const ids = await seed(config, ENGLISH)
    const r = await search(config, { text: "Wer zahlt die Rücksendekosten?" })
    expect(r.result.variants["~rücksendekosten"]).toEqual(["return shipping costs"])
    expect(r.ids[0]).toBe(ids[1])
    expect(r.explained[ids[1] ?? ""]?.found_via).toEqual(["return shipping costs"])
  })

  it("joins a built-in group touched by the same words under one key, without repeating a member", async () => {
    const config = lexConfig(dir)
    const ids = await seed(config, GERMAN)
    const r = await search(config, { text: "customer complaint" })
    // built-in: complaint ~ Reklamation, Beanstandung, Mängelrüge; the vocabulary adds Beschwerde (in the scope)
    expect(r.result.variants["~complaint"]).toEqual(["reklamation", "beanstandung", "mängelrüge", "beschwerde"])
    expect(r.ids).toContain(ids[2])
    expect(r.explained[ids[2] ?? ""]?.found_via).toContain("beschwerde")
  })

  it("is off with features.bilingual false, with synonyms false, and with a single language", async () => {
    const on = lexConfig(dir)
    const ids = await seed(on, GERMAN)
    const query = { text: "leave request" }
    expect((await search(on, query)).ids).toEqual([ids[0]])
    for (const search_ of [
      { lexical: { features: { bilingual: false } } },
      { lexical: { features: { synonyms: false } } },
      { languages: ["en"] }
    ]) {
      const r = await search(lexConfig(dir, search_), query)
      expect(r.result.variants["~leave request"], JSON.stringify(search_)).toBeUndefined()
      expect(r.ids, JSON.stringify(search_)).not.toContain(ids[0])
    }
  })
})
