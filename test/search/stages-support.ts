/**
 * A real service (startServer: the public listener and ServicesLive with the live SearchStages)
 * with stage b on a tiny ONNX model the test writes (test/support/tiny-onnx.ts) and, where asked,
 * stage c against a rerank stand-in on 127.0.0.1. The tiny model's similarities mean nothing:
 * tests check orders against the exact dot products and stage a's own order, never a relevance.
 */
import { randomUUID } from "node:crypto"
import { Effect, Redacted } from "effect"
import type { AppConfigShape } from "../../src/config/config.js"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { decide } from "../../src/decision/decide.js"
import type { ProposalRequest } from "../../src/domain/proposal-schemas.js"
import { propose } from "../../src/domain/proposals.js"
import type { SearchRequest, SearchResponse } from "../../src/domain/search-schemas.js"
import { storeSource } from "../../src/domain/sources.js"
import { search } from "../../src/search/search.js"
import { SearchStages } from "../../src/search/stage.js"
import type { ServiceOverrides } from "../../src/services.js"
import { testConfig } from "../support/env.js"
import { mailSource, manualProposal } from "../support/fixtures.js"
import { startServer, type TestServer } from "../support/server.js"

export const RERANK_KEY = "tsk-test-key-never-logged-0123456789"
export const PERSON = { grantId: "person:9", identity: "p@example.com" }

/** Rules in TINY_WORDS' vocabulary; only the first shares a word with QUESTION. */
export const RULES: ReadonlyArray<ProposalRequest> = [
  manualProposal("The customer pays the shipping costs of returns", { keywords: ["returns"], relations: [] }),
  manualProposal("Invoices are paid within 30 days", { keywords: ["invoice"], relations: [] }),
  manualProposal("Ask the supplier for the delivery time before ordering black hook rails", { keywords: ["supplier"], relations: [] }),
  manualProposal("Der Kunde zahlt die Versandkosten der Rücksendung", { keywords: ["Rücksendung"], relations: [] }),
  manualProposal("Skonto gilt immer vor der Rechnung", { keywords: ["Skonto"], relations: [] })
]
export const QUESTION = "who pays the freight"

export interface StagesConfig {
  readonly semantic?: Record<string, unknown> | false
  readonly reranker?: Record<string, unknown> | false
  readonly scopes?: ReadonlyArray<Record<string, unknown>>
  readonly minCoverage?: number
  readonly key?: boolean
  readonly baseUrl?: string
  /** search.lexical (default: synonyms off) */
  readonly lexical?: Record<string, unknown>
  /** search.synonyms */
  readonly synonyms?: ReadonlyArray<ReadonlyArray<string>>
}

export const stagesConfig = (dir: string, o: StagesConfig = {}): AppConfigShape => {
  const config = testConfig(dir, {
    scopes: o.scopes ?? [
      { name: "sales", providers_allowed: ["local", "typesafe"], reranker: true },
      { name: "ops", providers_allowed: [], reranker: true }
    ],
    search: {
      // stage a by the query's own words (no synonyms, no lexicon): what stage b adds is then every rule sharing none
      lexical: o.lexical ?? { features: { synonyms: false } },
      ...(o.synonyms === undefined ? {} : { synonyms: o.synonyms }),
      semantic: o.semantic === false ? { enabled: false } : { enabled: true, model: "bge-m3", model_dir: `${dir}/models`, ...o.semantic },
      reranker: o.reranker === false || o.reranker === undefined ? { enabled: false } : { enabled: true, timeout_ms: 300, ...o.reranker },
      ...(o.minCoverage === undefined ? {} : { min_coverage: o.minCoverage })
    }
  })
  return {
    ...config,
    env: {
      ...config.env,
      typesafeApiKey: o.key === false ? null : Redacted.make(RERANK_KEY),
      ...(o.baseUrl === undefined ? {} : { typesafeBaseUrl: o.baseUrl })
    }
  }
}

export interface Started {
  readonly server: TestServer
  /** a read+propose service token for every configured scope */
  readonly token: string
  /** the rule ids of RULES, confirmed */
  readonly ids: ReadonlyArray<string>
}

/** The service with every configured scope created, a person grant for dev@example.com (MCP) and RULES in sales. */
export const startWithRules = async (config: AppConfigShape, services: ServiceOverrides = {}, rules = RULES): Promise<Started> => {
  const server = await startServer(config, { services })
  const seeded = await server.run(Effect.gen(function*() {
    const ops = yield* OpsStore
    const store = yield* ScopeStore
    const scopes = config.file.scopes.map((x) => x.name)
    for (const scope of scopes) yield* store.create(scope)
    yield* ops.createGrant({ kind: "person", auth: "email", identity: "dev@example.com", scopes, rights: ["read", "propose"] })
    const feeder = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes, rights: ["read", "propose"] })
    yield* storeSource(mailSource(), feeder.id)
    const ids: Array<string> = []
    for (const r of rules) {
      const created = yield* propose(r, { grantId: feeder.id, channel: "api" })
      const id = created.ref.slice("rule/".length, created.ref.indexOf("@"))
      yield* decide(id, { decision: "confirm", version: 1 }, PERSON)
      ids.push(id)
    }
    return { token: "token" in feeder ? feeder.token : "", ids }
  }))
  return { server, ...seeded }
}

/** Waits until stage b's model opened (or failed) and, for a scope, its vectors are caught up. */
export const settled = (server: TestServer, scope?: string) =>
  server.run(Effect.flatMap(SearchStages, (s) => s.vectors === undefined ? Effect.void : s.vectors.settled(scope)))

export const vectorStatus = (server: TestServer) =>
  server.run(Effect.flatMap(SearchStages, (s) => s.vectors === undefined ? Effect.succeed(null) : s.vectors.status))

export const postSearch = async (server: TestServer, token: string, body: Record<string, unknown>) => {
  const res = await fetch(`${server.url}/v1/search`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ scopes: ["sales"], ...body })
  })
  return { status: res.status, body: (await res.json()) as SearchResponse }
}

export const searchRequest = (over: Partial<SearchRequest>): SearchRequest => ({
  scopes: ["sales"], cross_scope: false, as_of: null, include_proposals: false, limit: 10, ...over
})

/** search() on the running service with no stage b or c: stage a's own answer for comparison. */
export const stageAOnly = (server: TestServer, req: SearchRequest) =>
  server.run(Effect.provideService(search(req, randomUUID()), SearchStages, { stages: [] })).then((o) => o.response)

/** search() on the running service with its stage b and no stage c: the answer of stage a (+b). */
export const withoutC = (server: TestServer, req: SearchRequest) =>
  server.run(Effect.flatMap(SearchStages, (s) =>
    Effect.provideService(search(req, randomUUID()), SearchStages, { stages: s.stages.filter((x) => x.name !== "c") }))).then((o) => o.response)

export const refs = (r: SearchResponse) => r.bundles.map((b) => b.head.ref)
export const ruleIdOf = (ref: string) => ref.slice("rule/".length, ref.indexOf("@"))
