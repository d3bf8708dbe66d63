/**
 * The reranker's spend in ops.sqlite (table reranker_usage, ops migration 0005): the writer and
 * the month's sum. Every function takes the ops file's connection (OpsStore.sql) and reads "now"
 * from Effect's Clock.
 *
 *   monthIn(zone, ms)                               → "YYYY-MM" (calendar month in the zone)
 *   spentThisMonthUsd(sql, zone)                    → Effect<number, SqlError>
 *   reserveRerankerSpend(sql, zone, capUsd, spend)  → Effect<Reservation, SqlError>
 *
 * reserveRerankerSpend records the estimated cost BEFORE the call, in one statement that inserts
 * only while the month's sum plus this cost stays within the cap: two searches at once cannot
 * both pass a cap that has room for one. Exhausted → nothing is written and nothing may be sent.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Clock, Effect } from "effect"
import { dayIn } from "../contracts/time.js"

export const monthIn = (zone: string, ms: number): string => dayIn(zone, ms).slice(0, 7)

export interface RerankerSpend {
  readonly scope: string
  readonly provider: string
  readonly model: string
  readonly documents: number
  readonly tokens: number
  readonly costUsd: number
}

export type Reservation =
  | { readonly _tag: "reserved"; readonly seq: number; readonly month: string; readonly spentUsd: number }
  | { readonly _tag: "exhausted"; readonly month: string; readonly spentUsd: number; readonly capUsd: number }

/** Cost sums are compared with this slack so float rounding never refuses the last cent. */
const EPSILON = 1e-9

const monthSum = (sql: SqlClient, month: string) =>
  Effect.map(sql<{ usd: number }>`SELECT coalesce(sum(cost_usd), 0) AS usd FROM reranker_usage WHERE month = ${month}`,
    (rows) => rows[0]?.usd ?? 0)

/** The estimated spend of the current month in `zone` (OpsStatus.usage.reranker_month_usd). */
export const spentThisMonthUsd = (sql: SqlClient, zone: string) =>
  Effect.flatMap(Clock.currentTimeMillis, (ms) => monthSum(sql, monthIn(zone, ms)))

export const reserveRerankerSpend = (sql: SqlClient, zone: string, capUsd: number, spend: RerankerSpend) =>
  Effect.gen(function*() {
    const ms = yield* Clock.currentTimeMillis
    const at = new Date(ms).toISOString()
    const month = monthIn(zone, ms)
    const cost = Math.max(0, spend.costUsd)
    const inserted = yield* sql<{ seq: number }>`INSERT INTO reranker_usage (at, month, scope, provider, model, documents, tokens, cost_usd)
      SELECT ${at}, ${month}, ${spend.scope}, ${spend.provider}, ${spend.model}, ${spend.documents}, ${spend.tokens}, ${cost}
      WHERE (SELECT coalesce(sum(cost_usd), 0) FROM reranker_usage WHERE month = ${month}) + ${cost} <= ${capUsd + EPSILON}
      RETURNING seq`
    const spentUsd = yield* monthSum(sql, month)
    const row = inserted[0]
    return row === undefined
      ? ({ _tag: "exhausted", month, spentUsd, capUsd } satisfies Reservation)
      : ({ _tag: "reserved", seq: row.seq, month, spentUsd } satisfies Reservation)
  })
