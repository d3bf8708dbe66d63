/**
 * The public listener counts the requests it is serving (src/read-pool/in-flight.ts, the read
 * pool's lone searches): over real HTTP, three searches held in a ReadPool layer of the test's
 * until all three have arrived each see the count at that moment; the last one sees all three,
 * and once every answer is back the count is 0 again.
 */
import { Deferred, Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { InFlight } from "../../src/read-pool/in-flight.js"
import { ReadPool, ReadPoolInThread } from "../../src/read-pool/pool.js"
import { tempDir, testConfig } from "../support/env.js"
import { startServer, type TestServer } from "../support/server.js"

const HELD = 3
let server: TestServer
let cleanup: () => void
let token = ""
/** InFlight.count() as each held search saw it when it arrived */
const seen: Array<number> = []

/** The in-thread pool, but every search waits until HELD searches have arrived. */
const HeldPool = Layer.effect(ReadPool, Effect.gen(function*() {
  const inner = yield* ReadPool
  const inFlight = yield* InFlight
  const all = yield* Deferred.make<void>()
  return {
    ...inner,
    search: (req: Parameters<typeof inner.search>[0], id: string) =>
      Effect.gen(function*() {
        seen.push(inFlight.count())
        if (seen.length === HELD) yield* Deferred.succeed(all, undefined)
        yield* Deferred.await(all)
        return yield* inner.search(req, id)
      })
  }
})).pipe(Layer.provide(ReadPoolInThread))

const search = async () => {
  const res = await fetch(`${server.url}/v1/search`, {
    method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ scopes: ["sales"], text: "Lieferzeit" })
  })
  await res.arrayBuffer()
  return res.status
}

beforeAll(async () => {
  const t = tempDir("gn-in-flight-")
  cleanup = t.cleanup
  server = await startServer(testConfig(t.dir), { services: { readPool: HeldPool } })
  await server.run(Effect.gen(function*() {
    const ops = yield* OpsStore
    yield* Effect.flatMap(ScopeStore, (s) => s.create("sales"))
    const grant = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: ["sales"], rights: ["read"] })
    token = "token" in grant ? grant.token : ""
  }))
})
afterAll(async () => {
  await server.close()
  cleanup()
})

describe("the public listener's requests in flight", () => {
  it("counts every request from its start to its response", async () => {
    const inFlight = await server.run(InFlight)
    expect(inFlight.count()).toBe(0)
    expect(await Promise.all(Array.from({ length: HELD }, search))).toEqual([200, 200, 200])
    expect(seen.length).toBe(HELD)
    expect(seen.every((n) => n >= 1 && n <= HELD)).toBe(true)
    expect(Math.max(...seen)).toBe(HELD)
    expect(inFlight.count()).toBe(0)
  })
})
