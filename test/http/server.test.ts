/**
 * What runs around a request on the public listener (src/http/server.ts), over real HTTP: every
 * step of a request runs from the request scheduler, also the first steps of a request woken at
 * the admission gate when another leaves. They run from a macrotask (an Immediate), after what was
 * already queued for the event loop, never in the microtask queue of the request that left: there
 * they ran step 1 (the credential's grant, the rate limit) before Node polled a socket again. The
 * test watches step 1 through the RateLimiter layer (the real one, wrapped).
 */
import { executionAsyncResource } from "node:async_hooks"
import { Deferred, Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ReadPool, ReadPoolInThread } from "../../src/read-pool/pool.js"
import { admissionLayer, type Gate } from "../../src/transport/admission.js"
import { type LimitKind, RateLimiter, RateLimiterLive } from "../../src/transport/rate-limit.js"
import { salesSearchServer } from "../support/search-server.js"

let gate: Gate | undefined
let searches = 0
/** what step 1 of the second request (its rate-limit take) ran from */
let ranFrom: string | null = null
const firstStarted = Effect.runSync(Deferred.make<void>())
const releaseFirst = Effect.runSync(Deferred.make<void>())

/** The in-thread pool; the first search holds its slot until the test lets it go. */
const HoldingPool = Layer.effect(ReadPool, Effect.map(ReadPool, (inner) => ({
  ...inner,
  search: (req: Parameters<typeof inner.search>[0], id: string) =>
    Effect.suspend(() => {
      searches++
      if (searches > 1) return inner.search(req, id)
      return Effect.zipRight(Effect.zipRight(Deferred.succeed(firstStarted, undefined), Deferred.await(releaseFirst)), inner.search(req, id))
    })
}))).pipe(Layer.provide(ReadPoolInThread))

/** The live rate limiter; a take once the first search has begun records what it runs from. */
const WatchingLimiter = Layer.effect(RateLimiter, Effect.map(RateLimiter, (inner) => ({
  take: (kind: LimitKind, key: string) =>
    Effect.suspend(() => {
      if (searches === 1) ranFrom = (executionAsyncResource() as object).constructor.name
      return inner.take(kind, key)
    })
}))).pipe(Layer.provide(RateLimiterLive))

let search: () => Promise<number>
let close: () => Promise<void>

beforeAll(async () => {
  ;({ search, close } = await salesSearchServer("gn-around-", HoldingPool, {
    rateLimiter: WatchingLimiter,
    admission: admissionLayer({ maxActive: 1, maxQueued: 4 }, (g) => {
      gate = g
    })
  }))
})
afterAll(() => close())

describe("what runs around a request", () => {
  it("a request woken at the gate takes its step 1 from a macrotask of the request scheduler, not in the microtask queue of the one that left", async () => {
    const first = search()
    await Effect.runPromise(Deferred.await(firstStarted))
    const second = search()
    for (let i = 0; i < 200 && (gate?.stats().queued ?? 0) === 0; i++) await new Promise((r) => setTimeout(r, 5))
    expect(gate?.stats()).toMatchObject({ active: 1, queued: 1 })
    expect(ranFrom).toBeNull()
    Effect.runSync(Deferred.succeed(releaseFirst, undefined))
    expect(await first).toBe(200)
    expect(await second).toBe(200)
    // a microtask runs from no resource of its own (a plain Object)
    expect(ranFrom).toBe("Immediate")
    expect(gate?.stats()).toMatchObject({ active: 0, queued: 0, admitted: 2 })
  })
})
