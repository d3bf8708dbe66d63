/**
 * Stage a (architecture.md §7 steps 1–6a) through stageA / explainHit on real scope files, the
 * rules written by the real writers (propose, decide).
 */
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import type { AppConfigShape } from "../../src/config/config.js"
import { decide } from "../../src/decision/decide.js"
import { propose } from "../../src/domain/proposals.js"
import { LexicalIndex } from "../../src/search/lexical/index.js"
import { ALL_OFF, DEFAULT_FEATURES, type LexicalFeatures } from "../../src/search/lexical/options.js"
import { answerKeyOf, explainHit, stageA } from "../../src/search/stage-a.js"
import { tempDir } from "../support/env.js"
import { run, sqlOf } from "../support/run.js"
import { agent, DAY, lexConfig, person, ruleReq, search, seed, withSql } from "./lexical/support.js"

let dir: string
let cleanup: () => void
beforeEach(() => {
  ;({ dir, cleanup } = tempDir())
})
afterEach(() => cleanup())

const RULES = [
  ruleReq("Schwarze Hakenleisten in RAL-9005 nur nach Rückfrage beim Lieferanten bestellen", ["Lieferzeit"]),
  ruleReq("Haken aus Edelstahl werden im Lager Nord gelagert", ["Haken"]),
  ruleReq("Leisten werden auf Paletten zu 50 Stück geliefert, der Preis gilt je Palette", ["Leisten", "Preis"]),
  ruleReq("Rechnungen der Müller GmbH zahlen wir innerhalb von 30 Tagen netto", ["Zahlungsziel"]),
  ruleReq("Invoices of Meyer Ltd are paid within 14 days of receipt", ["payment terms"]),
  ruleReq("Muster werden nur nach bestätigter Bestellung verschickt", ["Muster", "Versand"])
]

const features = (f: Partial<LexicalFeatures>) => ({ lexical: { features: f } })

describe("step 1: terms", () => {
  it("drops de/en stopwords, dedupes, keeps the text's order", async () => {
    const config = lexConfig(dir)
    await seed(config, RULES)
    const r = await search(config, { text: "Wie lange ist die Lieferzeit für die Hakenleisten, und was ist mit der Lieferzeit?" })
    expect(r.result.terms).toEqual(["lange", "lieferzeit", "hakenleisten"])
    const en = await search(config, { text: "What are the payment terms of the invoices?" })
    expect(en.result.terms).toEqual(["payment", "terms", "invoices"])
    // conjunctions are function words in both languages (bevor as before, obwohl as although)
    const clause = await search(config, { text: "Was prüfen wir, bevor die Hakenleisten rausgehen, sobald die Lieferzeit sich ändert, obwohl sie fest ist?" })
    expect(clause.result.terms).toEqual(["prüfen", "hakenleisten", "rausgehen", "lieferzeit", "ändert", "fest"])
    const unless = await search(config, { text: "Check the invoices unless the payment terms say otherwise, whether or not they are due" })
    expect(unless.result.terms).toEqual(["check", "invoices", "payment", "terms", "say", "otherwise", "due"])
  })

  it("keeps the first 12 terms of a text", async () => {
    const config = lexConfig(dir)
    await seed(config, RULES)
    const words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliett", "kilo", "lima", "mike", "november"]
    const r = await search(config, { text: words.join(" und ") })
    expect(r.result.terms).toEqual(words.slice(0, 12))
    // given terms come first, as phrases; total ≤ 20
    const given = await search(config, { text: words.join(" "), terms: ["Hook Rails", "x\"y", "Lieferzeit"] })
    expect(given.result.terms.slice(0, 3)).toEqual(["hook rails", "x y", "lieferzeit"])
    expect(given.result.terms).toHaveLength(15)
    const many = await search(config, { text: words.join(" "), terms: words.map((w) => `${w}s`).concat(["a1", "b2", "c3", "d4", "e5", "f6"]) })
    expect(many.result.terms).toHaveLength(20)
  })

  it("RAL 9005 → ral9005, first; the code finds RAL-9005 / RAL9005", async () => {
    const config = lexConfig(dir)
    await seed(config, [...RULES, ruleReq("Pulverbeschichtung immer in RAL9005 tiefschwarz", ["Farbe"])])
    const r = await search(config, { text: "Hakenleisten in RAL 9005?" })
    expect(r.result.terms).toEqual(["ral9005", "hakenleisten"])
    const code = await search(config, { text: "RAL 9005" })
    expect(code.result.terms).toEqual(["ral9005"])
    expect(code.ids.sort()).toEqual(["sales-0001", "sales-0007"])
    expect(code.explained["sales-0001"]?.found_via).toEqual(["ral9005"])
    // "30 days" finds "30 Tagen" through the unit token
    const unit = await search(config, { text: "30 days" })
    expect(unit.result.terms).toEqual(["30d"])
    expect(unit.ids).toEqual(["sales-0004"])
    // without normalize the tokens stay apart
    const off = lexConfig(dir, features({ normalize: false }))
    expect((await search(off, { text: "RAL 9005" })).result.terms).toEqual(["ral", "9005"])
  })

  it("a long mail keeps its key terms: rare words of the scope, no mail frame, no small talk", async () => {
    const config = lexConfig(dir)
    await seed(config, [
      ...RULES,
      ruleReq("Bei Reklamationen immer Fotos der beschädigten Ware anfordern", ["Reklamation"]),
      ruleReq("Der Lieferant schickt vor jeder Lieferung ein Avis", ["Lieferung"])
    ])
    const mail = [
      "Hallo Maria,",
      "",
      "ich hoffe, Du hattest ein schönes Wochenende und das Wetter war gut. Bei uns hat es leider die ganze Zeit geregnet.",
      "Kurze Frage zu unserer Bestellung von letzter Woche: die schwarzen Hakenleisten sind immer noch nicht da.",
      "Kannst Du beim Lieferanten nachfragen, wie lange die Lieferzeit aktuell ist? Der Kunde wartet schon und wird langsam ungeduldig.",
      "Außerdem brauchen wir für die Rechnung noch das Zahlungsziel, die Buchhaltung fragt schon seit Tagen danach.",
      "Die Spedition hat angeboten, die Ware Ende nächster Woche abzuholen, sofern die Papiere vollständig vorliegen.",
      "",
      "Viele Grüße",
      "Tom Beispiel",
      "Tel. +49 30 1234567"
    ].join("\n")
    const r = await search(config, { text: mail })
    expect(r.result.terms.length).toBe(6)
    expect(r.result.terms).toEqual(expect.arrayContaining(["hakenleisten", "lieferzeit", "zahlungsziel"]))
    for (const noise of ["hallo", "maria", "grüße", "tom", "wetter", "wochenende", "geregnet", "tel"]) expect(r.result.terms).not.toContain(noise)
    expect(r.ids.slice(0, 2).sort()).toEqual(["sales-0001", "sales-0004"])
    // without keyterms the same mail keeps its first 12 words, small talk included
    const off = lexConfig(dir, features({ keyterms: false }))
    expect((await search(off, { text: mail })).result.terms.slice(0, 3)).toEqual(["hallo", "maria", "hoffe"])
    // a short mail keeps its first 12 words, without the frame and the small talk
    const short = await search(config, { text: "Hallo Tom,\n\nkurze Frage: wie lange ist die Lieferzeit der Hakenleisten?\n\nDanke, Maria" })
    expect(short.result.terms).toEqual(["lange", "lieferzeit", "hakenleisten"])
  })

  it("no terms → zero hits", async () => {
    const config = lexConfig(dir)
    await seed(config, RULES)
    const r = await search(config, { text: "und die der, and the of — ?!" })
    expect(r.result).toEqual({ terms: [], variants: {}, pool: [] })
  })
})

describe("step 2: variants", () => {
  it("Lieferzeiten finds Lieferzeit (inflection strip, stem)", async () => {
    const config = lexConfig(dir)
    await seed(config, RULES)
    const r = await search(config, { text: "Lieferzeiten" })
    expect(r.result.variants.lieferzeiten).toEqual(["lieferzeiten", "lieferzeit"])
    expect(r.ids).toEqual(["sales-0001"])
    expect(r.explained["sales-0001"]).toEqual({ found_via: ["lieferzeiten"], coverage: 1, matched_terms: 1 })
  })

  it("Muller finds Müller; Mueller finds it through the spelling variant", async () => {
    const config = lexConfig(dir)
    await seed(config, RULES)
    expect((await search(config, { text: "Muller" })).ids).toEqual(["sales-0004"])
    const ue = await search(config, { text: "Mueller" })
    expect(ue.result.variants.mueller).toContain("müller")
    expect(ue.ids).toEqual(["sales-0004"])
    expect(ue.explained["sales-0004"]?.found_via).toEqual(["mueller"])
  })

  it("Ueberbrueckungen finds Überbrückung: the stems of the word's other spellings (ue → ü) on lex_stem", async () => {
    const config = lexConfig(dir)
    await seed(config, [...RULES, ruleReq("Jede Überbrückung einer Schutztür sofort dem Meister melden", ["Schutztür"])])
    // überbrückungen is not stored, and no typo correction reaches it (four edits): a stem of its
    // other spelling does (überbrückungen and Überbrückung stem alike)
    const r = await search(config, { text: "Ueberbrueckungen" })
    expect(r.ids).toEqual(["sales-0007"])
    expect(r.explained["sales-0007"]).toEqual({ found_via: ["ueberbrueckungen"], coverage: 1, matched_terms: 1 })
  })

  it("a spelling of the word the scope holds brings its inflection strip, as the word itself would: Schutztueren → schutztüren, schutztür", async () => {
    const config = lexConfig(dir)
    await seed(config, [
      ...RULES,
      ruleReq("Jede Überbrückung einer Schutztür sofort dem Meister melden", ["Meister"]),
      ruleReq("Schutztüren an Spritzgießmaschinen nie überbrücken", ["Sicherheit"])
    ])
    const doors = await search(config, { text: "Schutztueren" })
    expect(doors.result.variants.schutztueren).toEqual(expect.arrayContaining(["schutztüren", "schutztür"]))
    expect(doors.ids.sort()).toEqual(["sales-0007", "sales-0008"])
    expect(doors.explained["sales-0007"]?.found_via).toEqual(["schutztueren"])
  })

  it("the typo Liefrzeit finds Lieferzeit (fuzzy), named by the correction", async () => {
    const config = lexConfig(dir)
    await seed(config, RULES)
    const r = await search(config, { text: "Liefrzeit" })
    expect(r.result.variants.liefrzeit).toContain("lieferzeit")
    expect(r.ids).toEqual(["sales-0001"])
    expect(r.explained["sales-0001"]).toEqual({ found_via: ["lieferzeit"], coverage: 1, matched_terms: 1 })
    expect((await search(lexConfig(dir, features({ fuzzy: false })), { text: "Liefrzeit" })).ids).toEqual([])
    expect((await search(lexConfig(dir, { lexical: { max_fuzzy_terms: 0 } }), { text: "Liefrzeit" })).ids).toEqual([])
  })

  it("a word the scope lacks is not corrected into a stopword the rules hold (heben → haben), only into a word", async () => {
    const config = lexConfig(dir)
    await seed(config, [
      ...RULES,
      ruleReq("Fremdfirmen arbeiten erst im Werk, wenn sie die Einweisung unterschrieben haben", ["Fremdfirmen"]),
      ruleReq("Den Hebel der Presse nie festbinden", ["Presse"])
    ])
    const r = await search(config, { text: "heben" })
    expect(r.result.variants.heben).not.toContain("haben")
    expect(r.result.variants.heben).toContain("hebel")
    expect(r.ids).toEqual(["sales-0008"])
  })

  it("Hakenleiste finds schwarze Hakenleisten; its parts find Haken and Leisten", async () => {
    const config = lexConfig(dir)
    await seed(config, RULES)
    const r = await search(config, { text: "Hakenleiste" })
    expect(r.result.variants.hakenleiste).toEqual(expect.arrayContaining(["hakenleiste", "haken", "leisten"]))
    expect(r.ids[0]).toBe("sales-0001")
    expect(r.ids.sort()).toEqual(["sales-0001", "sales-0002", "sales-0003"])
    expect(r.explained["sales-0001"]?.found_via).toEqual(["hakenleiste"])
    expect(r.explained["sales-0002"]).toEqual({ found_via: ["haken"], coverage: 0.5, matched_terms: 1 })
    expect(r.explained["sales-0003"]?.found_via).toEqual(["leisten"])
    // an unknown compound is found through its known parts only
    const price = await search(config, { text: "Hakenleistenpreis" })
    expect(price.result.variants.hakenleistenpreis).toEqual(expect.arrayContaining(["hakenleisten", "preis"]))
    expect(price.ids.slice(0, 2).sort()).toEqual(["sales-0001", "sales-0003"])
    expect(price.explained["sales-0001"]?.found_via).toEqual(["hakenleisten"])
    expect(price.explained["sales-0003"]?.found_via).toEqual(["preis"])
    // an unknown word with a known head: half of it matches
    const wall = await search(config, { text: "Wandhakenleiste" })
    expect(wall.result.variants.wandhakenleiste).toContain("hakenleisten")
    expect(wall.ids[0]).toBe("sales-0001")
    expect(wall.explained["sales-0001"]).toEqual({ found_via: ["hakenleisten"], coverage: 0.5, matched_terms: 1 })
    // a word finds the compound it heads (Leiste → Hakenleisten) through the stored tails
    const head = await search(config, { text: "Leiste" })
    expect(head.ids).toEqual(expect.arrayContaining(["sales-0001", "sales-0003"]))
    expect(head.explained["sales-0001"]?.found_via).toEqual(["leiste"])
    // without decompound none of this
    const off = lexConfig(dir, features({ decompound: false }))
    expect((await search(off, { text: "Hakenleistenpreis" })).ids).toEqual([])
    expect((await search(off, { text: "Leiste" })).ids).toEqual(["sales-0003"])
  })

  it("a compound's parts are read as its decomposition asks for them: the parts found, never a substring no part reaches", async () => {
    const config = lexConfig(dir)
    await seed(config, RULES)
    const analysed = (text: string) =>
      run(config, Effect.gen(function*() {
        const sql = yield* sqlOf("sales")
        const lex = yield* LexicalIndex
        return yield* sql.withTransaction(lex.analyze(sql, { text }))
      }))
    // known: schwarze Hakenleisten are stored; its parts are Haken and Leisten
    const known = await analysed("Hakenleisten")
    expect(known.terms[0]?.parts.map((p) => p.text)).toEqual(["haken", "leisten"])
    const read = new Set(known.frequencies.word.keys())
    expect(read).toContain("haken")
    expect(read).toContain("leisten")
    // substrings that start where no part ends are never read (every one of them was, before)
    for (const never of ["akenl", "kenleis", "enleisten", "nleist"]) expect(read.has(never)).toBe(false)
    // unknown: its longest known head and modifier, as before
    const unknown = await analysed("Hakenleistenpreis")
    expect(unknown.terms[0]?.parts.map((p) => p.text)).toEqual(expect.arrayContaining(["hakenleisten", "preis"]))
    expect(new Set(unknown.frequencies.word.keys()).has("kenleistenpr")).toBe(false)
  })

  it("synonym groups: Lieferfrist and delivery time find a rule saying Lieferzeit", async () => {
    const config = lexConfig(dir)
    await seed(config, RULES)
    const de = await search(config, { text: "Lieferfrist" })
    expect(de.result.variants["~lieferfrist"]).toEqual(expect.arrayContaining(["lieferzeit", "delivery time"]))
    // the lexicon may add weaker hits below it
    expect(de.ids[0]).toBe("sales-0001")
    expect(de.explained["sales-0001"]).toEqual({ found_via: ["lieferzeit"], coverage: 1, matched_terms: 1 })
    const en = await search(config, { text: "delivery time" })
    expect(en.result.variants["~delivery time"]).toContain("lieferzeit")
    expect(en.ids[0]).toBe("sales-0001")
    // and "time" through its translation zeit, the head of the rule's compound Lieferzeit
    expect(en.explained["sales-0001"]).toEqual({ found_via: ["lieferzeit", "zeit"], coverage: 1, matched_terms: 2 })
    expect((await search(lexConfig(dir, features({ synonyms: false })), { text: "Lieferfrist" })).ids).toEqual([])
    // configured groups, case-insensitive
    const own = lexConfig(dir, { synonyms: [["EDELSTAHL", "Nirosta"]] })
    expect((await search(own, { text: "nirosta" })).ids).toEqual(["sales-0002"])
  })
})

describe("step 3: user text never steers MATCH", () => {
  const nasty = [
    "\"", "\"\"", "NEAR(Haken Leisten, 2)", "Haken*", "statement:Haken", "-Haken", "Haken - Leisten", "(Haken OR", ")",
    "Haken AND NOT Leisten", "^Haken", "Haken + Leisten", "{statement quote}: Haken", "\"Haken\" OR \"Leisten\"", "*", ":", "NOT", "AND OR NOT"
  ]

  it("FTS5 syntax in text and terms never breaks the query and reads as words", async () => {
    const config = lexConfig(dir)
    await seed(config, RULES)
    for (const text of nasty) {
      const r = await search(config, { text, terms: [text] })
      for (const t of r.result.terms) expect(t).toMatch(/^[\p{L}\p{N} ]+$/u)
    }
    // NOT is a word, not an operator: the rule with Leisten is not excluded
    const not = await search(config, { text: "Haken NOT Leisten" })
    expect(not.ids).toEqual(expect.arrayContaining(["sales-0002", "sales-0003"]))
    // a column filter does not restrict the columns: statement:Haken finds Haken in the keywords too
    const col = await search(config, { terms: ["keywords:Edelstahl"] })
    expect(col.result.terms).toEqual(["keywords edelstahl"])
    // "*" is no operator: Hak* searches exactly what Hak searches
    const star = await search(config, { text: "Hak*" })
    expect(star.result.terms).toEqual(["hak"])
    expect(star.result.pool).toEqual((await search(config, { text: "Hak" })).result.pool)
  })
})

describe("step 4: pool, fusion, validity", () => {
  it("a rejected rule is never indexed or found; proposals only when included", async () => {
    const config = lexConfig(dir)
    await seed(config, RULES.slice(0, 2), "none")
    await run(config, decide("sales-0001", { decision: "reject", version: 1, reason: "not a rule" }, person))
    const indexed = await withSql(config, (sql) => Effect.all({
      doc: sql<{ seq: number }>`SELECT seq FROM lex_doc ORDER BY seq`,
      word: sql<{ rowid: number }>`SELECT rowid FROM lex_word ORDER BY rowid`,
      stem: sql<{ rowid: number }>`SELECT rowid FROM lex_stem ORDER BY rowid`
    }))
    expect(indexed).toEqual({ doc: [{ seq: 2 }], word: [{ rowid: 2 }], stem: [{ rowid: 2 }] })
    expect((await search(config, { text: "Hakenleisten Lieferzeit" }, { includeProposals: true })).ids).toEqual([])
    const proposal = await search(config, { text: "Haken" }, { includeProposals: true })
    expect(proposal.result.pool.map((h) => [h.rule_id, h.status])).toEqual([["sales-0002", "proposed"]])
    expect((await search(config, { text: "Haken" })).ids).toEqual([])
  })

  it("the version's standing on the target day ranks in-force rules first", async () => {
    const config = lexConfig(dir)
    await seed(config, [
      ruleReq("Lieferzeit der Hakenleisten telefonisch anfragen", ["Lieferzeit"], { valid_from: "2025-01-01" }),
      ruleReq("Lieferzeit der Hakenleisten per Mail anfragen", ["Lieferzeit"], { valid_from: "2026-04-01", supersedes: "sales-0001" })
    ])
    const now = await search(config, { text: "Lieferzeit Hakenleisten" }, { targetDay: "2026-06-01" })
    expect(now.result.pool.map((h) => [h.rule_id, h.status])).toEqual([["sales-0002", "confirmed"], ["sales-0001", "superseded"]])
    expect((now.result.pool[0]?.rank_a ?? 0) / (now.result.pool[1]?.rank_a ?? 1)).toBeGreaterThan(1.9)
    const before = await search(config, { text: "Lieferzeit Hakenleisten" }, { targetDay: "2026-02-01" })
    expect(before.ids).toEqual(["sales-0001", "sales-0002"])
    const flat = await search(lexConfig(dir, features({ validity: false })), { text: "Lieferzeit Hakenleisten" }, { targetDay: "2026-06-01" })
    const [x, y] = flat.result.pool.map((h) => h.rank_a)
    expect(Math.abs((x ?? 0) - (y ?? 0)) / Math.max(x ?? 1, y ?? 1)).toBeLessThan(0.1)
  })

  it("rank_a has 4 decimals, best first, ties by seq; at most 200", async () => {
    const config = lexConfig(dir)
    const many = Array.from({ length: 205 }, (_, i) => ruleReq(`Regel Nummer ${i + 1} betrifft die Palette im Lager`, ["Palette"]))
    await seed(config, many, "none")
    const r = await search(config, { text: "Palette" }, { includeProposals: true })
    expect(r.result.pool).toHaveLength(200)
    expect(r.result.pool.every((h) => Math.round(h.rank_a * 10_000) / 10_000 === h.rank_a)).toBe(true)
    for (let i = 1; i < r.result.pool.length; i++) {
      const a = r.result.pool[i - 1]
      const b = r.result.pool[i]
      if (a === undefined || b === undefined) continue
      expect(a.rank_a > b.rank_a || (a.rank_a === b.rank_a && a.seq < b.seq)).toBe(true)
    }
  })

  it("fusion rrf answers with the same hits", async () => {
    const config = lexConfig(dir)
    await seed(config, RULES)
    const score = await search(config, { text: "Hakenleiste Lieferzeit" })
    const rrf = await search(lexConfig(dir, { lexical: { fusion: "rrf", rrf_k: 10 } }), { text: "Hakenleiste Lieferzeit" })
    expect(rrf.ids.sort()).toEqual(score.ids.sort())
    expect(rrf.result.pool[0]?.rank_a).toBeLessThan(1)
  })
})

describe("step 6: found_via and coverage", () => {
  it("names matched query words as spelled, weighs terms by IDF in the scope", async () => {
    const config = lexConfig(dir)
    await seed(config, RULES)
    const r = await search(config, { text: "Lieferzeiten Hakenleiste Edelstahl" })
    expect(r.result.terms).toEqual(["lieferzeiten", "hakenleiste", "edelstahl"])
    expect(r.explained["sales-0001"]?.found_via).toEqual(["hakenleiste", "lieferzeiten"])
    expect(r.explained["sales-0001"]?.matched_terms).toBe(2)
    // three terms each in one of six rules: equal weights
    expect(r.explained["sales-0001"]?.coverage).toBe(0.667)
    expect(r.explained["sales-0002"]).toEqual({ found_via: ["edelstahl", "haken"], coverage: 0.5, matched_terms: 2 })
    // a phrase weighs as its rarest word; an unknown seq explains nothing
    const none = await run(config, Effect.gen(function*() {
      const sql = yield* sqlOf("sales")
      const res = yield* stageA(sql, { text: "Haken" }, { includeProposals: false, targetDay: DAY })
      return yield* explainHit(sql, res, 999)
    }))
    expect(none).toEqual({ found_via: [], coverage: 0, matched_terms: 0 })
  })

  it("explainHit on a copy of the result re-analyses its terms", async () => {
    const config = lexConfig(dir)
    await seed(config, RULES)
    const out = await run(config, Effect.gen(function*() {
      const sql = yield* sqlOf("sales")
      const res = yield* stageA(sql, { text: "Lieferzeiten Hakenleiste" }, { includeProposals: false, targetDay: DAY })
      const copy = JSON.parse(JSON.stringify(res)) as typeof res
      return { a: yield* explainHit(sql, res, 1), b: yield* explainHit(sql, copy, 1) }
    }))
    expect(out.b).toEqual(out.a)
  })

  it("an answer asked again: its pool is the caller's own (copied when first read), the answer behind it travels with the result only", async () => {
    const config = lexConfig(dir)
    await seed(config, RULES)
    const out = await run(config, Effect.gen(function*() {
      const sql = yield* sqlOf("sales")
      const ask = stageA(sql, { text: "Lieferzeiten Hakenleiste" }, { includeProposals: false, targetDay: DAY })
      const first = yield* ask
      const pool = first.pool.map((h) => ({ ...h }))
      const top = pool[0]
      // a caller changes what it got: the held answer does not change with it
      if (top !== undefined) {
        first.pool[0] = { ...top, rank_a: -1 }
        first.pool.push({ ...top, seq: 999 })
      }
      const again = yield* ask
      const spread = { ...again }
      return { pool, again: again.pool, key: answerKeyOf(again), firstKey: answerKeyOf(first), spreadKey: answerKeyOf(spread), spreadPool: spread.pool }
    }))
    expect(out.pool.length).toBeGreaterThan(0)
    expect(out.again).toEqual(out.pool)
    expect(out.key).toBeDefined()
    expect(out.key).toBe(out.firstKey)
    // a copy is not the result stageA returned: no key to hold anything under (explainHit re-analyses it)
    expect(out.spreadKey).toBeUndefined()
    expect(out.spreadPool).toEqual(out.pool)
  })
})

describe("switches", () => {
  const QUERIES = ["Lieferzeit", "Hakenleisten", "Müller", "payment terms"]
  const names = Object.keys(DEFAULT_FEATURES) as Array<keyof LexicalFeatures>

  it("each feature switched (off, or on for trigram and prf) still answers", async () => {
    await seed(lexConfig(dir), RULES)
    for (const name of names) {
      const config = lexConfig(dir, features({ [name]: !DEFAULT_FEATURES[name] }))
      for (const text of QUERIES) {
        const r = await search(config, { text })
        expect(r.ids.length, `${name} ${text}`).toBeGreaterThan(0)
        expect(r.explained[r.ids[0] ?? ""]?.matched_terms, `${name} ${text}`).toBeGreaterThan(0)
        // only prf adds hits that match no query word (the words of the first hits)
        if (name !== "prf") expect(Object.values(r.explained).every((e) => e.matched_terms > 0), `${name} ${text}`).toBe(true)
      }
    }
  })

  it("trigram finds substrings; prf adds the words of the first hits", async () => {
    await seed(lexConfig(dir), RULES)
    const tri = lexConfig(dir, features({ trigram: true, decompound: false }))
    const r = await search(tri, { text: "leiste" })
    expect(r.ids).toEqual(expect.arrayContaining(["sales-0001", "sales-0003"]))
    expect(await withSql(tri, (sql) => sql<{ n: number }>`SELECT count(*) AS n FROM lex_tri`)).toEqual([{ n: 6 }])
  })

  it("every switch off is a plain single-index search: −bm25 on lex_word", async () => {
    await seed(lexConfig(dir), RULES)
    const config = lexConfig(dir, features(ALL_OFF))
    const r = await search(config, { text: "Haken Leisten" })
    // the term, its spelling variants and one inflection strip are not switches
    expect(r.result.variants).toEqual({ haken: ["haken", "hak"], leisten: ["leisten", "leist"] })
    const plain = await withSql(config, (sql) => sql<{ rowid: number; s: number }>`
      SELECT rowid, -bm25(lex_word, 4, 3, 2, 1) AS s FROM lex_word
      WHERE lex_word MATCH '"haken" * OR "hak" OR "leist" *' ORDER BY bm25(lex_word, 4, 3, 2, 1), rowid`)
    expect(r.result.pool.map((h) => [h.seq, h.rank_a])).toEqual(plain.map((p) => [p.rowid, Math.round(p.s * 10_000) / 10_000]))
    expect(await withSql(config, (sql) => sql<{ n: number }>`SELECT count(*) AS n FROM lex_stem`)).toEqual([{ n: 0 }])
  })
})

describe("possible_duplicates", () => {
  it("stage a over the scope: statement + keywords, proposals included, the new rule left out", async () => {
    const config: AppConfigShape = lexConfig(dir)
    await seed(config, RULES, "none")
    const created = await run(config, propose(ruleReq("Vor der Bestellung schwarzer Hakenleisten die Lieferfrist erfragen", ["Hakenleiste"]), agent))
    expect(created.possible_duplicates[0]).toBe("rule/sales-0001@1")
    expect(created.possible_duplicates).not.toContain(created.ref)
    expect(created.possible_duplicates.length).toBeLessThanOrEqual(3)
  })
})
