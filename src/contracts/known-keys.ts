/**
 * "did you mean …?" for an unknown key of a request body: the keys an object of a schema may hold
 * at a path, and the nearest of them to a mistyped one (contracts/nearest.ts), as the config's
 * unknown keys already say (config/file.ts).
 */
import { Schema, SchemaAST } from "effect"
import type { Issue } from "./errors.js"
import { nearestKey } from "./nearest.js"

export const UNKNOWN_KEY = "unknown key (remove it)"

/** "source.qoute" / "relations[0].nam" → ["source", "qoute"] / ["relations", 0, "nam"] */
const pathSegments = (path: string): Array<string | number> =>
  path.split(".").flatMap((part) => {
    const out: Array<string | number> = []
    const m = /^([^[]*)((?:\[\d+\])*)$/.exec(part)
    if (m === null) return [part]
    if (m[1] !== undefined && m[1] !== "") out.push(m[1])
    for (const i of (m[2] ?? "").matchAll(/\[(\d+)\]/g)) out.push(Number(i[1]))
    return out
  })

/** The object types a value at `segments` may have (the encoded, JSON side of the schema). */
const typesAt = (ast: SchemaAST.AST, segments: ReadonlyArray<string | number>): Array<SchemaAST.AST> => {
  switch (ast._tag) {
    case "Union":
      return ast.types.flatMap((t) => typesAt(t, segments))
    case "Refinement":
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

/** The keys an object at `parent` of `schema` may hold. */
const knownKeysAt = (schema: Schema.Schema.Any, parent: ReadonlyArray<string | number>): ReadonlyArray<string> => {
  const keys = new Set<string>()
  for (const t of typesAt(Schema.encodedSchema(schema).ast, parent)) {
    if (SchemaAST.isTypeLiteral(t)) for (const p of t.propertySignatures) if (typeof p.name === "string") keys.add(p.name)
  }
  return [...keys]
}

/** An unknown key's issue names the nearest known key of its object, where one is near. */
export const suggestKnownKeys = (schema: Schema.Schema.Any, issues: ReadonlyArray<Issue>): Array<Issue> =>
  issues.map((issue) => {
    if (issue.message !== UNKNOWN_KEY) return issue
    const segments = pathSegments(issue.path)
    const last = segments[segments.length - 1]
    if (typeof last !== "string") return issue
    const near = nearestKey(last, knownKeysAt(schema, segments.slice(0, -1)).filter((k) => k !== last))
    return near === null ? issue : { path: issue.path, message: `unknown key — did you mean ${near}?` }
  })
