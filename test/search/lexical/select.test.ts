/**
 * kthSmallest and bestIndices against a full sort, on random lists with many ties, negative numbers
 * and zeros; lowerBound against a scan.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { bestIndices, kthSmallest, lowerBound } from "../../../src/search/lexical/select.js"

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

describe("bestIndices", () => {
  it("is the first n of a full sort by value (either direction), ties by seq", () => {
    fc.assert(fc.property(
      fc.array(fc.record({ value: fc.integer({ min: -4, max: 4 }), seq: fc.integer({ min: 0, max: 10_000 }) }), { maxLength: 600 }),
      fc.integer({ min: 1, max: 250 }),
      fc.constantFrom("ascending" as const, "descending" as const),
      (rows, n, direction) => {
        const values = new Float64Array(rows.map((r) => r.value))
        const sign = direction === "ascending" ? 1 : -1
        const sorted = rows.map((_, i) => i).sort((i, j) => sign * ((rows[i]?.value ?? 0) - (rows[j]?.value ?? 0)) || (rows[i]?.seq ?? 0) - (rows[j]?.seq ?? 0))
        const got = bestIndices(values, (i) => rows[i]?.seq ?? 0, rows.length, n, direction)
        // indices of equal (value, seq) pairs may come in either order: compare what they name
        const named = (ix: ReadonlyArray<number>) => ix.map((i) => [rows[i]?.value, rows[i]?.seq])
        expect(named(got)).toEqual(named(sorted.slice(0, n)))
      }
    ), { numRuns: 300, seed: 14 })
  })

  it("gives the very indices of a stable sort by value and seq, on fractions, zeros of either sign and repeated seqs", () => {
    fc.assert(fc.property(
      fc.array(fc.record({
        value: fc.oneof(fc.constantFrom(0, -0, 1.5, -2.25), fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e3, max: 1e3 })),
        seq: fc.integer({ min: 0, max: 300 })
      }), { maxLength: 2500 }),
      fc.integer({ min: 1, max: 900 }),
      fc.constantFrom("ascending" as const, "descending" as const),
      (rows, n, direction) => {
        const values = new Float64Array(rows.map((r) => r.value))
        const seqOf = (i: number) => rows[i]?.seq ?? 0
        const sign = direction === "ascending" ? 1 : -1
        // Array#sort is stable: equal (value, seq) pairs keep their index order
        const order = (i: number, j: number) => {
          const a = values[i] as number
          const b = values[j] as number
          return a < b ? -sign : a > b ? sign : seqOf(i) - seqOf(j)
        }
        const expected = rows.map((_, i) => i).sort(order).slice(0, n)
        expect(bestIndices(values, seqOf, rows.length, n, direction)).toEqual(expected)
      }
    ), { numRuns: 300, seed: 15 })
  })
})

describe("lowerBound", () => {
  const xs = Int32Array.from([3, 5, 8, 13, 21, 34])
  it("is the first position not below the value, `to` when every one is", () => {
    expect(lowerBound(new Int32Array(0), 4, 0, 0)).toBe(0)
    expect(lowerBound(xs, 1, 0, xs.length)).toBe(0)
    expect(lowerBound(xs, 3, 0, xs.length)).toBe(0)
    expect(lowerBound(xs, 5, 0, xs.length)).toBe(1)
    expect(lowerBound(xs, 6, 0, xs.length)).toBe(2)
    expect(lowerBound(xs, 34, 0, xs.length)).toBe(5)
    expect(lowerBound(xs, 35, 0, xs.length)).toBe(6)
  })

  it("looks only in [from, to)", () => {
    expect(lowerBound(xs, 1, 2, xs.length)).toBe(2)
    expect(lowerBound(xs, 5, 2, xs.length)).toBe(2)
    expect(lowerBound(xs, 9, 2, 3)).toBe(3)
    expect(lowerBound(xs, 13, 4, 4)).toBe(4)
    expect(lowerBound(xs, 13, 3, 6)).toBe(3)
    expect(lowerBound(xs, 21, 1, 6)).toBe(4)
  })

  it("is what a scan from `from` finds, on random strictly ascending lists", () => {
    fc.assert(fc.property(
      fc.uniqueArray(fc.integer({ min: -50, max: 50 }), { maxLength: 101 }),
      fc.integer({ min: -60, max: 60 }),
      fc.nat(),
      fc.nat(),
      (list, x, a, b) => {
        const sorted = Int32Array.from(list).sort()
        const from = a % (sorted.length + 1)
        const to = from + (b % (sorted.length - from + 1))
        let scan = from
        while (scan < to && (sorted[scan] as number) < x) scan++
        expect(lowerBound(sorted, x, from, to)).toBe(scan)
      }
    ), { numRuns: 500, seed: 21 })
  })
})
