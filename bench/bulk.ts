/**
 * Bulk decisions: time per POST of POST /v1/decisions confirming 100 proposed rules and of POST
 * /v1/reviews confirming 100 agents' new entities, over HTTP on loopback with a person's session,
 * one request at a time, ROUNDS requests each (every request new items); median and max against
 * the goal line (a bulk confirm of 100 rules ≤ 2 s).
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
import { createEntity } from "../src/graph/entities.js"
import { publicListener } from "../src/http/server.js"
import { ServicesLive } from "../src/services.js"
import { benchConfig } from "./config.js"
import { freePort, stats } from "./support.js"

const BULK = 100
const ROUNDS = 5
const GOAL_MS = 2000
const EMAIL = "bench@example.com"

const LINES = Array.from({ length: 120 }, (_, i) => `Zeile ${i}: Lieferungen an Kunde ${i % 17} gehen nur nach Freigabe durch den Vertrieb raus.`)

const proposal = (i: number): ProposalRequest => ({
  scope: "bench", kind: "rule",
  statement: `Deliveries to customer ${i % 17} leave only after sales approval (case ${i})`,
  source: { kind: "mail", id: "mail:<bulk-bench@example.com>", quote: LINES[i % LINES.length] ?? "", link: null },
  said_at: "2026-03-12T09:15:00Z", speaker: "Maria", relations: [{ kind: "customer", name: `Kunde ${i % 17}`, ref: null }],
  keywords: ["Lieferung", "Freigabe"], valid_from: "2026-03-12", supersedes: null
})

export const bulkBench = async (): Promise<void> => {
  const dir = mkdtempSync(join(tmpdir(), "gn-bench-bulk-"))
  const port = await freePort()
  const base = benchConfig(dir, { public_url: `http://127.0.0.1:${port}`, limits: { decisions_per_minute: 100_000 } }, port)
  const config = { ...base, env: { ...base.env, devEmail: EMAIL } }
  const runtime = ManagedRuntime.make(publicListener("127.0.0.1", port).pipe(
    Layer.provideMerge(ServicesLive(config)),
    Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
  ))
  const url = `http://127.0.0.1:${port}`
  try {
    const { cookie, rules, entities } = await runtime.runPromise(Effect.gen(function*() {
      const ops = yield* OpsStore
      yield* Effect.flatMap(ScopeStore, (s) => s.create("bench"))
      yield* ops.createGrant({ kind: "person", auth: "email", identity: EMAIL, scopes: ["bench"], rights: ["read", "propose", "decide"] })
      const feeder = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: ["bench"], rights: ["read", "propose"], label: "feeder" })
      yield* storeSource({
        scope: "bench", attachments: [], text: LINES.join("\n"),
        source: { kind: "mail", id: "mail:<bulk-bench@example.com>", title: "Freigaben", occurred_at: "2026-03-12T09:15:00Z", sender: "maria@example.com", thread: null, link: null }
      }, feeder.id)
      const rules: Array<string> = []
      for (let i = 0; i < BULK * ROUNDS; i++) {
        const c = yield* propose(proposal(i), { grantId: feeder.id, channel: "api" })
        rules.push(c.ref.slice(5, c.ref.indexOf("@")))
      }
      const agent = { grantId: feeder.id, channel: "mcp" as const }
      const root = yield* createEntity({ scope: "bench", type: "organisation", name: "Bench Holding", parent_id: null }, agent)
      const entities: Array<string> = []
      for (let i = 0; i < BULK * ROUNDS; i++) {
        // force: the names look alike on purpose; the bench measures the review, not the duplicate check
        const e = yield* createEntity({ scope: "bench", type: "department", name: `Branch ${i}`, parent_id: root.id, force: true, reason: "a branch of its own" }, agent)
        entities.push(e.id)
      }
      const now = yield* Clock.currentTimeMillis
      const session = signSession(Redacted.value(config.env.sessionSecret), EMAIL, now)
      return { cookie: `${sessionCookieName(config.file.public_url)}=${session}`, rules, entities }
    }))
    const csrf = csrfToken(Redacted.value(config.env.sessionSecret), EMAIL)
    const post = async (path: string, body: unknown): Promise<number> => {
      const t0 = performance.now()
      const res = await fetch(`${url}${path}`, { method: "POST", body: JSON.stringify(body), headers: { cookie, csrf, origin: url, "content-type": "application/json" } })
      const text = await res.text()
      const ms = performance.now() - t0
      if (res.status !== 200) throw new Error(`${path}: ${res.status} ${text}`)
      return ms
    }
    const decisions: Array<number> = []
    const reviews: Array<number> = []
    for (let r = 0; r < ROUNDS; r++) {
      const part = rules.slice(r * BULK, (r + 1) * BULK)
      decisions.push(await post("/v1/decisions", { items: part.map((id) => ({ rule_id: id, decision: "confirm", version: 1 })) }))
      const ents = entities.slice(r * BULK, (r + 1) * BULK)
      reviews.push(await post("/v1/reviews", { items: ents.map((id) => ({ target: `entity/${id}@1`, verdict: "confirm" })) }))
    }
    const d = stats(decisions)
    const v = stats(reviews)
    console.log(`\nBulk decisions over HTTP on loopback, one request at a time, ${ROUNDS} requests of ${BULK} new items each`)
    console.log(`${"request".padEnd(56)} | median ms | max ms | per item ms`)
    for (const [name, s] of [[`POST /v1/decisions (${BULK} rules confirmed)`, d], [`POST /v1/reviews (${BULK} new entities confirmed)`, v]] as const) {
      console.log(`${name.padEnd(56)} | ${s.median.toFixed(1).padStart(9)} | ${s.max.toFixed(1).padStart(6)} | ${(s.median / BULK).toFixed(2).padStart(11)}`)
    }
    console.log(`goal: bulk confirm of ${BULK} rules ≤ ${GOAL_MS / 1000} s — ${d.max <= GOAL_MS ? "met" : "MISSED"} (max ${(d.max / 1000).toFixed(2)} s)`)
  } finally {
    await runtime.dispose()
    rmSync(dir, { recursive: true, force: true })
  }
}
