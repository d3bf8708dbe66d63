/**
 * How well the "possible duplicate" mark of the approval pages separates statements that say the
 * same thing from statements that merely share words (eval/README.md, "Duplicate mark").
 * Figures printed, never asserted.
 *
 *   node dist/eval/duplicates.js
 *
 * The corpus goes into a fresh data dir through the real writers (load.ts). Every query of the
 * categories paraphrase and cross-language plays a new proposal: its text is the statement and
 * stage a over its scope, proposals included, gives the top 3 candidates, exactly as
 * possible_duplicates is built (architecture.md §6.3). A candidate the query names as relevant
 * is a paraphrase pair; every other candidate (and every candidate of a no-answer query) is an
 * unrelated pair. For each threshold of the near-duplicate measure (src/domain/near-duplicate.ts)
 * the mark's precision (marked pairs that are paraphrases) and recall (paraphrase pairs marked)
 * are printed, with how many unrelated pairs the mark would wrongly flag; for comparison the same
 * for stage a's coverage of the candidate.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Logger, LogLevel } from "effect"
import { ScopeStore } from "../src/db/scope-store.js"
import { NEAR_COVERAGE, NEAR_DUPLICATE, nearDuplicate, nearness } from "../src/domain/near-duplicate.js"
import { ServicesLive } from "../src/services.js"
import { explainHit, runStageA } from "../src/search/stage-a.js"
import { EVAL_DAY, EVAL_NOW, queryText, readCorpus, scopesOf } from "./corpus.js"
import { loadCorpus } from "./load.js"
import { evalConfig, fixedClock } from "./setup.js"

const CATEGORIES = ["paraphrase", "cross-language", "no-answer"] as const

interface Pair {
  readonly category: string
  readonly paraphrase: boolean
  readonly nearness: number
  readonly coverage: number
  /** the mark as the approval pages set it */
  readonly marked: boolean
}

/** The top-3 candidates of every query of the categories, labelled, with both measures. */
const pairsOf = Effect.gen(function*() {
  const corpus = readCorpus()
  const loaded = yield* loadCorpus(corpus)
  const store = yield* ScopeStore
  const pairs: Array<Pair> = []
  for (const q of corpus.queries) {
    const text = queryText(q)
    if (!(CATEGORIES as ReadonlyArray<string>).includes(q.category) || text === undefined || q.scopes.length !== 1) continue
    const scope = q.scopes[0] ?? ""
    const found = yield* store.read(scope, ({ sql }) =>
      Effect.gen(function*() {
        const result = yield* runStageA(sql, { text }, { includeProposals: true, targetDay: EVAL_DAY })
        return yield* Effect.forEach(result.pool.slice(0, 3), (hit) =>
          Effect.gen(function*() {
            const rows = yield* sql<{ statement: string }>`SELECT statement FROM current_version WHERE rule_id = ${hit.rule_id}`
            const explained = yield* explainHit(sql, result, hit.seq)
            return { ruleId: hit.rule_id, statement: rows[0]?.statement ?? "", coverage: explained.coverage }
          }))
      }))
    for (const c of found) {
      pairs.push({
        category: q.category,
        paraphrase: q.relevant.includes(loaded.keys.get(c.ruleId) ?? ""),
        nearness: nearness(text, c.statement),
        coverage: c.coverage,
        marked: nearDuplicate(text, c.statement, c.coverage)
      })
    }
  }
  return pairs
})

const f3 = (x: number): string => (Number.isNaN(x) ? "–" : x.toFixed(3))

/** Precision and recall of "measure ≥ threshold" as the mark, per threshold. */
const table = (pairs: ReadonlyArray<Pair>, measure: (p: Pair) => number, thresholds: ReadonlyArray<number>, name: string): string => {
  const positives = pairs.filter((p) => p.paraphrase).length
  const negatives = pairs.length - positives
  const lines = [`${name.padEnd(24)} | marked | precision | recall (of ${positives} paraphrase pairs) | unrelated marked (of ${negatives})`]
  for (const t of thresholds) {
    const marked = pairs.filter((p) => measure(p) >= t)
    const right = marked.filter((p) => p.paraphrase).length
    // a yes/no measure (the mark) has the one row "≥ 1.00": every pair it marks
    const used = (t === NEAR_DUPLICATE && name.startsWith("nearness")) || (t === NEAR_COVERAGE && name.startsWith("stage-a"))
    lines.push(`${`≥ ${t.toFixed(2)}${used ? " (used)" : ""}`.padEnd(24)} | ${String(marked.length).padStart(6)} | ` +
      `${f3(marked.length === 0 ? Number.NaN : right / marked.length).padStart(9)} | ${f3(positives === 0 ? Number.NaN : right / positives).padStart(33)} | ` +
      `${String(marked.length - right).padStart(4)}`)
  }
  return lines.join("\n")
}

const main = Effect.gen(function*() {
  const corpus = readCorpus()
  const dir = mkdtempSync(join(tmpdir(), "gn-eval-dup-"))
  const pairs = yield* pairsOf.pipe(
    Effect.provide(ServicesLive(evalConfig(dir, scopesOf(corpus), {}))),
    Effect.scoped,
    Effect.ensuring(Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
  )
  console.log(`Groundnote eval — the possible-duplicate mark, node ${process.version}, at ${EVAL_NOW}`)
  console.log("pairs: each query of the categories below against its top 3 stage-a candidates (as possible_duplicates);")
  console.log("paraphrase pair = a candidate the query names as relevant, unrelated pair = any other candidate\n")
  for (const cat of CATEGORIES) {
    const of = pairs.filter((p) => p.category === cat)
    console.log(`${cat}: ${of.length} pairs, ${of.filter((p) => p.paraphrase).length} paraphrase, ${of.filter((p) => !p.paraphrase).length} unrelated`)
  }
  const steps = [0.2, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7, 0.8]
  const mark = (p: Pair) => (p.marked ? 1 : 0)
  const same = pairs.filter((p) => p.category !== "cross-language")
  console.log(`\nthe mark (coverage ≥ ${NEAR_COVERAGE} or content-word nearness ≥ ${NEAR_DUPLICATE}):`)
  console.log(table(pairs, mark, [1], "all pairs"))
  console.log(table(same, mark, [1], "same language only"))
  console.log(table(pairs, () => 1, [1], "every top-3 candidate"))
  console.log(`\n${table(pairs, (p) => p.coverage, steps, "stage-a coverage")}`)
  console.log(`\n${table(pairs, (p) => p.nearness, steps, "nearness (content words)")}`)
})

Effect.runPromise(main.pipe(Effect.withClock(fixedClock(Date.parse(EVAL_NOW))),
  Logger.withMinimumLogLevel(LogLevel.Warning)))
  .catch((e: unknown) => {
    console.error(e)
    process.exit(1)
  })
