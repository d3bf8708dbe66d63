/**
 * groundnote.json (architecture.md §3): its text parsed strictly into ConfigFile; a syntax error
 * names its line and column, every schema problem its key path, in words a person can act on; an
 * unknown key names the nearest known key of its object ("serach: unknown key — did you mean
 * search?").
 */
import { Effect, Either, Schema, type SchemaAST } from "effect"
import { issuesOf, type Issue } from "../contracts/errors.js"
import { nearestKey } from "../contracts/nearest.js"
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

// ---------------------------------------------------------------------------------------------
// "did you mean …?" for an unknown key

/** "search.lexical.features.foo" / "scopes[0].secret" → ["search", "lexical", "features", "foo"] / ["scopes", 0, "secret"] */
const pathSegments = (path: string): Array<string | number> =>
  path.split(".").flatMap((part) => {
    const out: Array<string | number> = []
    const m = /^([^[]*)((?:\[\d+\])*)$/.exec(part)
    if (m === null) return [part]
    if (m[1] !== undefined && m[1] !== "") out.push(m[1])
    for (const i of (m[2] ?? "").matchAll(/\[(\d+)\]/g)) out.push(Number(i[1]))
    return out
  })

/** The object types a value at `segments` may have, in the encoded (JSON) side of the schema. */
const typesAt = (ast: SchemaAST.AST, segments: ReadonlyArray<string | number>): Array<SchemaAST.AST> => {
  switch (ast._tag) {
    case "Union":
      return ast.types.flatMap((t) => typesAt(t, segments))
    case "Refinement":
      return typesAt(ast.from, segments)
    case "Transformation":
      return typesAt(ast.from, segments)
    case "Suspend":
      return typesAt(ast.f(), segments)
    default:
      break
  }
  const [head, ...rest] = segments
  if (head === undefined) return [ast]
  if (ast._tag === "TypeLiteral" && typeof head === "string") {
    const p = ast.propertySignatures.find((ps) => ps.name === head)
    return p === undefined ? [] : typesAt(p.type, rest)
  }
  if (ast._tag === "TupleType" && typeof head === "number") {
    const element = ast.elements[head]?.type ?? ast.rest[0]?.type
    return element === undefined ? [] : typesAt(element, rest)
  }
  return []
}

/** The keys an object at `parent` (path segments) may hold. */
const knownKeysAt = (parent: ReadonlyArray<string | number>): ReadonlyArray<string> => {
  const keys = new Set<string>()
  for (const t of typesAt(Schema.encodedSchema(ConfigFile).ast, parent)) {
    if (t._tag === "TypeLiteral") for (const p of t.propertySignatures) if (typeof p.name === "string") keys.add(p.name)
  }
  return [...keys]
}

export const UNKNOWN_KEY = "unknown key (remove it)"

/** An unknown key's issue names the nearest known key of its object, where one is near. */
export const suggestKeys = (issues: ReadonlyArray<Issue>): Array<Issue> =>
  issues.map((issue) => {
    if (issue.message !== UNKNOWN_KEY) return issue
    const segments = pathSegments(issue.path)
    const last = segments[segments.length - 1]
    if (typeof last !== "string") return issue
    const near = nearestKey(last, knownKeysAt(segments.slice(0, -1)).filter((k) => k !== last))
    return near === null ? issue : { path: issue.path, message: `unknown key — did you mean ${near}?` }
  })

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
    if (Either.isLeft(decoded)) return yield* configInvalid(source, suggestKeys(tidyIssues(issuesOf(decoded.left))))
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
