/**
 * The digest (gaps.md §13): time to render GET /approval/digest?since=<yesterday> with 10,000
 * proposals waiting and 2,000 confirmed rules due for recheck in the scope (seeded by SQL as the
 * writers store them), over HTTP on loopback with a session cookie, one request at a time; and
 * the digest operation itself in process (what GET /ops/digest and the nightly's post read).
 * Goal: the page in ≤ 300 ms (median).
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Clock, Effect, Layer, Logger, LogLevel, ManagedRuntime, Redacted } from "effect"
import { structureWaiting } from "../src/approval/structure-view.js"
import { sessionCookieName, signSession } from "../src/auth/session.js"
import { formatRuleId } from "../src/contracts/ids.js"
import { dayBefore, dayIn } from "../src/contracts/time.js"
import { OpsStore } from "../src/db/ops-store.js"
import { ScopeStore } from "../src/db/scope-store.js"
import { LexicalIndex } from "../src/search/lexical/index.js"
import { publicListener } from "../src/http/server.js"
import { digestOf } from "../src/operations/digest.js"
import { ServicesLive } from "../src/services.js"
import { benchConfig } from "./config.js"
import { freePort, goalLine, seedConfirmedRules, seedManualSource, stats } from "./support.js"

const WAITING = Number(process.env.BENCH_DIGEST_WAITING ?? 10_000)
const DUE = 2_000
const RUNS = 30
const EMAIL = "bench@example.com"
const GOAL_MS = 300
const SEED_AT = "2026-01-01T00:00:00.000Z"

const statement = (seq: number) => `Deliveries to customer ${seq % 97} leave only after sales approval (case ${seq})`

export const digestBench = async (): Promise<void> => {
  const dir = mkdtempSync(join(tmpdir(), "gn-bench-digest-"))
  const port = await freePort()
  const base = benchConfig(dir, { public_url: `http://127.0.0.1:${port}` }, port)
  const config = { ...base, env: { ...base.env, devEmail: EMAIL } }
  const runtime = ManagedRuntime.make(publicListener("127.0.0.1", port).pipe(
    Layer.provideMerge(ServicesLive(config)),
    Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
  ))
  const url = `http://127.0.0.1:${port}`
  try {
    const cookie = await runtime.runPromise(Effect.gen(function*() {
      const store = yield* ScopeStore
      yield* store.create("bench")
      yield* Effect.flatMap(OpsStore, (ops) => ops.createGrant({ kind: "person", auth: "email", identity: EMAIL, scopes: ["bench"], rights: ["read", "propose", "decide"] }))
      const { sql } = yield* store.use("bench")
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* seedManualSource(sql)
        // the proposals waiting: version 1 proposed, as propose stores it
        for (let seq = 1; seq <= WAITING; seq++) {
          const id = formatRuleId("bench", seq)
          yield* sql`INSERT INTO rule (seq, id, created_at, created_by) VALUES (${seq}, ${id}, ${SEED_AT}, 'person:1')`.raw
          yield* sql`INSERT INTO rule_version (rule_id, version, kind, statement, source_id, quote, timestamp_s, source_link, said_at, speaker,
              relations, keywords, valid_from, valid_until, supersedes, superseded_by, status, reason, changed_by, changed_at)
            VALUES (${id}, 1, 'rule', ${statement(seq)}, 'manual:person:1', ${statement(seq)}, NULL, NULL, ${SEED_AT}, NULL, '[]', '["Lieferung"]',
              '2026-01-01', NULL, NULL, NULL, 'proposed', 'bench', 'person:1', ${SEED_AT})`.raw
          yield* sql`INSERT INTO rule_fts (rowid, keywords, statement, relations, quote) VALUES (${seq}, 'Lieferung', ${statement(seq)}, '', ${statement(seq)})`.raw
        }
        // confirmed on 2026-01-01 and never reviewed since: due for recheck
        yield* seedConfirmedRules(sql, WAITING + 1, WAITING + DUE, (seq) => ({ statement: statement(seq), keywords: ["Lieferung"], relations: [], quote: statement(seq) }))
      }))
      yield* Effect.flatMap(LexicalIndex, (lex) => lex.rebuild(sql))
      const now = yield* Clock.currentTimeMillis
      return `${sessionCookieName(config.file.public_url)}=${signSession(Redacted.value(config.env.sessionSecret), EMAIL, now)}`
    }))
    const since = dayBefore(dayIn(config.file.zone, Date.now()))
    const page = `${url}/approval/digest?since=${since}`
    const times: Array<number> = []
    let bytes = 0
    for (let i = 0; i < RUNS + 3; i++) {
      const t0 = performance.now()
      const res = await fetch(page, { headers: { cookie } })
      const body = await res.arrayBuffer()
      if (res.status !== 200) throw new Error(`${page}: ${res.status}`)
      if (i >= 3) times.push(performance.now() - t0)
      bytes = body.byteLength
    }
    const op: Array<number> = []
    for (let i = 0; i < RUNS; i++) {
      const t0 = performance.now()
      const d = await runtime.runPromise(digestOf(["bench"], since, structureWaiting))
      op.push(performance.now() - t0)
      if (d.scopes[0]?.waiting.rules !== WAITING || d.scopes[0].dueForRecheck.length !== DUE) throw new Error("the digest does not count the seeded rules")
    }
    const p = stats(times)
    const o = stats(op)
    console.log(`\nDigest with ${WAITING.toLocaleString("en")} proposals waiting and ${DUE.toLocaleString("en")} rules due for recheck, ${RUNS} runs after 3 warm-up runs`)
    console.log(`${"what".padEnd(52)} | median ms | p95 ms`)
    console.log(`${`GET /approval/digest (page, ${(bytes / 1024).toFixed(0)} KiB)`.padEnd(52)} | ${p.median.toFixed(2).padStart(9)} | ${p.p95.toFixed(2).padStart(6)}`)
    console.log(`${"the digest operation in process (GET /ops/digest)".padEnd(52)} | ${o.median.toFixed(2).padStart(9)} | ${o.p95.toFixed(2).padStart(6)}`)
    console.log(goalLine(`digest page ≤ ${GOAL_MS} ms`, p.median <= GOAL_MS, `median ${p.median.toFixed(1)} ms, p95 ${p.p95.toFixed(1)} ms`))
  } finally {
    await runtime.dispose()
    rmSync(dir, { recursive: true, force: true })
  }
}
