/**
 * What the lexicon costs stage a on new words (docs/performance.md): stage a alone, median and p95,
 * at BENCH_LEXICON_RULES confirmed rules (default 10k) of synthetic Zipf text over the business
 * words, with the shipped lexicon and without it (the same file, each variant with its own
 * services, so neither finds the other's held answers or phrase rows; both open at once, each text
 * run by both in turn). Every text is new to the variant that runs it: a business query and one
 * more word of the vocabulary, the same texts for both. Goal: the lexicon's median ≤ 1.2× the
 * median without it.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Layer, Logger, LogLevel, ManagedRuntime } from "effect"
import { AppConfig } from "../src/config/config.js"
import { ScopeStore } from "../src/db/scope-store.js"
import { LexicalIndex, makeLexicalIndex } from "../src/search/lexical/index.js"
import { shippedLexicon } from "../src/search/lexical/lexicon.js"
import { lexicalOptions } from "../src/search/lexical/options.js"
import { stageA } from "../src/search/stage-a.js"
import { ServicesLive } from "../src/services.js"
import { benchConfig } from "./config.js"
import { BUSINESS_WORDS, goalLine, seedConfirmedRules, seedManualSource, seededRandom, sentenceOf, stats, syllableWords, zipfWords } from "./support.js"

const QUERIES = ["Lieferzeit Hakenleiste", "Rechnung Skonto", "delivery time supplier", "Zahlungsziele Kunde", "warehouse pallets shipping",
  "Preislisten Rabatt", "customer discount sample", "Reklamation Gutschrift", "order invoice payment", "Urlaub Schicht Lager"]

const WARM_ROUNDS = Number(process.env.BENCH_LEXICON_WARM ?? 20)
const ROUNDS = Number(process.env.BENCH_LEXICON_ROUNDS ?? 20)

/** The lexical index of the service without the lexicon (everything else as configured). */
const withoutLexicon = Layer.effect(LexicalIndex, Effect.map(AppConfig, (c) => makeLexicalIndex(lexicalOptions(c.file.search), { dictionary: () => null })))

/** Stage a of one text, in milliseconds. */
const timeText = (text: string) =>
  Effect.gen(function*() {
    const store = yield* ScopeStore
    const { sql } = yield* store.use("bench")
    const t0 = performance.now()
    yield* sql.withTransaction(stageA(sql, { text }, { includeProposals: false, targetDay: "2026-06-01" }))
    return performance.now() - t0
  })

export const lexiconLatencyBench = async (): Promise<void> => {
  const n = Number(process.env.BENCH_LEXICON_RULES ?? 10_000)
  const word = zipfWords([...BUSINESS_WORDS, ...syllableWords(20_000, 4)], seededRandom(7))
  const sentence = sentenceOf(word)
  const extra = zipfWords([...BUSINESS_WORDS, ...syllableWords(20_000, 4)], seededRandom(23))
  const textsOf = (rounds: number, tag: string) =>
    Array.from({ length: rounds }, (_, r) => QUERIES.map((q, i) => `${q} ${extra()} ${tag}${r * QUERIES.length + i}`)).flat()
  // warm-up texts and counted texts: new to each variant (the numbered tag makes every text unique)
  const warm = textsOf(WARM_ROUNDS, "w")
  const counted = textsOf(ROUNDS, "c")
  const dir = mkdtempSync(join(tmpdir(), "gn-bench-lexicon-"))
  const config = benchConfig(dir)
  const t0 = performance.now()
  const lexicon = shippedLexicon()
  const loadMs = performance.now() - t0
  try {
    await Effect.runPromise(Effect.gen(function*() {
      const store = yield* ScopeStore
      yield* store.create("bench")
      const { sql } = yield* store.use("bench")
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* seedManualSource(sql)
        yield* seedConfirmedRules(sql, 1, n, (seq) => ({
          statement: `${sentence(12)} ${seq}`, keywords: [word(), word()], relations: [], quote: sentence(15), ftsRelations: ""
        }))
      }))
      yield* sql.withTransaction(Effect.flatMap(LexicalIndex, (lex) => lex.rebuild(sql)))
    }).pipe(Effect.provide(ServicesLive(config)), Effect.scoped, Logger.withMinimumLogLevel(LogLevel.Warning)))
    // both variants open at once, each text run by one and then the other (alternating which goes
    // first): a shared machine's load falls on both alike
    const quiet = Logger.minimumLogLevel(LogLevel.Warning)
    const withRt = ManagedRuntime.make(Layer.merge(ServicesLive(config), quiet))
    const withoutRt = ManagedRuntime.make(Layer.merge(ServicesLive(config, { lexicalIndex: withoutLexicon }), quiet))
    const times = { with: [] as Array<number>, without: [] as Array<number> }
    try {
      for (const [i, text] of [...warm, ...counted].entries()) {
        const order = i % 2 === 0 ? (["with", "without"] as const) : (["without", "with"] as const)
        for (const v of order) {
          const ms = await (v === "with" ? withRt : withoutRt).runPromise(timeText(text))
          if (i >= warm.length) times[v].push(ms)
        }
      }
    } finally {
      await withRt.dispose()
      await withoutRt.dispose()
    }
    const without = stats(times.without)
    const withLexicon = stats(times.with)
    console.log(`\nStage a on new words with and without the lexicon (${n / 1000}k rules, ${counted.length} texts each after ${warm.length} not counted; lexicon ${lexicon === null ? "absent" : `${lexicon.groups} groups, ${lexicon.terms} terms`}, read in ${loadMs.toFixed(0)} ms)`)
    console.log("variant           | stage a median / p95 ms")
    console.log(`without lexicon   | ${without.median.toFixed(2).padStart(6)} / ${without.p95.toFixed(2)}`)
    console.log(`with lexicon      | ${withLexicon.median.toFixed(2).padStart(6)} / ${withLexicon.p95.toFixed(2)}`)
    const ratio = withLexicon.median / Math.max(without.median, 0.01)
    console.log(goalLine(`stage a with the lexicon median ≤ 1.2× without on new words at ${n / 1000}k`, ratio <= 1.2,
      `${withLexicon.median.toFixed(2)} ms against ${without.median.toFixed(2)} ms, ×${ratio.toFixed(2)}`))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
