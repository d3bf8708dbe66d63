/**
 * Stage c against a provider stand-in on 127.0.0.1 (test/support/rerank-server.ts): each way a
 * call can end is a typed state with a fixed reason; nothing is sent when the scope does not
 * allow the provider, without a key, or over the monthly budget; the spend is in ops.sqlite
 * before the request arrives.
 */
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect, Redacted } from "effect"
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest"
import type { AppConfigShape } from "../../../src/config/config.js"
import { OpsStore } from "../../../src/db/ops-store.js"
import { spentThisMonthUsd } from "../../../src/db/reranker-usage.js"
import { estimateCostUsd, estimateTokens } from "../../../src/search/reranker/cost.js"
import { rerankerBudgetFinding, rerankerKeyFinding } from "../../../src/search/reranker/findings.js"
import { rerankerGate } from "../../../src/search/reranker/gate.js"
import { applyRerank, runStageC, STAGE_C_REASON, STAGE_C_REASONS, type StageCDeps, type StageCRequest } from "../../../src/search/reranker/stage-c.js"
import { makeTypesafeProvider, parseRerankAnswer, typesafeBaseUrl } from "../../../src/search/reranker/typesafe.js"
import { tempDir, testConfig } from "../../support/env.js"
import { startRerankServer, type RerankServer } from "../../support/rerank-server.js"
import { run } from "../../support/run.js"

const KEY = "tsk-test-key-never-logged-0123456789"
let server: RerankServer
let dir: string
let cleanup: () => void
beforeAll(async () => {
  server = await startRerankServer()
})
afterAll(() => server.close())
beforeEach(() => {
  ;({ dir, cleanup } = tempDir())
  server.requests.length = 0
  server.mode = { kind: "ok" }
  server.onRequest = null
})
afterEach(() => cleanup())

const configWith = (reranker: Record<string, unknown>, scopes?: Array<Record<string, unknown>>): AppConfigShape =>
  testConfig(dir, {
    search: { reranker: { enabled: true, timeout_ms: 200, ...reranker } },
    scopes: scopes ?? [
      { name: "sales", providers_allowed: ["local", "typesafe"], reranker: true },
      { name: "ops", providers_allowed: ["local"], reranker: true },
      { name: "hr", providers_allowed: ["typesafe"] }
    ]
  })

const REQUEST: StageCRequest = {
  scope: "sales",
  query: "who pays the freight for returns",
  documents: [
    { key: "sales-0001", text: "Invoices are paid within 30 days" },
    { key: "sales-0002", text: "The customer pays the freight for returns" },
    { key: "sales-0003", text: "Returns need a photo" }
  ]
}

const stageC = (config: AppConfigShape, req: StageCRequest = REQUEST, over: Partial<StageCDeps> = {}) =>
  run(config, Effect.flatMap(OpsStore, (ops) => {
    const reranker = config.file.search.reranker
    const deps: StageCDeps = {
      file: config.file,
      apiKey: Redacted.make(KEY),
      provider: makeTypesafeProvider({
        baseUrl: server.url, apiKey: Redacted.make(KEY), model: "jev-1.14.0", timeoutMs: reranker.enabled ? reranker.timeout_ms : 1000
      }),
      opsSql: ops.sql,
      ...over
    }
    return runStageC(deps, req)
  }))
const usageRows = (config: AppConfigShape) =>
  run(config, Effect.flatMap(OpsStore, (o) => o.sql<{ scope: string; documents: number; tokens: number; cost_usd: number }>`SELECT scope, documents, tokens, cost_usd FROM reranker_usage`))

describe("ok", () => {
  it("POSTs the wire format with the bearer key, maps scores to the heads and records the estimated spend first", async () => {
    const config = configWith({ monthly_cap_usd: 5 })
    let spentWhenCalled: number | null = null
    const opsSql: { sql: SqlClient | null } = { sql: null }
    server.onRequest = async () => {
      if (opsSql.sql !== null) spentWhenCalled = await Effect.runPromise(spentThisMonthUsd(opsSql.sql, "Europe/Berlin"))
    }
    const result = await run(config, Effect.flatMap(OpsStore, (ops) => {
      opsSql.sql = ops.sql
      return runStageC({
        file: config.file, apiKey: Redacted.make(KEY), opsSql: ops.sql,
        provider: makeTypesafeProvider({ baseUrl: server.url, apiKey: Redacted.make(KEY), model: "jev-1.14.0", timeoutMs: 500 })
      }, REQUEST)
    }))
    expect(result.state).toBe("ran")
    if (result.state !== "ran") return
    expect([...result.scores]).toEqual([["sales-0002", 5 / 6], ["sales-0003", 1 / 6], ["sales-0001", 0]])
    expect(server.requests).toHaveLength(1)
    const req = server.requests[0]
    expect(req?.method).toBe("POST")
    expect(req?.path).toBe("/rerank")
    expect(req?.headers.authorization).toBe(`Bearer ${KEY}`)
    expect(req?.headers["content-type"]).toBe("application/json")
    expect(req?.body).toEqual({ model: "jev-1.14.0", query: REQUEST.query, documents: REQUEST.documents.map((d) => d.text), top_n: 3 })
    const tokens = estimateTokens(REQUEST.query, REQUEST.documents.map((d) => d.text))
    expect(await usageRows(config)).toEqual([{ scope: "sales", documents: 3, tokens, cost_usd: estimateCostUsd("jev-1.14.0", tokens) }])
    expect(spentWhenCalled).toBe(estimateCostUsd("jev-1.14.0", tokens))
    // ops.sqlite holds neither the key nor any text that was sent
    const bytes = ["ops.sqlite", "ops.sqlite-wal"].map((f) => (existsSync(join(dir, f)) ? readFileSync(join(dir, f)).toString("latin1") : "")).join("")
    for (const secret of [KEY, REQUEST.query, ...REQUEST.documents.map((d) => d.text)]) expect(bytes).not.toContain(secret)
  })

  it("sends at most 50 documents, each cut to 2,000 characters; no documents → ran without a call", async () => {
    const config = configWith({})
    const many = Array.from({ length: 60 }, (_, i) => ({ key: `sales-${String(i + 1).padStart(4, "0")}`, text: `doc ${i} ${"x".repeat(3000)}` }))
    const r = await stageC(config, { ...REQUEST, documents: many })
    expect(r.state).toBe("ran")
    const docs = server.requests[0]?.body.documents as Array<string>
    expect(docs).toHaveLength(50)
    expect(docs.every((d) => d.length === 2000)).toBe(true)
    expect(server.requests[0]?.body.top_n).toBe(50)
    server.requests.length = 0
    expect(await stageC(config, { ...REQUEST, documents: [] })).toEqual({ state: "ran", duration_ms: 0, scores: new Map() })
    expect(server.requests).toHaveLength(0)
  })
})

describe("failures are states with a fixed reason", () => {
  it("slow → timeout (the request is aborted at timeout_ms); the spend stays recorded", async () => {
    server.mode = { kind: "slow", ms: 2000 }
    const config = configWith({ timeout_ms: 150 })
    const r = await stageC(config)
    expect(r).toMatchObject({ state: "failed", reason: STAGE_C_REASONS.timeout })
    expect(await usageRows(config)).toHaveLength(1)
  })

  it("HTTP 500 and 401 → failed with the status", async () => {
    const config = configWith({})
    server.mode = { kind: "status", status: 500 }
    expect(await stageC(config)).toMatchObject({ state: "failed", reason: "reranker answered HTTP 500" })
    server.mode = { kind: "status", status: 401 }
    expect(await stageC(config)).toMatchObject({ state: "failed", reason: "reranker answered HTTP 401" })
  })

  it("malformed answers → failed malformed", async () => {
    const config = configWith({})
    for (const body of [
      "<html>gateway</html>",
      JSON.stringify({ data: [] }),
      JSON.stringify({ results: [{ index: 7, relevance_score: 0.5 }] }),
      JSON.stringify({ results: [{ index: 0, relevance_score: 3.2 }] }),
      JSON.stringify({ results: [{ index: 0, relevance_score: 0.5 }, { index: 0, relevance_score: 0.4 }] }),
      JSON.stringify({ results: [{ index: "0", relevance_score: 0.5 }] })
    ]) {
      server.mode = { kind: "body", body }
      expect(await stageC(config)).toMatchObject({ state: "failed", reason: STAGE_C_REASONS.malformed })
    }
  })

  it("no server listening → failed unreachable", async () => {
    const config = configWith({})
    const closed = await startRerankServer()
    await closed.close()
    const r = await stageC(config, REQUEST, {
      provider: makeTypesafeProvider({ baseUrl: closed.url, apiKey: Redacted.make(KEY), model: "jev-1.14.0", timeoutMs: 500 })
    })
    expect(r).toMatchObject({ state: "failed", reason: STAGE_C_REASONS.unreachable })
  })

  it("every reason is a fixed text the model-output list can hold", async () => {
    const reasons = [STAGE_C_REASONS.off, STAGE_C_REASONS.providerNotAllowed, STAGE_C_REASONS.scopeOff, STAGE_C_REASONS.noKey,
      STAGE_C_REASONS.badUrl, STAGE_C_REASONS.budget, STAGE_C_REASONS.notRecorded, STAGE_C_REASONS.timeout,
      STAGE_C_REASONS.httpError(503), STAGE_C_REASONS.malformed, STAGE_C_REASONS.unreachable]
    expect(reasons.filter((r) => !STAGE_C_REASON.test(r))).toEqual([])
  })
})

describe("nothing leaves the host unless allowed, keyed and within budget", () => {
  it("off, provider not allowed, scope without reranker: no request, no spend", async () => {
    const config = configWith({})
    expect(await stageC(testConfig(dir))).toEqual({ state: "off", duration_ms: null, reason: "disabled in config" })
    expect(await stageC(config, { ...REQUEST, scope: "ops" })).toEqual({ state: "not-allowed", duration_ms: null, reason: "provider typesafe is not allowed for this scope" })
    expect(await stageC(config, { ...REQUEST, scope: "hr" })).toEqual({ state: "not-allowed", duration_ms: null, reason: "reranker is not enabled for this scope" })
    expect(await stageC(config, { ...REQUEST, scope: "unknown" })).toMatchObject({ state: "not-allowed" })
    expect(server.requests).toHaveLength(0)
    expect(await usageRows(config)).toEqual([])
  })

  it("no key or an unusable URL: failed, no request, no spend", async () => {
    const config = configWith({})
    expect(await stageC(config, REQUEST, { apiKey: null })).toEqual({ state: "failed", duration_ms: null, reason: STAGE_C_REASONS.noKey })
    expect(await stageC(config, REQUEST, { provider: { error: "x" } })).toEqual({ state: "failed", duration_ms: null, reason: STAGE_C_REASONS.badUrl })
    expect(server.requests).toHaveLength(0)
    expect(await usageRows(config)).toEqual([])
  })

  it("budget exhausted → state budget, no request; cap 0 never sends", async () => {
    const cost = estimateCostUsd("jev-1.14.0", estimateTokens(REQUEST.query, REQUEST.documents.map((d) => d.text)))
    const config = configWith({ monthly_cap_usd: cost * 2.5 })
    expect((await stageC(config)).state).toBe("ran")
    expect((await stageC(config)).state).toBe("ran")
    expect(await stageC(config)).toEqual({ state: "budget", duration_ms: null, reason: STAGE_C_REASONS.budget })
    expect(server.requests).toHaveLength(2)
    expect(await usageRows(config)).toHaveLength(2)
    const zero = configWith({ monthly_cap_usd: 0 })
    expect((await stageC(zero)).state).toBe("budget")
    expect(server.requests).toHaveLength(2)
  })
})

describe("pure parts", () => {
  it("the gate needs enabled, the scope's reranker and typesafe in providers_allowed", () => {
    const c = configWith({})
    expect(rerankerGate(c.file, "sales")._tag).toBe("allowed")
    expect(rerankerGate(c.file, "ops")._tag).toBe("not-allowed")
    expect(rerankerGate(c.file, "hr")._tag).toBe("not-allowed")
    expect(rerankerGate(testConfig(dir).file, "sales")._tag).toBe("off")
  })

  it("TYPESAFE_BASE_URL: default, https, http only to loopback, no credentials or query", () => {
    expect(typesafeBaseUrl({})).toEqual({ url: "https://api.typesafe.ai/v1" })
    expect(typesafeBaseUrl({ TYPESAFE_BASE_URL: "https://rerank.example.com/api/" })).toEqual({ url: "https://rerank.example.com/api" })
    expect(typesafeBaseUrl({ TYPESAFE_BASE_URL: "http://127.0.0.1:9000" })).toEqual({ url: "http://127.0.0.1:9000" })
    expect(typesafeBaseUrl({ TYPESAFE_BASE_URL: "http://[::1]:9000/x" })).toEqual({ url: "http://[::1]:9000/x" })
    for (const bad of ["http://rerank.example.com", "https://u:p@rerank.example.com", "https://x.example.com/?k=1", "not a url", "ftp://127.0.0.1"]) {
      expect(typesafeBaseUrl({ TYPESAFE_BASE_URL: bad })).toHaveProperty("error")
    }
  })

  it("parseRerankAnswer keeps the provider's order and ignores other fields", () => {
    expect(parseRerankAnswer(JSON.stringify({ id: "x", results: [{ index: 1, relevance_score: 0.9, document: { text: "…" } }, { index: 0, relevance_score: 0 }] }), 2))
      .toEqual({ _tag: "ok", results: [{ index: 1, score: 0.9 }, { index: 0, score: 0 }] })
  })

  it("applyRerank keeps heads at or over the threshold by score, ties in fused order; best is the top score", () => {
    const scores = new Map([["a", 0.4], ["b", 0.9], ["c", 0.5], ["d", 0.9]])
    expect(applyRerank(["a", "b", "c", "d", "e"], scores, 0.5)).toEqual({
      kept: [{ key: "b", score: 0.9 }, { key: "d", score: 0.9 }, { key: "c", score: 0.5 }], best: 0.9
    })
    expect(applyRerank(["a"], scores, 0.5)).toEqual({ kept: [], best: 0.4 })
    expect(applyRerank(["e"], scores, 0.5)).toEqual({ kept: [], best: null })
  })
})

describe("doctor findings", () => {
  it("reranker-key: skip when off, fail without key or with an unusable URL, ok otherwise", () => {
    const on = configWith({}).file
    expect(rerankerKeyFinding(testConfig(dir).file, false, {}).status).toBe("skip")
    expect(rerankerKeyFinding(on, false, {})).toMatchObject({ status: "fail", remedy: expect.stringContaining("TYPESAFE_API_KEY") })
    expect(rerankerKeyFinding(on, true, { TYPESAFE_BASE_URL: "http://rerank.example.com" }).status).toBe("fail")
    const ok = rerankerKeyFinding(on, true, {})
    expect(ok).toEqual({ id: "reranker-key", status: "ok", message: "TYPESAFE_API_KEY is set; requests go to https://api.typesafe.ai/v1/rerank", remedy: null })
  })

  it("reranker-budget: ok under 80 %, warn from 80 %, fail at the cap", () => {
    const on = configWith({ monthly_cap_usd: 5 }).file
    expect(rerankerBudgetFinding(testConfig(dir).file, 0).status).toBe("skip")
    expect(rerankerBudgetFinding(on, 1.2)).toEqual({ id: "reranker-budget", status: "ok", message: "$1.20 of $5.00 estimated this month", remedy: null })
    // amounts below a cent keep their figure (a small cap never reads $0.00)
    expect(rerankerBudgetFinding(configWith({ monthly_cap_usd: 0.0008 }).file, 0.000724).message)
      .toBe("$0.00072 of $0.0008 estimated this month (≥ 80 %)")
    expect(rerankerBudgetFinding(on, 4).status).toBe("warn")
    expect(rerankerBudgetFinding(on, 5).status).toBe("fail")
  })
})
