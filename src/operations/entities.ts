/**
 * The entity operations of gaps.md §3 / graph.md §9.2 (an entity created over api has created_by
 * import, over mcp agent): resolve_entity, create_entity, read_entity, list_structure (the tree),
 * move_entity, update_entity. Refusals are GraphErrorBody (graph.md §8); a malformed entity id is
 * the same 404 as an unknown one.
 */
import { Effect } from "effect"
import { CurrentCaller } from "../auth/caller.js"
import type { ChannelName } from "../auth/identity.js"
import { operation } from "../auth/operation.js"
import { AppConfig } from "../config/config.js"
import { ENTITY_ID_RE, scopeOfGraphId } from "../contracts/ids.js"
import { ScopeStore } from "../db/scope-store.js"
import { type Actor, createEntity as create, moveEntity as move, updateEntity as update } from "../graph/entities.js"
import { nextForResolve } from "../graph/guidance.js"
import { pathOf } from "../graph/paths.js"
import { entityNotFound, entityTree as tree, readEntity as read } from "../graph/queries.js"
import { resolve } from "../graph/resolve.js"
import { CreateEntityRequest, MoveEntityInput, ReadEntityInput, ResolveQuery, TreeQuery, UpdateEntityInput } from "../graph/schemas.js"
import { withForeignScopes } from "./foreign-scopes.js"

const entityRef = (id: string): string => `entity/${id}`

/** The scope named by an entity id (none for a malformed one: that is the same 404 as an unknown id). */
const idScopes = (...ids: ReadonlyArray<string | null | undefined>): Array<string> =>
  ids.flatMap((id) => (typeof id === "string" && ENTITY_ID_RE.test(id) ? [scopeOfGraphId(id)] : []))

/** A malformed entity id is the same 404 as an unknown one. */
const checkId = (input: { readonly id: string }) => (ENTITY_ID_RE.test(input.id) ? Effect.void : Effect.fail(entityNotFound()))

/** Writers take mcp or api; the approval channel never reaches them (no propose right there). */
const actor = Effect.map(CurrentCaller, (c): Actor => ({ grantId: c.grant.id, channel: (c.channel satisfies ChannelName) === "mcp" ? "mcp" : "api" }))

export const resolveEntity = operation({
  name: "resolve_entity",
  right: "read",
  input: ResolveQuery,
  label: "query",
  scopes: (q) => [q.scope],
  run: (q) =>
    Effect.gen(function*() {
      const store = yield* ScopeStore
      return yield* store.read(q.scope, ({ sql }) =>
        Effect.gen(function*() {
          const candidates = yield* resolve(sql, { q: q.q, type: q.type ?? null })
          const first = candidates[0]
          const path = first === undefined ? [] : yield* pathOf(sql, first.id)
          return {
            status: 200,
            body: { scope: q.scope, candidates, path, next: nextForResolve(candidates) },
            refs: candidates.map((c) => entityRef(c.id))
          }
        }))
    })
})

export const createEntity = operation({
  name: "create_entity",
  right: "propose",
  input: CreateEntityRequest,
  label: "entity",
  scopes: (req, caller) => withForeignScopes(req.scope, idScopes(req.parent_id), caller),
  refs: (req) => (req.parent_id === null ? [] : [entityRef(req.parent_id)]),
  run: (req) =>
    Effect.gen(function*() {
      const created = yield* create(req, yield* actor)
      return { status: 201, body: created, refs: [created.ref] }
    })
})

export const readEntity = operation({
  name: "read_entity",
  right: "read",
  input: ReadEntityInput,
  label: "query",
  check: checkId,
  scopes: (p, caller) => withForeignScopes(p.scope ?? scopeOfGraphId(p.id), idScopes(p.id), caller),
  refs: (p) => [entityRef(p.id)],
  run: (p) =>
    Effect.gen(function*() {
      const scope = p.scope ?? scopeOfGraphId(p.id)
      // an id of another scope than the one named is the same 404 as an unknown one
      if (scopeOfGraphId(p.id) !== scope) return yield* entityNotFound()
      const store = yield* ScopeStore
      const config = yield* AppConfig
      const entity = yield* store.read(scope, ({ sql }) => read(sql, p.id, config.file.public_url))
      return { status: 200, body: entity, refs: [entity.ref] }
    })
})

export const entityTree = operation({
  name: "list_structure",
  right: "read",
  input: TreeQuery,
  label: "query",
  scopes: (q, caller) => withForeignScopes(q.scope, idScopes(q.parent), caller),
  refs: (q) => (q.parent === undefined ? [] : [entityRef(q.parent)]),
  run: (q) =>
    Effect.gen(function*() {
      const store = yield* ScopeStore
      if (q.parent !== undefined && scopeOfGraphId(q.parent) !== q.scope) return yield* entityNotFound()
      const answer = yield* store.read(q.scope, ({ sql }) =>
        tree(sql, { scope: q.scope, parent: q.parent ?? null, depth: q.depth, page: q.page }))
      return { status: 200, body: answer, refs: answer.nodes.map((n) => entityRef(n.id)) }
    })
})

export const moveEntity = operation({
  name: "move_entity",
  right: "propose",
  input: MoveEntityInput,
  label: "move",
  check: checkId,
  scopes: (p, caller) => withForeignScopes(p.scope, idScopes(p.id, p.parent_id), caller),
  refs: (p) => [entityRef(p.id)],
  run: ({ id, ...req }) =>
    Effect.gen(function*() {
      const moved = yield* move(id, req, yield* actor)
      return { status: 200, body: moved, refs: [moved.ref] }
    })
})

export const updateEntity = operation({
  name: "update_entity",
  right: "propose",
  input: UpdateEntityInput,
  label: "update",
  check: checkId,
  scopes: (p, caller) => withForeignScopes(p.scope, idScopes(p.id), caller),
  refs: (p) => [entityRef(p.id)],
  run: ({ id, ...req }) =>
    Effect.gen(function*() {
      const updated = yield* update(id, req, yield* actor)
      return { status: 200, body: updated, refs: [updated.ref] }
    })
})
