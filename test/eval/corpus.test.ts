/**
 * The evaluation corpus is well-formed: sizes, the service's own request schemas, every quote
 * verbatim in its source after the contract's normalization, supersede chains, and queries whose
 * relevant keys exist and can be answered as the query asks.
 */
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { formatRuleId } from "../../src/contracts/ids.js"
import { ProposalRequest } from "../../src/domain/proposal-schemas.js"
import { jamieWindow, MIN_QUOTE_CHARS, normalizeQuote } from "../../src/domain/quote-check.js"
import { SearchRequest } from "../../src/domain/search-schemas.js"
import { SourceRequest } from "../../src/domain/source-schemas.js"
import {
  type Corpus,
  CORPORA,
  corpusDir,
  type CorpusSource,
  EVAL_DAY,
  mailText,
  parseRelation,
  queryText,
  readCorpus,
  rulesOf,
  scopesOf,
  sourcesOf,
  toProposalRequest,
  toSourceRequest
} from "../../eval/corpus.js"

const STRICT = { onExcessProperty: "error", errors: "all" } as const

/** The text the contract checks a quote against: the mail text, or the jamie window. */
const evidence = (source: CorpusSource, timestamp_s: number | undefined): string =>
  source.kind === "mail"
    ? mailText(source)
    : jamieWindow(source.segments.map((g, i) => ({ n: i + 1, start_s: g.start_s, text: g.text })), timestamp_s ?? -1_000_000)

/** What every corpus has to satisfy; `sizes` are the corpus's own minimums. */
const checkCorpus = (name: string, corpus: Corpus, sizes: { readonly rules: number; readonly noAnswer: number }) => {
  const rules = rulesOf(corpus)
  const byKey = new Map(rules.map((r) => [r.key, r]))
  const sources = new Map(sourcesOf(corpus).map(({ scope, source }) => [`${scope} ${source.id}`, source]))

  describe(`eval corpus ${name}: sizes`, () => {
    it(`has at least ${sizes.rules} rules in at least 2 scopes, 150 queries and ${sizes.noAnswer} no-answer queries`, () => {
      expect(rules.length).toBeGreaterThanOrEqual(sizes.rules)
      expect(scopesOf(corpus).length).toBeGreaterThanOrEqual(2)
      expect(corpus.queries.length).toBeGreaterThanOrEqual(150)
      expect(corpus.queries.filter((q) => q.relevant.length === 0).length).toBeGreaterThanOrEqual(sizes.noAnswer)
    })

    it("has superseded pairs, proposals, rejected rules, mails and meetings", () => {
      expect(rules.filter((r) => r.supersedes !== undefined).length).toBeGreaterThanOrEqual(3)
      expect(rules.filter((r) => r.status === "proposed").length).toBeGreaterThanOrEqual(2)
      expect(rules.filter((r) => r.status === "rejected").length).toBeGreaterThanOrEqual(1)
      const all = [...sources.values()]
      expect(all.filter((s) => s.kind === "mail").length).toBeGreaterThanOrEqual(10)
      expect(all.filter((s) => s.kind === "jamie").length).toBeGreaterThanOrEqual(sizes.rules >= 200 ? 10 : 7)
    })
  })

  describe(`eval corpus ${name}: sources and rules`, () => {
    it("has unique rule keys and source ids per scope", () => {
      expect(byKey.size).toBe(rules.length)
      expect(sources.size).toBe(sourcesOf(corpus).length)
    })

    it("gives every source as a valid SourceRequest (mails with several lines, meetings with segments)", () => {
      for (const { scope, source } of sourcesOf(corpus)) {
        expect(() => Schema.decodeUnknownSync(SourceRequest, STRICT)(toSourceRequest(scope, source)), source.id).not.toThrow()
        if (source.kind === "mail") expect(source.text.length, source.id).toBeGreaterThanOrEqual(4)
      }
    })

    it("gives every rule as a valid ProposalRequest with a source of its own scope", () => {
      for (const r of rules) {
        const source = sources.get(`${r.scope} ${r.source}`)
        expect(source, `${r.key}: source ${r.source} in ${r.scope}`).toBeDefined()
        if (source === undefined) continue
        if (source.kind === "jamie") {
          expect(r.timestamp_s, `${r.key}: a meeting quote needs timestamp_s`).toBeDefined()
          expect(source.segments.some((g) => g.start_s === r.timestamp_s), `${r.key}: timestamp_s is a segment's start`).toBe(true)
        } else expect(r.timestamp_s, `${r.key}: a mail quote has no timestamp_s`).toBeUndefined()
        const req = toProposalRequest(r.scope, r, source, r.supersedes === undefined ? null : formatRuleId(r.scope, 1))
        expect(() => Schema.decodeUnknownSync(ProposalRequest, STRICT)(req), r.key).not.toThrow()
      }
    })

    it("quotes every rule verbatim from its source after the contract's normalization", () => {
      for (const r of rules) {
        const source = sources.get(`${r.scope} ${r.source}`)
        if (source === undefined) throw new Error(`${r.key}: no source`)
        const quote = normalizeQuote(r.quote)
        expect([...quote].length, `${r.key}: quote too short`).toBeGreaterThanOrEqual(MIN_QUOTE_CHARS)
        expect(normalizeQuote(evidence(source, r.timestamp_s)).includes(quote), `${r.key}: quote not in ${r.source}`).toBe(true)
      }
    })

    it("supersedes only an earlier confirmed rule of the same scope, from a valid_from not before it", () => {
      const seen = new Set<string>()
      for (const r of rules) {
        if (r.supersedes !== undefined) {
          const pred = byKey.get(r.supersedes)
          expect(seen.has(r.supersedes), `${r.key}: ${r.supersedes} must come first`).toBe(true)
          expect(pred?.scope, r.key).toBe(r.scope)
          expect(pred?.status ?? "confirmed", r.key).toBe("confirmed")
          expect((r.status ?? "confirmed"), `${r.key}: a successor is confirmed`).toBe("confirmed")
          expect(r.valid_from >= (pred?.valid_from ?? ""), r.key).toBe(true)
        }
        seen.add(r.key)
      }
      const superseded = rules.map((r) => r.supersedes).filter((k) => k !== undefined)
      expect(new Set(superseded).size, "a rule is superseded at most once").toBe(superseded.length)
    })
  })

  describe(`eval corpus ${name}: queries`, () => {
    const supersededBy = new Map(rules.filter((r) => r.supersedes !== undefined).map((r) => [r.supersedes ?? "", r]))

    it("has unique ids, and every query is a valid SearchRequest", () => {
      expect(new Set(corpus.queries.map((q) => q.id)).size).toBe(corpus.queries.length)
      for (const q of corpus.queries) {
        const text = queryText(q)
        const raw = {
          scopes: q.scopes, cross_scope: q.scopes.length > 1, limit: 10,
          ...(text === undefined ? {} : { text }), ...(q.terms === undefined ? {} : { terms: q.terms }),
          ...(q.relation === undefined ? {} : { relation: parseRelation(q.relation) }),
          ...(q.as_of === undefined ? {} : { as_of: q.as_of }),
          ...(q.include_proposals === undefined ? {} : { include_proposals: q.include_proposals })
        }
        expect(() => Schema.decodeUnknownSync(SearchRequest, STRICT)(raw), q.id).not.toThrow()
        for (const scope of q.scopes) expect(scopesOf(corpus), q.id).toContain(scope)
      }
    })

    it("names only existing rules of the query's scopes that the query can see", () => {
      for (const q of corpus.queries) {
        expect(new Set(q.relevant).size, `${q.id}: duplicate relevant key`).toBe(q.relevant.length)
        for (const key of q.relevant) {
          const r = byKey.get(key)
          expect(r, `${q.id}: unknown rule ${key}`).toBeDefined()
          if (r === undefined) continue
          expect(q.scopes, `${q.id}: ${key} is in ${r.scope}`).toContain(r.scope)
          expect(r.status, `${q.id}: ${key} is rejected, which never appears`).not.toBe("rejected")
          if (r.status === "proposed") expect(q.include_proposals, `${q.id}: ${key} is a proposal`).toBe(true)
          if (q.relation !== undefined) {
            const want = parseRelation(q.relation)
            expect(r.relations.map(parseRelation).some((x) => x.kind === want.kind && x.name.toLowerCase() === want.name.toLowerCase()),
              `${q.id}: ${key} lacks the relation ${q.relation}`).toBe(true)
          }
          // in force on the query's day (as_of, else the eval's fixed today)
          const day = q.as_of ?? EVAL_DAY
          const successor = supersededBy.get(key)
          if (successor !== undefined) {
            expect(day < successor.valid_from, `${q.id}: ${key} is superseded by ${successor.key} from ${successor.valid_from}`).toBe(true)
          }
          expect(r.valid_from <= day, `${q.id}: ${key} is not yet valid on ${day}`).toBe(true)
        }
      }
    })

    it("covers every query category, with long mails among the queries; a direction only on cross-language queries", () => {
      const categories = new Set(corpus.queries.map((q) => q.category))
      for (const c of ["typo", "compound", "inflection", "umlaut", "synonym", "cross-language", "paraphrase", "long-text", "code", "no-answer"]) {
        expect(categories, c).toContain(c)
      }
      expect(corpus.queries.filter((q) => Array.isArray(q.text) && q.text.length >= 4).length).toBeGreaterThanOrEqual(10)
      for (const q of corpus.queries) if (q.direction !== undefined) expect(q.category, q.id).toBe("cross-language")
    })
  })
}

const [ladenbau, kunststoff] = CORPORA
if (ladenbau === undefined || kunststoff === undefined) throw new Error("two corpora expected")

const first = readCorpus(corpusDir(ladenbau.dir))
checkCorpus(ladenbau.name, first, { rules: 200, noAnswer: 15 })

describe(`eval corpus ${ladenbau.name}: its own mix`, () => {
  it("has 30 cross-language queries (15 per scope) and 60 paraphrases", () => {
    // gaps.md §11: at least 30 cross-language (English question, German rule and the reverse) and 30 paraphrase queries
    const crossLanguage = first.queries.filter((q) => q.category === "cross-language")
    expect(crossLanguage.length).toBeGreaterThanOrEqual(30)
    for (const scope of ["einkauf", "sales"]) expect(crossLanguage.filter((q) => q.scopes.includes(scope)).length, scope).toBeGreaterThanOrEqual(15)
    expect(first.queries.filter((q) => q.category === "paraphrase").length).toBeGreaterThanOrEqual(60)
  })
})

const second = readCorpus(corpusDir(kunststoff.dir))
checkCorpus(kunststoff.name, second, { rules: 120, noAnswer: 10 })

describe(`eval corpus ${kunststoff.name}: a domain of its own`, () => {
  it("has at least 20 paraphrase, synonym and long-mail queries and 20 cross-language queries in each direction", () => {
    const count = (pred: (q: (typeof second.queries)[number]) => boolean) => second.queries.filter((q) => q.relevant.length > 0 && pred(q)).length
    for (const c of ["paraphrase", "synonym"] as const) expect(count((q) => q.category === c), c).toBeGreaterThanOrEqual(20)
    expect(count((q) => q.category === "long-text" && Array.isArray(q.text) && q.text.length >= 4), "long-text mails").toBeGreaterThanOrEqual(20)
    for (const d of ["de-en", "en-de"] as const) {
      expect(count((q) => q.category === "cross-language" && q.direction === d), d).toBeGreaterThanOrEqual(20)
    }
    expect(second.queries.filter((q) => q.category === "cross-language" && q.direction === undefined).map((q) => q.id), "a direction on every cross-language query").toEqual([])
  })

  it("shares no scope or rule key with the first corpus", () => {
    const keys = new Set(rulesOf(first).map((r) => r.key))
    expect(rulesOf(second).filter((r) => keys.has(r.key)).map((r) => r.key)).toEqual([])
    expect(scopesOf(second).filter((s) => scopesOf(first).includes(s))).toEqual([])
  })
})
