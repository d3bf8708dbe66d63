/**
 * Approval pages: time to render GET /approval with 500 open proposals in the scope (the first
 * page of 100 plus the counts) and GET /approval/rules/:id for a rule with 50 versions (a
 * confirm and 48 reviews with changed keywords), over HTTP on loopback with a session cookie,
 * one request at a time; median and p95.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Clock, Effect, Layer, Logger, LogLevel, ManagedRuntime, Redacted } from "effect"
import { csrfToken } from "../src/auth/csrf.js"
import { sessionCookieName, signSession } from "../src/auth/session.js"
import { OpsStore } from "../src/db/ops-store.js"
import { ScopeStore } from "../src/db/scope-store.js"
import { propose } from "../src/domain/proposals.js"
import type { ProposalRequest } from "../src/domain/proposal-schemas.js"
import { storeSource } from "../src/domain/sources.js"
import { publicListener } from "../src/http/server.js"
import { ServicesLive } from "../src/services.js"
import { benchConfig } from "./config.js"
import { freePort, stats } from "./support.js"

const PROPOSALS = 500
const VERSIONS = 50
const RUNS = 60
const EMAIL = "bench@example.com"

const LINES = Array.from({ length: 120 }, (_, i) => `Zeile ${i}: Lieferungen an Kunde ${i % 17} gehen nur nach Freigabe durch den Vertrieb raus.`)

const proposal = (i: number): ProposalRequest => ({
  scope: "bench", kind: "rule",
  statement: `Deliveries to customer ${i % 17} leave only after sales approval (case ${i})`,
  source: { kind: "mail", id: "mail:<approval-bench@example.com>", quote: LINES[i % LINES.length] ?? "", link: null },
  said_at: "2026-03-12T09:15:00Z", speaker: "Maria", relations: [{ kind: "customer", name: `Kunde ${i % 17}`, ref: null }],
  keywords: ["Lieferung", "Freigabe"], valid_from: "2026-03-12", supersedes: null
})


const timed = async (url: string, cookie: string): Promise<{ ms: number; bytes: number }> => {
  const t0 = performance.now()
  const res = await fetch(url, { headers: { cookie } })
  const body = await res.arrayBuffer()
  if (res.status !== 200) throw new Error(`${url}: ${res.status}`)
  return { ms: performance.now() - t0, bytes: body.byteLength }
}

export const approvalBench = async (): Promise<void> => {
  const dir = mkdtempSync(join(tmpdir(), "gn-bench-approval-"))
  const port = await freePort()
  const base = benchConfig(dir, { public_url: `http://127.0.0.1:${port}`, limits: { decisions_per_minute: 100_000 } }, port)
  const config = { ...base, env: { ...base.env, devEmail: EMAIL } }
  const runtime = ManagedRuntime.make(publicListener("127.0.0.1", port).pipe(
    Layer.provideMerge(ServicesLive(config)),
    Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
  ))
  const url = `http://127.0.0.1:${port}`
  try {
    const { cookie, longId } = await runtime.runPromise(Effect.gen(function*() {
      const ops = yield* OpsStore
      yield* Effect.flatMap(ScopeStore, (s) => s.create("bench"))
      yield* ops.createGrant({ kind: "person", auth: "email", identity: EMAIL, scopes: ["bench"], rights: ["read", "propose", "decide"] })
      const feeder = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: ["bench"], rights: ["read", "propose"], label: "feeder" })
      yield* storeSource({
        scope: "bench", attachments: [], text: LINES.join("\n"),
        source: { kind: "mail", id: "mail:<approval-bench@example.com>", title: "Freigaben", occurred_at: "2026-03-12T09:15:00Z", sender: "maria@example.com", thread: null, link: null }
      }, feeder.id)
      const long = yield* propose(proposal(100_000), { grantId: feeder.id, channel: "api" })
      for (let i = 0; i < PROPOSALS; i++) yield* propose(proposal(i), { grantId: feeder.id, channel: "api" })
      const now = yield* Clock.currentTimeMillis
      const session = signSession(Redacted.value(config.env.sessionSecret), EMAIL, now)
      return { cookie: `${sessionCookieName(config.file.public_url)}=${session}`, longId: long.ref.slice(5, long.ref.indexOf("@")) }
    }))
    // the long rule: confirm, then 48 reviews that change the keywords → 50 versions
    const csrf = csrfToken(Redacted.value(config.env.sessionSecret), EMAIL)
    const decide = async (body: unknown) => {
      const res = await fetch(`${url}/v1/rules/${longId}/decision`, {
        method: "POST", body: JSON.stringify(body), headers: { cookie, csrf, origin: url, "content-type": "application/json" }
      })
      if (res.status !== 200) throw new Error(`decision: ${res.status} ${await res.text()}`)
    }
    await decide({ decision: "confirm", version: 1 })
    for (let v = 2; v < VERSIONS; v++) await decide({ decision: "review", version: v, change: { keywords: ["Lieferung", `Runde ${v}`] } })

    const index: Array<number> = []
    const rule: Array<number> = []
    let indexBytes = 0
    let ruleBytes = 0
    for (let i = 0; i < 5; i++) {
      await timed(`${url}/approval`, cookie)
      await timed(`${url}/approval/rules/${longId}`, cookie)
    }
    for (let i = 0; i < RUNS; i++) {
      const a = await timed(`${url}/approval`, cookie)
      index.push(a.ms)
      indexBytes = a.bytes
      const b = await timed(`${url}/approval/rules/${longId}`, cookie)
      rule.push(b.ms)
      ruleBytes = b.bytes
    }
    const a = stats(index)
    const b = stats(rule)
    console.log(`\nApproval pages over HTTP on loopback, one request at a time, ${RUNS} runs each after 5 warm-up runs`)
    const rows: ReadonlyArray<readonly [string, { median: number; p95: number }, number]> = [
      [`GET /approval (${PROPOSALS} open proposals, page of 100)`, a, indexBytes],
      [`GET /approval/rules/:id (${VERSIONS} versions)`, b, ruleBytes]
    ]
    console.log(`${"page".padEnd(50)} | median ms | p95 ms | KiB`)
    for (const [name, r, size] of rows) {
      console.log(`${name.padEnd(50)} | ${r.median.toFixed(2).padStart(9)} | ${r.p95.toFixed(2).padStart(6)} | ${(size / 1024).toFixed(0).padStart(3)}`)
    }
    console.log("(the rule page runs stage a for its possible duplicates over the scope's 501 rules, which share most words here)")
  } finally {
    await runtime.dispose()
    rmSync(dir, { recursive: true, force: true })
  }
}
