/**
 * The read pool's workers start with the service's first search, in the background: that search
 * is answered on the main thread at once, and the workers come up meanwhile, each having searched
 * the scope once and looking words up in the main thread's lexicon, so the searches that need a
 * worker later (under load, during a redaction's apply) find one up. Over real HTTP.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { propose } from "../../src/domain/proposals.js"
import { ReadPool, readPoolLayer } from "../../src/read-pool/pool.js"
import { tempDir, testConfig } from "../support/env.js"
import { manualProposal } from "../support/fixtures.js"
import { startServer, type TestServer } from "../support/server.js"

let server: TestServer
let cleanup: () => void
let token = ""

const stats = () => server.run(Effect.flatMap(ReadPool, (p) => p.stats))

beforeAll(async () => {
  const t = tempDir("gn-pool-first-")
  cleanup = t.cleanup
  // workers start on use as in the built service (from source they otherwise wait for warm)
  server = await startServer(testConfig(t.dir), { services: { readPool: readPoolLayer({ size: 2, startOnUse: true }) } })
  await server.run(Effect.gen(function*() {
    yield* Effect.flatMap(ScopeStore, (s) => s.create("sales"))
    const grant = yield* Effect.flatMap(OpsStore, (ops) => ops.createGrant({ kind: "service", auth: "bearer", scopes: ["sales"], rights: ["read", "propose"] }))
    token = "token" in grant ? grant.token : ""
    yield* propose(manualProposal("Sales checks the delivery time of every order with the carrier", { keywords: ["Lieferzeit"], relations: [] }), {
      grantId: grant.id, channel: "api"
    })
  }))
}, 120_000)
afterAll(async () => {
  await server.close()
  cleanup()
})

describe("the first search", () => {
  it("is answered on the main thread and starts every worker in the background, each primed with a search of the scope", async () => {
    expect(await stats()).toMatchObject({ kind: "workers", size: 2, ready: 0, inWorker: 0, inThread: 0 })
    const res = await fetch(`${server.url}/v1/search`, {
      method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ scopes: ["sales"], text: "delivery time", include_proposals: true })
    })
    expect(res.status).toBe(200)
    expect(((await res.json()) as { bundles: Array<unknown> }).bundles.length).toBe(1)
    const after = await stats()
    // answered here, lone, without waiting for a worker
    expect(after.inThread).toBe(1)
    // no other search: the workers come up on their own, and each runs its priming search
    let now = after
    for (let i = 0; i < 1200 && !(now.ready === 2 && now.inWorker === 2); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      now = await stats()
    }
    expect(now).toMatchObject({ ready: 2, inWorker: 2, inThread: 1, lexiconShared: 2 })
  }, 180_000)
})
