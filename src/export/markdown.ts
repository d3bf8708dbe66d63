/**
 * The Markdown of the export files: field lists with every plain value escaped (escapeForeign),
 * server-made Markdown marked as such, and the small formats (offsets, relation text, links).
 */
import { createHash } from "node:crypto"
import { escapeForeign, foreignBlock } from "./escape.js"
import { type Row } from "./snapshot.js"

/** A value in a field list: plain values are escaped; `md` is server-made Markdown; `list` nests. */
export type Value =
  | null
  | undefined
  | string
  | number
  | bigint
  | boolean
  | Uint8Array
  | { readonly md: string }
  | { readonly list: ReadonlyArray<Value> }
export type Field = readonly [label: string, value: Value]

/** Null in the export; foreign text cannot produce it (a leading `*` of foreign text is escaped). */
export const NONE = "*none*"

export const isMd = (v: Value): v is { readonly md: string } => typeof v === "object" && v !== null && "md" in v
export const isList = (v: Value): v is { readonly list: ReadonlyArray<Value> } =>
  typeof v === "object" && v !== null && "list" in v

export const sha256Hex = (data: string | Uint8Array): string => createHash("sha256").update(data).digest("hex")

/** One list item; multi-line text continues inside the item, indented to its content column. */
export const item = (label: string | null, value: Value, indent: string): string => {
  const head = label === null ? `${indent}-` : `${indent}- ${label}:`
  if (isList(value)) {
    if (value.list.length === 0) return `${head} ${NONE}`
    return [head, ...value.list.map((v) => item(null, v, `${indent}  `))].join("\n")
  }
  if (isMd(value)) return `${head} ${value.md}`
  if (value === null || value === undefined) return `${head} ${NONE}`
  if (value instanceof Uint8Array) return `${head} *blob of ${value.length} bytes, sha256 ${sha256Hex(value)}*`
  if (typeof value !== "string") return `${head} ${String(value)}`
  const inner = `${indent}  `
  const block = foreignBlock(value, inner)
  if (block === "") return head
  return `${head} ${block.slice(inner.length)}`
}

export const fields = (list: ReadonlyArray<Field>, indent = ""): string =>
  list.map(([label, value]) => item(label, value, indent)).join("\n")

/** Columns of `row` not in `known`, sorted by name, as fields (later migrations). */
export const extras = (row: Row, known: ReadonlyArray<string>): Array<Field> =>
  Object.keys(row)
    .filter((k) => !known.includes(k))
    .sort(compare)
    .map((k) => [k, toValue(row[k])] as const)

export const toValue = (v: unknown): Value => {
  if (v === null || v === undefined) return null
  if (typeof v === "string" || typeof v === "number" || typeof v === "bigint" || typeof v === "boolean") return v
  if (v instanceof Uint8Array) return v
  return JSON.stringify(v) ?? null
}

export const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** Sections joined by one blank line; the file ends with exactly one newline. */
export const doc = (parts: ReadonlyArray<string>): string => `${parts.filter((p) => p !== "").join("\n\n")}\n`

/** A path segment made from a stored id; a broken invariant is a defect, never a path escape. */
export const safeSegment = (id: string): string => {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(id)) throw new Error(`export: unsafe file name from id ${JSON.stringify(id)}`)
  return id
}

export const ruleLink = (id: string, prefix: string): { md: string } => ({ md: `[${escapeForeign(id)}](${prefix}${safeSegment(id)}.md)` })

/** m:ss below an hour, h:mm:ss from an hour on. */
export const formatOffset = (seconds: number): string => {
  const s = Math.max(0, Math.floor(seconds))
  const h = Math.floor(s / 3600)
  const m = Math.floor((s % 3600) / 60)
  const ss = String(s % 60).padStart(2, "0")
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${ss}` : `${m}:${ss}`
}

/** A JSON array column as a list; anything else is shown as stored. */
export const jsonList = (raw: string | null, each: (x: unknown) => string): Value => {
  if (raw === null) return null
  try {
    const parsed: unknown = JSON.parse(raw)
    if (Array.isArray(parsed)) return { list: parsed.map(each) }
  } catch {
    // fall through: shown as stored
  }
  return raw
}

export const relationText = (r: unknown): string => {
  if (typeof r === "object" && r !== null && !Array.isArray(r)) {
    const o = r as Record<string, unknown>
    if (typeof o["kind"] === "string" && typeof o["name"] === "string") {
      const ref = o["ref"]
      return `${o["kind"]}: ${o["name"]}${typeof ref === "string" ? ` (ref: ${ref})` : ""}`
    }
  }
  return JSON.stringify(r) ?? String(r)
}
export const plainText = (x: unknown): string => (typeof x === "string" ? x : JSON.stringify(x) ?? String(x))

/** Keys sorted at every level, so JSON.stringify writes them in order. */
export const sortKeys = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(sortKeys)
  if (value === null || typeof value !== "object") return value
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value).sort(compare)) out[key] = sortKeys((value as Record<string, unknown>)[key])
  return out
}
