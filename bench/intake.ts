/**
 * intake() against the path before slice A (gaps.md §10; the goal: intake ≤ 1.3× propose): at 10k existing rules, a
 * proposal through intake (secret scan over statement, quote, keywords, speaker and relation
 * names; the repeat lookup; the checks and insert; the classification with its scope facts and
 * its row) against propose() (the checks and insert only), interleaved in rounds on the same file
 * so drift hits both alike; then intake in mode A, where each proposal is also adopted (version 2,
 * decision, FTS and index rows again). Figures printed, never asserted.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect, Logger, LogLevel } from "effect"
import { formatRuleId } from "../src/contracts/ids.js"
import { ScopeStore } from "../src/db/scope-store.js"
import { intake } from "../src/domain/intake.js"
import type { ProposalRequest } from "../src/domain/proposal-schemas.js"
import { propose } from "../src/domain/proposals.js"
import { storeSource } from "../src/domain/sources.js"
import { LexicalIndex } from "../src/search/lexical/index.js"
import { ServicesLive } from "../src/services.js"
import { benchConfig } from "./config.js"
import { seededRandom, stats, SYLLABLES, timed } from "./support.js"

const WORDS = [
  "Lager", "Palette", "Halle", "Muster", "Inventur", "Protokoll", "Teamordner", "Gabelstapler", "Tor", "Keller",
  "warehouse", "pallet", "hall", "sample", "stocktaking", "forklift", "gate", "shelf", "label", "shift"
]
const rand = seededRandom(7).int
const word = (): string => (rand(3) === 0 ? WORDS[rand(WORDS.length)] ?? "x" : [rand(16), rand(16), rand(16)].map((k) => SYLLABLES[k]).join(""))
const sentence = (n: number): string => Array.from({ length: n }, word).join(" ")

const MAIL_LINES = Array.from({ length: 200 }, () => sentence(12))
const MAIL_ID = "mail:<bench@acme.example>"

const request = (i: number): ProposalRequest => ({
  scope: "bench", kind: "rule", statement: `${sentence(10)} (${i})`,
  source: { kind: "mail", id: MAIL_ID, quote: MAIL_LINES[i % MAIL_LINES.length] ?? "", link: null },
  said_at: "2026-03-12T09:15:00Z", speaker: "Maria", relations: [{ kind: "product", name: sentence(2), ref: null }],
  keywords: [word(), word()], valid_from: "2026-03-12", supersedes: null
})

const bareInsert = (sql: SqlClient, seq: number, r: ProposalRequest) =>
  Effect.gen(function*() {
    const id = formatRuleId("bench", seq)
    const now = new Date().toISOString()
    yield* sql`INSERT INTO rule (seq, id, created_at, created_by) VALUES (${seq}, ${id}, ${now}, 'person:1')`.raw
    yield* sql`INSERT INTO rule_version (rule_id, version, kind, statement, source_id, quote, said_at, speaker, relations, keywords,
        valid_from, status, reason, changed_by, changed_at)
      VALUES (${id}, 1, ${r.kind}, ${r.statement}, ${MAIL_ID}, ${r.source.quote}, ${r.said_at}, ${r.speaker},
        ${JSON.stringify(r.relations)}, ${JSON.stringify(r.keywords)}, ${r.valid_from}, 'proposed', 'bench', 'person:1', ${now})`.raw
    yield* sql`INSERT INTO rule_fts (rowid, keywords, statement, relations, quote)
      VALUES (${seq}, ${r.keywords.join(" ")}, ${r.statement}, ${r.relations.map((x) => `${x.kind} ${x.name}`).join(" ")}, ${r.source.quote})`.raw
  })

const median = (xs: ReadonlyArray<number>): number => stats(xs).median

/** ms per proposal of each path at `existing` rules: `rounds` rounds of `n` each, interleaved. */
const runAt = (existing: number, mode: "manual" | "autonomous", rounds: number, n: number) =>
  Effect.gen(function*() {
    const dir = mkdtempSync(join(tmpdir(), "gn-bench-intake-"))
    const config = benchConfig(dir, { approval: { default_mode: mode, daily_limit: 1000, own_domains: ["acme.example"] } })
    try {
      return yield* Effect.gen(function*() {
        const store = yield* ScopeStore
        yield* store.create("bench")
        yield* storeSource({
          scope: "bench",
          source: { kind: "mail", id: MAIL_ID, title: "Bench mail", occurred_at: "2026-03-12T09:15:00Z", sender: "maria@acme.example", thread: null, link: null },
          text: MAIL_LINES.join("\n"), attachments: []
        }, "service:1")
        const { sql } = yield* store.use("bench")
        yield* sql.withTransaction(Effect.forEach(Array.from({ length: existing }, (_, i) => i + 1), (seq) => bareInsert(sql, seq, request(seq)), { discard: true }))
        yield* Effect.flatMap(LexicalIndex, (lex) => lex.rebuild(sql))
        let next = existing + 1
        const before: Array<number> = []
        const after: Array<number> = []
        const by = { grantId: "service:1", channel: "api" as const }
        for (let r = 0; r < rounds; r++) {
          before.push(yield* timed(Effect.forEach(Array.from({ length: n }, () => next++), (i) => propose(request(i), by), { discard: true })))
          after.push(yield* timed(Effect.forEach(Array.from({ length: n }, () => next++), (i) => intake(request(i), { ...by, requestId: null }), { discard: true })))
        }
        const adopted = yield* sql<{ n: number }>`SELECT count(*) AS n FROM decision WHERE origin = 'auto'`
        return { before: median(before) / n, after: median(after) / n, adopted: adopted[0]?.n ?? 0 }
      }).pipe(Effect.provide(ServicesLive(config)), Effect.scoped)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

export const intakeBench = async (): Promise<void> => {
  const existing = Number(process.env.BENCH_INTAKE_RULES ?? 10_000)
  console.log(`\nintake: propose with the secret scan and the classification (intake) against propose without them, at ${existing} rules`)
  console.log("mode       | propose ms | intake ms | ratio intake/propose | adopted")
  for (const mode of ["manual", "autonomous"] as const) {
    const r = await Effect.runPromise(runAt(existing, mode, 5, 100).pipe(Logger.withMinimumLogLevel(LogLevel.Warning)))
    console.log(`${mode.padEnd(10)} | ${r.before.toFixed(2).padStart(10)} | ${r.after.toFixed(2).padStart(9)} | ${(r.after / r.before).toFixed(2).padStart(20)} | ${r.adopted}`)
  }
}
