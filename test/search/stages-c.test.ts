/**
 * Stage c wired through the SearchStages layer, against a rerank stand-in the test starts on
 * 127.0.0.1 (test/support/rerank-server.ts: a document's score is the share of the question's
 * words it holds; it knows nothing about any eval). Over real HTTP: ok (reranked order,
 * rank.reranker, heads below the threshold dropped), slow → timeout, 500, malformed, budget
 * exhausted, below the threshold → abstained, not allowed / not enabled / no key — each not-ran
 * path ends in the answer of stage a (+b), and nothing is sent where the scope does not allow it.
 */
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { OpsStore } from "../../src/db/ops-store.js"
import type { SearchResponse } from "../../src/domain/search-schemas.js"
import { tempDir } from "../support/env.js"
import { overlapScores, type RerankServer, startRerankServer } from "../support/rerank-server.js"
import { writeTinyModelDir } from "../support/tiny-tokenizers.js"
import {
  postSearch, RERANK_KEY, refs, searchRequest, settled, type Started, type StagesConfig, startWithRules, stagesConfig, withoutC
} from "./stages-support.js"

/** Shares "the", "customer" and "pays" with the first rule, "invoice" with the second, "the" with the third. */
const QUESTION_C = "the customer pays the invoice"

let provider: RerankServer
let started: Started | undefined
let cleanup = () => {}
beforeAll(async () => {
  provider = await startRerankServer()
})
afterAll(() => provider.close())
beforeEach(() => {
  provider.requests.length = 0
  provider.mode = { kind: "ok" }
})
afterEach(async () => {
  await started?.server.close()
  started = undefined
  cleanup()
})

const SCOPES = [
  { name: "sales", providers_allowed: ["local", "typesafe"], reranker: true },
  { name: "ops", providers_allowed: ["local"], reranker: true },
  { name: "hr", providers_allowed: ["local", "typesafe"], reranker: false }
]

const setup = async (o: StagesConfig & { withB?: boolean } = {}) => {
  const t = tempDir("gn-stage-c-")
  cleanup = t.cleanup
  if (o.withB === true) writeTinyModelDir(join(t.dir, "models"), "bge-m3", { dim: 16 })
  const config = stagesConfig(t.dir, {
    scopes: SCOPES, baseUrl: provider.url, semantic: o.withB === true ? {} : false, 
    // stage a finds the German rules through configured synonyms (the lexicon's translations off): its order is not the provider's
    lexical: { features: { bilingual: false } }, synonyms: [["customer", "Kunde"], ["invoice", "Rechnung"]],
    ...o, reranker: { threshold: 0.2, ...(o.reranker === false ? {} : o.reranker) }
  })
  started = await startWithRules(config)
  if (o.withB === true) await settled(started.server, "sales")
  return started
}

const spendRows = (s: Started) =>
  s.server.run(Effect.flatMap(OpsStore, (o) => o.sql<{ scope: string; documents: number }>`SELECT scope, documents FROM reranker_usage ORDER BY seq`))

/** The answer of stage a (+b) with every rank.reranker null: what every not-ran path must give. */
const expectStageAB = async (s: Started, body: SearchResponse, text = QUESTION_C) => {
  const expected = await withoutC(s.server, searchRequest({ text }))
  expect(refs(body)).toEqual(refs(expected))
  expect(body.bundles.map((b) => b.head.rank)).toEqual(expected.bundles.map((b) => b.head.rank))
  return expected
}

describe("stage c ran", () => {
  it("reranks the fused heads of stage a+b: the provider's order, rank.reranker, heads below the threshold dropped", async () => {
    const s = await setup({ withB: true })
    const r = await postSearch(s.server, s.token, { text: QUESTION_C })
    expect(r.status).toBe(200)
    expect(r.body.stages.b.state).toBe("ran")
    expect(r.body.stages.c).toMatchObject({ state: "ran", reason: null })
    const fused = await withoutC(s.server, searchRequest({ text: QUESTION_C }))
    expect(provider.requests).toHaveLength(1)
    const sent = provider.requests[0]
    expect(sent?.path).toBe("/rerank")
    expect(sent?.headers.authorization).toBe(`Bearer ${RERANK_KEY}`)
    expect(sent?.body).toMatchObject({ model: "jev-1.14.0", query: QUESTION_C, top_n: fused.bundles.length })
    const documents = sent?.body.documents as Array<string>
    // the fused heads in their order, each as statement, keywords, relations and quote
    expect(documents.map((d) => d.split("\n")[0])).toEqual(fused.bundles.map((b) => b.head.title))
    const kept = overlapScores(QUESTION_C, documents).filter((x) => x.relevance_score >= 0.2)
    expect(kept.length).toBeGreaterThan(1)
    expect(refs(r.body)).toEqual(kept.map((x) => fused.bundles[x.index]?.head.ref))
    expect(r.body.bundles.map((b) => b.head.rank.reranker)).toEqual(kept.map((x) => x.relevance_score))
    // rank.a, rank.b and rank.rrf stay those of the fusion
    for (const b of r.body.bundles) {
      expect(b.head.rank).toMatchObject({ ...fused.bundles.find((f) => f.head.ref === b.head.ref)?.head.rank, reranker: b.head.rank.reranker })
    }
    expect(refs(r.body)).not.toEqual(refs(fused))
    expect(await spendRows(s)).toEqual([{ scope: "sales", documents: documents.length }])
  })

  it("no head reaches the threshold → no bundles, abstained below-reranker-threshold (stage c ran)", async () => {
    const s = await setup({ reranker: { threshold: 1 } })
    const r = await postSearch(s.server, s.token, { text: QUESTION_C })
    expect(r.status).toBe(200)
    expect(r.body.stages.c.state).toBe("ran")
    expect(r.body.bundles).toEqual([])
    expect(r.body.abstained).toMatchObject({ reason: "below-reranker-threshold", min_coverage: 0 })
    expect(r.body.abstained?.best_coverage).toBeGreaterThan(0)
  })

  it("where stage c ran its threshold replaces min_coverage; where it failed min_coverage applies again", async () => {
    const s = await setup({ minCoverage: 0.95 })
    const ran = await postSearch(s.server, s.token, { text: QUESTION_C })
    expect(ran.body.stages.c.state).toBe("ran")
    expect(ran.body.bundles.length).toBeGreaterThan(0)
    expect(ran.body.bundles.every((b) => (b.head.coverage ?? 0) < 0.95)).toBe(true)
    provider.mode = { kind: "status", status: 500 }
    const failed = await postSearch(s.server, s.token, { text: QUESTION_C })
    expect(failed.body.stages.c.reason).toBe("reranker answered HTTP 500")
    expect(failed.body.bundles).toEqual([])
    expect(failed.body.abstained).toMatchObject({ reason: "below-min-coverage", min_coverage: 0.95 })
  })
})

describe("stage c did not run: 200 with the answer of stage a (+b)", () => {
  it("slow → timeout, 500, malformed (not JSON, an index out of range) — each failed with its reason, the spend recorded before the call", async () => {
    const s = await setup({ withB: true })
    const cases: Array<[RerankServer["mode"], string]> = [
      [{ kind: "slow", ms: 1_500 }, "reranker timed out"],
      [{ kind: "status", status: 500 }, "reranker answered HTTP 500"],
      [{ kind: "body", body: "<html>gateway</html>" }, "reranker answer malformed"],
      [{ kind: "body", body: JSON.stringify({ results: [{ index: 99, relevance_score: 0.9 }] }) }, "reranker answer malformed"]
    ]
    for (const [mode, reason] of cases) {
      provider.mode = mode
      const r = await postSearch(s.server, s.token, { text: QUESTION_C })
      expect(r.status).toBe(200)
      expect(r.body.stages.b.state).toBe("ran")
      expect(r.body.stages.c).toMatchObject({ state: "failed", reason })
      await expectStageAB(s, r.body)
      expect(r.body.bundles.length).toBeGreaterThan(1)
    }
    expect(provider.requests).toHaveLength(cases.length)
    expect(await spendRows(s)).toHaveLength(cases.length)
  })

  it("budget exhausted → budget, nothing sent", async () => {
    const s = await setup({ reranker: { monthly_cap_usd: 0 } })
    const r = await postSearch(s.server, s.token, { text: QUESTION_C })
    expect(r.status).toBe(200)
    expect(r.body.stages.c).toEqual({ state: "budget", duration_ms: null, reason: "monthly reranker budget exhausted" })
    await expectStageAB(s, r.body)
    expect(provider.requests).toEqual([])
    expect(await spendRows(s)).toEqual([])
  })

  it("a scope without typesafe in providers_allowed, or without reranker: true → not-allowed, no text leaves the host", async () => {
    const s = await setup()
    const ops = await postSearch(s.server, s.token, { scopes: ["ops"], text: QUESTION_C })
    expect(ops.body.stages.c).toEqual({ state: "not-allowed", duration_ms: null, reason: "provider typesafe is not allowed for this scope" })
    const hr = await postSearch(s.server, s.token, { scopes: ["hr"], text: QUESTION_C })
    expect(hr.body.stages.c).toEqual({ state: "not-allowed", duration_ms: null, reason: "reranker is not enabled for this scope" })
    // a cross-scope search sends only the allowed scope's heads
    const both = await postSearch(s.server, s.token, { scopes: ["sales", "ops", "hr"], cross_scope: true, text: QUESTION_C })
    expect(both.body.stages.c.state).toBe("ran")
    expect(provider.requests).toHaveLength(1)
    expect(await spendRows(s)).toEqual([{ scope: "sales", documents: (provider.requests[0]?.body.documents as Array<string>).length }])
  })

  it("no TYPESAFE_API_KEY → failed with that reason, nothing sent", async () => {
    const s = await setup({ key: false })
    const r = await postSearch(s.server, s.token, { text: QUESTION_C })
    expect(r.body.stages.c).toEqual({ state: "failed", duration_ms: null, reason: "no TYPESAFE_API_KEY in the environment" })
    await expectStageAB(s, r.body)
    expect(provider.requests).toEqual([])
  })

  it("an unusable TYPESAFE_BASE_URL (http to a non-loopback host) → failed, nothing sent", async () => {
    const s = await setup({ baseUrl: "http://reranker.example.com/v1" })
    const r = await postSearch(s.server, s.token, { text: QUESTION_C })
    expect(r.body.stages.c).toEqual({ state: "failed", duration_ms: null, reason: "the reranker URL is not usable" })
    await expectStageAB(s, r.body)
    expect(provider.requests).toEqual([])
  })
})
