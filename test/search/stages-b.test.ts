/**
 * Stage b wired through the SearchStages layer, on a tiny ONNX model the test writes: over real
 * HTTP (POST /v1/search) and MCP (search_rules) stage b runs, its heads are fused with stage a's
 * by RRF (checked against stage a's own answer and the exact dot products), heads only b found
 * carry found_via ["semantic"]; providers_allowed without local → not-allowed; a model that is
 * missing, broken or slow, and a stage that hangs or throws, each end in stage a's answer with
 * the right state. The tiny model's similarities mean nothing: no relevance is asserted.
 */
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { Effect, Layer } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import type { SearchResponse } from "../../src/domain/search-schemas.js"
import { openOnnxEmbedder } from "../../src/search/semantic/embedder.js"
import { rrf } from "../../src/search/semantic/fuse.js"
import { jsScores } from "../../src/search/semantic/knn.js"
import { currentVectors } from "../../src/search/semantic/vectors.js"
import { type SearchStagesShape, SearchStages, type StageB } from "../../src/search/stage.js"
import { searchStagesLayer } from "../../src/search/stages-live.js"
import { renderResultForModel } from "../../src/security/model-output.js"
import { OpsStore } from "../../src/db/ops-store.js"
import { decide } from "../../src/decision/decide.js"
import { propose } from "../../src/domain/proposals.js"
import { tempDir } from "../support/env.js"
import { manualProposal } from "../support/fixtures.js"
import { sqlOf } from "../support/run.js"
import { writeTinyModelDir } from "../support/tiny-tokenizers.js"
import { connect, structured } from "../mcp/support.js"
import {
  PERSON, postSearch, QUESTION, refs, ruleIdOf, RULES, searchRequest, settled, stageAOnly, type Started, type StagesConfig, startWithRules, stagesConfig,
  vectorStatus
} from "./stages-support.js"

let started: Started | undefined
let cleanup = () => {}
afterEach(async () => {
  await started?.server.close()
  started = undefined
  cleanup()
})

const setup = async (o: { model?: "ok" | "missing" | "broken" | "slow"; services?: Parameters<typeof startWithRules>[1]; scopes?: StagesConfig["scopes"] } = {}) => {
  const t = tempDir("gn-stage-b-")
  cleanup = t.cleanup
  const models = join(t.dir, "models")
  if (o.model !== "missing") writeTinyModelDir(models, "bge-m3", { dim: 16, ...(o.model === "slow" ? { slowMatMuls: 6 } : {}) })
  if (o.model === "broken") writeFileSync(join(models, "bge-m3", "model.onnx"), "not an onnx graph")
  const config = stagesConfig(t.dir, o.scopes === undefined ? {} : { scopes: o.scopes })
  started = await startWithRules(config, o.services ?? {})
  return { ...started, dir: t.dir, models }
}

/** The order stage b must produce: rules by the exact dot product of the stored vectors with the question's vector. */
const exactOrder = async (s: Started, models: string, question: string) => {
  const set = await s.server.run(Effect.flatMap(sqlOf("sales"), (sql) => currentVectors(sql, "bge-m3")))
  const q = await Effect.runPromise(Effect.scoped(Effect.flatMap(openOnnxEmbedder({ modelDir: models, model: "bge-m3" }), (e) => e.embedQuery(question))))
  const scores = jsScores(set.matrix, set.seqs.length, set.dim, q)
  return [...set.seqs].map((seq, i) => ({ key: `sales-${String(seq).padStart(4, "0")}`, score: scores[i] as number }))
    .sort((x, y) => y.score - x.score || x.key.localeCompare(y.key))
}

const expectFused = async (s: Started, models: string, body: SearchResponse, question: string) => {
  const a = await stageAOnly(s.server, searchRequest({ text: question }))
  const b = await exactOrder(s, models, question)
  const fused = rrf(a.bundles.map((x) => ({ key: ruleIdOf(x.head.ref), rankA: x.head.rank.a ?? 0 })), b)
  expect(body.bundles.map((x) => ruleIdOf(x.head.ref))).toEqual(fused.map((f) => f.key))
  for (const [i, x] of body.bundles.entries()) {
    const f = fused[i]
    expect(x.head.rank.rrf).toBe(f?.rank.rrf)
    expect(x.head.rank.b).toBeCloseTo(f?.rank.b ?? Number.NaN, 3)
    expect(x.head.rank.a).toBe(f?.rank.a ?? null)
    expect(x.head.rank.reranker).toBeNull()
    expect(x.head.found_via).toEqual(f?.onlyB === true ? ["semantic"] : a.bundles.find((y) => y.head.ref === x.head.ref)?.head.found_via)
  }
  return { a, fused }
}

describe("stage b over HTTP and MCP", () => {
  it("POST /v1/search: stage b ran; heads fused by RRF with stage a's; heads only b found carry found_via semantic", async () => {
    const s = await setup()
    await settled(s.server, "sales")
    const r = await postSearch(s.server, s.token, { text: QUESTION })
    expect(r.status).toBe(200)
    expect(r.body.stages.a.state).toBe("ran")
    expect(r.body.stages.b).toMatchObject({ state: "ran", reason: null })
    expect(r.body.stages.b.duration_ms).toBeGreaterThanOrEqual(0)
    expect(r.body.stages.c).toEqual({ state: "off", duration_ms: null, reason: "disabled in config" })
    const { a, fused } = await expectFused(s, s.models, r.body, QUESTION)
    // stage a alone finds only the rule that shares a word; stage b adds every other rule of the scope
    expect(refs(a).map(ruleIdOf)).toEqual(["sales-0001"])
    expect(fused.filter((f) => f.onlyB)).toHaveLength(s.ids.length - 1)
    expect(r.body.bundles).toHaveLength(s.ids.length)
    // coverage and matched_terms are stage a's measures of the words: a head only b found shares none of them
    for (const x of r.body.bundles.filter((x) => x.head.found_via.includes("semantic"))) expect([x.head.coverage, x.head.matched_terms]).toEqual([0, 0])
    expect(r.body.abstained).toBeNull()
  })

  it("MCP search_rules (detail full and compact): the same stages, order and found_via", async () => {
    const s = await setup()
    await settled(s.server, "sales")
    const mcp = await connect(s.server.url, { authorization: `Bearer ${"m".repeat(40)}` })
    try {
      const full = structured<SearchResponse>(await mcp.call("search_rules", { scopes: ["sales"], text: QUESTION, detail: "full" }))
      expect(full.stages.b.state).toBe("ran")
      await expectFused(s, s.models, full, QUESTION)
      const compact = structured<{ stages: SearchResponse["stages"]; bundles: Array<{ head: { ref: string } }> }>(
        await mcp.call("search_rules", { scopes: ["sales"], text: QUESTION })
      )
      expect(compact.stages.b.state).toBe("ran")
      expect(compact.bundles.map((b) => b.head.ref)).toEqual(refs(full))
    } finally {
      await mcp.close()
    }
  })

  it("the reasons of stage b and c are server text in the model's view, not framed as foreign", () => {
    const reasons = ["semantic model files missing", "semantic model is loading", "embedding timed out", "internal error",
      "reranker answered HTTP 503", "monthly reranker budget exhausted", "provider local is not allowed for this scope"]
    for (const reason of reasons) {
      const text = renderResultForModel({ stages: { b: { state: "failed", duration_ms: null, reason } } })
      expect(text).toContain(reason)
      expect(text).not.toContain("untrusted")
    }
  })
})

describe("stage b's pool goes through stage a's filters", () => {
  it("validity on the target day (a superseded rule followed to its successor, once), proposals only when asked, relation", async () => {
    const t = tempDir("gn-stage-b-")
    cleanup = t.cleanup
    writeTinyModelDir(join(t.dir, "models"), "bge-m3", { dim: 16 })
    const rules = [
      RULES[0], RULES[1],
      manualProposal("Ask the supplier for the delivery time before ordering black hook rails", { keywords: ["supplier"] })
    ].flatMap((r) => (r === undefined ? [] : [r]))
    started = await startWithRules(stagesConfig(t.dir), {}, rules)
    const s = started
    await s.server.run(Effect.gen(function*() {
      const grant = (yield* (yield* OpsStore).listGrants()).find((g) => g.kind === "service")
      const by = { grantId: grant?.id ?? "", channel: "api" as const }
      // sales-0004 supersedes sales-0002 from 2026-06-01; sales-0005 stays a proposal
      yield* propose(manualProposal("Invoices are paid within 14 days", { supersedes: "sales-0002", valid_from: "2026-06-01", relations: [] }), by)
      yield* decide("sales-0004", { decision: "confirm", version: 1 }, PERSON)
      yield* propose(manualProposal("Skonto gilt immer vor der Rechnung", { keywords: ["Skonto"], relations: [] }), by)
    }))
    await settled(s.server, "sales")
    const search = (body: Record<string, unknown>) => postSearch(s.server, s.token, { text: QUESTION, as_of: "2026-11-01", ...body }).then((r) => r.body)
    const plain = await search({})
    expect(plain.stages.b.state).toBe("ran")
    expect(refs(plain).sort()).toEqual(["rule/sales-0001@2", "rule/sales-0003@2", "rule/sales-0004@2"])
    const withProposals = await search({ include_proposals: true })
    const proposal = withProposals.bundles.find((b) => b.head.ref === "rule/sales-0005@1")?.head
    expect(proposal).toMatchObject({ status: "proposed", unconfirmed: true, found_via: ["semantic"] })
    expect(refs(withProposals)).toHaveLength(4)
    const before = await search({ as_of: "2026-05-01" })
    expect(refs(before).sort()).toEqual(["rule/sales-0001@2", "rule/sales-0002@3", "rule/sales-0003@2"])
    const related = await search({ relation: { kind: "product", name: "hakenleiste SCHWARZ" } })
    expect(refs(related)).toEqual(["rule/sales-0003@2"])
    expect(related.bundles[0]?.head.found_via).toEqual(["semantic"])
  })
})

describe("stage b: where it does not run, stage a answers", () => {
  it("providers_allowed without local → not-allowed for that scope; a cross-scope search reports ran (sales) over not-allowed (ops)", async () => {
    const s = await setup()
    await settled(s.server, "sales")
    const ops = await postSearch(s.server, s.token, { scopes: ["ops"], text: QUESTION })
    expect(ops.status).toBe(200)
    expect(ops.body.stages.b).toEqual({ state: "not-allowed", duration_ms: null, reason: "provider local is not allowed for this scope" })
    const both = await postSearch(s.server, s.token, { scopes: ["sales", "ops"], cross_scope: true, text: QUESTION })
    expect(both.body.stages.b.state).toBe("ran")
    const status = await vectorStatus(s.server)
    expect(status?.scopes.map((x) => x.scope)).toEqual(["sales"])
  })

  it("no scope allows provider local → not-allowed everywhere and the model is never opened (files missing does not matter)", async () => {
    const s = await setup({ model: "missing", scopes: [{ name: "sales", providers_allowed: [] }, { name: "ops", providers_allowed: ["typesafe"] }] })
    const r = await postSearch(s.server, s.token, { text: QUESTION })
    expect(r.body.stages.b).toEqual({ state: "not-allowed", duration_ms: null, reason: "provider local is not allowed for this scope" })
    expect(await vectorStatus(s.server)).toBeNull()
  })

  it("model files missing → failed with the reason on every search, the layer stands, stage a's answer; ops status says why with the path", async () => {
    const s = await setup({ model: "missing" })
    await settled(s.server)
    const expected = await stageAOnly(s.server, searchRequest({ text: QUESTION }))
    for (let i = 0; i < 2; i++) {
      const r = await postSearch(s.server, s.token, { text: QUESTION })
      expect(r.status).toBe(200)
      expect(r.body.stages.b).toEqual({ state: "failed", duration_ms: null, reason: "semantic model files missing" })
      expect(refs(r.body)).toEqual(refs(expected))
      expect(r.body.bundles[0]?.head.rank).toEqual({ a: expected.bundles[0]?.head.rank.a, b: null, rrf: null, reranker: null })
    }
    const status = await vectorStatus(s.server)
    expect(status).toMatchObject({ model: "bge-m3", state: "failed", reason: "semantic model files missing" })
    expect(status?.detail).toContain(join(s.models, "bge-m3"))
  })

  it("a broken model.onnx → failed 'semantic model cannot be loaded'", async () => {
    const s = await setup({ model: "broken" })
    await settled(s.server)
    const r = await postSearch(s.server, s.token, { text: QUESTION })
    expect(r.body.stages.b).toEqual({ state: "failed", duration_ms: null, reason: "semantic model cannot be loaded" })
    expect(refs(r.body)).toEqual(["rule/sales-0001@2"])
  })

  it("a question whose embedding outlasts the stage's timeout → failed 'embedding timed out', stage a's answer", async () => {
    const t = tempDir("gn-stage-b-")
    cleanup = t.cleanup
    writeTinyModelDir(join(t.dir, "models"), "bge-m3", { dim: 16, slowMatMuls: 8 })
    const config = stagesConfig(t.dir)
    started = await startWithRules(config, { searchStages: searchStagesLayer({ semantic: { queryTimeoutMs: 5 } }) })
    await settled(started.server, "sales")
    const r = await postSearch(started.server, started.token, { text: QUESTION })
    expect(r.status).toBe(200)
    expect(r.body.stages.b.state).toBe("failed")
    expect(r.body.stages.b.reason).toBe("embedding timed out")
    expect(refs(r.body)).toEqual(refs(await stageAOnly(started.server, searchRequest({ text: QUESTION }))))
  })

  const provided = (b: StageB): Parameters<typeof startWithRules>[1] => ({
    searchStages: Layer.succeed(SearchStages, { stages: [b] } satisfies SearchStagesShape)
  })

  it("a provided stage b that never answers is failed at its timeout; one that dies is failed 'internal error'; one that is off is off", async () => {
    const s = await setup({
      services: provided({ name: "b", timeoutMs: 50, availability: () => null, start: () => Effect.succeed({ run: () => Effect.never }) })
    })
    const expected = refs(await stageAOnly(s.server, searchRequest({ text: QUESTION })))
    const hung = await postSearch(s.server, s.token, { text: QUESTION })
    expect(hung.status).toBe(200)
    expect(hung.body.stages.b).toEqual({ state: "failed", duration_ms: 50, reason: "embedding timed out" })
    expect(refs(hung.body)).toEqual(expected)
    await s.server.close()
    cleanup()

    const d = await setup({
      services: provided({ name: "b", availability: () => null, start: () => Effect.succeed({ run: () => Effect.die(new Error("the worker is gone")) }) })
    })
    const died = await postSearch(d.server, d.token, { text: QUESTION })
    expect(died.status).toBe(200)
    expect(died.body.stages.b).toEqual({ state: "failed", duration_ms: null, reason: "internal error" })
    expect(refs(died.body)).toEqual(expected)
    await d.server.close()
    cleanup()

    const o = await setup({ services: provided({ name: "b", availability: () => ({ state: "off", duration_ms: null, reason: "disabled in config" }) }) })
    const off = await postSearch(o.server, o.token, { text: QUESTION })
    expect(off.body.stages.b.state).toBe("off")
    expect(refs(off.body)).toEqual(expected)
  })
})
