/**
 * The writer of search_log: one row per touched scope for every scoped access (architecture.md
 * §4.1, §5.2 step 6), same id in every scope of one request. The request text is never stored,
 * only its SHA-256.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SEARCH_LOG_OPERATIONS_0004 } from "./migrations/scope/0004-approval.js"

export type LogOperation = (typeof SEARCH_LOG_OPERATIONS_0004)[number]
export type LogChannel = "mcp" | "api" | "approval" | "proactive" | "task"

export interface SearchLogEntry {
  readonly id: string
  readonly at: string
  readonly grantId: string
  readonly channel: LogChannel
  readonly operation: LogOperation
  readonly outcome: number
  readonly crossScope: boolean
  readonly refs: ReadonlyArray<string>
  readonly terms?: unknown
  readonly variants?: unknown
  readonly stages?: unknown
  readonly inputSha256: string | null
}

const json = (v: unknown): string | null => (v === undefined ? null : JSON.stringify(v))

export const writeSearchLog = (sql: SqlClient, e: SearchLogEntry) =>
  sql`INSERT INTO search_log (id, at, grant_id, channel, operation, outcome, cross_scope, refs, terms, variants, stages, input_sha256)
    VALUES (${e.id}, ${e.at}, ${e.grantId}, ${e.channel}, ${e.operation}, ${e.outcome}, ${e.crossScope ? 1 : 0},
      ${JSON.stringify(e.refs)}, ${json(e.terms)}, ${json(e.variants)}, ${json(e.stages)}, ${e.inputSha256})`.raw
