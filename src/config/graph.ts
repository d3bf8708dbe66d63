/**
 * The `graph` block of groundnote.json (graph.md §7). Tree limits and resolve thresholds are
 * contract constants, not configuration.
 */
import { Schema } from "effect"

export const DEFAULT_ENTITY_TYPES = [
  "organisation", "department", "project", "customer", "object", "person", "case", "topic"
] as const

export const EntityType = Schema.String.pipe(
  Schema.pattern(/^[a-z][a-z0-9_]{1,29}$/, { message: () => "must match ^[a-z][a-z0-9_]{1,29}$" })
)

export const GraphConfig = Schema.Struct({
  entity_types: Schema.optionalWith(
    Schema.Array(EntityType).pipe(
      Schema.minItems(1),
      Schema.filter((types) => {
        const seen = new Set<string>()
        for (const [i, t] of types.entries()) {
          if (seen.has(t)) return { path: [i], message: `duplicate entity type "${t}" (list each type once)` }
          seen.add(t)
        }
        return true
      })
    ),
    { default: () => [...DEFAULT_ENTITY_TYPES] }
  ),
  max_depth: Schema.optionalWith(Schema.Number.pipe(Schema.int(), Schema.between(2, 64)), { default: () => 16 }),
  /** a move of a subtree with more nodes than this waits for a person in every approval mode (gaps.md §13) */
  large_subtree: Schema.optionalWith(Schema.Number.pipe(Schema.int(), Schema.between(1, 100_000)), { default: () => 10 }),
  proposed_min_confidence: Schema.optionalWith(Schema.NullOr(Schema.Number.pipe(Schema.between(0, 1))), {
    default: () => null
  })
})
export type GraphConfig = typeof GraphConfig.Type
