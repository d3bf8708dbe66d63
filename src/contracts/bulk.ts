/**
 * Bulk decisions and reviews (POST /v1/decisions, POST /v1/reviews with `items`): the bound on
 * the items of one request, the request's outer shape, and the refusal of one item as the
 * refusal of the whole request — the same code and status as the single decision or review,
 * with the item named in the message (`items[<i>] (<ref>): …`) and in `issues`.
 */
import { Effect } from "effect"
import { type DomainError, GraphRefusal, type Issue, isDomainError, keyText, ValidationFailed } from "./errors.js"

/** At most this many items in one bulk request (400 validation-failed above it). */
export const MAX_BULK_ITEMS = 200

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const invalid = (what: string, path: string, message: string) =>
  new ValidationFailed({ message: `${what} is invalid: ${path}: ${message}`, issues: [{ path, message }] })

/** True when a JSON body is the bulk form `{items: [...]}` (any body with the key items). */
export const isBulkBody = (raw: unknown): boolean => isRecord(raw) && Object.hasOwn(raw, "items")

/** The items of `{items: [...]}`: an object with only `items`, an array of 1 to MAX_BULK_ITEMS objects. */
export const bulkItems = (raw: unknown, what: string): Effect.Effect<ReadonlyArray<Record<string, unknown>>, ValidationFailed> =>
  Effect.gen(function*() {
    if (!isRecord(raw)) return yield* invalid(what, "(root)", "must be an object {items: [...]}")
    const stray = Object.keys(raw).find((k) => k !== "items")
    // a key is foreign text of any length: named cut short, as every validation message does
    if (stray !== undefined) return yield* invalid(what, keyText(stray), "unknown key (remove it)")
    const items = raw.items
    if (!Array.isArray(items)) return yield* invalid(what, "items", `must be an array of 1 to ${MAX_BULK_ITEMS} items`)
    if (items.length === 0) return yield* invalid(what, "items", "is empty: name at least one item")
    if (items.length > MAX_BULK_ITEMS) {
      return yield* invalid(what, "items", `at most ${MAX_BULK_ITEMS} items in one request (got ${items.length}): send the rest in another request`)
    }
    const bad = items.findIndex((i) => !isRecord(i))
    if (bad >= 0) return yield* invalid(what, `items[${bad}]`, "must be an object")
    return items as ReadonlyArray<Record<string, unknown>>
  })

/** A second item naming a target the request named before: refused before anything is read. */
export const namedTwice = (what: string, index: number, first: number, field: string) =>
  invalid(what, `items[${index}].${field}`, `names the same ${field === "rule_id" ? "rule" : "target"} as items[${first}]: one item each`)

const prefixed = (at: string, issues: ReadonlyArray<Issue> | undefined, message: string): Array<Issue> =>
  issues !== undefined && issues.length > 0
    ? issues.map((i) => ({ path: i.path === "(root)" ? at : `${at}.${i.path}`, message: i.message }))
    : [{ path: at, message }]

/**
 * The refusal of item `index` (naming `ref`) as the refusal of the request: the same error class,
 * code and fields, the message led by the item, every issue's path under `items[<index>]`.
 */
export const itemRefusal = <E extends DomainError>(e: E, index: number, ref: string): E => {
  const at = `items[${index}]`
  // the ref may be the text a client sent (a malformed target): cut short like any quoted value
  const fields: Record<string, unknown> = {}
  for (const k of ["current", "remedy", "next", "candidates", "paths", "limit", "findings", "closest", "retryAfter", "scope", "reason", "grantId"]) {
    const v = (e as unknown as Record<string, unknown>)[k]
    if (v !== undefined) fields[k] = v
  }
  fields.message = `${at} (${keyText(ref)}): ${e.message}`
  fields.issues = prefixed(at, "issues" in e ? e.issues : undefined, e.message)
  if (e instanceof GraphRefusal) fields.errorCode = e.errorCode
  const Ctor = e.constructor as new (f: Record<string, unknown>) => E
  return new Ctor(fields)
}

/** Runs `f` on item `index`; its refusal names the item (itemRefusal); a storage failure passes as it is. */
export const forItem = <A, E, R>(index: number, ref: string, f: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.mapError(f, (e) => (isDomainError(e) ? itemRefusal(e, index, ref) as E : e))
