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

/**
 * The UTC instant ("…Z", whole seconds) of a local date and time "YYYY-MM-DD HH:MM[:SS]" in a zone,
 * or null when the text is not one. In a DST gap or overlap the zone's offset before the change is used.
 */
export const instantOfLocal = (zone: string, local: string): string | null => {
  const m = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2}))?$/.exec(local.trim())
  if (m === null) return null
  const naive = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6] ?? "0"))
  if (Number.isNaN(naive)) return null
  const f = new Intl.DateTimeFormat("en-CA", {
    timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit", hourCycle: "h23"
  })
  const offset = (ms: number): number => {
    const parts = f.formatToParts(new Date(ms))
    const get = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? "0")
    return Date.UTC(get("year"), get("month") - 1, get("day"), get("hour"), get("minute"), get("second")) - ms
  }
  const first = naive - offset(naive)
  const ms = naive - offset(first)
  return new Date(ms).toISOString().replace(/\.000Z$/, "Z")
}

/** The calendar day before a day YYYY-MM-DD. */
export const dayBefore = (day: string): string => {
  const [y, m, d] = day.split("-").map(Number)
  return new Date(Date.UTC(y ?? 0, (m ?? 1) - 1, (d ?? 1) - 1)).toISOString().slice(0, 10)
}
