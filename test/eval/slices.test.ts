/**
 * The eval's corpus selection and the query groups of its tables: both corpora by default, the
 * named ones with --corpus, and the cross-language queries split by direction.
 */
import { describe, expect, it } from "vitest"
import { CORPORA, corpusDir, readCorpus } from "../../eval/corpus.js"
import { selectCorpora, slicesOf } from "../../eval/slices.js"

describe("eval: corpora of a run", () => {
  it("runs every corpus, the first corpus first, when --corpus is absent", () => {
    expect(selectCorpora([]).map((c) => c.name)).toEqual(["ladenbau", "kunststoff"])
    expect(selectCorpora(["--only", "defaults"]).map((c) => c.name)).toEqual(["ladenbau", "kunststoff"])
  })

  it("runs the named corpora with --corpus, in the corpora's order", () => {
    expect(selectCorpora(["--corpus", "kunststoff"]).map((c) => c.name)).toEqual(["kunststoff"])
    expect(selectCorpora(["--corpus", "kunststoff,ladenbau"]).map((c) => c.name)).toEqual(["ladenbau", "kunststoff"])
  })

  it("stops on an unknown or missing corpus name, naming the known ones", () => {
    expect(() => selectCorpora(["--corpus", "logistik"])).toThrow(/unknown corpus logistik; known: ladenbau, kunststoff/)
    expect(() => selectCorpora(["--corpus"])).toThrow(/none given/)
  })
})

describe("eval: query groups of the tables", () => {
  for (const info of CORPORA) {
    const corpus = readCorpus(corpusDir(info.dir))
    const answerable = corpus.queries.filter((q) => q.relevant.length > 0)

    it(`${info.name}: the cross-language column is followed by one column per direction that together hold all its queries`, () => {
      const slices = slicesOf(corpus)
      const names = slices.map((s) => s.name)
      const at = names.indexOf("cross-language")
      expect(names.slice(at, at + 3)).toEqual(["cross-language", "xlang de→en", "xlang en→de"])
      const count = (name: string) => answerable.filter((q) => slices.find((s) => s.name === name)?.has(q) === true).length
      expect(count("xlang de→en") + count("xlang en→de")).toBe(count("cross-language"))
      expect(count("xlang de→en")).toBeGreaterThan(0)
      expect(count("xlang en→de")).toBeGreaterThan(0)
    })

    it(`${info.name}: every category with answerable queries has its column, no-answer none`, () => {
      const names = slicesOf(corpus).map((s) => s.name)
      expect(new Set(names.filter((n) => !n.startsWith("xlang")))).toEqual(new Set(answerable.map((q) => q.category)))
      expect(names).not.toContain("no-answer")
    })
  }
})
