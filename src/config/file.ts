/**
 * groundnote.json (architecture.md §3): its text parsed strictly into ConfigFile; a syntax error
 * names its line and column, every schema problem its key path, in words a person can act on; an
 * unknown key names the nearest known key of its object ("serach: unknown key — did you mean
 * search?").
 */
import { Effect, Either, Schema } from "effect"
import { issuesOf, type Issue } from "../contracts/errors.js"
import { suggestKnownKeys } from "../contracts/known-keys.js"
import { scanSecrets, type SecretField } from "../security/secrets.js"
import { jsonErrorOffset, lineColumn } from "./json-position.js"
import { refuse, StartRefusal } from "./refusal.js"
import { ConfigFile } from "./schema.js"

const EXPECTED_RE = /^Expected (.+), actual ([\s\S]+)$/

/**
 * Makes the schema's issues readable (issuesOf has dropped the "Expected undefined" echo of
 * every optional key already): merges the alternatives of a literal union into one line, and
 * shortens struct descriptions to "an object".
 */
export const tidyIssues = (issues: ReadonlyArray<Issue>): Array<Issue> => {
  const out: Array<Issue> = []
  for (const issue of issues) {
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
    if (Either.isLeft(decoded)) return yield* configInvalid(source, suggestKnownKeys(ConfigFile, tidyIssues(issuesOf(decoded.left))))
    // invariant 9: secrets only from the environment, never in groundnote.json (a token, a key, a
    // URL with user:password …); the refusal names the key and the kind, never the value
    const hits = scanSecrets(stringsOf(json, ""))
    if (hits.length > 0) {
      return yield* configInvalid(source, [...new Map(hits.map((h) => [h.field, {
        path: h.field,
        message: `holds what looks like a secret (${h.kind}): secrets never go into groundnote.json; remove it and give it through the environment (config/README.md, last section)`
      }])).values()])
    }
    return decoded.right
  })

/** config-invalid listing every problem with its path, one per line. */
const configInvalid = (source: string, issues: ReadonlyArray<Issue>): Effect.Effect<never, StartRefusal> =>
  Effect.fail(new StartRefusal({
    code: "config-invalid",
    message: `${source} is invalid (${issues.length} ${issues.length === 1 ? "problem" : "problems"}; fix each key named below, see config/README.md):\n${issues.map((i) => `  ${i.path}: ${i.message}`).join("\n")}`,
    issues: [...issues]
  }))

/** Every string value of the parsed file with its path (a.b[0].c), for the secret scan. */
const stringsOf = (v: unknown, path: string): Array<SecretField> => {
  if (typeof v === "string") return [{ field: path, text: v }]
  if (Array.isArray(v)) return v.flatMap((x, i) => stringsOf(x, `${path}[${i}]`))
  if (typeof v === "object" && v !== null) return Object.entries(v).flatMap(([k, x]) => stringsOf(x, path === "" ? k : `${path}.${k}`))
  return []
}
