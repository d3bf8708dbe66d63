import { describe, expect, it } from "vitest"
import { settled } from "../../bench/support.js"

describe("bench warm-up: settled", () => {
  it("waits for the least number of windows, then until the cost stops falling", () => {
    // a measured "fresh" warm-up, server CPU a search by 10 s window (ms)
    const costs = [12.46, 6.33, 4.45, 3.72, 4.04, 4.2]
    expect(costs.map((_, i) => settled(costs.slice(0, i + 1), 2))).toEqual([false, false, false, false, true, true])
    // a slow fall, each window a little lower (the first 5 s windows of a measured bench run)
    expect(settled([7.39, 6.73], 2)).toBe(false)
    // settled by cost, but fewer windows than asked for
    expect(settled([4.0, 4.1], 3)).toBe(false)
    expect(settled([4.0, 4.1, 4.2], 3)).toBe(true)
  })

  it("never settles on one window, nothing measured or a window without a cost", () => {
    expect(settled([], 0)).toBe(false)
    expect(settled([3.0], 1)).toBe(false)
    expect(settled([0, 0], 2)).toBe(false)
    expect(settled([3.0, Number.NaN], 2)).toBe(false)
    expect(settled([3.0, Number.POSITIVE_INFINITY], 2)).toBe(false)
  })

  it("takes the tolerance it is given", () => {
    expect(settled([4.0, 3.7], 2)).toBe(false)
    expect(settled([4.0, 3.7], 2, 0.1)).toBe(true)
    expect(settled([4.0, 3.9], 2)).toBe(true)
  })
})
