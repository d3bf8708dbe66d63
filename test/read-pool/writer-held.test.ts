/**
 * A search while a write holds the scope's connection (a redaction's apply, seconds) and no worker
 * of the read pool is up yet (one is starting: seconds on a busy machine): it is answered at once
 * on the main thread from read-only connections of the pool's own, not after the write. Over real
 * HTTP; the pool here starts no worker (from TypeScript source they start only once warmed).
 */
import { Deferred, Effect, Fiber } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { holdingConnection, isWriting } from "../../src/db/connection.js"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { propose } from "../../src/domain/proposals.js"
import { ReadPool } from "../../src/read-pool/pool.js"
import { tempDir, testConfig } from "../support/env.js"
import { manualProposal } from "../support/fixtures.js"
import { startServer, type TestServer } from "../support/server.js"

let server: TestServer
let cleanup: () => void
let token = ""

const search = async (text: string) => {
  const res = await fetch(`${server.url}/v1/search`, {
    method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ scopes: ["sales"], text, include_proposals: true })
  })
  return { status: res.status, json: (await res.json()) as { bundles: Array<{ head: { ref: string } }> } }
}

beforeAll(async () => {
  const t = tempDir("gn-pool-held-")
  cleanup = t.cleanup
  server = await startServer(testConfig(t.dir))
  await server.run(Effect.gen(function*() {
    yield* Effect.flatMap(ScopeStore, (s) => s.create("sales"))
    const grant = yield* Effect.flatMap(OpsStore, (ops) => ops.createGrant({ kind: "service", auth: "bearer", scopes: ["sales"], rights: ["read", "propose"] }))
    token = "token" in grant ? grant.token : ""
    yield* propose(manualProposal("Sales checks the delivery time of every order with the carrier", { keywords: ["Lieferzeit"], relations: [] }), {
      grantId: grant.id, channel: "api"
    })
  }))
  // a search before: the writer's connection has checked the lexical build (as before any apply)
  expect((await search("delivery time")).status).toBe(200)
}, 120_000)
afterAll(async () => {
  await server.close()
  cleanup()
})

describe("a search while the scope's writer is held and no worker is up", () => {
  it("is answered while the writer stays held, from a read-only connection on this thread", async () => {
    const release = await server.run(Deferred.make<void>())
    const holding = await server.run(Effect.forkDaemon(Effect.flatMap(ScopeStore, (s) => s.use("sales")).pipe(
      Effect.flatMap(({ sql }) => holdingConnection(sql, Deferred.await(release))))))
    const held = () => server.run(Effect.map(Effect.flatMap(ScopeStore, (s) => s.use("sales")), (h) => isWriting(h.sql)))
    try {
      expect(await held()).toBe(true)
      const before = await server.run(Effect.flatMap(ReadPool, (p) => p.stats))
      const answered = await Promise.race([
        search("delivery time carrier"),
        new Promise<null>((resolve) => setTimeout(() => resolve(null), 10_000))
      ])
      expect(answered, "no answer while the writer was held").not.toBeNull()
      expect(answered!.status).toBe(200)
      expect(answered!.json.bundles.map((b) => b.head.ref)).toContain("rule/sales-0001@1")
      expect(await held()).toBe(true)
      const after = await server.run(Effect.flatMap(ReadPool, (p) => p.stats))
      expect(after.inThread).toBe(before.inThread + 1)
      expect(after.ready).toBe(0)
    } finally {
      await server.run(Deferred.succeed(release, undefined))
      await server.run(Fiber.join(holding))
    }
    // its search_log row is written once the writer is free (the two searches of this file)
    const logged = () => server.run(Effect.flatMap(Effect.flatMap(ScopeStore, (s) => s.use("sales")), ({ sql }) =>
      sql<{ n: number }>`SELECT count(*) AS n FROM search_log WHERE operation = 'search'`))
    let rows = (await logged())[0]!.n
    for (let i = 0; i < 100 && rows < 2; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      rows = (await logged())[0]!.n
    }
    expect(rows).toBe(2)
  }, 60_000)
})
