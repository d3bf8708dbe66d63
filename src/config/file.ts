/**
 * groundnote.json (architecture.md §3): its text parsed strictly into ConfigFile; a syntax error
 * names its line and column, every schema problem its key path, in words a person can act on.
 */
import { Effect, Either, Schema } from "effect"
import { issuesOf, type Issue } from "../contracts/errors.js"
import { jsonErrorOffset, lineColumn } from "./json-position.js"
import { refuse, StartRefusal } from "./refusal.js"
import { ConfigFile } from "./schema.js"

const EXPECTED_RE = /^Expected (.+), actual ([\s\S]+)$/

/**
 * Makes the schema's issues readable: drops the "Expected undefined" echo of every optional key
 * (JSON has no undefined), merges the alternatives of a literal union into one line, and
 * shortens struct descriptions to "an object".
 */
export const tidyIssues = (issues: ReadonlyArray<Issue>): Array<Issue> => {
  const under = (parent: string, child: string) =>
    parent === "(root)" ||
    child === parent ||
    child.startsWith(`${parent}.`) ||
    child.startsWith(`${parent}[`)
  const kept = issues.filter((issue, index) => {
    if (!issue.message.startsWith("Expected undefined, actual ")) return true
    return !issues.some((other, j) => j !== index && !other.message.startsWith("Expected undefined, actual ") && under(issue.path, other.path))
  })
  const out: Array<Issue> = []
  for (const issue of kept) {
    const message = issue.message === "is missing"
      ? "is missing (add it)"
      : issue.message.replace(/^Expected (?:\{[\s\S]*\}|Struct \(Encoded side\)), actual /, "Expected an object, actual ")
    const m = EXPECTED_RE.exec(message)
    const last = out[out.length - 1]
    const lm = last === undefined ? null : EXPECTED_RE.exec(last.message)
    if (last !== undefined && m !== null && lm !== null && last.path === issue.path && lm[2] === m[2]) {
      out[out.length - 1] = { path: issue.path, message: `Expected ${lm[1]} | ${m[1]}, actual ${m[2]}` }
      continue
    }
    if (last !== undefined && last.path === issue.path && last.message === message) continue
    out.push({ path: issue.path, message })
  }
  return out
}

/**
 * Parses the text of groundnote.json strictly: unknown keys fail and name their full path.
 * `source` names the file in messages.
 */
export const parseConfigFile = (
  text: string,
  source: string = "groundnote.json"
): Effect.Effect<ConfigFile, StartRefusal> =>
  Effect.gen(function* () {
    const body = text.startsWith("\uFEFF") ? text.slice(1) : text
    let json: unknown
    try {
      json = JSON.parse(body)
    } catch (e) {
      const found = jsonErrorOffset(body)
      const offset = found === -1 ? 0 : found
      const { line, column } = lineColumn(body, offset)
      const reason = (e instanceof Error ? e.message : String(e))
        .replace(/, "[\s\S]*" is not valid JSON$/, "")
        .replace(/ in JSON at position \d+[\s\S]*$/, "")
      return yield* refuse(
        "config-invalid",
        `${source} is not valid JSON at line ${line}, column ${column} (position ${offset}): ${reason}. Fix the syntax there (plain JSON: no comments, no trailing commas)`
      )
    }
    const decoded = Schema.decodeUnknownEither(ConfigFile)(json, { onExcessProperty: "error", errors: "all" })
    if (Either.isLeft(decoded)) {
      const issues = tidyIssues(issuesOf(decoded.left))
      const lines = issues.map((i) => `  ${i.path}: ${i.message}`).join("\n")
      return yield* Effect.fail(new StartRefusal({
        code: "config-invalid",
        message: `${source} is invalid (${issues.length} ${issues.length === 1 ? "problem" : "problems"}; fix each key named below, see config/README.md):\n${lines}`,
        issues
      }))
    }
    return decoded.right
  })
