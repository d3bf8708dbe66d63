/**
 * Markdown export of one scope file (architecture.md §4.4, gaps.md §8).
 *
 * buildExport reads the whole scope inside one read transaction (one snapshot) and renders:
 *   README.md                 scope, export time in the zone, counts, index of rules by status
 *   rules/<rule-id>.md        every rule (rejected ones too): every version, every decision
 *   sources/<sha16>.md        metadata, full mail text or every segment, attachments with text
 *   graph/entities.md         the entity tree with full paths, every entity version
 *   graph/links.md            every stored link, every review
 *   manifest.json             scope, schema_version, row counts, sha256 of every other file
 *
 * Deterministic: every query has an ORDER BY, every list is built from ordered rows, and the only
 * time in the output is the export time line of README.md (which the manifest does not hash).
 * Foreign text goes through escapeForeign; every other value too, so no value can break layout.
 * Headings carry only server-made text (ids, numbers, fixed words). Columns this module does not
 * know (later migrations) are still exported, after the known ones, sorted by name.
 */
import { createHash } from "node:crypto"
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { localDateTime } from "../contracts/time.js"
import { escapeForeign, foreignBlock, normalizeNewlines } from "./escape.js"

export interface ExportFile {
  /** relative to the scope folder, e.g. "rules/sales-0001.md" */
  readonly path: string
  readonly content: string
}

export interface ExportFiles {
  readonly scope: string
  /** sorted by path */
  readonly files: ReadonlyArray<ExportFile>
}

export interface ExportOptions {
  /** IANA zone of the README time (config.zone) */
  readonly zone: string
  /** export time, epoch milliseconds */
  readonly now: number
}

/** Append-only tables (invariant 1; the last three arrive with migration 0004) and the stored graph tables. */
const COUNTED_TABLES = [
  "rule", "rule_version", "decision", "source", "source_attachment", "source_segment",
  "classification", "source_auth", "secret_finding",
  "entity", "entity_version", "link", "review"
] as const

const STATUS_ORDER = ["proposed", "confirmed", "superseded", "rejected"] as const

// ---------------------------------------------------------------------------------------------
// Rows

type Row = Readonly<Record<string, unknown>>

const str = (row: Row, key: string): string => {
  const v = row[key]
  return v === null || v === undefined ? "" : String(v)
}
const strOrNull = (row: Row, key: string): string | null => {
  const v = row[key]
  return v === null || v === undefined ? null : String(v)
}
const numOrNull = (row: Row, key: string): number | null => {
  const v = row[key]
  return typeof v === "number" ? v : typeof v === "bigint" ? Number(v) : null
}

interface Snapshot {
  readonly scope: string
  readonly schemaVersion: number
  readonly counts: ReadonlyArray<readonly [string, number]>
  readonly rules: ReadonlyArray<Row>
  readonly versions: ReadonlyArray<Row>
  readonly decisions: ReadonlyArray<Row>
  readonly sources: ReadonlyArray<Row>
  readonly attachments: ReadonlyArray<Row>
  readonly segments: ReadonlyArray<Row>
  readonly entities: ReadonlyArray<Row>
  readonly entityVersions: ReadonlyArray<Row>
  readonly links: ReadonlyArray<Row>
  readonly reviews: ReadonlyArray<Row>
}

const readSnapshot = (sql: SqlClient): Effect.Effect<Snapshot, SqlError> =>
  Effect.gen(function*() {
    const meta = yield* sql<Row>`SELECT scope, schema_version FROM meta WHERE singleton = 1`
    const tables = yield* sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`
    const present = new Set(tables.map((t) => t.name))
    const counts: Array<readonly [string, number]> = []
    for (const table of COUNTED_TABLES) {
      if (!present.has(table)) continue
      const rows = yield* sql.unsafe<{ n: number }>(`SELECT count(*) AS n FROM "${table}"`)
      counts.push([table, Number(rows[0]?.n ?? 0)])
    }
    return {
      scope: str(meta[0] ?? {}, "scope"),
      schemaVersion: numOrNull(meta[0] ?? {}, "schema_version") ?? 0,
      counts,
      rules: yield* sql<Row>`SELECT * FROM rule ORDER BY seq`,
      versions: yield* sql<Row>`SELECT * FROM rule_version ORDER BY rule_id, version`,
      decisions: yield* sql<Row>`SELECT * FROM decision ORDER BY rule_id, id`,
      sources: yield* sql<Row>`SELECT * FROM source ORDER BY id`,
      attachments: yield* sql<Row>`SELECT * FROM source_attachment ORDER BY source_id, n`,
      segments: yield* sql<Row>`SELECT * FROM source_segment ORDER BY source_id, n`,
      entities: yield* sql<Row>`SELECT * FROM entity ORDER BY seq`,
      entityVersions: yield* sql<Row>`SELECT * FROM entity_version ORDER BY id, version`,
      links: yield* sql<Row>`SELECT * FROM link ORDER BY seq`,
      reviews: yield* sql<Row>`SELECT * FROM review ORDER BY seq`
    }
  })

/** Appends `value` to the list under `key`. */
const push = <V>(map: Map<string, Array<V>>, key: string, value: V): void => {
  const list = map.get(key)
  if (list === undefined) map.set(key, [value])
  else list.push(value)
}

/** Rows grouped by one column, in row order (the rows come ordered by that column first). */
const groupBy = (rows: ReadonlyArray<Row>, key: string): Map<string, Array<Row>> => {
  const groups = new Map<string, Array<Row>>()
  for (const row of rows) push(groups, str(row, key), row)
  return groups
}

// ---------------------------------------------------------------------------------------------
// Markdown

/** A value in a field list: plain values are escaped; `md` is server-made Markdown; `list` nests. */
type Value =
  | null
  | undefined
  | string
  | number
  | bigint
  | boolean
  | Uint8Array
  | { readonly md: string }
  | { readonly list: ReadonlyArray<Value> }
type Field = readonly [label: string, value: Value]

/** Null in the export; foreign text cannot produce it (a leading `*` of foreign text is escaped). */
const NONE = "*none*"

const isMd = (v: Value): v is { readonly md: string } => typeof v === "object" && v !== null && "md" in v
const isList = (v: Value): v is { readonly list: ReadonlyArray<Value> } =>
  typeof v === "object" && v !== null && "list" in v

const sha256Hex = (data: string | Uint8Array): string => createHash("sha256").update(data).digest("hex")

/** One list item; multi-line text continues inside the item, indented to its content column. */
const item = (label: string | null, value: Value, indent: string): string => {
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

const fields = (list: ReadonlyArray<Field>, indent = ""): string =>
  list.map(([label, value]) => item(label, value, indent)).join("\n")

/** Columns of `row` not in `known`, sorted by name, as fields (later migrations). */
const extras = (row: Row, known: ReadonlyArray<string>): Array<Field> =>
  Object.keys(row)
    .filter((k) => !known.includes(k))
    .sort(compare)
    .map((k) => [k, toValue(row[k])] as const)

const toValue = (v: unknown): Value => {
  if (v === null || v === undefined) return null
  if (typeof v === "string" || typeof v === "number" || typeof v === "bigint" || typeof v === "boolean") return v
  if (v instanceof Uint8Array) return v
  return JSON.stringify(v) ?? null
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** Sections joined by one blank line; the file ends with exactly one newline. */
const doc = (parts: ReadonlyArray<string>): string => `${parts.filter((p) => p !== "").join("\n\n")}\n`

/** A path segment made from a stored id; a broken invariant is a defect, never a path escape. */
const safeSegment = (id: string): string => {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(id)) throw new Error(`export: unsafe file name from id ${JSON.stringify(id)}`)
  return id
}

const ruleLink = (id: string, prefix: string): { md: string } => ({ md: `[${escapeForeign(id)}](${prefix}${safeSegment(id)}.md)` })

/** m:ss below an hour, h:mm:ss from an hour on. */
export const formatOffset = (seconds: number): string => {
  const s = Math.max(0, Math.floor(seconds))
  const h = Math.floor(s / 3600)
  const m = Math.floor((s % 3600) / 60)
  const ss = String(s % 60).padStart(2, "0")
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${ss}` : `${m}:${ss}`
}

/** A JSON array column as a list; anything else is shown as stored. */
const jsonList = (raw: string | null, each: (x: unknown) => string): Value => {
  if (raw === null) return null
  try {
    const parsed: unknown = JSON.parse(raw)
    if (Array.isArray(parsed)) return { list: parsed.map(each) }
  } catch {
    // fall through: shown as stored
  }
  return raw
}

const relationText = (r: unknown): string => {
  if (typeof r === "object" && r !== null && !Array.isArray(r)) {
    const o = r as Record<string, unknown>
    if (typeof o["kind"] === "string" && typeof o["name"] === "string") {
      const ref = o["ref"]
      return `${o["kind"]}: ${o["name"]}${typeof ref === "string" ? ` (ref: ${ref})` : ""}`
    }
  }
  return JSON.stringify(r) ?? String(r)
}
const plainText = (x: unknown): string => (typeof x === "string" ? x : JSON.stringify(x) ?? String(x))

// ---------------------------------------------------------------------------------------------
// Source file names

/** sources/<first 16 hex of sha256(source id)>.md; a (never yet seen) prefix clash uses the full hash. */
const sourcePaths = (sources: ReadonlyArray<Row>): Map<string, string> => {
  const full = sources.map((s) => [str(s, "id"), sha256Hex(str(s, "id"))] as const)
  const prefixCount = new Map<string, number>()
  for (const [, h] of full) prefixCount.set(h.slice(0, 16), (prefixCount.get(h.slice(0, 16)) ?? 0) + 1)
  const paths = new Map<string, string>()
  for (const [id, h] of full) {
    const name = (prefixCount.get(h.slice(0, 16)) ?? 0) > 1 ? h : h.slice(0, 16)
    paths.set(id, `sources/${name}.md`)
  }
  return paths
}

// ---------------------------------------------------------------------------------------------
// Files

const RULE_KNOWN = ["seq", "id", "created_at", "created_by"]
const VERSION_KNOWN = [
  "rule_id", "version", "kind", "status", "statement", "quote", "source_id", "timestamp_s", "source_link", "said_at",
  "speaker", "relations", "keywords", "valid_from", "valid_until", "supersedes", "superseded_by", "reason",
  "changed_by", "changed_at"
]
const DECISION_KNOWN = [
  "id", "rule_id", "version", "kind", "new_version", "decided_by", "decided_by_identity", "decided_at", "reason"
]

const ruleFile = (
  rule: Row,
  versions: ReadonlyArray<Row>,
  decisions: ReadonlyArray<Row>,
  sourcePath: ReadonlyMap<string, string>
): string => {
  const id = str(rule, "id")
  const current = versions[versions.length - 1]
  const head = fields([
    ["ref", `rule/${id}`],
    ["created_at", strOrNull(rule, "created_at")],
    ["created_by", strOrNull(rule, "created_by")],
    ["versions", versions.length],
    ["current status", current === undefined ? null : str(current, "status")],
    ...extras(rule, RULE_KNOWN)
  ])
  const versionParts = versions.map((v) => {
    const sourceId = str(v, "source_id")
    const file = sourcePath.get(sourceId)
    const ts = numOrNull(v, "timestamp_s")
    const optRule = (key: string): Value => {
      const other = strOrNull(v, key)
      return other === null ? null : ruleLink(other, "")
    }
    return `## Version ${str(v, "version")}\n\n${fields([
      ["kind", strOrNull(v, "kind")],
      ["status", strOrNull(v, "status")],
      ["statement", strOrNull(v, "statement")],
      ["quote", strOrNull(v, "quote")],
      ["source", `source/${sourceId}`],
      ["source file", file === undefined ? null : { md: `[${file}](../${file})` }],
      ["timestamp_s", ts === null ? null : { md: `${ts} (${formatOffset(ts)})` }],
      ["source_link", strOrNull(v, "source_link")],
      ["said_at", strOrNull(v, "said_at")],
      ["speaker", strOrNull(v, "speaker")],
      ["relations", jsonList(strOrNull(v, "relations"), relationText)],
      ["keywords", jsonList(strOrNull(v, "keywords"), plainText)],
      ["valid_from", strOrNull(v, "valid_from")],
      ["valid_until", strOrNull(v, "valid_until")],
      ["supersedes", optRule("supersedes")],
      ["superseded_by", optRule("superseded_by")],
      ["reason", strOrNull(v, "reason")],
      ["changed_by", strOrNull(v, "changed_by")],
      ["changed_at", strOrNull(v, "changed_at")],
      ...extras(v, VERSION_KNOWN)
    ])}`
  })
  const decisionParts = decisions.length === 0
    ? ["No decisions."]
    : decisions.map((d) =>
      `### Decision ${str(d, "id")}\n\n${fields([
        ["kind", strOrNull(d, "kind")],
        ["version", numOrNull(d, "version")],
        ["new_version", numOrNull(d, "new_version")],
        ["decided_by", strOrNull(d, "decided_by")],
        ["decided_by_identity", strOrNull(d, "decided_by_identity")],
        ["decided_at", strOrNull(d, "decided_at")],
        ["reason", strOrNull(d, "reason")],
        ...extras(d, DECISION_KNOWN)
      ])}`
    )
  return doc([`# Rule ${escapeForeign(id)}`, head, ...versionParts, "## Decisions", ...decisionParts])
}

const SOURCE_KNOWN = [
  "id", "kind", "title", "occurred_at", "sender", "thread", "link", "excerpt", "fulltext_sha256", "fetched_at", "feeder"
]
const ATTACHMENT_KNOWN = ["source_id", "n", "filename", "media_type", "size", "external", "text", "text_origin"]
const SEGMENT_KNOWN = ["source_id", "n", "start_s", "speaker", "text"]

const sourceFile = (
  source: Row,
  name: string,
  segments: ReadonlyArray<Row>,
  attachments: ReadonlyArray<Row>,
  citedBy: ReadonlyArray<string>
): string => {
  const id = str(source, "id")
  const kind = str(source, "kind")
  const excerpt = strOrNull(source, "excerpt")
  const head = fields([
    ["id", id],
    ["ref", `source/${id}`],
    ["kind", kind],
    ["title", strOrNull(source, "title")],
    ["occurred_at", strOrNull(source, "occurred_at")],
    ["sender", strOrNull(source, "sender")],
    ["thread", strOrNull(source, "thread")],
    ["link", strOrNull(source, "link")],
    ["fulltext_sha256", strOrNull(source, "fulltext_sha256")],
    ["fetched_at", strOrNull(source, "fetched_at")],
    ["feeder", strOrNull(source, "feeder")],
    ["cited by", { list: citedBy.map((r) => ruleLink(r, "../rules/")) }],
    ...extras(source, SOURCE_KNOWN)
  ])
  const parts = [`# Source ${name}`, head]
  if (excerpt !== null) {
    const block = foreignBlock(excerpt)
    parts.push("## Text", block === "" ? "*empty*" : block)
  }
  if (kind === "jamie" || segments.length > 0) {
    parts.push("## Segments")
    if (segments.length === 0) parts.push("No segments.")
    for (const seg of segments) {
      const speaker = strOrNull(seg, "speaker")
      const line = `[${formatOffset(numOrNull(seg, "start_s") ?? 0)}] ${speaker === null ? "" : `${speaker}: `}${str(seg, "text")}`
      const more = extras(seg, SEGMENT_KNOWN)
      parts.push(foreignBlock(line))
      if (more.length > 0) parts.push(fields([["segment", numOrNull(seg, "n")], ...more]))
    }
  }
  parts.push("## Attachments")
  if (attachments.length === 0) parts.push("No attachments.")
  for (const a of attachments) {
    const n = str(a, "n")
    const text = strOrNull(a, "text")
    parts.push(`### Attachment ${escapeForeign(n)}`, fields([
      ["ref", `attachment/${id}#${n}`],
      ["filename", strOrNull(a, "filename")],
      ["media_type", strOrNull(a, "media_type")],
      ["size", numOrNull(a, "size")],
      ["external", strOrNull(a, "external")],
      ["text_origin", strOrNull(a, "text_origin")],
      ...extras(a, ATTACHMENT_KNOWN)
    ]))
    if (text !== null) {
      const block = foreignBlock(text)
      parts.push(block === "" ? "*empty*" : block)
    }
  }
  return doc(parts)
}

const ENTITY_KNOWN = ["seq", "id", "scope", "created_at", "created_by"]
const ENTITY_VERSION_KNOWN = [
  "id", "version", "type", "name", "aliases", "parent_id", "status", "valid_from", "valid_to", "evidence", "change",
  "channel", "changed_by", "changed_at", "reason"
]

const entitiesFile = (scope: string, entities: ReadonlyArray<Row>, versionsOf: ReadonlyMap<string, Array<Row>>): string => {
  const ids = entities.map((e) => str(e, "id"))
  const current = new Map<string, Row>()
  for (const id of ids) {
    const vs = versionsOf.get(id) ?? []
    const last = vs[vs.length - 1]
    if (last !== undefined) current.set(id, last)
  }
  const parentOf = (id: string): string | null => {
    const p = strOrNull(current.get(id) ?? {}, "parent_id")
    return p !== null && current.has(p) ? p : null
  }
  const nameOf = (id: string): string => str(current.get(id) ?? {}, "name")
  /** root first; a (trigger-prevented) cycle stops the walk */
  const pathOf = (id: string): Array<string> => {
    const path: Array<string> = []
    const seen = new Set<string>()
    for (let at: string | null = id; at !== null && !seen.has(at); at = parentOf(at)) {
      seen.add(at)
      path.unshift(at)
    }
    return path
  }
  const byName = (a: string, b: string): number => compare(nameOf(a).toLowerCase(), nameOf(b).toLowerCase()) || compare(a, b)
  const children = new Map<string, Array<string>>()
  const roots: Array<string> = []
  for (const id of ids) {
    const p = parentOf(id)
    if (p === null) roots.push(id)
    else push(children, p, id)
  }
  const order: Array<string> = []
  const visited = new Set<string>()
  const walk = (id: string): void => {
    if (visited.has(id)) return
    visited.add(id)
    order.push(id)
    for (const c of [...(children.get(id) ?? [])].sort(byName)) walk(c)
  }
  for (const r of [...roots].sort(byName)) walk(r)
  for (const id of ids) walk(id) // only reached by a cycle or an entity without versions

  const describe = (id: string): string => {
    const v = current.get(id) ?? {}
    return `${pathOf(id).map(nameOf).join(" › ")} (${id}, ${str(v, "type")}, ${str(v, "status")})`
  }
  const entityById = new Map(entities.map((e) => [str(e, "id"), e] as const))
  const parts = [`# Entities of ${escapeForeign(scope)}`, "## Tree"]
  parts.push(order.length === 0 ? "No entities." : order.map((id) => item(null, describe(id), "")).join("\n"))
  for (const id of order) {
    const e = entityById.get(id) ?? {}
    const vs = versionsOf.get(id) ?? []
    parts.push(`## ${escapeForeign(id)}`, fields([
      ["ref", `entity/${id}`],
      ["path", { list: pathOf(id).map((p) => `${nameOf(p)} (${p})`) }],
      ["scope", strOrNull(e, "scope")],
      ["created_at", strOrNull(e, "created_at")],
      ["created_by", strOrNull(e, "created_by")],
      ["versions", vs.length],
      ["current status", strOrNull(current.get(id) ?? {}, "status")],
      ...extras(e, ENTITY_KNOWN)
    ]))
    for (const v of vs) {
      parts.push(`### ${escapeForeign(id)} version ${str(v, "version")}`, fields([
        ["type", strOrNull(v, "type")],
        ["name", strOrNull(v, "name")],
        ["aliases", jsonList(strOrNull(v, "aliases"), plainText)],
        ["parent_id", strOrNull(v, "parent_id")],
        ["status", strOrNull(v, "status")],
        ["valid_from", strOrNull(v, "valid_from")],
        ["valid_to", strOrNull(v, "valid_to")],
        ["evidence", strOrNull(v, "evidence")],
        ["change", strOrNull(v, "change")],
        ["channel", strOrNull(v, "channel")],
        ["changed_by", strOrNull(v, "changed_by")],
        ["changed_at", strOrNull(v, "changed_at")],
        ["reason", strOrNull(v, "reason")],
        ...extras(v, ENTITY_VERSION_KNOWN)
      ]))
    }
  }
  return doc(parts)
}

const LINK_KNOWN = [
  "seq", "id", "from_ref", "to_ref", "type", "origin", "confidence", "reason", "evidence", "valid_from", "valid_to",
  "created_at", "created_by"
]
const REVIEW_KNOWN = [
  "seq", "id", "target", "verdict", "decided_by", "decided_by_identity", "decided_at", "reason", "new_version"
]

const linksFile = (scope: string, links: ReadonlyArray<Row>, reviews: ReadonlyArray<Row>): string => {
  const verdictOf = new Map(reviews.map((r) => [str(r, "target"), str(r, "verdict")] as const))
  /** graph.md §9.2: deterministic/human confirmed; proposed by its review */
  const statusOf = (l: Row): string => {
    if (str(l, "origin") !== "proposed") return "confirmed"
    const verdict = verdictOf.get(`link/${str(l, "id")}`)
    return verdict === "confirm" ? "confirmed" : verdict === "reject" ? "rejected" : "proposed"
  }
  const parts = [`# Links of ${escapeForeign(scope)}`, "## Links"]
  if (links.length === 0) parts.push("No links.")
  for (const l of links) {
    parts.push(`### ${escapeForeign(str(l, "id"))}`, fields([
      ["from_ref", strOrNull(l, "from_ref")],
      ["to_ref", strOrNull(l, "to_ref")],
      ["type", strOrNull(l, "type")],
      ["origin", strOrNull(l, "origin")],
      ["confidence", numOrNull(l, "confidence")],
      ["status (from reviews)", statusOf(l)],
      ["reason", strOrNull(l, "reason")],
      ["evidence", strOrNull(l, "evidence")],
      ["valid_from", strOrNull(l, "valid_from")],
      ["valid_to", strOrNull(l, "valid_to")],
      ["created_at", strOrNull(l, "created_at")],
      ["created_by", strOrNull(l, "created_by")],
      ...extras(l, LINK_KNOWN)
    ]))
  }
  parts.push("## Reviews")
  if (reviews.length === 0) parts.push("No reviews.")
  for (const r of reviews) {
    parts.push(`### ${escapeForeign(str(r, "id"))}`, fields([
      ["target", strOrNull(r, "target")],
      ["verdict", strOrNull(r, "verdict")],
      ["decided_by", strOrNull(r, "decided_by")],
      ["decided_by_identity", strOrNull(r, "decided_by_identity")],
      ["decided_at", strOrNull(r, "decided_at")],
      ["reason", strOrNull(r, "reason")],
      ["new_version", numOrNull(r, "new_version")],
      ...extras(r, REVIEW_KNOWN)
    ]))
  }
  return doc(parts)
}

const readmeFile = (
  snap: Snapshot,
  opts: ExportOptions,
  versionsOf: ReadonlyMap<string, ReadonlyArray<Row>>
): string => {
  const byStatus = new Map<string, Array<Row>>()
  for (const rule of snap.rules) {
    const status = strOrNull(versionsOf.get(str(rule, "id"))?.at(-1) ?? {}, "status") ?? "unknown"
    push(byStatus, status, rule)
  }
  const statuses = [
    ...STATUS_ORDER,
    ...[...byStatus.keys()].filter((s) => !(STATUS_ORDER as ReadonlyArray<string>).includes(s)).sort(compare)
  ]
  const firstLine = (id: string): string => {
    const current = versionsOf.get(id)?.at(-1)
    return normalizeNewlines(current === undefined ? "" : str(current, "statement")).split("\n")[0] ?? ""
  }
  const parts = [
    `# Groundnote export of ${escapeForeign(snap.scope)}`,
    fields([
      ["scope", snap.scope],
      ["schema_version", snap.schemaVersion],
      ["exported", `${localDateTime(opts.zone, opts.now)} (${opts.zone})`],
      ["rules", snap.rules.length],
      ...statuses.map((s) => [`rules ${s}`, byStatus.get(s)?.length ?? 0] as const),
      ["sources", snap.sources.length],
      ["entities", snap.entities.length],
      ["links", snap.links.length]
    ]),
    "One file per rule under rules, one per source under sources, the entity tree and the links under graph. " +
      "manifest.json holds the sha256 of every file except this README and the manifest itself."
  ]
  for (const status of statuses) {
    const rules = byStatus.get(status) ?? []
    parts.push(`## ${escapeForeign(status)} (${rules.length})`)
    parts.push(rules.length === 0 ? "No rules." : rules.map((r) => {
      const id = str(r, "id")
      const text = foreignBlock(firstLine(id).replace(/^[ \t]+/, ""))
      return `- [${escapeForeign(id)}](rules/${safeSegment(id)}.md)${text === "" ? "" : ` ${text}`}`
    }).join("\n"))
  }
  return doc(parts)
}

/** Keys sorted at every level, so JSON.stringify writes them in order. */
const sortKeys = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(sortKeys)
  if (value === null || typeof value !== "object") return value
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value).sort(compare)) out[key] = sortKeys((value as Record<string, unknown>)[key])
  return out
}

const render = (snap: Snapshot, opts: ExportOptions): ExportFiles => {
  const versionsOf = groupBy(snap.versions, "rule_id")
  const decisionsOf = groupBy(snap.decisions, "rule_id")
  const segmentsOf = groupBy(snap.segments, "source_id")
  const attachmentsOf = groupBy(snap.attachments, "source_id")
  const entityVersionsOf = groupBy(snap.entityVersions, "id")
  const sourcePath = sourcePaths(snap.sources)

  const citedBy = new Map<string, Array<string>>()
  for (const rule of snap.rules) {
    const id = str(rule, "id")
    const vs = versionsOf.get(id) ?? []
    for (const sourceId of new Set(vs.map((v) => str(v, "source_id")))) {
      push(citedBy, sourceId, id)
    }
  }

  const files: Array<ExportFile> = []
  for (const rule of snap.rules) {
    const id = str(rule, "id")
    files.push({
      path: `rules/${safeSegment(id)}.md`,
      content: ruleFile(rule, versionsOf.get(id) ?? [], decisionsOf.get(id) ?? [], sourcePath)
    })
  }
  for (const source of snap.sources) {
    const id = str(source, "id")
    const path = sourcePath.get(id) ?? `sources/${sha256Hex(id).slice(0, 16)}.md`
    const name = path.slice("sources/".length, -".md".length)
    files.push({
      path,
      content: sourceFile(source, name, segmentsOf.get(id) ?? [], attachmentsOf.get(id) ?? [], citedBy.get(id) ?? [])
    })
  }
  files.push({ path: "graph/entities.md", content: entitiesFile(snap.scope, snap.entities, entityVersionsOf) })
  files.push({ path: "graph/links.md", content: linksFile(snap.scope, snap.links, snap.reviews) })

  const hashed = [...files].sort((a, b) => compare(a.path, b.path))
  const manifest = sortKeys({
    scope: snap.scope,
    schema_version: snap.schemaVersion,
    counts: Object.fromEntries(snap.counts),
    files: Object.fromEntries(hashed.map((f) => [f.path, sha256Hex(Buffer.from(f.content, "utf8"))]))
  })
  files.push({ path: "manifest.json", content: `${JSON.stringify(manifest, null, 2)}\n` })
  files.push({ path: "README.md", content: readmeFile(snap, opts, versionsOf) })

  return { scope: snap.scope, files: files.sort((a, b) => compare(a.path, b.path)) }
}

/**
 * Reads one scope file inside one read transaction (one snapshot) and renders its export.
 * The same database state gives byte-identical files; only the README time line depends on `now`.
 */
export const buildExport: (sql: SqlClient, opts: ExportOptions) => Effect.Effect<ExportFiles, SqlError> = Effect.fn(
  "Export.build"
)(function*(sql: SqlClient, opts: ExportOptions) {
  const snap = yield* sql.withTransaction(readSnapshot(sql))
  return render(snap, opts)
})
