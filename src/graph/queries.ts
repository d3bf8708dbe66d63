/**
 * Read side of the entity tree (graph.md §6, §8, §12): the current entity, EntityOut, pending,
 * the entity with its path and versions, and the tree (levels, pages of 50, 200 nodes).
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { TREE_MAX_DEPTH, TREE_MAX_NODES, TREE_PAGE_SIZE } from "./config.js"
import { type Next, type PathItem, refuse } from "../contracts/errors.js"
import { nextForTree, nextForTreeDepth, nextForUnknown } from "./guidance.js"
import { pathOf, pathsOf } from "./paths.js"
import { redactedMark, redactedOf } from "../domain/redacted.js"
import type { EntityOut, EntityStatus, EntityVersionOut, TreeNode } from "./schemas.js"
import type { Adoption } from "../contracts/schemas.js"
import { entityAdoptions } from "./adoption.js"

export interface EntityRow {
  readonly seq: number
  readonly id: string
  readonly scope: string
  readonly version: number
  readonly type: string
  readonly name: string
  readonly aliases: ReadonlyArray<string>
  readonly parent_id: string | null
  readonly status: EntityStatus
  readonly valid_from: string
  readonly valid_to: string | null
  readonly evidence: string | null
  readonly change: EntityVersionOut["change"]
  readonly channel: EntityVersionOut["channel"]
  readonly changed_by: string
  readonly changed_at: string
  readonly reason: string
}

type RawVersion = Omit<EntityRow, "aliases" | "seq" | "scope"> & { readonly aliases: string }

const parseAliases = (text: string): Array<string> => {
  const v: unknown = JSON.parse(text)
  return Array.isArray(v) ? v.filter((a): a is string => typeof a === "string") : []
}

/** The current version of an entity with its head, or null when the scope has no such entity. */
export const currentEntity = (sql: SqlClient, id: string): Effect.Effect<EntityRow | null> =>
  sql<RawVersion & { seq: number; scope: string }>`SELECT e.seq, e.scope, k.* FROM entity e JOIN entity_current k ON k.id = e.id
    WHERE e.id = ${id}`.pipe(
    Effect.map((rows) => {
      const r = rows[0]
      return r === undefined ? null : { ...r, aliases: parseAliases(r.aliases) }
    }),
    Effect.orDie
  )

/** Non-archived direct children per entity (graph.md §6 count). */
export const childCounts = (sql: SqlClient, ids: ReadonlyArray<string>): Effect.Effect<Map<string, number>> =>
  ids.length === 0
    ? Effect.succeed(new Map())
    : sql<{ id: string; n: number }>`SELECT c.ancestor_id AS id, count(*) AS n FROM entity_closure c
        JOIN entity_current h ON h.id = c.descendant_id
        WHERE c.ancestor_id IN ${sql.in([...new Set(ids)])} AND c.depth = 1 AND h.status <> 'archived'
        GROUP BY c.ancestor_id`.pipe(
        Effect.map((rows) => new Map(rows.map((r) => [r.id, r.n]))),
        Effect.orDie
      )

/**
 * Pending (graph.md §12): agent versions (mcp, api) after the entity's latest approval version
 * without a review of target entity/<id>@<n>. Returns the pending version numbers per entity.
 */
export const pendingVersions = (sql: SqlClient, ids: ReadonlyArray<string>): Effect.Effect<Map<string, Array<number>>> =>
  ids.length === 0
    ? Effect.succeed(new Map())
    : sql<{ id: string; version: number }>`SELECT v.id, v.version FROM entity_version v
        WHERE v.id IN ${sql.in([...new Set(ids)])} AND v.channel IN ('mcp', 'api') AND v.change IN ('create', 'move', 'update')
          AND v.version > coalesce((SELECT max(a.version) FROM entity_version a WHERE a.id = v.id AND a.channel = 'approval'), 0)
          AND NOT EXISTS (SELECT 1 FROM review r WHERE r.target = 'entity/' || v.id || '@' || v.version)
        ORDER BY v.id, v.version`.pipe(
        Effect.map((rows) => {
          const out = new Map<string, Array<number>>()
          for (const r of rows) out.set(r.id, [...(out.get(r.id) ?? []), r.version])
          return out
        }),
        Effect.orDie
      )

export const entityApprovalUrl = (publicUrl: string, scope: string, id: string): string =>
  `${publicUrl}/approval/structure?scope=${encodeURIComponent(scope)}#${id}`

/** EntityOut of graph.md §8 from a current row. */
export const toEntityOut = (
  row: EntityRow,
  extra: { readonly children: number; readonly pending: boolean; readonly publicUrl: string; readonly redacted?: boolean; readonly adoption?: Adoption }
): EntityOut => ({
  ref: `entity/${row.id}`,
  id: row.id,
  scope: row.scope,
  type: row.type,
  name: row.name,
  aliases: [...row.aliases],
  status: row.status,
  parent_id: row.parent_id,
  valid_from: row.valid_from,
  valid_to: row.valid_to,
  children: extra.children,
  pending: extra.pending,
  approval_url: extra.pending ? entityApprovalUrl(extra.publicUrl, row.scope, row.id) : null,
  version: row.version,
  ...redactedMark(extra.redacted === true),
  ...(extra.adoption === undefined ? {} : { adoption: extra.adoption })
})

/** EntityOut with its children count and pending flag read from the file. */
export const entityOut = (sql: SqlClient, row: EntityRow, publicUrl: string): Effect.Effect<EntityOut> =>
  Effect.gen(function*() {
    const children = yield* childCounts(sql, [row.id])
    const pending = yield* pendingVersions(sql, [row.id])
    const marks = yield* Effect.orDie(redactedOf(sql))
    const adoptions = yield* entityAdoptions(sql, [row.id])
    return toEntityOut(row, {
      children: children.get(row.id) ?? 0, pending: pending.has(row.id), publicUrl,
      redacted: marks.row("entity_version", row.id, row.version), adoption: adoptions.get(row.id) ?? { kind: "person" }
    })
  })

/** One body for "no such entity here", whether it is missing or of another scope. */
export const entityNotFound = () =>
  refuse("not-found", {
    message: "no such entity in this scope",
    remedy: "find the entity with entity_resolve in the scope it belongs to",
    next: nextForUnknown()
  })

export interface EntityRead extends EntityOut {
  readonly versions: Array<EntityVersionOut>
  readonly path: Array<PathItem>
  readonly next: Array<Next>
}

/** read_entity / entity_path: EntityOut, the full path, every version including moves. */
export const readEntity = Effect.fn("Entities.read")(function*(sql: SqlClient, id: string, publicUrl: string) {
  const row = yield* currentEntity(sql, id)
  if (row === null) return yield* entityNotFound()
  const out = yield* entityOut(sql, row, publicUrl)
  const path = yield* pathOf(sql, id)
  const raw = yield* sql<RawVersion>`SELECT * FROM entity_version WHERE id = ${id} ORDER BY version`
  const parents = yield* pathsOf(sql, raw.flatMap((v) => (v.parent_id === null ? [] : [v.parent_id])))
  const marks = yield* redactedOf(sql)
  const versions: Array<EntityVersionOut> = raw.map((v) => ({
    version: v.version,
    change: v.change,
    type: v.type,
    name: v.name,
    aliases: parseAliases(v.aliases),
    parent_id: v.parent_id,
    parent_path: v.parent_id === null ? [] : parents.get(v.parent_id) ?? [],
    status: v.status,
    valid_from: v.valid_from,
    valid_to: v.valid_to,
    evidence: v.evidence,
    channel: v.channel,
    changed_by: v.changed_by,
    changed_at: v.changed_at,
    reason: v.reason,
    ...redactedMark(marks.row("entity_version", id, v.version))
  }))
  const read: EntityRead = { ...out, path, versions, next: [] }
  return read
}, Effect.catchTag("SqlError", (e) => Effect.die(e)))

export interface TreeAnswer {
  readonly scope: string
  readonly parent: string | null
  readonly depth: number
  readonly page: number
  /** non-archived direct children of parent (top-level entities without parent) */
  readonly total: number
  readonly next_page: number | null
  /** non-archived entities per level below parent, levels 1…depth */
  readonly levels: Array<{ level: number; count: number }>
  readonly nodes: Array<TreeNode>
  readonly path: Array<PathItem>
  readonly next: Array<Next>
}

interface NodeRow {
  readonly id: string
  readonly name: string
  readonly type: string
  readonly status: EntityStatus
  readonly parent_id: string | null
  readonly children: number
}

type PageRow = Omit<NodeRow, "children">

/** A node while the answer is built: children is filled in once its level is counted. */
type Building = { -readonly [K in keyof TreeNode]: TreeNode[K] } & { shown: number }

/**
 * "e is not archived" without reading its current version: archived is terminal (trigger
 * terminal-state, no version follows an archived one), so an entity is archived now exactly when
 * one of its versions is; the partial index entity_version_archived (migration 0002-graph) holds those.
 */
const notArchived = (column: string): string =>
  `NOT EXISTS (SELECT 1 FROM entity_version a WHERE a.id = ${column} AND a.status = 'archived')`

/**
 * Non-archived direct children of each of the (at most 200) nodes of a tree answer (graph.md §6
 * children), from entity_closure alone. Nodes without children are absent from the map.
 */
const treeChildCounts = (sql: SqlClient, ids: ReadonlyArray<string>) =>
  ids.length === 0
    ? Effect.succeed(new Map<string, number>())
    : Effect.map(
      sql<{ id: string; n: number }>`SELECT c.ancestor_id AS id, count(*) AS n FROM entity_closure c
        WHERE c.ancestor_id IN ${sql.in([...ids])} AND c.depth = 1 AND ${sql.literal(notArchived("c.descendant_id"))}
        GROUP BY c.ancestor_id`,
      (rows) => new Map(rows.map((r) => [r.id, r.n]))
    )

/**
 * One page of the non-archived direct children of `parent` (the top level when null), ordered
 * by lower(name), id. The current versions come in that order through entity_version_child
 * (migration 0002-graph) and the read stops after the page. A direct child is an entity whose current
 * parent_id is `parent`: the closure's depth-1 rows, which closure.ts keeps equal to them.
 */
const childPage = (sql: SqlClient, parent: string | null, limit: number, offset: number) =>
  parent === null
    ? sql<PageRow>`SELECT k.id, k.name, k.type, k.status, k.parent_id
        FROM entity_current k WHERE k.parent_id IS NULL AND k.status <> 'archived'
        ORDER BY lower(k.name), k.id LIMIT ${limit} OFFSET ${offset}`
    : sql<PageRow>`SELECT k.id, k.name, k.type, k.status, k.parent_id
        FROM entity_current k WHERE k.parent_id = ${parent} AND k.status <> 'archived'
        ORDER BY lower(k.name), k.id LIMIT ${limit} OFFSET ${offset}`

/**
 * entity_tree (graph.md §6): level 1 = one page of 50 direct children (top level without
 * parent); levels 2…depth add, node by node in order, up to 50 children each while the answer
 * holds fewer than 200 nodes. Every node carries children and hidden_children.
 *
 * Only what the answer shows is read: children are read for the parents that show some (each
 * shows min(50, children) in order until 200 nodes) — all of them for a parent with at most 50,
 * the first 50 in order for a larger one (at most four per level) — and children are counted for
 * the nodes put into the answer.
 */
export const entityTree = Effect.fn("Entities.tree")(function*(
  sql: SqlClient,
  q: { readonly scope: string; readonly parent: string | null; readonly depth?: number | undefined; readonly page?: number | undefined }
) {
  const depth = q.depth ?? 1
  const page = q.page ?? 1
  if (depth > TREE_MAX_DEPTH) {
    return yield* refuse("depth-limit", {
      message: `depth ${depth} is above the tree limit of ${TREE_MAX_DEPTH}`,
      remedy: `ask for depth ${TREE_MAX_DEPTH} at most, then expand a node by calling entity_tree again with its id`,
      next: nextForTreeDepth(q.parent),
      limit: TREE_MAX_DEPTH
    })
  }
  let path: Array<PathItem> = []
  if (q.parent !== null) {
    const row = yield* currentEntity(sql, q.parent)
    if (row === null) return yield* entityNotFound()
    path = yield* pathOf(sql, q.parent)
  }
  const offset = (page - 1) * TREE_PAGE_SIZE
  const firstPage = yield* childPage(sql, q.parent, TREE_PAGE_SIZE, offset)
  const firstCounts = yield* treeChildCounts(sql, firstPage.map((r) => r.id))
  const levelRows = q.parent === null
    ? yield* sql<{ level: number; count: number }>`SELECT c.depth + 1 AS level, count(*) AS count
        FROM entity_current t JOIN entity_closure c ON c.ancestor_id = t.id
        WHERE t.parent_id IS NULL AND t.status <> 'archived' AND c.depth BETWEEN 0 AND ${depth - 1}
          AND ${sql.literal(notArchived("c.descendant_id"))}
        GROUP BY c.depth ORDER BY c.depth`
    : yield* sql<{ level: number; count: number }>`SELECT c.depth AS level, count(*) AS count
        FROM entity_closure c
        WHERE c.ancestor_id = ${q.parent} AND c.depth BETWEEN 1 AND ${depth} AND ${sql.literal(notArchived("c.descendant_id"))}
        GROUP BY c.depth ORDER BY c.depth`
  const total = levelRows.find((l) => l.level === 1)?.count ?? 0

  const nodes: Array<Building> = firstPage.map((r) => ({
    ...r, children: firstCounts.get(r.id) ?? 0, level: 1, hidden_children: 0, shown: 0
  }))
  let frontier = nodes.slice()
  for (let level = 2; level <= depth && nodes.length < TREE_MAX_NODES && frontier.length > 0; level++) {
    // the parents that show children on this level: in order, each min(50, children), until 200
    const small: Array<string> = []
    const large: Array<string> = []
    let room = TREE_MAX_NODES - nodes.length
    for (const n of frontier) {
      if (room <= 0) break
      if (n.children > 0) {
        if (n.children > TREE_PAGE_SIZE) large.push(n.id)
        else small.push(n.id)
        room -= Math.min(TREE_PAGE_SIZE, n.children)
      }
    }
    if (small.length + large.length === 0) break
    const under = new Map<string, Array<PageRow>>()
    if (small.length > 0) {
      const rows = yield* sql<PageRow>`SELECT k.id, k.name, k.type, k.status, k.parent_id
        FROM entity_current k WHERE k.parent_id IN ${sql.in(small)} AND k.status <> 'archived'
        ORDER BY k.parent_id, lower(k.name), k.id`
      for (const r of rows) {
        const key = r.parent_id ?? ""
        under.set(key, [...(under.get(key) ?? []), r])
      }
    }
    for (const id of large) under.set(id, [...(yield* childPage(sql, id, TREE_PAGE_SIZE, 0))])
    const added: Array<Building> = []
    walk: for (const parent of frontier) {
      for (const r of (under.get(parent.id) ?? []).slice(0, TREE_PAGE_SIZE)) {
        if (nodes.length >= TREE_MAX_NODES) break walk
        const node: Building = { id: r.id, name: r.name, type: r.type, status: r.status, parent_id: r.parent_id, children: 0, level, hidden_children: 0, shown: 0 }
        nodes.push(node)
        added.push(node)
        parent.shown += 1
      }
    }
    const counts = yield* treeChildCounts(sql, added.map((n) => n.id))
    for (const n of added) n.children = counts.get(n.id) ?? 0
    frontier = added
  }
  // a node shows its current version's name: marked when a redaction touched that version
  const marks = yield* redactedOf(sql)
  const current = marks.none || nodes.length === 0 ? new Map<string, number>() : new Map(
    (yield* sql<{ id: string; version: number }>`SELECT id, version FROM entity_current WHERE id IN ${sql.in(nodes.map((n) => n.id))}`)
      .map((r) => [r.id, r.version]))
  // every answer marks what the policy adopted (gaps.md §13), the tree's nodes too
  const adoptions = yield* entityAdoptions(sql, nodes.map((n) => n.id))
  const out: Array<TreeNode> = nodes.map(({ shown, ...n }) => ({
    ...n, hidden_children: n.children - shown,
    ...redactedMark(marks.row("entity_version", n.id, current.get(n.id) ?? 0)),
    adoption: adoptions.get(n.id) ?? { kind: "person" }
  }))
  const nextPage = offset + firstPage.length < total ? page + 1 : null
  const answer: TreeAnswer = {
    scope: q.scope,
    parent: q.parent,
    depth,
    page,
    total,
    next_page: nextPage,
    levels: levelRows.map((l) => ({ level: l.level, count: l.count })),
    nodes: out,
    path,
    next: nextForTree(out, nextPage)
  }
  return answer
}, Effect.catchTag("SqlError", (e) => Effect.die(e)))
