/**
 * JSON-lines logs on stdout, UTC (architecture.md §3): one object per line with at, level,
 * message and the annotations. Callers never annotate tokens, JWTs, cookies, bodies or source
 * text.
 */
import type { Layer} from "effect";
import { HashMap, Logger } from "effect"

export const jsonLine = (at: Date, level: string, message: unknown, annotations: Record<string, unknown>): string => {
  const text = Array.isArray(message) ? message.map(String).join(" ") : String(message)
  return JSON.stringify({ at: at.toISOString(), level: level.toLowerCase(), message: text, ...annotations })
}

export const JsonLogger = Logger.make(({ annotations, date, logLevel, message }) => {
  process.stdout.write(`${jsonLine(date, logLevel.label, message, Object.fromEntries(HashMap.toEntries(annotations)))}\n`)
})

export const JsonLoggerLive: Layer.Layer<never> = Logger.replace(Logger.defaultLogger, JsonLogger)
