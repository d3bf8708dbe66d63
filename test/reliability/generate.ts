/**
 * Inputs generated from the request schemas (fast-check): the JSON Schemas the service publishes
 * itself — /openapi.json for /v1 (bodies, path and query parameters) and tools/list for MCP — turned
 * into arbitraries that mostly follow the schema (so requests also get past validation and reach
 * the operations) and otherwise break it on purpose: a wrong type, a missing or unknown key, a
 * huge or ill-formed string, deep nesting, text that is not JSON.
 */
import fc from "fast-check"

export type JsonSchema = Readonly<Record<string, unknown>>

/** Values a request may name to reach stored data (by property name). */
export type Hints = Readonly<Record<string, fc.Arbitrary<unknown>>>

const LONE = ["\ud800", "\udfff", "a\ud83d", "\ude00b"]
/** Strings a hostile client sends. */
export const nastyString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom(...LONE, "", " ", "\u0000", "../../etc/passwd", "'; DROP TABLE rule; --", "<script>alert(1)</script>", "%ZZ", "\u202e", "ｓａｌｅｓ", "sales\u0000", "NaN", "-0"),
  fc.integer({ min: 1000, max: 40_000 }).map((n) => "x".repeat(n)),
  fc.constant("y".repeat(300_000)),
  fc.tuple(fc.string({ maxLength: 10 }), fc.constantFrom(...LONE)).map(([a, b]) => `${a}${b}`)
)

const junk: fc.Arbitrary<unknown> = fc.oneof(
  nastyString,
  fc.constantFrom(null, true, false, 0, -1, 1e308, -1e-308, 2 ** 53 + 1, 1.5, [], {}),
  fc.jsonValue({ maxDepth: 3 })
)

const regexOf = (pattern: string): RegExp | null => {
  try {
    return new RegExp(pattern)
  } catch {
    return null
  }
}

const resolve = (schema: JsonSchema, root: JsonSchema): JsonSchema => {
  const ref = schema.$ref
  if (typeof ref !== "string") return schema
  const parts = ref.replace(/^#\//, "").split("/")
  let at: unknown = root
  for (const p of parts) at = (at as Record<string, unknown> | undefined)?.[p]
  return typeof at === "object" && at !== null ? resolve(at as JsonSchema, root) : {}
}

/** An arbitrary following `schema` (with hints for named properties); `depth` bounds recursion. */
export const follow = (schema0: JsonSchema, root: JsonSchema, hints: Hints, depth = 0): fc.Arbitrary<unknown> => {
  const schema = resolve(schema0, root)
  if (depth > 8) return fc.constant(null)
  const alts = (schema.anyOf ?? schema.oneOf) as ReadonlyArray<JsonSchema> | undefined
  if (alts !== undefined && alts.length > 0) return fc.oneof(...alts.map((s) => follow(s, root, hints, depth + 1)))
  const all = schema.allOf as ReadonlyArray<JsonSchema> | undefined
  if (all !== undefined && all.length > 0) return follow({ ...all[0], ...schema, allOf: undefined }, root, hints, depth + 1)
  if ("const" in schema) return fc.constant(schema.const)
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return fc.constantFrom(...(schema.enum as Array<unknown>))
  const type = schema.type
  if (Array.isArray(type)) return fc.oneof(...type.map((t: unknown) => follow({ ...schema, type: t }, root, hints, depth + 1)))
  switch (type) {
    case "string": {
      const pattern = typeof schema.pattern === "string" ? regexOf(schema.pattern) : null
      if (pattern !== null) return fc.stringMatching(pattern).filter((s) => s.length <= 400)
      if (schema.format === "date-time") return fc.date({ noInvalidDate: true, min: new Date("1970-01-01"), max: new Date("2100-01-01") }).map((d) => d.toISOString().replace(/\.\d{3}Z$/, "Z"))
      if (schema.format === "date") return fc.date({ noInvalidDate: true, min: new Date("1970-01-01"), max: new Date("2100-01-01") }).map((d) => d.toISOString().slice(0, 10))
      const minLength = typeof schema.minLength === "number" ? schema.minLength : 0
      const maxLength = Math.max(minLength, Math.min(typeof schema.maxLength === "number" ? schema.maxLength : 60, 60))
      return fc.string({ minLength, maxLength })
    }
    case "integer":
    case "number": {
      const min = typeof schema.minimum === "number" ? schema.minimum : -1000
      const max = typeof schema.maximum === "number" ? schema.maximum : 100_000
      return type === "integer" ? fc.integer({ min: Math.ceil(min), max: Math.floor(max) }) : fc.double({ min, max, noNaN: true })
    }
    case "boolean":
      return fc.boolean()
    case "null":
      return fc.constant(null)
    case "array": {
      const items = (schema.items ?? {}) as JsonSchema
      const minLength = typeof schema.minItems === "number" ? schema.minItems : 0
      const maxLength = Math.max(minLength, Math.min(typeof schema.maxItems === "number" ? schema.maxItems : 4, 4))
      return fc.array(follow(items, root, hints, depth + 1), { minLength, maxLength })
    }
    case "object":
    default: {
      const props = (schema.properties ?? {}) as Record<string, JsonSchema>
      const keys = Object.keys(props)
      if (keys.length === 0) return type === "object" ? fc.constant({}) : junk
      const model: Record<string, fc.Arbitrary<unknown>> = {}
      for (const k of keys) {
        const generated = follow(props[k] ?? {}, root, hints, depth + 1)
        const hint = hints[k]
        model[k] = hint === undefined ? generated : fc.oneof({ weight: 3, arbitrary: hint }, { weight: 1, arbitrary: generated })
      }
      const required = Array.isArray(schema.required) ? (schema.required as Array<string>).filter((k) => keys.includes(k)) : []
      return fc.record(model, { requiredKeys: required })
    }
  }
}

/** One way of breaking a valid value. */
const breakValue = (value: unknown): fc.Arbitrary<unknown> => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return junk
  const keys = Object.keys(value)
  const obj = value as Record<string, unknown>
  return fc.oneof(
    // a field of the wrong type or a nasty string
    keys.length === 0 ? junk : fc.tuple(fc.constantFrom(...keys), junk).map(([k, v]) => ({ ...obj, [k]: v })),
    // a required key missing
    keys.length === 0 ? junk : fc.constantFrom(...keys).map((k) => Object.fromEntries(Object.entries(obj).filter(([key]) => key !== k))),
    // an unknown key
    fc.tuple(nastyString.filter((k) => k.length < 300_000), junk).map(([k, v]) => ({ ...obj, [k]: v })),
    // a nested field replaced by something deeper
    keys.length === 0 ? junk : fc.tuple(fc.constantFrom(...keys), fc.integer({ min: 1, max: 80 })).map(([k, d]) => ({ ...obj, [k]: JSON.parse(`${"[".repeat(d)}${"]".repeat(d)}`) as unknown })),
    // the whole body replaced
    junk
  )
}

/** A body: a JSON value (valid for the schema, or broken) or text that is not JSON at all. */
export type Body = { readonly json: unknown } | { readonly text: string }

const notJson: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc.constantFrom("{", "[1,2", "{\"a\":}", "nul", "{\"a\":1}{}", "\u0000", "{\"a\":\"\\ud800\"}", "[".repeat(3000)),
  fc.integer({ min: 65, max: 3000 }).map((d) => `${"{\"a\":".repeat(d)}1${"}".repeat(d)}`)
)

export const bodyOf = (schema: JsonSchema, root: JsonSchema, hints: Hints): fc.Arbitrary<Body> => {
  const valid = follow(schema, root, hints)
  return fc.oneof(
    { weight: 5, arbitrary: valid.map((json) => ({ json })) },
    { weight: 4, arbitrary: valid.chain(breakValue).map((json) => ({ json })) },
    { weight: 1, arbitrary: notJson.map((text) => ({ text })) }
  )
}

/** A path parameter as it goes on the wire: a valid-looking id (encoded) or bytes that do not decode. */
export const pathParam = (hint: fc.Arbitrary<string>, schema: JsonSchema): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 4, arbitrary: hint.map(encodeURIComponent) },
    { weight: 2, arbitrary: follow(schema, {}, {}).map((v) => encodeURIComponent(String(v))) },
    { weight: 2, arbitrary: nastyString.filter((s) => s.length < 5000).map((s) => { try { return encodeURIComponent(s) } catch { return "%ED%A0%80" } }) },
    { weight: 1, arbitrary: fc.constantFrom("%ZZ", "%", "%FF%FE", "%ED%A0%80", "%C0%AE", "a".repeat(101), "%2e%2e", "%00", "%E0%A4%A", "..", "%252F") }
  )

/** A query value: generated from the parameter's schema, or nasty. */
export const queryValue = (schema: JsonSchema, hint: fc.Arbitrary<unknown> | undefined): fc.Arbitrary<string> => {
  const gen = follow(schema, {}, {}).map((v) => String(v))
  const parts: Array<fc.WeightedArbitrary<string>> = [{ weight: 3, arbitrary: gen }, { weight: 1, arbitrary: nastyString.filter((s) => s.length < 5000) }]
  if (hint !== undefined) parts.push({ weight: 4, arbitrary: hint.map(String) })
  return fc.oneof(...parts)
}
