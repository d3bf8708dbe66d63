/**
 * The past redactions of a scope for /approval/redactions: when, who, why and how many places,
 * newest first. The table keeps the term only as its salted hash, and this read leaves even that out.
 */
import type { SqlClient } from "@effect/sql/SqlClient"

export interface PastRedaction {
  readonly id: string
  readonly places: number
  readonly decided_by: string
  readonly reason: string
  readonly at: string
}

export const pastRedactions = (sql: SqlClient, limit: number) =>
  sql<PastRedaction>`SELECT id, places, decided_by, reason, at FROM redaction ORDER BY seq DESC LIMIT ${limit}`
