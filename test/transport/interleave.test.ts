/**
 * The request scheduler (src/transport/interleave.ts): steps run in the order they came, and one
 * run stops once its slice is over, so the event loop gets to its timers and sockets between two
 * slices instead of after every waiting step (over real HTTP: test/http/interleave.test.ts).
 */
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { interleaved, SLICE_MS, slicedScheduler } from "../../src/transport/interleave.js"

const busy = (ms: number) => {
  const end = performance.now() + ms
  while (performance.now() < end) {
    // a step of a request that takes `ms` of the thread
  }
}

describe("the sliced scheduler", () => {
  it("runs the steps in their order, a slice at a time: a timer due at the start fires after the first slice, not after all steps", async () => {
    const scheduler = slicedScheduler(2)
    const ran: Array<number> = []
    let beforeTimer = -1
    const done = new Promise<void>((resolve) => {
      for (let i = 0; i < 40; i++) {
        scheduler.scheduleTask(() => {
          busy(0.5)
          ran.push(i)
          if (i === 39) resolve()
        }, 0)
      }
    })
    const timer = new Promise<void>((resolve) =>
      setTimeout(() => {
        beforeTimer = ran.length
        resolve()
      }, 0))
    await Promise.all([done, timer])
    expect(ran).toEqual(Array.from({ length: 40 }, (_, i) => i))
    // 2 ms of 0.5 ms steps (a step that ends past the slice ends the run), not all 40 (20 ms)
    expect(beforeTimer).toBeGreaterThanOrEqual(0)
    expect(beforeTimer).toBeLessThanOrEqual(8)
  })

  it("a step scheduled by a step runs in a later run; an interleaved effect gives its answer", async () => {
    const scheduler = slicedScheduler(SLICE_MS)
    const order: Array<string> = []
    await new Promise<void>((resolve) => {
      scheduler.scheduleTask(() => {
        order.push("a")
        scheduler.scheduleTask(() => {
          order.push("c")
          resolve()
        }, 0)
      }, 0)
      scheduler.scheduleTask(() => order.push("b"), 0)
    })
    expect(order).toEqual(["a", "b", "c"])
    const answer = await Effect.runPromise(interleaved(Effect.gen(function*() {
      let n = 0
      for (let i = 0; i < 100; i++) {
        yield* Effect.yieldNow()
        n++
      }
      return n
    })))
    expect(answer).toBe(100)
  })
})
