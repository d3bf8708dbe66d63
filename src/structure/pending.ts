/**
 * Pending structure changes (graph.md §12): per entity, the agent versions (channel mcp/api)
 * after its latest approval version that have no review; plus every open proposed link without a
 * review. Newest first, with what a person needs to decide: the path before and after, the
 * subtree size, who (grant, channel), reason, evidence; for links both ends described. Reads only.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import type { PathItem } from "../contracts/errors.js"
import type { LinkRow } from "../graph/counted.js"
import { nextForPending } from "../graph/guidance.js"
import { linkRef } from "../graph/link-types.js"
import { pathsOf } from "../graph/paths.js"
import type { PendingEntityVersion, PendingItem, PendingLink, StructureOut } from "../graph/review-schemas.js"
import { redactedMark, redactedOf } from "../domain/redacted.js"
import { describeEnds } from "./link-ends.js"
import type { VersionRow } from "./review.js"

export interface PendingOptions {
  readonly scope: string
  readonly publicUrl: string
  /**
   * Whether link ends that are rejected rules are described (the approval channel). Outside it a
   * link to a rejected rule is left out (invariant 8).
   */
  readonly approval: boolean
}

export const structurePageUrl = (publicUrl: string, scope: string): string =>
  `${publicUrl}/approval/structure?scope=${encodeURIComponent(scope)}`

const parseAliases = (text: string): Array<string> => {
  const v: unknown = JSON.parse(text)
  return Array.isArray(v) ? v.filter((a): a is string => typeof a === "string") : []
}

/** The pending agent versions of the scope, oldest version first per entity. */
const pendingVersions = (sql: SqlClient) =>
  sql<VersionRow>`SELECT v.* FROM entity_version v
    WHERE v.channel IN ('mcp', 'api') AND v.change IN ('create', 'move', 'update')
      AND v.version > coalesce((SELECT max(a.version) FROM entity_version a WHERE a.id = v.id AND a.channel = 'approval'), 0)
      AND NOT EXISTS (SELECT 1 FROM review r WHERE r.target = 'entity/' || v.id || '@' || v.version)
    ORDER BY v.id, v.version`

const entityItems = (sql: SqlClient, opts: PendingOptions) =>
  Effect.gen(function*() {
    const versions = yield* pendingVersions(sql)
    if (versions.length === 0) return []
    const ids = [...new Set(versions.map((v) => v.id))]
    const before = yield* sql<VersionRow>`SELECT p.* FROM entity_version p JOIN entity_version v ON v.id = p.id AND p.version = v.version - 1
      WHERE v.channel IN ('mcp', 'api') AND v.id IN ${sql.in(ids)}`
    const previous = new Map(before.map((p) => [`${p.id}@${p.version}`, p]))
    const current = new Map((yield* sql<{ id: string; version: number; status: VersionRow["status"] }>`
      SELECT id, version, status FROM entity_current WHERE id IN ${sql.in(ids)}`).map((c) => [c.id, c]))
    const subtree = new Map((yield* sql<{ id: string; n: number }>`SELECT c.ancestor_id AS id, count(*) AS n FROM entity_closure c
      JOIN entity_current k ON k.id = c.descendant_id
      WHERE c.ancestor_id IN ${sql.in(ids)} AND c.depth > 0 AND k.status <> 'archived' GROUP BY c.ancestor_id`).map((r) => [r.id, r.n]))
    const parents = [...versions, ...before].map((v) => v.parent_id).filter((p): p is string => p !== null)
    const paths = yield* pathsOf(sql, parents)
    const marks = yield* redactedOf(sql)
    const placed = (v: VersionRow): Array<PathItem> =>
      [...(v.parent_id === null ? [] : (paths.get(v.parent_id) ?? [])), { id: v.id, name: v.name, type: v.type }]
    return versions.map((v): PendingEntityVersion => {
      const prev = previous.get(`${v.id}@${v.version - 1}`)
      const cur = current.get(v.id)
      return {
        kind: "entity",
        ref: `entity/${v.id}@${v.version}`,
        id: v.id,
        version: v.version,
        change: v.change as PendingEntityVersion["change"],
        target: `entity/${v.id}@${cur?.version ?? v.version}`,
        current: cur?.version === v.version,
        before: prev === undefined ? null : placed(prev),
        after: placed(v),
        subtree: subtree.get(v.id) ?? 0,
        status: cur?.status ?? v.status,
        aliases_before: prev === undefined ? null : parseAliases(prev.aliases),
        aliases_after: parseAliases(v.aliases),
        by: v.changed_by,
        channel: v.channel as PendingEntityVersion["channel"],
        at: v.changed_at,
        reason: v.reason,
        evidence: v.evidence,
        approval_url: `${structurePageUrl(opts.publicUrl, opts.scope)}#${v.id}`,
        ...redactedMark(marks.row("entity_version", v.id, v.version) || (prev !== undefined && marks.row("entity_version", prev.id, prev.version)))
      }
    })
  })

const linkItems = (sql: SqlClient, opts: PendingOptions) =>
  Effect.gen(function*() {
    const links = yield* sql<LinkRow>`SELECT l.* FROM link l WHERE l.origin = 'proposed' AND l.valid_to IS NULL
      AND NOT EXISTS (SELECT 1 FROM review r WHERE r.target = 'link/' || l.id) ORDER BY l.seq`
    if (links.length === 0) return []
    const { describe, touched: endTouched, rejected } = yield* describeEnds(sql, links.flatMap((l) => [l.from_ref, l.to_ref]))
    const marks = yield* redactedOf(sql)
    return links
      .filter((l) => opts.approval || (!rejected(l.from_ref) && !rejected(l.to_ref)))
      .map((l): PendingLink => ({
        kind: "link",
        ref: linkRef(l.id),
        id: l.id,
        target: linkRef(l.id),
        type: l.type,
        from: describe(l.from_ref),
        to: describe(l.to_ref),
        confidence: l.confidence ?? 0,
        by: l.created_by,
        at: l.created_at,
        reason: l.reason ?? "",
        evidence: l.evidence,
        approval_url: `${structurePageUrl(opts.publicUrl, opts.scope)}#${l.id}`,
        ...redactedMark(marks.row("link", l.seq) || endTouched(l.from_ref) || endTouched(l.to_ref))
      }))
  })

/** Every pending item of the scope, newest first (then entity versions before links, then ref). */
export const listPending = (sql: SqlClient, opts: PendingOptions) =>
  Effect.gen(function*() {
    const items: Array<PendingItem> = [...(yield* entityItems(sql, opts)), ...(yield* linkItems(sql, opts))]
    items.sort((a, b) => b.at.localeCompare(a.at) || a.kind.localeCompare(b.kind) || b.ref.localeCompare(a.ref))
    return items
  })

/** GET /v1/structure: the pending items with their counts. */
export const structureOf = (sql: SqlClient, opts: PendingOptions) =>
  Effect.map(listPending(sql, opts), (pending): StructureOut => {
    const versions = pending.filter((p) => p.kind === "entity")
    return {
      scope: opts.scope,
      counts: {
        entities: new Set(versions.map((v) => v.id)).size,
        versions: versions.length,
        links: pending.length - versions.length
      },
      pending,
      approval_url: structurePageUrl(opts.publicUrl, opts.scope),
      path: [],
      next: nextForPending(versions[0]?.id ?? null)
    }
  })
