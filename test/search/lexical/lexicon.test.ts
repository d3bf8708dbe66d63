/**
 * The lexicon: lexiconOf over groups in memory, the packed lexicon over a data file's bytes
 * (the same answers as lexiconOf), a damaged file refused with its reason, and the committed
 * lexicon (share/lexicon) answering the business words the dictionaries hold.
 */
import { copyFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Worker } from "node:worker_threads"
import { gzipSync } from "node:zlib"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { lexiconFilePath, lexiconOf, normalizeTerm, readLexiconFile, shippedLexicon, shippedLexiconFrom, shippedLexiconImage } from "../../../src/search/lexical/lexicon.js"
import type { Lexicon, LexiconGroup, LexiconLang } from "../../../src/search/lexical/lexicon.js"
import { encodeLexiconFile, splitLexiconFile } from "../../../src/search/lexical/lexicon-file.js"
import { packedLexicon } from "../../../src/search/lexical/lexicon-packed.js"
import { typeScriptExecArgv } from "../../../src/backup/worker-loader.js"
import { tempDir } from "../../support/env.js"

let dir: string
let cleanup: () => void
beforeEach(() => {
  ;({ dir, cleanup } = tempDir())
})
afterEach(() => cleanup())

const GROUPS: ReadonlyArray<LexiconGroup> = [
  { de: ["zahlungsfrist"], en: ["period of payment", "payment term", "payment deadline"] },
  { de: ["aufschub", "stundung", "zahlungsfrist", "zahlungsziel"], en: [] },
  { de: ["urlaub", "ferien"], en: ["holiday", "vacation"] },
  { de: [], en: ["vacation", "holiday", "vacation period"] },
  { de: ["schicht"], en: ["shift"] },
  { de: ["schicht"], en: ["layer"] }
]

const SOURCES = [{ name: "test", package: "test-package", version: "1", sha256: "0".repeat(64) }]

const writeLexicon = (name: string, text: string): string => {
  const path = join(dir, name)
  writeFileSync(path, gzipSync(Buffer.from(text, "utf8")))
  return path
}

const readOk = (path: string): Lexicon => {
  const read = readLexiconFile(path)
  if (!read.ok) throw new Error(read.why)
  return read.lexicon
}

const ask = (lexicon: Lexicon, lang: LexiconLang, term: string) => lexicon.groupsOf(lang, term).map((g) => ({ de: [...g.de], en: [...g.en] }))

describe("normalizeTerm", () => {
  it("folds case, compatibility forms, apostrophes and white space", () => {
    expect(normalizeTerm("  Zahlungs\u00adFrist ")).toBe("zahlungs\u00adfrist")
    expect(normalizeTerm("Payment\t  TERM")).toBe("payment term")
    expect(normalizeTerm("ﬁle")).toBe("file")
    expect(normalizeTerm("one\u2019s")).toBe("one's")
    expect(normalizeTerm("Ｕｒｌａｕｂ")).toBe("urlaub")
  })
})

describe("lexiconOf", () => {
  it("counts groups and distinct (lang, term) pairs and gives a term's groups in order", () => {
    const lexicon = lexiconOf(GROUPS)
    expect(lexicon.groups).toBe(6)
    expect(lexicon.terms).toBe(15) // 7 German, 8 English: vacation, holiday and schicht repeat
    expect(ask(lexicon, "de", "zahlungsfrist")).toEqual([GROUPS[0], GROUPS[1]])
    expect(ask(lexicon, "en", "vacation")).toEqual([GROUPS[2], GROUPS[3]])
    expect(ask(lexicon, "de", "schicht").map((g) => g.en)).toEqual([["shift"], ["layer"]])
    expect(ask(lexicon, "en", "zahlungsfrist")).toEqual([])
    expect(ask(lexicon, "de", "")).toEqual([])
  })

  it("normalizes the terms it is given and drops repeats within a side", () => {
    const lexicon = lexiconOf([{ de: ["Urlaub ", "URLAUB", "Ferien"], en: ["Holiday  Season"] }])
    expect(ask(lexicon, "de", "urlaub")).toEqual([{ de: ["urlaub", "ferien"], en: ["holiday season"] }])
    expect(lexicon.terms).toBe(3)
  })
})

describe("a data file", () => {
  it("answers as lexiconOf over the same groups", () => {
    const file = readOk(writeLexicon("lexicon.txt.gz", encodeLexiconFile(SOURCES, GROUPS)))
    const memory = lexiconOf(GROUPS)
    expect([file.groups, file.terms]).toEqual([memory.groups, memory.terms])
    for (const g of GROUPS) {
      for (const lang of ["de", "en"] as const) {
        for (const t of g[lang]) expect(ask(file, lang, t)).toEqual(ask(memory, lang, t))
      }
    }
    expect(ask(file, "de", "zahlungsfris")).toEqual([])
    expect(ask(file, "de", "payment term")).toEqual([])
  })

  it("answers as lexiconOf over 20,000 generated groups: repeats across groups and languages, umlauts, phrases", () => {
    let state = 7
    const rand = (n: number) => {
      state = (state * 1103515245 + 12345) % 2147483648
      return state % n
    }
    const syllables = ["zah", "lung", "frist", "ur", "laub", "fe", "ri", "en", "schicht", "über", "stun", "dung", "pay", "ment", "term", "hol", "i", "day"]
    const word = () => Array.from({ length: 1 + rand(3) }, () => syllables[rand(syllables.length)]).join("")
    const term = () => Array.from({ length: 1 + (rand(5) === 0 ? 1 + rand(3) : 0) }, word).join(" ")
    const groups: Array<LexiconGroup> = Array.from({ length: 20_000 }, () => ({
      de: [...new Set(Array.from({ length: rand(4) }, term))],
      en: [...new Set(Array.from({ length: rand(4) }, term))]
    })).filter((g) => g.de.length + g.en.length >= 2)
    const file = readOk(writeLexicon("generated.txt.gz", encodeLexiconFile(SOURCES, groups)))
    const memory = lexiconOf(groups)
    expect([file.groups, file.terms]).toEqual([memory.groups, memory.terms])
    for (const g of groups.slice(0, 3000)) {
      for (const lang of ["de", "en"] as const) {
        for (const t of [...g.de, ...g.en]) expect(ask(file, lang, t)).toEqual(ask(memory, lang, t))
      }
    }
    for (let i = 0; i < 2000; i++) {
      const t = term()
      expect(ask(file, "de", t)).toEqual(ask(memory, "de", t))
    }
  })

  it("answers the same whatever count of terms the build is given: too few (built again), none, too many", () => {
    const text = encodeLexiconFile(SOURCES, GROUPS)
    const split = splitLexiconFile(Buffer.from(text, "utf8"))
    if (!split.ok) throw new Error(split.why)
    const memory = lexiconOf(GROUPS)
    for (const count of [split.header.terms, 1, 0, split.header.terms * 10]) {
      const { lexicon, lines } = packedLexicon(split.body, count)
      expect([lines, lexicon.groups, lexicon.terms]).toEqual([GROUPS.length, memory.groups, memory.terms])
      for (const g of GROUPS) {
        for (const lang of ["de", "en"] as const) {
          for (const t of [...g.de, ...g.en]) expect(ask(lexicon, lang, t)).toEqual(ask(memory, lang, t))
        }
      }
    }
  })

  it("is refused with its reason when absent, not a lexicon, truncated or miscounted", () => {
    const text = encodeLexiconFile(SOURCES, GROUPS)
    const why = (path: string) => {
      const read = readLexiconFile(path)
      return read.ok ? "read" : read.why
    }
    expect(why(join(dir, "none.txt.gz"))).toMatch(/cannot be read \(ENOENT\)/)
    writeFileSync(join(dir, "plain.txt"), text)
    expect(why(join(dir, "plain.txt"))).toMatch(/cannot be read/)
    expect(why(writeLexicon("other.txt.gz", "hello\n"))).toMatch(/not a lexicon file/)
    expect(why(writeLexicon("cut.txt.gz", text.slice(0, text.length - 20)))).toMatch(/does not end|says 6 groups/)
    expect(why(writeLexicon("short.txt.gz", text.slice(0, text.lastIndexOf("\n", text.length - 2) + 1)))).toMatch(/says 6 groups and \d+ terms, the file holds 5/)
  })
})

describe("the committed lexicon", () => {
  const lexicon = shippedLexicon()
  const terms = (lang: LexiconLang, term: string, side: LexiconLang) => (lexicon?.groupsOf(lang, term) ?? []).flatMap((g) => g[side])

  it("is found from the module and loads once", () => {
    expect(lexiconFilePath()).toMatch(/share\/lexicon\/lexicon\.txt\.gz$/)
    expect(lexicon).not.toBeNull()
    expect(shippedLexicon()).toBe(lexicon)
    expect(lexicon?.groups).toBeGreaterThan(100_000)
    expect(lexicon?.terms).toBeGreaterThan(lexicon?.groups ?? 0)
  })

  it("is held in one shared image another thread looks up in without reading the file: the same groups for every term", async () => {
    const image = shippedLexiconImage()
    expect(image).toBeInstanceOf(SharedArrayBuffer)
    expect(shippedLexiconFrom()).toBe("file")
    // a worker thread, given the image, answers every lookup as this thread does
    const probes: Array<readonly [LexiconLang, string]> = [
      ["de", "zahlungsfrist"], ["en", "payment term"], ["de", "urlaub"], ["en", "vacation"], ["de", "gefahrgut"],
      ["en", "carrier"], ["de", "lieferzeit"], ["de", "kein solches wort"], ["en", ""]
    ]
    const worker = new Worker(new URL("../../support/lexicon-worker.ts", import.meta.url), { execArgv: [...typeScriptExecArgv()], workerData: { image, probes } })
    try {
      const got = await new Promise<{ groups: number; terms: number; found: unknown }>((resolve, reject) => {
        worker.once("message", resolve)
        worker.once("error", reject)
      })
      expect(got.groups).toBe(lexicon?.groups)
      expect(got.terms).toBe(lexicon?.terms)
      expect(got.found).toEqual(probes.map(([l, t]) => lexicon?.groupsOf(l, t)))
      expect((got.found as Array<Array<unknown>>).filter((g) => g.length > 0).length).toBe(7)
    } finally {
      await worker.terminate()
    }
  })

  it("translates, and knows synonyms in each language", () => {
    expect(terms("de", "zahlungsfrist", "en")).toContain("payment term")
    expect(terms("en", "payment term", "de")).toContain("zahlungsfrist")
    expect(terms("de", "urlaub", "de")).toContain("ferien")
    expect(lexicon?.groupsOf("en", "vacation").some((g) => g.en.includes("holiday"))).toBe(true)
    expect(terms("de", "gefahrgut", "en")).toContain("dangerous goods")
    expect(lexicon?.groupsOf("de", "Zahlungsfrist")).toEqual([])
  })

  it("is one file: a copy elsewhere reads the same", () => {
    const copy = join(dir, "copy.txt.gz")
    copyFileSync(lexiconFilePath(), copy)
    const again = readOk(copy)
    expect([again.groups, again.terms]).toEqual([lexicon?.groups, lexicon?.terms])
  })
})
