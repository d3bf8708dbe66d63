/**
 * npm run bench: figures printed, never asserted (machines are shared and noisy; compare the
 * ratios of one run).
 *
 * Proposals per second (quote check, transaction, FTS, possible duplicates) against a bare
 * insert of the same rows in the same run, at 1k and 10k existing rules.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect, Logger, LogLevel } from "effect"
import { type AppConfigShape } from "../src/config/config.js"
import { benchConfig } from "./config.js"
import { ScopeStore } from "../src/db/scope-store.js"
import { formatRuleId } from "../src/contracts/ids.js"
import type { ProposalRequest } from "../src/domain/proposal-schemas.js"
import { propose } from "../src/domain/proposals.js"
import { RuleIndex } from "../src/domain/rule-index.js"
import { ServicesLive } from "../src/services.js"
import { LexicalIndex } from "../src/search/lexical/index.js"
import { mailQuoteFound } from "../src/domain/quote-check.js"
import { storeSource } from "../src/domain/sources.js"
import { approvalBench } from "./approval.js"
import { approvalWaitingBench } from "./approval-waiting.js"
import { digestBench } from "./digest.js"
import { bulkBench } from "./bulk.js"
import { structureAdoptionBench } from "./structure-adoption.js"
import { graphBench } from "./graph.js"
import { httpBench } from "./http.js"
import { hygieneBench } from "./hygiene.js"
import { intakeBench } from "./intake.js"
import { loadBench } from "./load.js"
import { overloadBench } from "./overload.js"
import { mcpBench } from "./mcp.js"
import { lexiconLatencyBench } from "./lexicon-latency.js"
import { searchBench } from "./search.js"
import { backupBench } from "./backup.js"
import { cliBench } from "./cli.js"
import { lexiconBench } from "./lexicon.js"
import { secretsBench } from "./secrets.js"
import { searchHttpBench } from "./search-http.js"
import { redactionBench } from "./redaction.js"
import { stagesBench } from "./stages.js"
import { BUSINESS_WORDS, seededRandom, sentenceOf, syllableWords, zipfWords } from "./support.js"

const WORDS = [
  ...BUSINESS_WORDS,
  "approval", "contract", "pallet", "returns", "credit", "price", "stock", "quote", "terms", "net", "days", "black"
]

const config = (dataDir: string): AppConfigShape => benchConfig(dataDir)

/** A vocabulary of 5,000 synthetic words after the business words, drawn Zipf-like (rank⁻¹). */
const word = zipfWords([...WORDS, ...syllableWords(5000, 3)], seededRandom(42))
const sentence = sentenceOf(word)

const MAIL_LINES = Array.from({ length: 200 }, () => sentence(12))
const MAIL_TEXT = MAIL_LINES.join("\n")

const request = (i: number): ProposalRequest => ({
  scope: "bench", kind: "rule", statement: `${sentence(10)} (${i})`,
  source: { kind: "mail", id: "mail:<bench@example.com>", quote: MAIL_LINES[i % MAIL_LINES.length] ?? "", link: null },
  said_at: "2026-03-12T09:15:00Z", speaker: "Maria", relations: [{ kind: "supplier", name: sentence(2), ref: null }],
  keywords: [word(), word()], valid_from: "2026-03-12", supersedes: null
})

/** The same rows as a proposal writes, without quote check, FTS or duplicate search. */
const bareInsert = (sql: SqlClient, seq: number, r: ProposalRequest, fts: boolean) =>
  sql.withTransaction(Effect.gen(function*() {
    const id = formatRuleId("bench", seq)
    const now = new Date().toISOString()
    yield* sql`INSERT INTO rule (seq, id, created_at, created_by) VALUES (${seq}, ${id}, ${now}, 'person:1')`.raw
    yield* sql`INSERT INTO rule_version (rule_id, version, kind, statement, source_id, quote, timestamp_s, source_link,
        said_at, speaker, relations, keywords, valid_from, valid_until, supersedes, superseded_by, status, reason, changed_by, changed_at)
      VALUES (${id}, 1, ${r.kind}, ${r.statement}, ${r.source.kind === "manual" ? "" : r.source.id}, ${r.source.quote}, NULL, NULL,
        ${r.said_at}, ${r.speaker}, ${JSON.stringify(r.relations)}, ${JSON.stringify(r.keywords)}, ${r.valid_from},
        NULL, NULL, NULL, 'proposed', 'bench', 'person:1', ${now})`.raw
    if (fts) {
      yield* sql`INSERT INTO rule_fts (rowid, keywords, statement, relations, quote)
        VALUES (${seq}, ${r.keywords.join(" ")}, ${r.statement}, ${r.relations.map((x) => `${x.kind} ${x.name}`).join(" ")}, ${r.source.quote})`.raw
    }
  }))

const measure = <A, E, R>(n: number, f: (i: number) => Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const t0 = performance.now()
    for (let i = 0; i < n; i++) yield* f(i)
    const ms = performance.now() - t0
    return { perSecond: (n * 1000) / ms, msEach: ms / n }
  })

const runAt = (existing: number, n: number) =>
  Effect.gen(function*() {
    const dir = mkdtempSync(join(tmpdir(), "gn-bench-"))
    try {
      return yield* Effect.gen(function*() {
        const store = yield* ScopeStore
        yield* store.create("bench")
        yield* storeSource({
          scope: "bench",
          source: { kind: "mail", id: "mail:<bench@example.com>", title: "Bench mail", occurred_at: "2026-03-12T09:15:00Z", sender: null, thread: null, link: null },
          text: MAIL_TEXT, attachments: []
        }, "service:1")
        const { sql } = yield* store.use("bench")
        yield* sql.withTransaction(Effect.forEach(Array.from({ length: existing }, (_, i) => i + 1), (seq) => bareInsert(sql, seq, request(seq), true), { discard: true }))
        // the bare rows have no lex_* rows yet: build them now, not inside the first measured proposal
        yield* Effect.flatMap(LexicalIndex, (lex) => lex.rebuild(sql))
        const proposals = yield* measure(n, (i) => propose(request(existing + i + 1), { grantId: "person:1", channel: "api" }))
        const base = existing + n + 1000
        const bare = yield* measure(n, (i) => bareInsert(sql, base + i, request(base + i), false))
        const bareFts = yield* measure(n, (i) => bareInsert(sql, base + n + i, request(base + n + i), true))
        const quoteCheck = yield* measure(n, (i) => Effect.sync(() => mailQuoteFound(MAIL_LINES[i % MAIL_LINES.length] ?? "", MAIL_TEXT)))
        const duplicates = yield* measure(n, (i) => {
          const r = request(i)
          return Effect.flatMap(RuleIndex, (index) => index.possibleDuplicates(sql, r, 0, "2026-03-12"))
        })
        return { existing, n, proposals, bare, bareFts, quoteCheck, duplicates }
      }).pipe(Effect.provide(ServicesLive(config(dir))), Effect.scoped)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

const main = Effect.gen(function*() {
  console.log(`Groundnote bench — node ${process.version}, ${new Date().toISOString()}`)
  console.log("proposals: quote check (200-line mail) + transaction + rule_fts + possible_duplicates, one transaction each")
  console.log("bare: INSERT rule + rule_version in one transaction (no check, no FTS); bare+fts adds the rule_fts row\n")
  console.log("existing | n    | proposals/s | bare/s  | bare+fts/s | ratio bare/proposal | ratio bare+fts/proposal | quote check ms | duplicates ms")
  for (const existing of [1_000, 10_000]) {
    const r = yield* runAt(existing, 500)
    console.log(
      `${String(existing).padStart(8)} | ${String(r.n).padEnd(4)} | ${r.proposals.perSecond.toFixed(0).padStart(11)} | ` +
      `${r.bare.perSecond.toFixed(0).padStart(7)} | ${r.bareFts.perSecond.toFixed(0).padStart(10)} | ` +
      `${(r.bare.perSecond / r.proposals.perSecond).toFixed(2).padStart(19)} | ${(r.bareFts.perSecond / r.proposals.perSecond).toFixed(2).padStart(23)} | ` +
      `${r.quoteCheck.msEach.toFixed(3).padStart(14)} | ${r.duplicates.msEach.toFixed(3).padStart(13)}`
    )
  }
})

/**
 * BENCH_ONLY=proposals,http,search,approval runs only the named parts (default all four);
 * BENCH_SEARCH_SIZES=1000,10000 picks the rows of the search part (default 1k, 10k, 100k), BENCH_SEARCH_WARM
 * its rounds of JIT warm-up before the counted ones (default 30; 0: a process just started);
 * the part graph (entity resolve, tree, move) runs by default too, BENCH_GRAPH_SIZES picks its
 * sizes (default 1k, 10k, 100k entities) and BENCH_GRAPH_MOVES its moves (default 5); the part mcp
 * (search_rules over the SDK client next to POST /v1/search, BENCH_MCP_RULES rules, default 10k) too,
 * the part secrets (the secret scan over 5 MB), the part stages (stage b: embedding time, exact
 * neighbours at BENCH_KNN_SIZES, default 10k and 100k; BENCH_MODEL_DIR / BENCH_MODEL for a real model)
 * and the part backup (run, probe, verify seconds; BENCH_BACKUP_SIZES, default 1k, 10k, 100k rules);
 * the part intake (POST /v1/proposals from 4 clients at 1k, 3k and 10k confirmed rules with its goal
 * lines, BENCH_INTAKE_HTTP_SIZES, BENCH_INTAKE_SECONDS, BENCH_INTAKE_HTTP_ONLY=1 for that alone; then
 * propose with the secret scan and the classification against without, at BENCH_INTAKE_RULES rules,
 * default 10k); the part search-http (POST /v1/search one at a time on
 * BENCH_SEARCH_HTTP_RULES confirmed rules loaded through /v1, default 3,000, against the raw FTS5
 * query on the same file; BENCH_SEARCH_HTTP_WARM warm-up rounds, default 0; BENCH_SEARCH_HTTP_FROM a
 * data dir kept by BENCH_KEEP=1 instead of the load); the part load (POST /v1/search from 16 and 200 keep-alive
 * clients with /healthz and the ops socket probed, before and after the read pool and the
 * admission gate; BENCH_LOAD_BIG, BENCH_LOAD_SMALL, BENCH_LOAD_SECONDS, BENCH_LOAD_DIR, BENCH_LOAD_SEED);
 * the part overload (POST /v1/search with new words from 20 and from 200 clients that honour Retry-After,
 * BENCH_OVERLOAD_RULES confirmed rules, default 10k, BENCH_OVERLOAD_SECONDS; goal: 200 clients ≥ 50 % of
 * the answers/s of 20, and what a 503 costs against a search);
 * the part cli (the built CLI's start per command, median of 10 runs, against its goal line);
 * the part redaction (preview and apply of a term with 1,000 places in a 10k-rule scope, search
 * p99 while it applies; BENCH_REDACTION_RULES);
 * the part structure-adoption (an agent builds a 200-entity tree in mode A over HTTP: entities/s, adopted and waiting);
 * the part hygiene (propose and search with the storage hygiene of R1 on against off, same run;
 * BENCH_HYGIENE_RULES, default 10k, BENCH_HYGIENE_ROUNDS, default 8);
 * the part approval-waiting (the approval index with BENCH_WAITING proposals waiting, default 10k,
 * their duplicate marks stored when proposed).
 * the part digest (GET /approval/digest with 10,000 proposals waiting and 2,000 rules due for
 * recheck, goal ≤ 300 ms; BENCH_DIGEST_WAITING).
 * the part bulk (POST /v1/decisions of 100 rules and POST /v1/reviews of 100 entities, time per POST).
 * the part lexicon (stage a's lexicon: bytes on disk, load time and RSS added in a fresh process,
 * lookups per second); the part lexicon-latency (stage a on new words with and without the
 * lexicon at BENCH_LEXICON_RULES rules, default 10k; goal ≤ 1.2×).
 */
const only = new Set((process.env.BENCH_ONLY ?? "proposals,http,search,lexicon-latency,search-http,approval,approval-waiting,digest,graph,mcp,secrets,stages,backup,intake,load,overload,cli,redaction,hygiene,bulk,structure-adoption,lexicon").split(",").map((s) => s.trim()))
const graphSizes = (process.env.BENCH_GRAPH_SIZES ?? "").split(",").map((s) => Number(s.trim())).filter((n) => Number.isInteger(n) && n > 0)
const backupSizes = (process.env.BENCH_BACKUP_SIZES ?? "").split(",").map((s) => Number(s.trim())).filter((n) => Number.isInteger(n) && n > 0)
const searchSizes = (process.env.BENCH_SEARCH_SIZES ?? "").split(",").map((s) => Number(s.trim())).filter((n) => Number.isInteger(n) && n > 0)
const parts: Array<() => Promise<void>> = [
  ...(only.has("proposals") ? [() => Effect.runPromise(main.pipe(Logger.withMinimumLogLevel(LogLevel.Warning)))] : []),
  ...(only.has("http") ? [httpBench] : []),
  ...(only.has("search") ? [() => searchBench(searchSizes.length > 0 ? searchSizes : undefined)] : []),
  ...(only.has("lexicon-latency") ? [lexiconLatencyBench] : []),
  ...(only.has("search-http") ? [searchHttpBench] : []),
  ...(only.has("approval") ? [approvalBench] : []),
  ...(only.has("approval-waiting") ? [approvalWaitingBench] : []),
  ...(only.has("digest") ? [digestBench] : []),
  ...(only.has("structure-adoption") ? [structureAdoptionBench] : []),
  ...(only.has("graph") ? [() => graphBench(graphSizes.length > 0 ? graphSizes : undefined)] : []),
  ...(only.has("mcp") ? [mcpBench] : []),
  ...(only.has("secrets") ? [secretsBench] : []),
  ...(only.has("stages") ? [stagesBench] : []),
  ...(only.has("backup") ? [() => backupBench(backupSizes.length > 0 ? backupSizes : undefined)] : []),
  ...(only.has("intake") ? [intakeBench] : []),
  ...(only.has("load") ? [loadBench] : []),
  ...(only.has("overload") ? [overloadBench] : []),
  ...(only.has("cli") ? [cliBench] : []),
  ...(only.has("redaction") ? [redactionBench] : []),
  ...(only.has("hygiene") ? [hygieneBench] : []),
  ...(only.has("bulk") ? [bulkBench] : []),
  ...(only.has("lexicon") ? [lexiconBench] : [])
]
parts.reduce((done, part) => done.then(part), Promise.resolve()).catch((e: unknown) => {
  console.error(e)
  process.exit(1)
})
