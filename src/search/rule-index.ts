/**
 * The live RuleIndex (the domain's port, src/domain/rule-index.ts) on the lexical index of stage
 * a: reindexRule maintains the lex_* rows, possibleDuplicates runs stage a with the options of the
 * module (architecture.md §6.3).
 */
import { Effect, Layer } from "effect"
import { ruleRef } from "../contracts/ids.js"
import { RuleIndex } from "../domain/rule-index.js"
import { LexicalIndex } from "./lexical/index.js"
import { runStageA } from "./stage-a.js"

export const RuleIndexLive: Layer.Layer<RuleIndex, never, LexicalIndex> = Layer.effect(
  RuleIndex,
  Effect.map(LexicalIndex, (lex) => ({
    reindexRule: lex.reindexRule,
    possibleDuplicates: (sql, query, excludeSeq, targetDay) =>
      runStageA(sql, { text: query.statement, terms: query.keywords }, { includeProposals: true, targetDay, excludeSeq }).pipe(
        Effect.map((result) => result.pool.slice(0, 3).map((h) => ruleRef(h.rule_id, h.version))),
        Effect.provideService(LexicalIndex, lex)
      )
  }))
)
