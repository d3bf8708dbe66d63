/**
 * The curated layer of stage a's vocabulary (synonyms.ts BUILTIN_SYNONYMS, bilingual.ts) holds
 * only what the shipped lexicon lacks: no curated pair is one the lexicon already relates (a
 * group of one side holding the other), and every member of a curated group has a partner in
 * its group the lexicon does not relate it to.
 */
import { describe, expect, it } from "vitest"
import { BILINGUAL_PAIRS } from "../../../src/search/lexical/bilingual.js"
import { shippedLexicon } from "../../../src/search/lexical/lexicon.js"
import { lexiconRelates } from "../../../src/search/lexical/lexicon-expand.js"
import { BUILTIN_SYNONYMS } from "../../../src/search/lexical/synonyms.js"

const lexicon = shippedLexicon()

describe("the curated layer", () => {
  it("is read beside a shipped lexicon", () => {
    expect(lexicon).not.toBeNull()
  })

  it("holds no de↔en pair the lexicon already relates", () => {
    if (lexicon === null) return expect.fail("no shipped lexicon")
    const covered = BILINGUAL_PAIRS.filter(([de, en]) => lexiconRelates(lexicon, de, en)).map(([de, en]) => `${de} ↔ ${en}`)
    expect(covered).toEqual([])
  })

  it("gives every member of a built-in synonym group a partner the lexicon does not relate it to", () => {
    if (lexicon === null) return expect.fail("no shipped lexicon")
    const idle = BUILTIN_SYNONYMS.flatMap((group) =>
      group.filter((m) => group.every((n) => n === m || lexiconRelates(lexicon, m, n))).map((m) => `${m} in [${group.join(", ")}]`))
    expect(idle).toEqual([])
  })

  it("tells a pair the lexicon relates from one it lacks", () => {
    if (lexicon === null) return expect.fail("no shipped lexicon")
    // Ding: Zahlungsfrist :: … payment term …; Rechnung :: invoice
    expect(lexiconRelates(lexicon, "Zahlungsfrist", "payment term")).toBe(true)
    expect(lexiconRelates(lexicon, "invoice", "Rechnung")).toBe(true)
    expect(lexiconRelates(lexicon, "Mindermengenzuschlag", "small order surcharge")).toBe(false)
  })
})
