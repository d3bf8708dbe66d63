/** Captures log lines (message + annotations) so tests can read what the process log says. */
import type { Layer} from "effect";
import { HashMap, Logger } from "effect"

export interface Captured {
  readonly level: string
  readonly message: string
  readonly annotations: Record<string, unknown>
}

export const captureLogs = (): { lines: Array<Captured>; layer: Layer.Layer<never> } => {
  const lines: Array<Captured> = []
  const logger = Logger.make(({ annotations, logLevel, message }) => {
    const text = Array.isArray(message) ? message.map(String).join(" ") : String(message)
    lines.push({ level: logLevel.label, message: text, annotations: Object.fromEntries(HashMap.toEntries(annotations)) })
  })
  return { lines, layer: Logger.replace(Logger.defaultLogger, logger) }
}
