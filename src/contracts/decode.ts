/** Strict decoding into the contract's schemas: 400 validation-failed naming every path. */
import { Effect, type ParseResult, Schema } from "effect"
import { type Issue, QUOTED_VALUE_CHARS, ValidationFailed, validationFailed } from "./errors.js"
import { suggestKnownKeys, UNKNOWN_KEY } from "./known-keys.js"
import { STRICT } from "./schemas.js"

/** A UTF-16 surrogate without its partner: text that has no Unicode form and cannot be stored as it was sent. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
export const LONE_SURROGATE_MESSAGE = "contains a lone UTF-16 surrogate (ill-formed Unicode): send well-formed text"
/** At most this many lone-surrogate issues are named (the first ones in document order). */
const MAX_ISSUES = 20

const segment = (key: string): string => (key.length > QUOTED_VALUE_CHARS ? `${key.slice(0, QUOTED_VALUE_CHARS)}…` : key)

/**
 * The paths of every string (value or key) holding a lone surrogate, in document order, at most
 * `max`. Iterative: a value nested however deeply costs no stack.
 */
export const loneSurrogates = (value: unknown, max = MAX_ISSUES): Array<Issue> => {
  const out: Array<Issue> = []
  const stack: Array<{ readonly v: unknown; readonly path: string }> = [{ v: value, path: "" }]
  while (stack.length > 0 && out.length < max) {
    const { v, path } = stack.pop() as { v: unknown; path: string }
    if (typeof v === "string") {
      if (LONE_SURROGATE.test(v)) out.push({ path: path === "" ? "(root)" : path, message: LONE_SURROGATE_MESSAGE })
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], path: `${path}[${String(i)}]` })
    } else if (typeof v === "object" && v !== null) {
      const entries = Object.entries(v)
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, child] = entries[i] as [string, unknown]
        const childPath = path === "" ? segment(k) : `${path}.${segment(k)}`
        if (LONE_SURROGATE.test(k)) out.push({ path: childPath, message: `key ${LONE_SURROGATE_MESSAGE}` })
        else stack.push({ v: child, path: childPath })
      }
    }
  }
  return out
}

/** The refusal with every unknown key's nearest known key named ("did you mean …?"). */
const withSuggestions = (schema: Schema.Schema.Any, e: ValidationFailed, what: string): ValidationFailed => {
  if (e.issues === undefined || !e.issues.some((i) => i.message === UNKNOWN_KEY)) return e
  const issues = suggestKnownKeys(schema, e.issues)
  const first = issues[0]
  return new ValidationFailed({ message: first === undefined ? e.message : `${what} is invalid: ${first.path}: ${first.message}`, issues })
}

/**
 * Decodes `value` strictly into `schema`. Ill-formed UTF-16 (a lone surrogate, e.g. the JSON
 * escape "\ud800" without its pair) in any string or key is refused first, naming the field: it
 * cannot be stored as sent (SQLite would store U+FFFD instead), so accepting it would store
 * something else than the caller sent and make an identical retry look like a conflict
 * (docs/decisions.md, §6 HTTP API).
 */
export const decodeStrict = <A, I>(schema: Schema.Schema<A, I>, value: unknown, what: string): Effect.Effect<A, ValidationFailed> => {
  const lone = loneSurrogates(value)
  const first = lone[0]
  if (first !== undefined) {
    return Effect.fail(new ValidationFailed({ message: `${what} is invalid: ${first.path}: ${first.message}`, issues: lone }))
  }
  return Schema.decodeUnknown(schema, STRICT)(value).pipe(Effect.mapError((e: ParseResult.ParseError) => withSuggestions(schema, validationFailed(e, what), what)))
}
