/**
 * Human output of groundnote doctor: findings grouped fail, warn, ok, skip, each with its remedy,
 * and a summary line; ANSI colours only when asked (the CLI asks when stderr is a TTY). Control
 * characters in messages are shown escaped, so no text can steer the terminal.
 */
import type { Finding, FindingStatus } from "./types.js"

const ORDER: ReadonlyArray<FindingStatus> = ["fail", "warn", "ok", "skip"]
const LABEL: Readonly<Record<FindingStatus, string>> = { fail: "FAIL", warn: "WARN", ok: "ok", skip: "skip" }
const COLOUR: Readonly<Record<FindingStatus, string>> = { fail: "\u001b[31m", warn: "\u001b[33m", ok: "\u001b[32m", skip: "\u001b[2m" }
const RESET = "\u001b[0m"

const unsafe = (code: number): boolean =>
  code <= 0x1f || (code >= 0x7f && code <= 0x9f) || (code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069)
const safe = (text: string): string =>
  Array.from(text, (c) => {
    const code = c.codePointAt(0) ?? 0
    return unsafe(code) ? `\\u${code.toString(16).padStart(4, "0")}` : c
  }).join("")

/** The findings as lines for a terminal (without a trailing newline). */
export const renderFindings = (findings: ReadonlyArray<Finding>, options: { readonly color: boolean }): string => {
  const paint = (status: FindingStatus, text: string) => (options.color ? `${COLOUR[status]}${text}${RESET}` : text)
  const lines: Array<string> = []
  for (const status of ORDER) {
    for (const f of findings.filter((x) => x.status === status)) {
      lines.push(`${paint(status, LABEL[status].padEnd(4))}  ${f.id}: ${safe(f.message)}`)
      if (f.remedy !== null) lines.push(`      fix: ${safe(f.remedy)}`)
    }
  }
  const count = (s: FindingStatus) => findings.filter((f) => f.status === s).length
  lines.push(`${count("ok")} ok, ${count("warn")} warn, ${count("fail")} fail, ${count("skip")} skip`)
  return lines.join("\n")
}
