/** The files of an export (gaps.md §8): README.md, one per rule and per source, graph/entities.md, graph/links.md. */
import { localDateTime } from "../contracts/time.js"
import { escapeForeign, foreignBlock, normalizeNewlines } from "./escape.js"
import { compare, doc, extras, fields, formatOffset, item, jsonList, plainText, relationText, ruleLink, safeSegment, sha256Hex, type Value } from "./markdown.js"
import { numOrNull, push, type Row, type Snapshot, STATUS_ORDER, str, strOrNull } from "./snapshot.js"
import { type ExportOptions } from "./types.js"

/** sources/<first 16 hex of sha256(source id)>.md; a (never yet seen) prefix clash uses the full hash. */
export const sourcePaths = (sources: ReadonlyArray<Row>): Map<string, string> => {
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

export const ruleFile = (
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

export const sourceFile = (
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

export const entitiesFile = (scope: string, entities: ReadonlyArray<Row>, versionsOf: ReadonlyMap<string, Array<Row>>): string => {
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

export const linksFile = (scope: string, links: ReadonlyArray<Row>, reviews: ReadonlyArray<Row>): string => {
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

export const readmeFile = (
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
