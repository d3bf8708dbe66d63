/**
 * Entity writers (graph.md §4): create, move and update, each with the contract's checks in
 * their order, then one transaction: entity head (create), one version row, the closure
 * (closure.ts) and entity_fts (fts.ts). The only writer of `entity` and of agent versions of
 * `entity_version` (AT3). Trigger refusals are mapped to their codes as a backstop.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { AppConfig } from "../config/config.js"
import { triggerMessage } from "../db/errors.js"
import { ScopeStore } from "../db/scope-store.js"
import { formatEntityId, scopeOfGraphId } from "../contracts/ids.js"
import { nowInstant, todayIn } from "../contracts/time.js"
import { closureOnCreate, closureOnMove } from "./closure.js"
import { type Candidate, type Next, type PathItem, refuse } from "../contracts/errors.js"
import { DUPLICATE_SCORE, RESOLVE_MAX_CANDIDATES } from "./config.js"
import { syncEntityFts } from "./fts.js"
import { applyStructurePolicy, type PolicyPart } from "./structure-policy.js"
import { nextForCycle, nextForDuplicate, nextForWrite } from "./guidance.js"
import { normalize } from "./normalize.js"
import { storeOverridden } from "./overrides.js"
import { pathOf } from "./paths.js"
import { currentEntity, entityNotFound, entityOut, type EntityRow } from "./queries.js"
import { resolve } from "./resolve.js"
import { type CreateEntityRequest, type EntityOut, MAX_ALIASES, type MoveEntityRequest, type UpdateEntityRequest } from "./schemas.js"

/** Who writes: the grant and the channel (agents on mcp, feeders and imports on api). */
export interface Actor {
  readonly grantId: string
  readonly channel: "mcp" | "api"
}

/** entity.created_by by channel (graph.md §3.2, §10). */
export const CREATED_BY = { mcp: "agent", api: "import" } as const

export type CreateAnswer = { readonly created: true } & EntityOut & { readonly policy?: PolicyPart["policy"] } & { readonly path: Array<PathItem>; readonly next: Array<Next> }
export type MoveAnswer = { readonly moved: boolean } & EntityOut & { readonly policy?: PolicyPart["policy"] } & {
  readonly from_path: Array<PathItem>
  readonly path: Array<PathItem>
  readonly next: Array<Next>
}
export type UpdateAnswer = { readonly updated: boolean } & EntityOut & { readonly policy?: PolicyPart["policy"] } & { readonly path: Array<PathItem>; readonly next: Array<Next> }

const names = (path: ReadonlyArray<PathItem>): Array<string> => path.map((p) => p.name)

const validation = (path: string, message: string, remedy: string) =>
  refuse("validation-failed", { message: `request is invalid: ${path}: ${message}`, issues: [{ path, message }], remedy, next: [] })

// ---- checks (graph.md §4) ------------------------------------------------------------------

/** type in graph.entity_types (400 validation-failed). */
const checkType = (types: ReadonlyArray<string>, type: string) =>
  types.includes(type)
    ? Effect.void
    : Effect.fail(validation("type", `not an entity type of this instance (${types.join(", ")})`, `use one of the configured types: ${types.join(", ")}`))

/**
 * The parent: of this scope (scope-mismatch, decided on the id alone), present (reference-unknown),
 * not archived (parent-archived). Null for the top level.
 */
const checkParent = (sql: SqlClient, scope: string, parentId: string | null) =>
  Effect.gen(function*() {
    if (parentId === null) return null
    if (scopeOfGraphId(parentId) !== scope) {
      return yield* refuse("scope-mismatch", {
        message: `parent_id names an entity of another scope than ${scope}`,
        remedy: "an entity and its parent live in one scope: find the parent in this scope with entity_resolve",
        next: [{ tool: "entity_resolve", why: `find the parent in scope ${scope}` }]
      })
    }
    const parent = yield* currentEntity(sql, parentId)
    if (parent === null) {
      return yield* refuse("reference-unknown", {
        message: `parent_id ${parentId} is not an entity of scope ${scope}`,
        remedy: "find the parent with entity_resolve or entity_tree and use its id",
        next: [{ tool: "entity_resolve", why: "find the parent by its name" }, { tool: "entity_tree", why: "find the parent" }]
      })
    }
    if (parent.status === "archived") {
      return yield* refuse("parent-archived", {
        message: `the parent ${parentId} is archived`,
        remedy: "choose a parent that is not archived",
        next: [{ tool: "entity_tree", why: parent.parent_id === null ? "find another parent at the top level" : `find another parent under ${parent.parent_id}` }]
      })
    }
    return parent
  })

/** Level of an entity counted from the top level (1), through the closure. */
const levelOf = (sql: SqlClient, id: string) =>
  Effect.map(sql<{ n: number }>`SELECT count(*) AS n FROM entity_closure WHERE descendant_id = ${id}`, (r) => r[0]?.n ?? 0)

const checkDepth = (level: number, maxDepth: number, parentId: string | null) =>
  level <= maxDepth
    ? Effect.void
    : Effect.fail(refuse("depth-limit", {
      message: `this would put an entity at level ${level}; the tree has at most ${maxDepth} levels`,
      remedy: "choose a parent higher up in the tree",
      next: [{ tool: "entity_tree", why: parentId === null ? "see the top level" : `see the levels above ${parentId}` }],
      limit: maxDepth
    }))

const candidateOf = (sql: SqlClient, row: { id: string; name: string; type: string; status: Candidate["status"]; aliases: ReadonlyArray<string> }) =>
  Effect.map(pathOf(sql, row.id), (path): Candidate => ({
    id: row.id, name: row.name, type: row.type, status: row.status, aliases: [...row.aliases], path: names(path), score: 1, match: "exact"
  }))

/**
 * Literal duplicate: same parent, same type, same name case-insensitively (full Unicode lower
 * case) among non-archived current versions. force never overrides it.
 */
export const checkLiteral = (sql: SqlClient, q: { parentId: string | null; type: string; name: string; excludeId: string | null }) =>
  Effect.gen(function*() {
    const rows = q.parentId === null
      ? yield* sql<{ id: string; name: string; type: string; status: Candidate["status"]; aliases: string }>`
          SELECT id, name, type, status, aliases FROM entity_current WHERE parent_id IS NULL AND type = ${q.type} AND status <> 'archived'`
      : yield* sql<{ id: string; name: string; type: string; status: Candidate["status"]; aliases: string }>`
          SELECT id, name, type, status, aliases FROM entity_current WHERE parent_id = ${q.parentId} AND type = ${q.type} AND status <> 'archived'`
    const key = q.name.toLowerCase()
    const same = rows.find((r) => r.id !== q.excludeId && r.name.toLowerCase() === key)
    if (same === undefined) return
    const candidate = yield* candidateOf(sql, { ...same, aliases: JSON.parse(same.aliases) as Array<string> })
    return yield* refuse("duplicate-candidate", {
      message: `an entity of type ${q.type} with this name exists under the same parent; force does not override this`,
      remedy: "use the existing entity (see candidates) or choose another name",
      next: nextForDuplicate([candidate]),
      candidates: [candidate]
    })
  })

/** Similar duplicates: resolve with each text, same type, score ≥ 0.85, best per entity, ≤ 5. */
const similarCandidates = (sql: SqlClient, texts: ReadonlyArray<string>, type: string, excludeId: string | null) =>
  Effect.gen(function*() {
    const best = new Map<string, Candidate>()
    for (const q of texts) {
      if (normalize(q).length === 0) continue
      const found = yield* resolve(sql, excludeId === null
        ? { q, type, limit: RESOLVE_MAX_CANDIDATES }
        : { q, type, excludeId, limit: RESOLVE_MAX_CANDIDATES })
      for (const c of found) {
        if (c.score < DUPLICATE_SCORE || c.id === excludeId) continue
        const prior = best.get(c.id)
        if (prior === undefined || c.score > prior.score) best.set(c.id, c)
      }
    }
    return [...best.values()].sort((a, b) => b.score - a.score).slice(0, RESOLVE_MAX_CANDIDATES)
  })

/**
 * duplicate-candidate unless force with a reason; force without a reason → reason-missing.
 * Answers the candidates force overrode (none when there were none), to be stored with the version.
 */
const checkSimilar = (
  sql: SqlClient,
  q: { texts: ReadonlyArray<string>; type: string; excludeId: string | null; force: boolean; reason: string | undefined }
) =>
  Effect.gen(function*() {
    const candidates = yield* similarCandidates(sql, q.texts, q.type, q.excludeId)
    if (candidates.length === 0) return candidates
    if (!q.force) {
      return yield* refuse("duplicate-candidate", {
        message: `${candidates.length} similar ${q.type} entit${candidates.length === 1 ? "y exists" : "ies exist"} in this scope`,
        remedy: "use a candidate if one is meant; only if the person says the entity is different, call again with force: true and a reason",
        next: nextForDuplicate(candidates),
        candidates
      })
    }
    if (q.reason === undefined) {
      return yield* refuse("reason-missing", {
        message: "force: true needs a reason",
        remedy: "give the reason why the entity differs from the candidates, with force: true",
        next: nextForDuplicate(candidates),
        candidates
      })
    }
    return candidates
  })

const notArchived = (row: EntityRow) =>
  row.status === "archived"
    ? Effect.fail(refuse("entity-archived", {
      message: `the entity ${row.id} is archived; archived is final`,
      remedy: "create a new entity instead of changing an archived one",
      next: [{ tool: "entity_resolve", why: "check whether a current entity is meant" }]
    }))
    : Effect.void

/** The subject entity of a move or update, looked up in the named scope (else the one 404 body). */
const subject = (sql: SqlClient, scope: string, id: string) =>
  Effect.gen(function*() {
    const row = scopeOfGraphId(id) === scope ? yield* currentEntity(sql, id) : null
    if (row === null) return yield* entityNotFound()
    yield* notArchived(row)
    return row
  })

/** Trigger refusals (graph.md §3.2) as their codes: the checks above run first, this is the backstop. */
export const mapTrigger = (sql: SqlClient, id: string, parentId: string | null) => (e: SqlError) =>
  Effect.gen(function*() {
    switch (triggerMessage(e)) {
      case "cycle": {
        const entity = yield* pathOf(sql, id)
        const target = parentId === null ? [] : yield* pathOf(sql, parentId)
        return yield* refuse("cycle", {
          message: "the new parent lies inside the moved subtree",
          remedy: "choose a parent outside the entity's own subtree",
          next: nextForCycle(parentId ?? id),
          paths: { entity, target }
        })
      }
      case "parent-archived":
        return yield* refuse("parent-archived", { message: "the parent is archived", remedy: "choose a parent that is not archived", next: [] })
      case "terminal-state":
        return yield* refuse("entity-archived", { message: `the entity ${id} is archived; archived is final`, remedy: "create a new entity instead", next: [] })
      case "has-children":
        return yield* refuse("has-children", { message: "the entity has children that are not archived", remedy: "archive the children first", next: [] })
      default:
        return yield* Effect.die(e)
    }
  })

const dedupe = (list: ReadonlyArray<string>): Array<string> => [...new Set(list)]

/** The texts an agent wrote, by field, for the structure policy's checks. */
const agentTexts = (t: { name?: string | undefined; aliases?: ReadonlyArray<string>; reason?: string | undefined; evidence?: string | undefined }) => [
  ...(t.name === undefined ? [] : [{ field: "name", text: t.name }]),
  ...(t.aliases ?? []).map((a) => ({ field: "aliases", text: a })),
  ...(t.reason === undefined ? [] : [{ field: "reason", text: t.reason }]),
  ...(t.evidence === undefined ? [] : [{ field: "evidence", text: t.evidence }])
]

// ---- writers -------------------------------------------------------------------------------

/** Version 1 of a new entity as its creator writes it (the status and channel are the creator's). */
export interface FirstVersion {
  readonly id: string
  readonly type: string
  readonly name: string
  /** the aliases as stored JSON text */
  readonly aliases: string
  readonly parent_id: string | null
  readonly valid_from: string
  readonly evidence: string | null
  readonly changed_at: string
  readonly reason: string
}

/**
 * Who creates: entity.created_by and the writer of version 1. An agent's or import's version is
 * written here ('unconfirmed'); a person's comes from src/structure/** (AT3: person versions are
 * written there, born active on the approval channel).
 */
export interface Creator {
  readonly createdBy: "agent" | "import" | "human"
  /** the agent's channel, where the approval policy may adopt the create; null: a person's create, born confirmed */
  readonly channel: "mcp" | "api" | null
  readonly defaultReason: string
  readonly writeVersion: (sql: SqlClient, v: FirstVersion) => Effect.Effect<unknown, SqlError>
}

/** The agent's or import's version 1: unconfirmed, on its channel. */
const agentCreator = (by: Actor): Creator => ({
  createdBy: CREATED_BY[by.channel],
  channel: by.channel,
  defaultReason: `created via ${by.channel}`,
  writeVersion: (sql, v) =>
    sql`INSERT INTO entity_version (id, version, type, name, aliases, parent_id, status, valid_from, valid_to,
        evidence, change, channel, changed_by, changed_at, reason)
      VALUES (${v.id}, 1, ${v.type}, ${v.name}, ${v.aliases}, ${v.parent_id}, 'unconfirmed', ${v.valid_from}, NULL,
        ${v.evidence}, 'create', ${by.channel}, ${by.grantId}, ${v.changed_at}, ${v.reason})`.raw
})

/**
 * entity_create / POST /v1/entities. Order: type, parent (scope-mismatch, reference-unknown,
 * parent-archived), depth, literal duplicate, similar duplicate (force + reason); then entity,
 * version 1 unconfirmed, closure, the candidates force overrode, FTS in one transaction.
 */
export const createEntity = (req: CreateEntityRequest, by: Actor) => createEntityBy(req, agentCreator(by))

/**
 * The create with its checks for any creator (an agent, an import, a person on the structure page):
 * the checks in the order above, then entity, the creator's version 1, closure, overridden
 * candidates and FTS in one transaction.
 */
export const createEntityBy = Effect.fn("Entities.create")(function*(req: CreateEntityRequest, by: Creator) {
  const store = yield* ScopeStore
  const config = yield* AppConfig
  const graph = config.file.graph
  const now = yield* nowInstant
  const today = yield* todayIn(config.file.zone)
  const aliases = dedupe(req.aliases ?? [])
  yield* checkType(graph.entity_types, req.type)
  return yield* store.write(req.scope, ({ sql }) =>
    Effect.gen(function*() {
      yield* checkParent(sql, req.scope, req.parent_id)
      const level = req.parent_id === null ? 1 : (yield* levelOf(sql, req.parent_id)) + 1
      yield* checkDepth(level, graph.max_depth, req.parent_id)
      yield* checkLiteral(sql, { parentId: req.parent_id, type: req.type, name: req.name, excludeId: null })
      const overridden = yield* checkSimilar(sql, { texts: [req.name, ...aliases], type: req.type, excludeId: null, force: req.force === true, reason: req.reason })

      const next = yield* sql<{ seq: number }>`SELECT coalesce(max(seq), 0) + 1 AS seq FROM entity`
      const seq = next[0]?.seq ?? 1
      const id = formatEntityId(req.scope, seq)
      const reason = req.reason ?? by.defaultReason
      yield* Effect.gen(function*() {
        yield* sql`INSERT INTO entity (seq, id, scope, created_at, created_by)
          VALUES (${seq}, ${id}, ${req.scope}, ${now}, ${by.createdBy})`.raw
        yield* by.writeVersion(sql, {
          id, type: req.type, name: req.name, aliases: JSON.stringify(aliases), parent_id: req.parent_id, valid_from: today,
          evidence: req.evidence ?? null, changed_at: now, reason
        })
        yield* closureOnCreate(sql, id, req.parent_id)
      }).pipe(Effect.catchTag("SqlError", mapTrigger(sql, id, req.parent_id)))
      yield* storeOverridden(sql, id, 1, overridden)
      yield* syncEntityFts(sql, { seq, name: req.name, aliases })
      const policy = by.channel === null ? {} : yield* applyStructurePolicy(sql, {
        scope: req.scope, kind: "create", target: `entity/${id}@1`, channel: by.channel,
        texts: agentTexts({ name: req.name, aliases, reason: req.reason, evidence: req.evidence }),
        forcedDuplicate: overridden.length > 0, subtree: 0, now
      })

      const row = yield* currentEntity(sql, id)
      if (row === null) return yield* Effect.dieMessage("created entity not readable")
      const out = yield* entityOut(sql, row, config.file.public_url)
      const answer: CreateAnswer = { created: true, ...out, ...policy, path: yield* pathOf(sql, id), next: nextForWrite(id, req.parent_id) }
      return answer
    }))
})

/**
 * entity_move / POST /v1/entities/:id/move. Order: entity (404, entity-archived), new parent as
 * for create, same parent → moved: false (nothing written), cycle (both paths), depth of the
 * deepest moved node, literal duplicate under the new parent; then version (change move,
 * status unchanged) and the closure of the subtree.
 */
export const moveEntity = Effect.fn("Entities.move")(function*(id: string, req: MoveEntityRequest, by: Actor) {
  const store = yield* ScopeStore
  const config = yield* AppConfig
  const graph = config.file.graph
  const now = yield* nowInstant
  return yield* store.write(req.scope, ({ sql }) =>
    Effect.gen(function*() {
      const row = yield* subject(sql, req.scope, id)
      yield* checkParent(sql, req.scope, req.parent_id)
      const fromPath = yield* pathOf(sql, id)
      if (row.parent_id === req.parent_id) {
        const out = yield* entityOut(sql, row, config.file.public_url)
        const same: MoveAnswer = { moved: false, ...out, from_path: fromPath, path: fromPath, next: [] }
        return same
      }
      if (req.parent_id !== null) {
        const inside = yield* sql<{ n: number }>`SELECT count(*) AS n FROM entity_closure
          WHERE ancestor_id = ${id} AND descendant_id = ${req.parent_id}`
        if ((inside[0]?.n ?? 0) > 0) {
          return yield* refuse("cycle", {
            message: "the new parent lies inside the moved subtree",
            remedy: "choose a parent outside the entity's own subtree",
            next: nextForCycle(req.parent_id),
            paths: { entity: fromPath, target: yield* pathOf(sql, req.parent_id) }
          })
        }
      }
      const parentLevel = req.parent_id === null ? 0 : yield* levelOf(sql, req.parent_id)
      const height = yield* sql<{ h: number }>`SELECT coalesce(max(depth), 0) AS h FROM entity_closure WHERE ancestor_id = ${id}`
      yield* checkDepth(parentLevel + 1 + (height[0]?.h ?? 0), graph.max_depth, req.parent_id)
      yield* checkLiteral(sql, { parentId: req.parent_id, type: row.type, name: row.name, excludeId: id })

      const subtree = (yield* sql<{ n: number }>`SELECT count(*) AS n FROM entity_closure WHERE ancestor_id = ${id}`)[0]?.n ?? 1
      const reason = req.reason ?? `moved via ${by.channel}`
      yield* Effect.gen(function*() {
        yield* sql`INSERT INTO entity_version (id, version, type, name, aliases, parent_id, status, valid_from, valid_to,
            evidence, change, channel, changed_by, changed_at, reason)
          VALUES (${id}, ${row.version + 1}, ${row.type}, ${row.name}, ${JSON.stringify(row.aliases)}, ${req.parent_id},
            ${row.status}, ${row.valid_from}, ${row.valid_to}, ${row.evidence}, 'move', ${by.channel}, ${by.grantId}, ${now}, ${reason})`.raw
        yield* closureOnMove(sql, id, req.parent_id)
      }).pipe(Effect.catchTag("SqlError", mapTrigger(sql, id, req.parent_id)))
      const policy = yield* applyStructurePolicy(sql, {
        scope: req.scope, kind: "move", target: `entity/${id}@${row.version + 1}`, channel: by.channel,
        texts: agentTexts({ reason: req.reason }), forcedDuplicate: false, subtree, now
      })

      const moved = yield* currentEntity(sql, id)
      if (moved === null) return yield* Effect.dieMessage("moved entity not readable")
      const out = yield* entityOut(sql, moved, config.file.public_url)
      const answer: MoveAnswer = { moved: true, ...out, ...policy, from_path: fromPath, path: yield* pathOf(sql, id), next: nextForWrite(id, req.parent_id) }
      return answer
    }))
})

/**
 * entity_update / POST /v1/entities/:id/update: rename and add/remove aliases as one version
 * (change update, status unchanged). Order: entity (404, entity-archived), aliases to remove
 * present (validation-failed), nothing changed → updated: false, literal duplicate of a new
 * name, similar duplicates of the new name and the added aliases (force + reason).
 */
export const updateEntity = Effect.fn("Entities.update")(function*(id: string, req: UpdateEntityRequest, by: Actor) {
  const store = yield* ScopeStore
  const config = yield* AppConfig
  const now = yield* nowInstant
  return yield* store.write(req.scope, ({ sql }) =>
    Effect.gen(function*() {
      const row = yield* subject(sql, req.scope, id)
      const remove = dedupe(req.aliases_remove ?? [])
      const add = dedupe(req.aliases_add ?? [])
      for (const [i, a] of (req.aliases_remove ?? []).entries()) {
        if (!row.aliases.includes(a)) {
          return yield* validation(`aliases_remove[${i}]`, "the entity has no such alias", "remove only aliases the entity has (entity_path shows them)")
        }
      }
      for (const [i, a] of (req.aliases_add ?? []).entries()) {
        if (remove.includes(a)) {
          return yield* validation(`aliases_add[${i}]`, "is also in aliases_remove", "add or remove an alias, not both at once")
        }
      }
      const kept = row.aliases.filter((a) => !remove.includes(a))
      const added = add.filter((a) => !kept.includes(a))
      const aliases = [...kept, ...added]
      if (aliases.length > MAX_ALIASES) {
        return yield* validation("aliases_add", `an entity has at most ${MAX_ALIASES} aliases`, `remove aliases first; at most ${MAX_ALIASES}`)
      }
      const name = req.name ?? row.name
      const renamed = name !== row.name
      const path = yield* pathOf(sql, id)
      if (!renamed && JSON.stringify(aliases) === JSON.stringify(row.aliases)) {
        const out = yield* entityOut(sql, row, config.file.public_url)
        const same: UpdateAnswer = { updated: false, ...out, path, next: [] }
        return same
      }
      if (renamed) yield* checkLiteral(sql, { parentId: row.parent_id, type: row.type, name, excludeId: id })
      const overridden = yield* checkSimilar(sql, {
        texts: [...(renamed ? [name] : []), ...added], type: row.type, excludeId: id, force: req.force === true, reason: req.reason
      })

      const reason = req.reason ?? `updated via ${by.channel}`
      yield* sql`INSERT INTO entity_version (id, version, type, name, aliases, parent_id, status, valid_from, valid_to,
          evidence, change, channel, changed_by, changed_at, reason)
        VALUES (${id}, ${row.version + 1}, ${row.type}, ${name}, ${JSON.stringify(aliases)}, ${row.parent_id},
          ${row.status}, ${row.valid_from}, ${row.valid_to}, ${row.evidence}, 'update', ${by.channel}, ${by.grantId}, ${now}, ${reason})`.raw.pipe(
        Effect.catchTag("SqlError", mapTrigger(sql, id, row.parent_id))
      )
      yield* storeOverridden(sql, id, row.version + 1, overridden)
      yield* syncEntityFts(sql, { seq: row.seq, name, aliases })
      const policy = yield* applyStructurePolicy(sql, {
        scope: req.scope, kind: "update", target: `entity/${id}@${row.version + 1}`, channel: by.channel,
        texts: agentTexts({ name: renamed ? name : undefined, aliases: added, reason: req.reason }),
        forcedDuplicate: overridden.length > 0, subtree: 0, now
      })

      const updated = yield* currentEntity(sql, id)
      if (updated === null) return yield* Effect.dieMessage("updated entity not readable")
      const out = yield* entityOut(sql, updated, config.file.public_url)
      const answer: UpdateAnswer = { updated: true, ...out, ...policy, path: yield* pathOf(sql, id), next: nextForWrite(id, row.parent_id) }
      return answer
    }))
})
