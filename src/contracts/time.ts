/**
 * Every "now" and "today in config.zone" comes from Effect's Clock, so TestClock drives time.
 */
import { Clock, Effect } from "effect"

/** UTC instant with milliseconds, ending in Z. */
export const nowInstant: Effect.Effect<string> = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

const dayFormatters = new Map<string, Intl.DateTimeFormat>()
/**
 * Days already formatted, per zone by second (a search asks for the same few instants again and
 * again, and "now" moves by milliseconds). Exact: every UTC offset a zone ever had is whole
 * seconds, so a day begins on a whole second and all of a second's milliseconds share its day.
 */
const days = new Map<string, Map<number, string>>()
const MAX_DAYS = 10_000

/** Calendar day YYYY-MM-DD of an instant in an IANA zone. */
export const dayIn = (zone: string, ms: number): string => {
  let known = days.get(zone)
  const second = Math.floor(ms / 1000)
  const day = known?.get(second)
  if (day !== undefined) return day
  let f = dayFormatters.get(zone)
  if (f === undefined) {
    f = new Intl.DateTimeFormat("en-CA", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit" })
    dayFormatters.set(zone, f)
  }
  const parts = f.formatToParts(new Date(ms))
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? ""
  const formatted = `${get("year")}-${get("month")}-${get("day")}`
  if (known === undefined || known.size >= MAX_DAYS) {
    known = new Map()
    days.set(zone, known)
  }
  known.set(second, formatted)
  return formatted
}

export const todayIn = (zone: string): Effect.Effect<string> => Effect.map(Clock.currentTimeMillis, (ms) => dayIn(zone, ms))

/** Date and time of an instant in a zone, "YYYY-MM-DD HH:MM" (for human-facing files). */
export const localDateTime = (zone: string, ms: number): string => {
  const f = new Intl.DateTimeFormat("en-CA", {
    timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit",
    hourCycle: "h23"
  })
  const parts = f.formatToParts(new Date(ms))
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? ""
  return `${get("year")}-${get("month")}-${get("day")} ${get("hour")}:${get("minute")}`
}
