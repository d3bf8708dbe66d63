/** requestIdAt: a UUID of version 7 whose text sorts by its time. */
import { randomBytes } from "node:crypto"
import { describe, expect, it } from "vitest"
import { requestIdAt } from "../../src/contracts/ids.js"

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe("requestIdAt", () => {
  it("is a version 7 UUID with the time in its first 48 bits and the random bytes after the version", () => {
    const ms = Date.parse("2026-12-02T03:30:00.123Z")
    const id = requestIdAt(ms, Uint8Array.from([0xab, 0xcd, 0xef, 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde]))
    expect(id).toMatch(V7)
    expect(Number.parseInt(id.replace(/-/g, "").slice(0, 12), 16)).toBe(ms)
    // rand_a "abc"; the variant 10 and the low 2 bits of "d" (9); then "ef1" and "23456789abcd"
    expect(id.slice(14)).toBe("7abc-9ef1-23456789abcd")
    expect(requestIdAt(0, new Uint8Array(10))).toBe("00000000-0000-7000-8000-000000000000")
  })
  it("sorts as text in the order of its times; ids of one millisecond differ", () => {
    const times = Array.from({ length: 500 }, (_, i) => 1_700_000_000_000 + Math.floor(i / 5) * 37 + (i % 5 === 0 ? 0 : 1))
    const ids = times.map((ms) => requestIdAt(ms, randomBytes(10)))
    for (let i = 1; i < ids.length; i++) {
      if ((times[i] as number) > (times[i - 1] as number)) expect((ids[i] as string) > (ids[i - 1] as string)).toBe(true)
    }
    expect(new Set(ids).size).toBe(ids.length)
    for (const id of ids) expect(id).toMatch(V7)
  })
  it("refuses fewer than 10 random bytes", () => {
    expect(() => requestIdAt(1, new Uint8Array(9))).toThrow(RangeError)
  })
})
