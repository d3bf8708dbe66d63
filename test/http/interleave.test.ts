/**
 * The public listener reads its sockets between the steps of a long request (src/transport/
 * interleave.ts): a request's steps run from macrotasks, so a /healthz probe is answered while
 * another request is still working through its steps, not after the last of them. Over real HTTP:
 * the search is held in a ReadPool layer of the test's that works through 200 steps (each a yield,
 * as a long search yields every 2,048 operations) and asks /healthz itself at step 10; the answer
 * must come back before step 200. On Effect's default scheduler every step is a microtask and
 * Node polls no socket until the last one: /healthz is answered after the search.
 */
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ReadPool, ReadPoolInThread } from "../../src/read-pool/pool.js"
import { interleaved } from "../../src/transport/interleave.js"
import { salesSearchServer } from "../support/search-server.js"
import type { TestServer } from "../support/server.js"

const STEPS = 200
let server: TestServer
/** the step at which the /healthz probe started by the search was answered (null: not yet) */
let answeredAt: number | null = null
let status = 0

/** A few hundred microseconds of work on this thread. */
const work = () => {
  let x = 0
  for (let i = 0; i < 20_000; i++) x += Math.sqrt(i)
  return x
}

/** The in-thread pool, but every search first works through STEPS yields and probes /healthz at step 10. */
const SteppedPool = Layer.effect(ReadPool, Effect.map(ReadPool, (inner) => ({
  ...inner,
  search: (req: Parameters<typeof inner.search>[0], id: string) =>
    Effect.zipRight(
      Effect.gen(function*() {
        answeredAt = null
        let step = 0
        for (; step < STEPS; step++) {
          if (step === 10) {
            void fetch(`${server.url}/healthz`).then(async (res) => {
              status = res.status
              await res.arrayBuffer()
              answeredAt = step
            })
          }
          work()
          yield* Effect.yieldNow()
        }
      }),
      inner.search(req, id)
    )
}))).pipe(Layer.provide(ReadPoolInThread))

let search: () => Promise<number>
let close: () => Promise<void>

beforeAll(async () => {
  ;({ server, search, close } = await salesSearchServer("gn-interleave-", SteppedPool))
})
afterAll(() => close())

describe("the public listener between the steps of a request", () => {
  it("answers /healthz while a search is still working through its steps", async () => {
    expect(await search()).toBe(200)
    expect(status).toBe(200)
    expect(answeredAt).not.toBeNull()
    expect(answeredAt ?? STEPS).toBeLessThan(STEPS - 1)
  })
})

describe("requestScheduler", () => {
  it("lets a macrotask queued before a yield run before the step after it; the default scheduler does not", async () => {
    const probe = (effect: (e: Effect.Effect<boolean>) => Effect.Effect<boolean>) =>
      Effect.runPromise(effect(Effect.suspend(() => {
        let ran = false
        setImmediate(() => {
          ran = true
        })
        return Effect.map(Effect.yieldNow(), () => ran)
      })))
    expect(await probe(interleaved)).toBe(true)
    expect(await probe((e) => e)).toBe(false)
  })
})
