/**
 * RuleIndex: what the rule writers need of the search index, as a port the domain owns and the
 * search module provides (src/search/rule-index.ts). A writer keeps the derived index rows of a
 * rule current in its own transaction (architecture.md §4.1, next to rule_fts) and asks for the
 * possible duplicates of a proposal (§6.3: stage a over the same scope, proposals included).
 * The domain therefore never imports the search module, which reads the domain's rules.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Context, type Effect } from "effect"

export interface DuplicateQuery {
  readonly statement: string
  readonly keywords: ReadonlyArray<string>
}

export interface RuleIndexShape {
  /** keeps the index rows of one rule current; inside the writer's transaction */
  readonly reindexRule: (sql: SqlClient, ruleId: string) => Effect.Effect<void, SqlError>
  /**
   * possible_duplicates: stage a with text = statement and terms = keywords, proposals included,
   * the rule with `excludeSeq` left out, validity on `targetDay`; the best 3 as rule/<id>@<n>
   */
  readonly possibleDuplicates: (
    sql: SqlClient,
    query: DuplicateQuery,
    excludeSeq: number,
    targetDay: string
  ) => Effect.Effect<Array<string>, SqlError>
  /** possibleDuplicates with stage a's coverage of each (0–1), for the near-duplicate mark (near-duplicate.ts) */
  readonly similar: (
    sql: SqlClient,
    query: DuplicateQuery,
    excludeSeq: number,
    targetDay: string
  ) => Effect.Effect<Array<{ readonly ref: string; readonly coverage: number }>, SqlError>
}

export class RuleIndex extends Context.Tag("Groundnote/RuleIndex")<RuleIndex, RuleIndexShape>() {}
