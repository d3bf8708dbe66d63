/**
 * npm run eval: retrieval quality of search stage a on the hand-written corpus (eval/README.md).
 * Figures printed, never asserted. Each configuration loads the corpus into a fresh data dir
 * through the real writers and runs every query through search() with limit 10; the bm25
 * baseline runs straight over rule_fts of its own fresh data dir.
 *
 *   node dist/eval/run.js [--corpus <name>,<name>…] [--misses] [--only <name>,<name>…] [--explain <query id>,…]
 *
 * Every corpus of CORPORA (eval/corpus.ts) runs with the same configurations and prints its own
 * tables under its name and domain, the first corpus first; `--corpus` selects corpora by name.
 *
 * Time is fixed (EVAL_NOW) for the writers and the searches, so validity on "today" is stable.
 *
 * Stages b and c are measured only with a real model and a real provider (gaps.md §11): the rows
 * "stage a+b" and "stage a+b+c" run when EVAL_MODEL_DIR names a model_dir holding the model
 * (EVAL_MODEL: bge-m3 or qwen3-embedding-0.6b) and, for c, EVAL_RERANKER=1 with TYPESAFE_API_KEY
 * (and TYPESAFE_BASE_URL) in the environment; otherwise the table says they were not measured.
 * Never the tests' tiny model or rerank stand-in: their figures would say nothing.
 */
import { randomUUID } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Logger, LogLevel, Schema } from "effect"
import { type AppConfigShape } from "../src/config/config.js"
import { ScopeStore } from "../src/db/scope-store.js"
import { parseRuleRef } from "../src/contracts/ids.js"
import { SearchRequest, type SearchResponse } from "../src/domain/search-schemas.js"
import { ServicesLive } from "../src/services.js"
import { interleave, search } from "../src/search/search.js"
import { SearchStages } from "../src/search/stage.js"
import { baselineMatch, bm25Top } from "./baseline.js"
import {
  type Corpus,
  corpusDir,
  type CorpusInfo,
  type CorpusQuery,
  type Direction,
  EVAL_NOW,
  parseRelation,
  queryText,
  readCorpus,
  rulesOf,
  scopesOf
} from "./corpus.js"
import { type Loaded, loadCorpus } from "./load.js"
import { DIRECTION_NAMES, selectCorpora, slicesOf } from "./slices.js"
import { mean, ndcgAtK, type QueryOutcome, RANK_BANDS, rankBand, reciprocalRank, recallAtK, type Summary, summarize } from "./metrics.js"
import { EVAL_MODEL, EVAL_MODEL_DIR, evalConfig, type Feature, fixedClock } from "./setup.js"

const K = 10


interface Configuration {
  readonly name: string
  /** search.lexical.features of the run; absent for the baseline */
  readonly features: Partial<Record<Feature, boolean>> | null
  /** stages b (local model) or b and c (reranker) on, with the real model and provider of the environment */
  readonly stages?: "b" | "bc"
}

const EVAL_RERANKER = process.env.EVAL_RERANKER === "1" && (process.env.TYPESAFE_API_KEY ?? "") !== ""

/** The stage rows, or why each is not measured. */
const STAGE_ROWS: ReadonlyArray<Configuration | { readonly name: string; readonly notMeasured: string }> = [
  EVAL_MODEL_DIR === null
    ? { name: "stage a+b", notMeasured: "not measured: no real embedding model at hand (set EVAL_MODEL_DIR, EVAL_MODEL)" }
    : { name: `stage a+b (${EVAL_MODEL})`, features: {}, stages: "b" },
  EVAL_MODEL_DIR === null || !EVAL_RERANKER
    ? { name: "stage a+b+c", notMeasured: "not measured: no real model and reranker provider at hand (EVAL_MODEL_DIR, EVAL_RERANKER=1, TYPESAFE_API_KEY)" }
    : { name: `stage a+b+c (${EVAL_MODEL})`, features: {}, stages: "bc" }
]

const CONFIGURATIONS: ReadonlyArray<Configuration> = [
  { name: "stage a (defaults)", features: {} },
  { name: "- bilingual (no de↔en)", features: { bilingual: false } },
  { name: "- stem", features: { stem: false } },
  { name: "- decompound", features: { decompound: false } },
  { name: "- normalize", features: { normalize: false } },
  { name: "- fuzzy", features: { fuzzy: false } },
  { name: "- synonyms", features: { synonyms: false } },
  { name: "- validity", features: { validity: false } },
  { name: "- keyterms", features: { keyterms: false } },
  { name: "+ trigram", features: { trigram: true } },
  { name: "+ prf", features: { prf: true } },
  { name: "bm25 baseline (rule_fts)", features: null },
  ...STAGE_ROWS.flatMap((r) => ("notMeasured" in r ? [] : [r]))
]


/** Stage b's model open and every scope's vectors caught up; a model that cannot be used stops the run (never a silent stage-a row). */
const stagesReady = (scopes: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const { vectors } = yield* SearchStages
    if (vectors === undefined) return yield* Effect.die("stage b is not on")
    yield* vectors.settled()
    const status = yield* vectors.status
    if (status.state !== "ready") return yield* Effect.die(`the model cannot be used: ${status.reason ?? ""}: ${status.detail ?? ""}`)
    for (const scope of scopes) yield* vectors.settled(scope)
  })

const layerFor = (config: AppConfigShape) => ServicesLive(config)

/** The SearchRequest of a corpus query (defaults filled in by the service's schema). */
const searchRequestOf = (q: CorpusQuery): SearchRequest => {
  const text = queryText(q)
  return Schema.decodeUnknownSync(SearchRequest)({
    scopes: q.scopes,
    cross_scope: q.scopes.length > 1,
    limit: K,
    ...(text === undefined ? {} : { text }),
    ...(q.terms === undefined ? {} : { terms: q.terms }),
    ...(q.relation === undefined ? {} : { relation: parseRelation(q.relation) }),
    ...(q.as_of === undefined ? {} : { as_of: q.as_of }),
    ...(q.include_proposals === undefined ? {} : { include_proposals: q.include_proposals })
  }, { onExcessProperty: "error" })
}

interface Measured {
  readonly id: string
  readonly outcome: QueryOutcome
  readonly category: CorpusQuery["category"]
  readonly direction?: Direction | undefined
  /** stage rows: how many of the queried stages did not run (failed, timeout, budget) */
  readonly notRan?: number
  /** with --explain: the query's terms and variants and its heads with how they were found */
  readonly explained?: string
}

const keyOf = (loaded: Loaded, ruleId: string): string => loaded.keys.get(ruleId) ?? ruleId

/** A query's analysis and heads as the response gives them (rule keys, found_via, coverage; * = relevant). */
const explanationOf = (loaded: Loaded, q: CorpusQuery, response: SearchResponse): string => {
  const variants = Object.entries(response.query.variants).map(([k, v]) => `    ${k}: ${v.join(" | ")}`)
  const heads = response.bundles.map((b, i) => {
    const key = keyOf(loaded, parseRuleRef(b.head.ref)?.id ?? b.head.ref)
    return `    ${i + 1}. ${q.relevant.includes(key) ? "*" : " "}${key}  coverage ${b.head.coverage ?? "–"}  via ${b.head.found_via.join(", ")}`
  })
  return [`  ${q.id} (${q.category}): relevant ${q.relevant.join(" ") || "none"}`, `    terms: ${response.query.terms.join(" | ")}`,
    ...variants, ...(heads.length === 0 ? [`    no bundle (${response.abstained?.reason ?? ""})`] : heads)].join("\n")
}

const runStageA = (corpus: Corpus, loaded: Loaded, stages?: "b" | "bc", explain: ReadonlySet<string> = new Set()) =>
  Effect.forEach(corpus.queries, (q) =>
    Effect.map(search(searchRequestOf(q), randomUUID()), ({ response }): Measured => ({
      id: q.id,
      category: q.category,
      direction: q.direction,
      ...(explain.has(q.id) ? { explained: explanationOf(loaded, q, response) } : {}),
      ...(stages === undefined ? {} : { notRan: (response.stages.b.state !== "ran" ? 1 : 0) + (stages === "bc" && response.stages.c.state !== "ran" ? 1 : 0) }),
      outcome: {
        ranked: response.bundles.map((b) => keyOf(loaded, parseRuleRef(b.head.ref)?.id ?? b.head.ref)),
        relevant: new Set(q.relevant),
        topCoverage: response.bundles[0]?.head.coverage ?? null
      }
    })))

const runBaseline = (corpus: Corpus, loaded: Loaded) =>
  Effect.gen(function*() {
    const store = yield* ScopeStore
    return yield* Effect.forEach(corpus.queries, (q) =>
      Effect.gen(function*() {
        const text = queryText(q)
        const match = baselineMatch([...(q.terms ?? []), ...(text === undefined ? [] : [text])])
        const perScope = yield* Effect.forEach([...new Set(q.scopes)], (scope) =>
          Effect.flatMap(store.use(scope), ({ sql }) => bm25Top(sql, match, q.include_proposals ?? false, K)))
        return {
          id: q.id,
          category: q.category,
          direction: q.direction,
          outcome: { ranked: interleave(perScope, K).map((id) => keyOf(loaded, id)), relevant: new Set(q.relevant), topCoverage: null }
        } satisfies Measured
      }))
  })

interface Row {
  readonly configuration: Configuration
  readonly measured: ReadonlyArray<Measured & { readonly id: string }>
  readonly summary: Summary
  /** nDCG@10 per slice name */
  readonly byCategory: ReadonlyMap<string, number>
  readonly msPerQuery: number
  readonly loadMs: number
}

const runConfiguration = (corpus: Corpus, c: Configuration, explain: ReadonlySet<string>) =>
  Effect.gen(function*() {
    const dir = mkdtempSync(join(tmpdir(), "gn-eval-"))
    const config = evalConfig(dir, scopesOf(corpus), c.features ?? {}, c.stages)
    const program = Effect.gen(function*() {
      const t0 = performance.now()
      const loaded = yield* loadCorpus(corpus)
      if (c.stages !== undefined) yield* stagesReady(scopesOf(corpus))
      const t1 = performance.now()
      const measured = c.features === null ? yield* runBaseline(corpus, loaded) : yield* runStageA(corpus, loaded, c.stages, explain)
      const notRan = measured.reduce((n, m: Measured) => n + (m.notRan ?? 0), 0)
      if (notRan > 0) console.error(`eval: ${c.name}: a stage did not run in ${notRan} query runs (see stages in the responses)`)
      const t2 = performance.now()
      const byCategory = new Map(slicesOf(corpus).map((slice) => {
        const answerable = measured.filter((m) => slice.has(m) && m.outcome.relevant.size > 0)
        return [slice.name, mean(answerable.map((m) => ndcgAtK(m.outcome.ranked, m.outcome.relevant, K)))] as const
      }))
      return {
        configuration: c,
        measured,
        summary: summarize(measured.map((m) => m.outcome), K, c.features !== null),
        byCategory,
        msPerQuery: (t2 - t1) / Math.max(1, corpus.queries.length),
        loadMs: t1 - t0
      } satisfies Row
    })
    return yield* program.pipe(
      Effect.provide(layerFor(config)),
      Effect.scoped,
      Effect.ensuring(Effect.sync(() => rmSync(dir, { recursive: true, force: true })))
    )
  })

const f3 = (x: number): string => (Number.isNaN(x) ? "–" : x.toFixed(3))
const pad = (s: string, n: number, left = false): string => (left ? s.padEnd(n) : s.padStart(n))

const table = (rows: ReadonlyArray<Row>): string => {
  const base = rows.find((r) => r.configuration.name === CONFIGURATIONS[0]?.name)?.summary.ndcg ?? Number.NaN
  const head = [pad("configuration", 26, true), pad("recall@10", 9), pad("MRR", 6), pad("nDCG@10", 7), pad("ΔnDCG", 7),
    pad("no-answer: empty", 16), pad("top coverage", 12), pad("ms/query", 8)]
  const lines = [head.join(" | "), head.map((h) => "-".repeat(h.length)).join("-|-")]
  const rowLines = (r: Row): string => {
    const s = r.summary
    const delta = r.configuration.name === CONFIGURATIONS[0]?.name ? "" : (s.ndcg - base >= 0 ? "+" : "") + f3(s.ndcg - base)
    return [
      pad(r.configuration.name, 26, true), pad(f3(s.recall), 9), pad(f3(s.mrr), 6), pad(f3(s.ndcg), 7), pad(delta, 7),
      pad(`${s.noAnswerEmpty}/${s.noAnswer}`, 16), pad(s.noAnswerTopCoverage === null ? "n/a" : f3(s.noAnswerTopCoverage), 12),
      pad(r.msPerQuery.toFixed(1), 8)
    ].join(" | ")
  }
  for (const r of rows) lines.push(rowLines(r))
  for (const r of STAGE_ROWS) if ("notMeasured" in r) lines.push(`${pad(r.name, 26, true)} | ${r.notMeasured}`)
  return lines.join("\n")
}

const categoryTable = (rows: ReadonlyArray<Row>, corpus: Corpus): string => {
  const slices = slicesOf(corpus)
  const width = (name: string) => Math.max(name.length, 5)
  const head = [pad("nDCG@10 by category", 26, true), ...slices.map((s) => pad(s.name, width(s.name)))]
  const count = [pad("answerable queries", 26, true),
    ...slices.map((s) => pad(String(corpus.queries.filter((q) => s.has(q) && q.relevant.length > 0).length), width(s.name)))]
  const lines = [head.join(" | "), head.map((h) => "-".repeat(h.length)).join("-|-"), count.join(" | ")]
  for (const r of rows) {
    lines.push([pad(r.configuration.name, 26, true), ...slices.map((s) => pad(f3(r.byCategory.get(s.name) ?? Number.NaN), width(s.name)))].join(" | "))
  }
  return lines.join("\n")
}

/** The figures the search goals are stated in: recall@10 and MRR overall, of the synonyms, per cross-language direction, and the long mails' MRR. */
const goalTable = (rows: ReadonlyArray<Row>, corpus: Corpus): string => {
  const slices = slicesOf(corpus)
  const bySlice = (name: string) => slices.find((s) => s.name === name)
  const columns: ReadonlyArray<{ readonly head: string; readonly of: (r: Row) => number }> = [
    { head: "recall@10", of: (r) => r.summary.recall },
    { head: "MRR", of: (r) => r.summary.mrr },
    ...[["synonym", "R@10"], [DIRECTION_NAMES["de-en"], "R@10"], [DIRECTION_NAMES["de-en"], "MRR"], [DIRECTION_NAMES["en-de"], "R@10"],
      [DIRECTION_NAMES["en-de"], "MRR"], ["long-text", "MRR"]].flatMap(([name = "", metric]) => {
      const slice = bySlice(name)
      if (slice === undefined) return []
      return [{
        head: `${name} ${metric}`,
        of: (r: Row) => {
          const answerable = r.measured.filter((m) => slice.has(m) && m.outcome.relevant.size > 0).map((m) => m.outcome)
          return mean(answerable.map((o) => metric === "MRR" ? reciprocalRank(o.ranked, o.relevant, K) : recallAtK(o.ranked, o.relevant, K)))
        }
      }]
    })
  ]
  const width = (h: string) => Math.max(h.length, 5)
  const head = [pad("goal figures", 26, true), ...columns.map((c) => pad(c.head, width(c.head)))]
  const lines = [head.join(" | "), head.map((h) => "-".repeat(h.length)).join("-|-")]
  for (const r of rows) lines.push([pad(r.configuration.name, 26, true), ...columns.map((c) => pad(f3(c.of(r)), width(c.head)))].join(" | "))
  return lines.join("\n")
}

/** Per configuration: answerable queries not answered perfectly, and no-answer queries with a head (keys only). */
const missesOf = (rows: ReadonlyArray<Row>): string =>
  rows.map((r) => {
    const lines = r.measured.flatMap(({ id, outcome: o }) => {
      if (o.relevant.size === 0) return o.ranked.length === 0 ? [] : [`  ${id}: no answer expected, top ${o.ranked.slice(0, 3).join(" ")}`]
      const top = o.ranked.slice(0, K)
      const missing = [...o.relevant].filter((k) => !top.includes(k))
      const first = top.findIndex((k) => o.relevant.has(k))
      if (missing.length === 0 && first === 0) return []
      return [`  ${id}: first relevant at ${first === -1 ? "–" : first + 1}; missing ${missing.join(" ") || "–"}; top ${top.slice(0, 3).join(" ")}`]
    })
    return [`misses of ${r.configuration.name}:`, ...lines].join("\n")
  }).join("\n")

/**
 * Per configuration and category: how many answerable queries have their first relevant head
 * first, second or third, fourth to tenth, or not in the first ten — whether a category misses
 * its rules (recall) or finds them and ranks them low (MRR).
 */
const bandsOf = (rows: ReadonlyArray<Row>, corpus: Corpus): string => {
  const slices = slicesOf(corpus)
  const bandName = (b: string) => (b === "4–k" ? `4–${K}` : b)
  const width = (name: string) => Math.max(name.length, 5)
  const head = [pad("first relevant at", 26, true), ...slices.map((s) => pad(s.name, width(s.name)))]
  return rows.map((r) => {
    const lines = [`${r.configuration.name}:`, head.join(" | "), head.map((h) => "-".repeat(h.length)).join("-|-")]
    for (const band of RANK_BANDS) {
      lines.push([pad(bandName(band), 26, true), ...slices.map((s) => {
        const n = r.measured.filter((m) => s.has(m) && rankBand(m.outcome.ranked, m.outcome.relevant, K) === band).length
        return pad(String(n), width(s.name))
      })].join(" | "))
    }
    return lines.join("\n")
  }).join("\n\n")
}

/** One corpus's heading, sizes and tables, after every configuration ran on it. */
const runCorpus = (info: CorpusInfo, configs: ReadonlyArray<Configuration>, misses: boolean, explain: ReadonlySet<string>) =>
  Effect.gen(function*() {
    const corpus = readCorpus(corpusDir(info.dir))
    const rules = rulesOf(corpus)
    const status = (s: string) => rules.filter((r) => (r.status ?? "confirmed") === s).length
    const answerable = corpus.queries.filter((q) => q.relevant.length > 0).length
    const rows: Array<Row> = []
    for (const c of configs) {
      console.error(`eval: ${info.name}: ${c.name} …`)
      rows.push(yield* runConfiguration(corpus, c, explain))
    }
    console.log(`\n=== corpus ${info.name}: ${info.domain}`)
    console.log(`${rules.length} rules (${status("confirmed")} confirmed, ${rules.filter((r) => r.supersedes !== undefined).length} ` +
      `of them superseding an earlier one; ${status("proposed")} proposed; ${status("rejected")} rejected) in ${scopesOf(corpus).join(", ")}; ` +
      `${corpus.queries.length} queries (${answerable} answerable, ${corpus.queries.length - answerable} no-answer)\n`)
    console.log(table(rows))
    console.log(`\n${categoryTable(rows, corpus)}`)
    console.log(`\n${goalTable(rows, corpus)}`)
    if (misses) console.log(`\n${bandsOf(rows, corpus)}\n\n${missesOf(rows)}`)
    for (const r of rows) {
      const explained = r.measured.flatMap((m) => (m.explained === undefined ? [] : [m.explained]))
      if (explained.length > 0) console.log(`\nexplained by ${r.configuration.name}:\n${explained.join("\n")}`)
    }
  })

const main = Effect.gen(function*() {
  const args = process.argv.slice(2)
  const onlyArg = args[args.indexOf("--only") + 1]
  const only = args.includes("--only") && onlyArg !== undefined ? onlyArg.split(",").map((s) => s.trim()) : null
  const corpora = selectCorpora(args)
  const configs = CONFIGURATIONS.filter((c) => only === null || only.some((o) => c.name.includes(o)))
  console.log(`Groundnote eval — node ${process.version}, searches at ${EVAL_NOW}, limit ${K}, binary relevance`)
  console.log("recall@10, MRR, nDCG@10: mean over the answerable queries; no-answer: queries that returned no bundle / all, " +
    "and the mean coverage of the first head (0 when empty); xlang de→en: German query, English rule")
  const explainArg = args[args.indexOf("--explain") + 1]
  const explain = new Set(args.includes("--explain") && explainArg !== undefined ? explainArg.split(",").map((s) => s.trim()) : [])
  for (const info of corpora) yield* runCorpus(info, configs, args.includes("--misses"), explain)
})

Effect.runPromise(main.pipe(Effect.withClock(fixedClock(Date.parse(EVAL_NOW))), Logger.withMinimumLogLevel(LogLevel.Warning)))
  .catch((e: unknown) => {
    console.error(e)
    process.exit(1)
  })
