/**
 * The live RuleIndex (the domain's port, src/domain/rule-index.ts) on the lexical index of stage
 * a: reindexRule maintains the lex_* rows (and wakes stage b's catch-up for the rule's scope: its
 * reads wait for the writer's commit on the scope's one connection), possibleDuplicates runs
 * stage a with the options of the module (architecture.md §6.3).
 */
import { Effect, Layer } from "effect"
import { ruleRef, scopeOfRuleId } from "../contracts/ids.js"
import { RuleIndex, type RuleIndexShape } from "../domain/rule-index.js"
import { LexicalIndex, type LexicalIndexShape } from "./lexical/index.js"
import { explainOwnWords, runStageA } from "./stage-a.js"
import { SearchStages } from "./stage.js"

/**
 * The RuleIndex of a lexical index; `wake` (stage b's catch-up of a scope) after each reindex
 * when given. The redaction ledger's replay on a scope file as it opens uses it without `wake`:
 * it runs before the search stages exist, and stage b catches the scope up when it next runs.
 */
export const ruleIndexOf = (lex: LexicalIndexShape, wake?: (scope: string) => Effect.Effect<void>): RuleIndexShape => ({
  reindexRule: (sql, ruleId) =>
    wake === undefined ? lex.reindexRule(sql, ruleId) : Effect.tap(lex.reindexRule(sql, ruleId), () => wake(scopeOfRuleId(ruleId))),
  possibleDuplicates: (sql, query, excludeSeq, targetDay) =>
    runStageA(sql, { text: query.statement, terms: query.keywords }, { includeProposals: true, targetDay, excludeSeq }).pipe(
      Effect.map((result) => result.pool.slice(0, 3).map((h) => ruleRef(h.rule_id, h.version))),
      Effect.provideService(LexicalIndex, lex)
    ),
  similar: (sql, query, excludeSeq, targetDay) =>
    Effect.gen(function*() {
      const result = yield* runStageA(sql, { text: query.statement, terms: query.keywords }, { includeProposals: true, targetDay, excludeSeq })
      const top = result.pool.slice(0, 3)
      const explained = yield* explainOwnWords(sql, result, top.map((h) => h.seq))
      return top.map((h) => ({ ref: ruleRef(h.rule_id, h.version), coverage: explained.get(h.seq)?.coverage ?? 0 }))
    }).pipe(Effect.provideService(LexicalIndex, lex))
})

export const RuleIndexLive: Layer.Layer<RuleIndex, never, LexicalIndex | SearchStages> = Layer.effect(
  RuleIndex,
  Effect.map(Effect.all([LexicalIndex, SearchStages]), ([lex, { vectors }]) =>
    ruleIndexOf(lex, vectors === undefined ? undefined : (scope) => vectors.wake(scope)))
)
