/** Query-parameter schemas shared by the routes (architecture.md §6: limit 1–200, after = rule id). */
import { Schema } from "effect"
import { RuleId } from "../contracts/ids.js"

export const Limit = Schema.optionalWith(
  Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 200)),
  { default: () => 100 }
)
export const After = Schema.optional(RuleId)
export const BoolString = Schema.Literal("true", "false")

/** The seq of the rule named by `after` (0 without): pages are ordered by seq. */
export const afterSeq = (after: string | undefined): number =>
  after === undefined ? 0 : Number(/-(\d{4,})$/.exec(after)?.[1] ?? 0)
