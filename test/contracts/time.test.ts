/** dayIn: the calendar day of an instant in a zone, the same when asked again (it is remembered). */
import { describe, expect, it } from "vitest"
import { dayIn } from "../../src/contracts/time.js"

describe("dayIn", () => {
  it("gives the day in the zone, around midnight and the clock changes, and the same day asked again", () => {
    const cases: ReadonlyArray<readonly [string, string, string]> = [
      ["Europe/Berlin", "2026-03-28T22:59:59Z", "2026-03-28"],
      ["Europe/Berlin", "2026-03-28T23:00:00Z", "2026-03-29"],
      ["Europe/Berlin", "2026-10-24T21:59:59Z", "2026-10-24"],
      ["Europe/Berlin", "2026-10-24T22:00:00Z", "2026-10-25"],
      ["America/New_York", "2026-06-01T03:59:59Z", "2026-05-31"],
      ["UTC", "2026-12-31T23:59:59Z", "2026-12-31"]
    ]
    for (const [zone, instant, day] of cases) {
      expect(dayIn(zone, Date.parse(instant))).toBe(day)
      expect(dayIn(zone, Date.parse(instant))).toBe(day)
    }
    // the last millisecond of a day and the first of the next, either asked first (days are remembered by the second);
    // Monrovia's offset until 1972 was −0:44:30, so its days began on a half minute
    for (const [zone, last, first] of [
      ["Europe/Berlin", "2026-03-28T22:59:59.999Z", "2026-03-28T23:00:00.000Z"],
      ["Africa/Monrovia", "1970-01-01T00:44:29.999Z", "1970-01-01T00:44:30.000Z"]
    ] as const) {
      const before = dayIn(zone, Date.parse(last))
      expect(dayIn(zone, Date.parse(first))).not.toBe(before)
      expect(dayIn(zone, Date.parse(last) - 998)).toBe(before)
    }
    expect(dayIn("Africa/Monrovia", Date.parse("1970-01-01T00:44:30.001Z"))).toBe("1970-01-01")
    expect(dayIn("Africa/Monrovia", Date.parse("1970-01-01T00:44:29.000Z"))).toBe("1969-12-31")
    // the same instant in another zone is not the remembered day of the first
    expect(dayIn("Pacific/Kiritimati", Date.parse("2026-06-01T12:00:00Z"))).toBe("2026-06-02")
    expect(dayIn("Pacific/Pago_Pago", Date.parse("2026-06-01T12:00:00Z"))).toBe("2026-06-01")
  })
})
