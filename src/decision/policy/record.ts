/**
 * The classification row of a proposal (migration 0004): written for every proposal, in its
 * transaction, whatever the outcome. An `auto` row counts against the daily limit of its day
 * (the trigger classification_limit refuses one over the limit).
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import type { ApprovalMode } from "../../config/schema.js"
import type { Classification } from "./classify.js"

export interface ClassificationRecord {
  readonly ruleId: string
  readonly classification: Classification
  readonly mode: ApprovalMode
  readonly outcome: "auto" | "person"
  readonly reasons: ReadonlyArray<string>
  /** the calendar day in config.zone */
  readonly day: string
  readonly dailyLimit: number
  readonly now: string
}

/** Inserts the row; returns its id. */
export const recordClassification = (sql: SqlClient, r: ClassificationRecord) =>
  Effect.gen(function*() {
    const c = r.classification
    yield* sql`INSERT INTO classification (rule_id, version, ruleset, class, exceptions, mode, outcome, reasons, day, daily_limit, classified_at)
      VALUES (${r.ruleId}, 1, ${c.ruleset}, ${c.class}, ${JSON.stringify(c.exceptions.map((e) => e.exception))}, ${r.mode},
        ${r.outcome}, ${JSON.stringify(r.reasons)}, ${r.day}, ${r.dailyLimit}, ${r.now})`.raw
    const rows = yield* sql<{ id: number }>`SELECT id FROM classification WHERE rule_id = ${r.ruleId} AND version = 1`
    const id = rows[0]?.id
    if (id === undefined) return yield* Effect.dieMessage(`classification of ${r.ruleId} not readable`)
    return id
  })
