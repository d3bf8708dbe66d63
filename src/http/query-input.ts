/**
 * A query string as an operation's input: the query's values are strings, the operation's input
 * schema has numbers and booleans (its decoded request, the same one MCP tools and the CLI send).
 * Each value whose field takes a number (and no string) is read as a number when it is one, each
 * value whose field takes a boolean as true/false; anything else stays a string, so the strict
 * decode names it with the field's own rule.
 */
import { Schema, SchemaAST } from "effect"

type Kind = "number" | "boolean" | "other"

const kindsOf = (ast: SchemaAST.AST, out: Set<Kind>): void => {
  switch (ast._tag) {
    case "NumberKeyword":
      out.add("number")
      return
    case "BooleanKeyword":
      out.add("boolean")
      return
    case "Union":
      for (const t of ast.types) kindsOf(t, out)
      return
    case "Literal":
      out.add(typeof ast.literal === "number" ? "number" : typeof ast.literal === "boolean" ? "boolean" : "other")
      return
    case "UndefinedKeyword":
      return
    default:
      out.add("other")
  }
}

const NUMBER_RE = /^-?\d+(\.\d+)?$/

/** The field kinds of a struct schema's encoded side (memoised per schema). */
const fieldKinds = new WeakMap<object, ReadonlyMap<string, Kind>>()
const kindsOfSchema = (schema: Schema.Schema.Any): ReadonlyMap<string, Kind> => {
  const known = fieldKinds.get(schema)
  if (known !== undefined) return known
  const map = new Map<string, Kind>()
  const ast = Schema.encodedSchema(schema).ast
  for (const ps of SchemaAST.getPropertySignatures(ast)) {
    const kinds = new Set<Kind>()
    kindsOf(ps.type, kinds)
    map.set(String(ps.name), kinds.size === 1 ? [...kinds][0] ?? "other" : "other")
  }
  fieldKinds.set(schema, map)
  return map
}

/** The query record with each value read as the type its field takes. */
export const queryInput = (schema: Schema.Schema.Any, query: Readonly<Record<string, string>>): Record<string, unknown> => {
  const kinds = kindsOfSchema(schema)
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(query)) {
    const kind = kinds.get(k)
    if (kind === "number" && NUMBER_RE.test(v)) out[k] = Number(v)
    else if (kind === "boolean" && (v === "true" || v === "false")) out[k] = v === "true"
    else out[k] = v
  }
  return out
}
