/**
 * The de↔en business vocabulary as data: size and domains, well-formed sides, no duplicate pair,
 * the German side German and the English side English, no false friend inside the list, and a
 * sensible merge with the built-in synonym groups (no pair they already hold, none joining two).
 */
import { describe, expect, it } from "vitest"
import { BILINGUAL_PAIRS, BILINGUAL_VOCABULARY, type Domain } from "../../../src/search/lexical/bilingual.js"
import { isStopword } from "../../../src/search/lexical/stopwords.js"
import { BUILTIN_SYNONYMS, sameWord } from "../../../src/search/lexical/synonyms.js"
import { fold, spellingOut, tokenize } from "../../../src/search/lexical/text.js"

const key = (side: string): string => tokenize(side).map((t) => spellingOut(fold(t))).join(" ")
const label = ([de, en]: readonly [string, string]): string => `${de} ↔ ${en}`

const deTokens = new Set(BILINGUAL_PAIRS.flatMap(([de]) => tokenize(de).map((t) => spellingOut(fold(t)))))
const enTokens = new Set(BILINGUAL_PAIRS.flatMap(([, en]) => tokenize(en).map((t) => spellingOut(fold(t)))))

describe("the de↔en vocabulary", () => {
  it("has pairs in every business domain (the curated layer: what the lexicon lacks, see curated.test.ts)", () => {
    const domains: ReadonlyArray<Domain> = ["trade", "purchasing", "sales", "logistics", "finance", "hr", "warranty", "office"]
    expect(Object.keys(BILINGUAL_VOCABULARY).sort()).toEqual([...domains].sort())
    for (const d of domains) expect(BILINGUAL_VOCABULARY[d].length, d).toBeGreaterThan(0)
  })

  it("has two non-empty sides per pair, each with a word that is not a stopword or a single letter", () => {
    for (const pair of BILINGUAL_PAIRS) {
      for (const [side, lang] of [[pair[0], "de"], [pair[1], "en"]] as const) {
        const tokens = tokenize(side)
        expect(tokens.length, label(pair)).toBeGreaterThan(0)
        expect(tokens.some((t) => t.length > 1 && !isStopword(t, [lang])), label(pair)).toBe(true)
        expect(side.trim(), label(pair)).toBe(side)
      }
    }
  })

  it("has no duplicate pair and no pair whose sides are spelled alike", () => {
    const seen = new Map<string, string>()
    for (const pair of BILINGUAL_PAIRS) {
      const k = `${key(pair[0])}|${key(pair[1])}`
      expect(seen.get(k), `${label(pair)} repeats ${seen.get(k)}`).toBeUndefined()
      seen.set(k, label(pair))
      expect(key(pair[0]), label(pair)).not.toBe(key(pair[1]))
    }
  })

  it("keeps the languages apart: every German side has a word no English side uses, and the reverse", () => {
    for (const pair of BILINGUAL_PAIRS) {
      const de = tokenize(pair[0]).map((t) => spellingOut(fold(t)))
      const en = tokenize(pair[1]).map((t) => spellingOut(fold(t)))
      expect(de.some((t) => !enTokens.has(t)), `${label(pair)}: no German word on the German side`).toBe(true)
      expect(en.some((t) => !deTokens.has(t)), `${label(pair)}: no English word on the English side`).toBe(true)
      // English sides are plain ASCII words (no umlaut, no ß)
      expect(pair[1], label(pair)).toMatch(/^[A-Za-z0-9 ]+$/)
    }
  })

  it("has no false friend inside the list: a one-word side matches no word of the other language but its translations", () => {
    const translations = new Map<string, Set<string>>()
    for (const [de, en] of BILINGUAL_PAIRS) {
      for (const [a, b] of [[de, en], [en, de]] as const) {
        const set = translations.get(key(a)) ?? new Set<string>()
        tokenize(b).forEach((t) => set.add(t))
        translations.set(key(a), set)
      }
    }
    const offenders: Array<string> = []
    for (const [mine, other] of [[0, 1], [1, 0]] as const) {
      const words = [...new Set(BILINGUAL_PAIRS.flatMap((p) => tokenize(p[other])))]
      for (const p of BILINGUAL_PAIRS) {
        const t = tokenize(p[mine])
        if (t.length !== 1) continue
        const w = t[0] ?? ""
        for (const x of words) if (sameWord(w, x) && !translations.get(key(p[mine]))?.has(x)) offenders.push(`${w} ~ ${x}`)
      }
    }
    expect([...new Set(offenders)]).toEqual([])
  })

  it("merges with the built-in synonym groups: no pair a group holds, no pair joining two groups", () => {
    const groupOf = new Map<string, number>()
    BUILTIN_SYNONYMS.forEach((g, i) => g.forEach((m) => groupOf.set(key(m), i)))
    for (const pair of BILINGUAL_PAIRS) {
      const d = groupOf.get(key(pair[0]))
      const e = groupOf.get(key(pair[1]))
      if (d === undefined || e === undefined) continue
      expect(d, `${label(pair)}: both sides in one built-in group`).not.toBe(e)
      expect.fail(`${label(pair)} joins the built-in groups ${BUILTIN_SYNONYMS[d]?.join("/")} and ${BUILTIN_SYNONYMS[e]?.join("/")}`)
    }
  })
})
