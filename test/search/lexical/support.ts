/** Scopes with rules written through the real writers, for the stage a tests. */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import type { AppConfigShape } from "../../../src/config/config.js"
import { ScopeStore } from "../../../src/db/scope-store.js"
import { decide } from "../../../src/decision/decide.js"
import type { ProposalRequest } from "../../../src/domain/proposal-schemas.js"
import { propose } from "../../../src/domain/proposals.js"
import { storeSource } from "../../../src/domain/sources.js"
import { stageA, explainHit, type StageAResult } from "../../../src/search/stage-a.js"
import { testConfig } from "../../support/env.js"
import { mailSource, manualProposal } from "../../support/fixtures.js"
import { run, sqlOf } from "../../support/run.js"

export const agent = { grantId: "person:1", channel: "mcp" as const }
export const person = { grantId: "person:2", identity: "anna@example.com" }
export const DAY = "2026-06-01"

/** A config whose search.lexical / languages / synonyms are the given ones. */
export const lexConfig = (dir: string, search: Record<string, unknown> = {}): AppConfigShape =>
  testConfig(dir, { search })

/** A manual proposal with the statement, keywords and relations given (no mail needed). */
export const ruleReq = (statement: string, keywords: Array<string> = [], over: Partial<ProposalRequest> = {}): ProposalRequest =>
  manualProposal(statement, { keywords, relations: [], valid_from: "2026-01-01", ...over })

/** Creates the sales scope (with the fixture mail) and proposes the rules; confirm: their ids get confirmed. */
export const seed = (config: AppConfigShape, rules: ReadonlyArray<ProposalRequest>, confirm: "all" | "none" = "all") =>
  run(config, Effect.gen(function*() {
    const store = yield* ScopeStore
    yield* store.create("sales")
    yield* storeSource(mailSource(), "service:1")
    const ids: Array<string> = []
    for (const r of rules) {
      const created = yield* propose(r, agent)
      const id = created.ref.slice("rule/".length, created.ref.indexOf("@"))
      ids.push(id)
      if (confirm === "all") yield* decide(id, { decision: "confirm", version: 1 }, person)
    }
    return ids
  }))

export interface Search {
  readonly result: StageAResult
  readonly ids: Array<string>
  readonly explained: Record<string, { found_via: Array<string>; coverage: number; matched_terms: number }>
}

/** stageA on the sales scope and explainHit for every hit. */
export const search = (
  config: AppConfigShape,
  input: { text?: string; terms?: ReadonlyArray<string> },
  opts: { includeProposals?: boolean; targetDay?: string } = {}
): Promise<Search> =>
  run(config, Effect.gen(function*() {
    const sql = yield* sqlOf("sales")
    const result = yield* stageA(sql, input, { includeProposals: opts.includeProposals ?? false, targetDay: opts.targetDay ?? DAY })
    const explained: Search["explained"] = {}
    for (const h of result.pool) explained[h.rule_id] = yield* explainHit(sql, result, h.seq)
    return { result, ids: result.pool.map((h) => h.rule_id), explained }
  }))

/** Runs f on the sales scope's connection. */
export const withSql = <A, E>(config: AppConfigShape, f: (sql: SqlClient) => Effect.Effect<A, E>) =>
  run(config, Effect.flatMap(sqlOf("sales"), f))
