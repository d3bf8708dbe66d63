/**
 * The mandatory exceptions of a rule by their codes (gaps.md §10): those its classification found
 * when it was proposed (the classification row of version 1, in MANDATORY_EXCEPTIONS order); []
 * for a rule without a classification (proposed before the approval policy existed).
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import type { ExceptionCode } from "../contracts/schemas.js"

/** The exception codes of many rules in one read, keyed by rule id; every id asked for is a key. */
export const exceptionsOf = (sql: SqlClient, ruleIds: ReadonlyArray<string>): Effect.Effect<Map<string, ReadonlyArray<ExceptionCode>>, SqlError> =>
  Effect.map(
    sql<{ readonly rule_id: string; readonly exceptions: string }>`
      SELECT c.rule_id, c.exceptions FROM json_each(${JSON.stringify([...new Set(ruleIds)])}) j
      JOIN classification c ON c.id = (SELECT max(d.id) FROM classification d WHERE d.rule_id = j.value)`,
    (rows) => {
      const byId = new Map(rows.map((r) => [r.rule_id, JSON.parse(r.exceptions) as ReadonlyArray<ExceptionCode>]))
      return new Map(ruleIds.map((id) => [id, byId.get(id) ?? []]))
    }
  )
