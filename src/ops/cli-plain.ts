/**
 * An answer of the service as plain text for a person (the CLI's default; --for-model gives the
 * framed form of renderResultForModel): an indented outline of the object, every value as it is
 * stored, without preamble or ⟪gn:…⟫ blocks. Still terminal-safe: control characters, ANSI
 * escapes and bidi overrides in stored text are escaped; a line break in a value continues the
 * value on an indented line.
 */
import { terminalSafe } from "./cli-text.js"

type Obj = Record<string, unknown>
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v)

/** A scalar on its outline line; the lines after a line break are indented under it. */
const scalar = (v: unknown, indent: string): string => {
  if (v === null) return "null"
  if (typeof v !== "string") return String(v)
  return terminalSafe(v, { lines: true }).split("\n").join(`\n${indent}  `)
}

export const renderPlain = (value: unknown, heading?: string): string => {
  const lines: Array<string> = []
  /** `key: value` lines of `v` at `indent` (a list item: "- " before its first line). */
  const emit = (key: string | null, v: unknown, indent: string): void => {
    const head = `${indent}${key === null ? "" : `${terminalSafe(key)}: `}`
    if (Array.isArray(v)) {
      if (v.length === 0) return void lines.push(`${head}[]`)
      if (v.every((x) => !isObj(x) && !Array.isArray(x))) return void lines.push(`${head}${v.map((x) => scalar(x, indent)).join(", ")}`)
      if (key !== null) lines.push(head.trimEnd())
      const inner = key === null ? indent : `${indent}  `
      for (const x of v) {
        const first = lines.length
        emit(null, x, `${inner}  `)
        const line = lines[first]
        if (line !== undefined) lines[first] = `${inner}- ${line.slice(inner.length + 2)}`
      }
      return
    }
    if (isObj(v)) {
      const entries = Object.entries(v)
      if (entries.length === 0) return void lines.push(`${head}{}`)
      if (key !== null) lines.push(head.trimEnd())
      for (const [k, x] of entries) emit(k, x, key === null ? indent : `${indent}  `)
      return
    }
    lines.push(`${head}${scalar(v, indent)}`)
  }
  if (heading !== undefined) lines.push(terminalSafe(heading))
  emit(null, value, "")
  return lines.join("\n")
}
