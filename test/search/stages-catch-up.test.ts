/**
 * Stage b's catch-up as the live layer runs it: vectors for every indexed rule version are
 * written by a background fiber per scope — at start, after a rule write (the writers' RuleIndex
 * wakes it), and when a search sees versions without a vector — and a model change re-embeds in
 * the background. Progress (total, embedded, pending) is in GET /ops/status.
 */
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { decide } from "../../src/decision/decide.js"
import { propose } from "../../src/domain/proposals.js"
import { opsStatus } from "../../src/operations/ops-status.js"
import { pendingVersions } from "../../src/search/semantic/vectors.js"
import { tempDir } from "../support/env.js"
import { manualProposal } from "../support/fixtures.js"
import { sqlOf } from "../support/run.js"
import { startServer, type TestServer } from "../support/server.js"
import { writeTinyModelDir } from "../support/tiny-tokenizers.js"
import { PERSON, postSearch, QUESTION, RULES, settled, type Started, startWithRules, stagesConfig, vectorStatus } from "./stages-support.js"

let servers: Array<TestServer> = []
let cleanup = () => {}
afterEach(async () => {
  for (const s of servers) await s.close()
  servers = []
  cleanup()
})

const start = async (o: { model?: "bge-m3" | "qwen3-embedding-0.6b" } = {}) => {
  const t = tempDir("gn-catch-up-")
  cleanup = t.cleanup
  writeTinyModelDir(`${t.dir}/models`, "bge-m3", { dim: 16 })
  const s = await startWithRules(stagesConfig(t.dir, o.model === undefined ? {} : { semantic: { model: o.model } }))
  servers.push(s.server)
  return { ...s, dir: t.dir }
}

/** Polls stage b's status (never calls settled(), which would wake the catch-up itself). */
const until = async (server: TestServer, done: (sales: { total: number | null; embedded: number | null; pending: number | null; running: boolean }) => boolean) => {
  for (let i = 0; i < 400; i++) {
    const sales = (await vectorStatus(server))?.scopes.find((x) => x.scope === "sales")
    if (sales !== undefined && done(sales)) return sales
    await new Promise((r) => setTimeout(r, 25))
  }
  throw new Error(`stage b's catch-up did not get there: ${JSON.stringify(await vectorStatus(server))}`)
}

const pending = (s: Started, model = "bge-m3") => s.server.run(Effect.flatMap(sqlOf("sales"), (sql) => pendingVersions(sql, model, 100)))

describe("stage b catch-up", () => {
  it("fills a vector for every current version at start; GET /ops/status shows the progress per scope", async () => {
    const s = await start()
    const sales = await until(s.server, (x) => x.pending === 0 && !x.running)
    expect(sales).toEqual({ scope: "sales", state: "ready", total: RULES.length, embedded: RULES.length, pending: 0, running: false })
    expect(await pending(s)).toEqual([])
    const status = await s.server.run(opsStatus("2026-01-01T00:00:00.000Z"))
    expect(status.semantic).toMatchObject({ model: "bge-m3", state: "ready", reason: null, detail: null, dim: 16 })
    expect(status.semantic?.scopes).toEqual([sales])
  })

  it("a committed rule write wakes it; the next search finds the new rule by meaning (found_via semantic)", async () => {
    const s = await start()
    await until(s.server, (x) => x.pending === 0 && !x.running)
    const id = await s.server.run(Effect.gen(function*() {
      const grant = (yield* (yield* OpsStore).listGrants()).find((g) => g.kind === "service")
      const created = yield* propose(manualProposal("Hook rails are ordered only on Mondays", { keywords: ["Montag"], relations: [] }), { grantId: grant?.id ?? "", channel: "api" })
      const ruleId = created.ref.slice("rule/".length, created.ref.indexOf("@"))
      yield* decide(ruleId, { decision: "confirm", version: 1 }, PERSON)
      return ruleId
    }))
    // woken by the writers: no search and no settled() in between
    await until(s.server, (x) => x.total === RULES.length + 1 && x.pending === 0 && !x.running)
    expect(await pending(s)).toEqual([])
    const r = await postSearch(s.server, s.token, { text: QUESTION })
    const head = r.body.bundles.find((b) => b.head.ref === `rule/${id}@2`)?.head
    expect(head?.found_via).toEqual(["semantic"])
    expect(head?.rank.a).toBeNull()
    expect(head?.rank.b).not.toBeNull()
  })

  it("a search that sees a version without a vector answers at once without it and wakes the catch-up", async () => {
    const s = await start()
    await until(s.server, (x) => x.pending === 0 && !x.running)
    // a new version written past the writers (so nothing woke the catch-up): sales-0002@3
    await s.server.run(Effect.gen(function*() {
      const store = yield* ScopeStore
      yield* store.write("sales", (h) => Effect.gen(function*() {
        const cols = (yield* h.sql<{ name: string }>`PRAGMA table_info(rule_version)`).map((c) => c.name)
        const select = cols.map((c) => (c === "version" ? "3" : c === "statement" ? "?" : c)).join(", ")
        yield* h.sql.unsafe(`INSERT INTO rule_version (${cols.join(", ")}) SELECT ${select} FROM rule_version WHERE rule_id = 'sales-0002' AND version = 2`,
          ["Invoices are paid within 14 days net"]).raw
      }))
    }))
    expect((await vectorStatus(s.server))?.scopes[0]).toMatchObject({ total: RULES.length, embedded: RULES.length, pending: 0 })
    const first = await postSearch(s.server, s.token, { text: QUESTION })
    expect(first.body.stages.b.state).toBe("ran")
    expect(first.body.bundles.map((b) => b.head.ref).filter((r) => r.startsWith("rule/sales-0002@"))).toEqual([])
    await until(s.server, (x) => x.pending === 0 && !x.running && x.embedded === RULES.length)
    expect(await pending(s)).toEqual([])
    const again = await postSearch(s.server, s.token, { text: QUESTION })
    expect(again.body.bundles.map((b) => b.head.ref)).toContain("rule/sales-0002@3")
  })

  it("a model change keeps the old vectors and re-embeds every rule for the new model in the background", async () => {
    const s = await start()
    await until(s.server, (x) => x.pending === 0 && !x.running)
    await s.server.close()
    servers = []
    writeTinyModelDir(`${s.dir}/models`, "qwen3-embedding-0.6b", { dim: 12 })
    const config = stagesConfig(s.dir, { semantic: { model: "qwen3-embedding-0.6b" } })
    const server = await startServer(config)
    servers.push(server)
    await settled(server, "sales")
    expect((await vectorStatus(server))?.scopes[0]).toEqual({ scope: "sales", state: "ready", total: RULES.length, embedded: RULES.length, pending: 0, running: false })
    const models = await server.run(Effect.flatMap(sqlOf("sales"), (sql) =>
      sql<{ model: string; dim: number; n: number }>`SELECT model, dim, count(DISTINCT seq) AS n FROM vec_rule GROUP BY model, dim ORDER BY model`))
    expect(models).toEqual([{ model: "bge-m3", dim: 16, n: RULES.length }, { model: "qwen3-embedding-0.6b", dim: 12, n: RULES.length }])
    const token = await server.run(Effect.map((Effect.flatMap(OpsStore, (o) => o.createGrant({ kind: "service", auth: "bearer", scopes: ["sales"], rights: ["read"] }))), (g) => ("token" in g ? g.token : "")))
    const r = await postSearch(server, token, { text: QUESTION })
    expect(r.body.stages.b.state).toBe("ran")
    expect(r.body.bundles).toHaveLength(RULES.length)
  })
})
