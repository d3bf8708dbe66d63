/**
 * The duplicate marks of a proposal, stored when it comes in (gaps.md §13 "Conflict view"): its
 * possible duplicates (stage a's best 3, the same as the propose answer) with stage a's coverage
 * and whether each is a near duplicate by the one definition (near-duplicate.ts), one
 * proposal_neighbour row each, in the proposal's own transaction. The approval pages read these
 * rows instead of asking stage a once per listed proposal.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { rowsOf, runOf } from "../db/held-connection.js"
import { parseRuleRef } from "../contracts/ids.js"
import { nearDuplicate } from "./near-duplicate.js"

export interface Candidate {
  readonly ref: string
  readonly coverage: number
}

/** Writes the marks of version `version` of rule `ruleId` (statement `statement`); the candidates in stage a's order. */
export const recordNeighbours = (sql: SqlClient, ruleId: string, version: number, statement: string, candidates: ReadonlyArray<Candidate>) =>
  Effect.gen(function*() {
    const named = candidates.flatMap((c) => {
      const id = parseRuleRef(c.ref)?.id
      return id === undefined || id === ruleId ? [] : [{ ...c, id }]
    }).slice(0, 3)
    if (named.length === 0) return
    const rows = yield* rowsOf(
      sql,
      sql<{ rule_id: string; statement: string }>`
      SELECT rule_id, statement FROM current_version WHERE rule_id IN ${sql.in(named.map((c) => c.id))}`
    )
    const statements = new Map(rows.map((r) => [r.rule_id, r.statement] as const))
    let rank = 0
    for (const c of named) {
      const other = statements.get(c.id)
      if (other === undefined) continue
      rank++
      const coverage = Math.min(1, Math.max(0, c.coverage))
      const near = nearDuplicate(statement, other, coverage) ? 1 : 0
      yield* runOf(
        sql,
        sql`INSERT INTO proposal_neighbour (rule_id, version, rank, ref, other_id, coverage, near)
        VALUES (${ruleId}, ${version}, ${rank}, ${c.ref}, ${c.id}, ${coverage}, ${near})`
      )
    }
  })
