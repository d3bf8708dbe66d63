import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { columnTexts } from "../../../src/search/lexical/document.js"
import { ALL_OFF, buildKey, DEFAULT_OPTIONS, type Language, lexicalOptions } from "../../../src/search/lexical/options.js"
import { collapseAlts } from "../../../src/search/lexical/query.js"
import { altExpr, fuse, orExpr, validityFactor } from "../../../src/search/lexical/rank.js"
import { isStopword } from "../../../src/search/lexical/stopwords.js"
import { matchSynonyms, sameWord, type SynonymGroup, synonymGroups } from "../../../src/search/lexical/synonyms.js"
import {
  codeTokens,
  editDistance,
  fold,
  inflectionStrips,
  spellingIn,
  spellingOut,
  stripMailFrame,
  tails,
  tokenize
} from "../../../src/search/lexical/text.js"
import { testConfig } from "../../support/env.js"

const codes = (text: string) => codeTokens(text.normalize("NFKC"), (t) => isStopword(t, ["de", "en"])).map((c) => c.token)

describe("tokens", () => {
  it("NFKC, lowercase, split on everything but letters and digits", () => {
    expect(tokenize("Ｌｉｅｆｅｒｚｅｉｔ: ﬁnal – „RAL‑9005“ (Hakenleisten)!")).toEqual(["lieferzeit", "final", "ral", "9005", "hakenleisten"])
    expect(tokenize("  ")).toEqual([])
  })

  it("folds diacritics like unicode61 remove_diacritics 2 and keeps ß", () => {
    expect(fold("müller")).toBe("muller")
    expect(fold("crème")).toBe("creme")
    expect(fold("straße")).toBe("straße")
  })

  it("spelling variants ä↔ae, ö↔oe, ü↔ue, ß↔ss", () => {
    expect(spellingOut("müller straße größe")).toBe("mueller strasse groesse")
    expect(spellingIn("mueller")).toContain("müller")
    expect(spellingIn("strasse")).toContain("straße")
    expect(spellingIn("lieferzeit")).toEqual([])
  })

  it("one inflection strip per language, stem ≥ 3 characters", () => {
    expect(inflectionStrips("lieferzeiten", ["de", "en"])).toEqual(["lieferzeit"])
    expect(inflectionStrips("orders", ["de", "en"])).toEqual(["order"])
    expect(inflectionStrips("ordering", ["en"])).toEqual(["order"])
    expect(inflectionStrips("invoices", ["en"])).toEqual(["invoic"])
    expect(inflectionStrips("kindern", ["de"])).toEqual(["kind"])
    expect(inflectionStrips("tage", ["de"])).toEqual(["tag"])
    expect(inflectionStrips("ihe", ["de"])).toEqual([])
    expect(inflectionStrips("9005", ["de", "en"])).toEqual([])
  })

  it("compound tails: stems of every suffix of ≥ 4 letters after ≥ 3 letters", () => {
    expect(tails("hakenleisten")).toContain("_leist")
    expect(tails("zahlungsziel")).toContain("_ziel")
    expect(tails("lieferzeit")).toContain("_zeit")
    expect(tails("haken")).toEqual([])
  })

  it("edit distance with transpositions, bounded", () => {
    expect(editDistance("liefrzeit", "lieferzeit", 2)).toBe(1)
    expect(editDistance("lieferzeit", "leiferzeit", 2)).toBe(1)
    expect(editDistance("rechnung", "zahlung", 2)).toBe(3)
    expect(editDistance("abc", "abcdef", 1)).toBe(2)
  })

  it("edit distance: the table's rows reused give what a table of its own gives, for any words and bound, long words too", () => {
    /** the optimal string alignment distance with a table of its own, bounded as editDistance (code units, as it compares) */
    const reference = (a: string, b: string, max: number): number => {
      if (Math.abs(a.length - b.length) > max) return max + 1
      const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)))
      for (let i = 1; i <= a.length; i++) {
        for (let j = 1; j <= b.length; j++) {
          const row = d[i] as Array<number>
          const up = d[i - 1] as Array<number>
          let v = Math.min((up[j] as number) + 1, (row[j - 1] as number) + 1, (up[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1))
          if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, ((d[i - 2] as Array<number>)[j - 2] as number) + 1)
          row[j] = v
        }
        if (Math.min(...(d[i] as Array<number>)) > max) return max + 1
      }
      return (d[a.length] as Array<number>)[b.length] as number
    }
    const word = fc.array(fc.constantFrom("a", "b", "e", "ä", "ß", "𝔞", "z"), { maxLength: 12 }).map((cs) => cs.join(""))
    const long = fc.array(fc.constantFrom("a", "b", "c"), { minLength: 30, maxLength: 70 }).map((cs) => cs.join(""))
    fc.assert(fc.property(fc.oneof(word, long), fc.oneof(word, long), fc.integer({ min: 0, max: 3 }), (a, b, max) => {
      expect(editDistance(a, b, max)).toBe(reference(a, b, max))
    }), { numRuns: 2000 })
  })
})

describe("canonical code and unit tokens (normalize)", () => {
  it("RAL 9005 and its spellings → ral9005", () => {
    expect(codes("Hakenleisten (RAL 9005)")).toEqual(["ral9005"])
    expect(codes("RAL-9005")).toEqual(["ral9005"])
    expect(codes("RAL9005")).toEqual(["ral9005"])
    expect(codes("ral 9005, DIN EN ISO 9001:2015")).toEqual(["ral9005", "iso9001"])
  })

  it("number and unit → one cross-language token", () => {
    expect(codes("innerhalb von 30 Tagen netto")).toEqual(["30d"])
    expect(codes("within 30 days net")).toEqual(["30d"])
    expect(codes("a 30-day term")).toEqual(["30d"])
    expect(codes("2,5 % Skonto, 2% discount")).toEqual(["2p5pct", "2pct"])
    expect(codes("ab € 1.000 oder 1.000 EUR")).toEqual(["1000eur", "1000eur"])
    expect(codes("50 Stück je Palette, 24 h")).toEqual(["50stk", "24h"])
  })

  it("no code from ordinary words, stopwords or dates", () => {
    expect(codes("in 30 minutes")).toEqual(["30min"])
    expect(codes("Bitte 5 mal anrufen")).toEqual([])
    expect(codes("IN 30 Fällen")).toEqual([])
    expect(codes("am 12.03.2026")).toEqual([])
    expect(codes("Artikel 5")).toEqual([])
  })

  it("the index holds the words and, with normalize, the codes after them", () => {
    const on = columnTexts("Hakenleisten (RAL 9005), 30 Tage", DEFAULT_OPTIONS)
    expect(on.word).toBe("hakenleisten ral 9005 30 tage ral9005 30d")
    expect(on.stem.split(" ")).toEqual(expect.arrayContaining(["hakenleist", "ral9005", "30d", "_leist"]))
    expect(on.tri).toBe("")
    const off = columnTexts("Hakenleisten (RAL 9005), 30 Tage", { ...DEFAULT_OPTIONS, features: ALL_OFF })
    expect(off).toEqual({ word: "hakenleisten ral 9005 30 tage", stem: "", tri: "" })
  })
})

describe("the mail frame", () => {
  it("drops greeting, closing, signature, headers and reply lines; keeps quoted text", () => {
    const mail = [
      "Hallo zusammen,",
      "",
      "ab sofort fragen wir vor jeder Bestellung die Lieferzeit an.",
      "",
      "Viele Grüße",
      "Maria Muster",
      "Tel. +49 30 123456",
      "",
      "Am 12.03.2026 um 09:15 schrieb Tom <tom@example.com>:",
      "> Wie lange dauert die Lieferung der Hakenleisten?",
      "Von: Tom",
      "Betreff: Hakenleisten"
    ].join("\r\n")
    const body = stripMailFrame(mail)
    expect(body).toContain("Lieferzeit")
    expect(body).toContain("Wie lange dauert die Lieferung der Hakenleisten?")
    for (const gone of ["Hallo", "Grüße", "Maria", "Tel.", "schrieb", "Von:", "Betreff"]) expect(body).not.toContain(gone)
  })

  it("keeps business lines that merely start like a closing", () => {
    expect(stripMailFrame("Danke für die schnelle Lieferung der Muster")).toBe("Danke für die schnelle Lieferung der Muster")
    expect(stripMailFrame("E-Mail an den Kunden schicken, bevor die Rechnung rausgeht")).toContain("Rechnung")
  })
})

describe("synonyms", () => {
  it("matches members one inflection apart, never a stopword alone", () => {
    expect(sameWord("lieferzeiten", "lieferzeit")).toBe(true)
    expect(sameWord("invoices", "invoice")).toBe(true)
    expect(sameWord("lage", "lager")).toBe(false)
    // a built-in group and a configured one
    const groups = synonymGroups([["Kunde", "customer"]])
    const touched = matchSynonyms([["terms", "of", "payment", "for", "customers"]], groups, ["de", "en"])
    const members = touched.map((m) => m.surfaces)
    expect(members).toEqual(expect.arrayContaining([["terms of payment"], ["customers"]]))
    expect(matchSynonyms([["must"]], groups, ["de", "en"])).toEqual([])
  })

  it("answers as trying every member of every group does, in the same order", () => {
    // the plain reading of the rule: every member against every window of every segment
    const everyMember = (segments: ReadonlyArray<ReadonlyArray<string>>, groups: ReadonlyArray<SynonymGroup>, languages: ReadonlyArray<Language>) => {
      const out: Array<{ group: number; members: Array<number>; surfaces: Array<string> }> = []
      groups.forEach((group, gi) => {
        const members: Array<number> = []
        const surfaces: Array<string> = []
        group.forEach((member, mi) => {
          for (const seg of segments) {
            for (let i = 0; i + member.length <= seg.length; i++) {
              const window = seg.slice(i, i + member.length)
              if (member.length === 1 && isStopword(window[0] ?? "", languages)) continue
              if (window.every((t, j) => sameWord(t, member[j] ?? ""))) {
                if (!members.includes(mi)) members.push(mi)
                const surface = window.join(" ")
                if (!surfaces.includes(surface)) surfaces.push(surface)
              }
            }
          }
        })
        if (members.length > 0) out.push({ group: gi, members, surfaces })
      })
      return out
    }
    const groups = synonymGroups([["Hakenleiste", "hook rail", "Leiste"], ["Termin", "date"]])
    // member words, their inflections and strips, stopwords and words of no group
    const words = [...new Set(groups.flat().flat())].flatMap((w) => [w, `${w}s`, `${w}en`, `${w}e`, w.slice(0, -1)])
      .concat(["of", "the", "die", "und", "payment", "zahlung", "xyz", "lage"])
    const segment = fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 8 })
    fc.assert(fc.property(fc.array(segment, { minLength: 1, maxLength: 3 }), (segments) => {
      expect(matchSynonyms(segments, groups, ["de", "en"])).toEqual(everyMember(segments, groups, ["de", "en"]))
    }), { numRuns: 400 })
    // a whole member list in one segment: every group touched, in order
    const all = [groups.flat().flat()]
    expect(matchSynonyms(all, groups, ["de", "en"])).toEqual(everyMember(all, groups, ["de", "en"]))
    expect(matchSynonyms(all, groups, ["de", "en"]).length).toBe(groups.length)
  })

  it("merges configured groups with built-in groups that share a member, case-insensitive", () => {
    const groups = synonymGroups([["LIEFERZEIT", "Durchlaufzeit"], ["Hakenleiste", "hook rail"]])
    const lz = groups.find((g) => g.some((m) => m.join(" ") === "durchlaufzeit"))
    expect(lz?.map((m) => m.join(" "))).toEqual(expect.arrayContaining(["lieferzeit", "lieferfrist", "delivery time", "durchlaufzeit"]))
    expect(groups.find((g) => g.some((m) => m.join(" ") === "hook rail"))?.length).toBe(2)
  })
})

describe("FTS5 expressions", () => {
  it("every token is a quoted literal with inner quotes doubled", () => {
    expect(altExpr({ tokens: ["a\"b", "NEAR"], prefix: true })).toBe("\"a\"\"b\" + \"NEAR\" *")
    expect(orExpr([{ tokens: ["x"], prefix: false }, { tokens: ["x"], prefix: false }, { tokens: [], prefix: false }])).toBe("\"x\"")
    expect(orExpr([])).toBeNull()
  })

  it("a shorter prefix alternative covers the longer ones", () => {
    const alts = collapseAlts([
      { tokens: ["lieferzeiten"], prefix: true }, { tokens: ["lieferzeit"], prefix: true }, { tokens: ["lieferzeit"], prefix: false }
    ])
    expect(alts).toEqual([{ tokens: ["lieferzeit"], prefix: true }])
  })
})

describe("fusion and validity", () => {
  const row = (seq: number, score: number) =>
    ({ seq, score, rule_id: `sales-${seq}`, version: 2, status: "confirmed" as const, valid_from: "2026-01-01", valid_until: null })
  /** A sub-query's rows as fuse takes them: the versions and their scores at the same index. */
  const sub = (...rows: ReadonlyArray<ReturnType<typeof row>>) => ({ docs: rows, scores: rows.map((r) => r.score) })

  /** The fused value of a seq (undefined when no sub-query has it). */
  const valueOf = (f: ReturnType<typeof fuse>, seq: number) => {
    const i = f.rows.findIndex((r) => r.seq === seq)
    return i < 0 ? undefined : f.values[i]
  }

  it("score: sub_weight × (−bm25 / best −bm25) summed; a single sub-query keeps −bm25", () => {
    const two = fuse([["word", sub(row(1, -4), row(2, -2))], ["stem", sub(row(2, -1))]], DEFAULT_OPTIONS)
    expect(valueOf(two, 1)).toBeCloseTo(1)
    expect(valueOf(two, 2)).toBeCloseTo(0.5 + 0.8)
    const one = fuse([["word", sub(row(1, -4), row(2, -2))]], DEFAULT_OPTIONS)
    expect(valueOf(one, 1)).toBe(4)
  })

  it("each seq once, with the row its first sub-query gave; one fusion leaves nothing to the next", () => {
    const first = row(2, -2)
    const f = fuse([["word", sub(row(1, -4), first)], ["stem", sub(row(2, -1), row(3, -1))]], DEFAULT_OPTIONS)
    expect(f.rows.map((r) => r.seq)).toEqual([1, 2, 3])
    expect(f.rows[1]).toBe(first)
    expect(f.values.length).toBe(3)
    // the same seqs again, alone: nothing of the fusion before is added
    const again = fuse([["stem", sub(row(2, -1), row(3, -1))]], DEFAULT_OPTIONS)
    expect(again.rows.map((r) => r.seq)).toEqual([2, 3])
    expect([...again.values]).toEqual([1, 1])
  })

  it("rrf: sub_weight / (k + rank)", () => {
    const r = fuse([["word", sub(row(1, -4), row(2, -2))], ["stem", sub(row(2, -1))]], { ...DEFAULT_OPTIONS, fusion: "rrf", rrfK: 10 })
    expect(valueOf(r, 1)).toBeCloseTo(1 / 11)
    expect(valueOf(r, 2)).toBeCloseTo(1 / 12 + 0.8 / 11)
  })

  it("the standing on the target day", () => {
    const day = "2026-06-01"
    expect(validityFactor({ status: "confirmed", valid_from: "2020-01-01", valid_until: null }, day)).toBe(1)
    expect(validityFactor({ status: "superseded", valid_from: "2020-01-01", valid_until: "2026-05-01" }, day)).toBe(0.5)
    expect(validityFactor({ status: "superseded", valid_from: "2020-01-01", valid_until: "2026-07-01" }, day)).toBe(1)
    expect(validityFactor({ status: "confirmed", valid_from: "2026-07-01", valid_until: null }, day)).toBe(0.8)
    expect(validityFactor({ status: "proposed", valid_from: "2020-01-01", valid_until: null }, day)).toBe(0.95)
    const recent = validityFactor({ status: "confirmed", valid_from: "2026-05-31", valid_until: null }, day)
    expect(recent).toBeGreaterThan(1.04)
    expect(recent).toBeLessThanOrEqual(1.05)
  })
})

describe("options", () => {
  it("defaults, overrides and the build key of what is stored", () => {
    const dflt = lexicalOptions(testConfig("/tmp/x").file.search)
    expect(dflt).toEqual(DEFAULT_OPTIONS)
    const cfg = testConfig("/tmp/x", {
      search: { languages: ["en"], synonyms: [["a", "b"]], lexical: { features: { trigram: true, fuzzy: false }, fusion: "rrf", sub_weights: { syn: 0.1 } } }
    })
    const o = lexicalOptions(cfg.file.search)
    expect(o.features).toMatchObject({ trigram: true, fuzzy: false, stem: true })
    expect(o.subWeights).toMatchObject({ syn: 0.1, word: 1 })
    expect(o.fusion).toBe("rrf")
    expect(buildKey(o)).toBe("gn-lex-1;stem=1;decompound=1;normalize=1;trigram=1;languages=en")
    // fuzzy, synonyms, weights … change no stored row
    expect(buildKey({ ...DEFAULT_OPTIONS, features: { ...DEFAULT_OPTIONS.features, fuzzy: false, prf: true } })).toBe(buildKey(DEFAULT_OPTIONS))
  })
})
