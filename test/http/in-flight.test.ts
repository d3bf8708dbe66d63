/**
 * The public listener counts the requests it is serving (src/read-pool/in-flight.ts, the read
 * pool's lone searches): over real HTTP, three searches held in a ReadPool layer of the test's
 * until all three have arrived each see the count at that moment; the last one sees all three,
 * and once every answer is back the count is 0 again.
 */
import { Deferred, Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { InFlight } from "../../src/read-pool/in-flight.js"
import { ReadPool, ReadPoolInThread } from "../../src/read-pool/pool.js"
import { salesSearchServer } from "../support/search-server.js"
import type { TestServer } from "../support/server.js"

const HELD = 3
let server: TestServer
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

let search: () => Promise<number>
let close: () => Promise<void>

beforeAll(async () => {
  ;({ server, search, close } = await salesSearchServer("gn-in-flight-", HeldPool))
})
afterAll(() => close())

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
