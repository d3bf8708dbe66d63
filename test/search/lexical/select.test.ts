/** kthSmallest against a full sort, on random lists with many ties, negative numbers and zeros. */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { kthSmallest } from "../../../src/search/lexical/select.js"

describe("kthSmallest", () => {
  it("is the k-th of the sorted list, and leaves the list as it was", () => {
    fc.assert(fc.property(
      fc.array(fc.oneof(fc.integer({ min: -5, max: 5 }), fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 })), { minLength: 1, maxLength: 3000 }),
      fc.nat(),
      (xs, k0) => {
        const k = k0 % xs.length
        const before = [...xs]
        const sorted = [...xs].sort((a, b) => a - b)
        expect(kthSmallest(xs, xs.length, k)).toBe(sorted[k])
        expect(xs).toEqual(before)
      }
    ), { numRuns: 300, seed: 14 })
  })
})
