/**
 * The entity routes of gaps.md §3 (channel api; an entity created here has created_by import):
 * GET /v1/entities/resolve, POST /v1/entities, GET /v1/entities/:id, GET /v1/entities (tree),
 * POST /v1/entities/:id/move, POST /v1/entities/:id/update. Each spec is shared with the MCP
 * tool of the same operation; refusals are GraphErrorBody (graph.md §8).
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { handle, spec } from "../../auth/scope-check.js"
import { AppConfig } from "../../config/config.js"
import { ScopeStore } from "../../db/scope-store.js"
import { ENTITY_ID_RE, scopeOfGraphId } from "../../contracts/ids.js"
import { type Actor, createEntity, moveEntity, updateEntity } from "../../graph/entities.js"
import { nextForResolve } from "../../graph/guidance.js"
import { pathOf } from "../../graph/paths.js"
import { entityNotFound, entityTree, readEntity } from "../../graph/queries.js"
import { resolve } from "../../graph/resolve.js"
import { CreateEntityRequest, MoveEntityRequest, ReadEntityQuery, ResolveQuery, TreeQuery, UpdateEntityRequest } from "../../graph/schemas.js"
import type { ChannelName } from "../../auth/identity.js"
import { Api } from "../api.js"
import { decodeStrict } from "../input.js"

const entityRef = (id: string): string => `entity/${id}`

/** The entity id of the path; a malformed id is the same 404 as an unknown one. */
const idOf = (params: Readonly<Record<string, string>>) =>
  Effect.suspend(() => {
    const id = params.id ?? ""
    return ENTITY_ID_RE.test(id) ? Effect.succeed(id) : Effect.fail(entityNotFound())
  })

/** Writers take mcp or api; the approval channel never reaches them (no propose right there). */
const actorOf = (grantId: string, channel: ChannelName): Actor => ({ grantId, channel: channel === "mcp" ? "mcp" : "api" })

export const resolveSpec = spec({
  operation: "resolve_entity",
  parse: ({ query }) => decodeStrict(ResolveQuery, query, "query"),
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
export const resolveCall = handle({ channel: "api", ...resolveSpec })

export const createSpec = spec({
  operation: "create_entity",
  parse: ({ body }) => decodeStrict(CreateEntityRequest, body.value, "entity"),
  scopes: (req) => [req.scope],
  refs: (req) => (req.parent_id === null ? [] : [entityRef(req.parent_id)]),
  run: (req, ctx) =>
    Effect.map(createEntity(req, actorOf(ctx.grant.id, ctx.channel)), (created) => ({
      status: 201, body: created, refs: [created.ref]
    }))
})
export const createCall = handle({ channel: "api", ...createSpec })

export const readSpec = spec({
  operation: "read_entity",
  parse: ({ params, query }) =>
    Effect.gen(function*() {
      const id = yield* idOf(params)
      const q = yield* decodeStrict(ReadEntityQuery, query, "query")
      return { id, scope: q.scope ?? scopeOfGraphId(id) }
    }),
  scopes: (p) => [p.scope],
  refs: (p) => [entityRef(p.id)],
  run: (p) =>
    Effect.gen(function*() {
      // an id of another scope than the one named is the same 404 as an unknown one
      if (scopeOfGraphId(p.id) !== p.scope) return yield* entityNotFound()
      const store = yield* ScopeStore
      const config = yield* AppConfig
      const read = yield* store.read(p.scope, ({ sql }) => readEntity(sql, p.id, config.file.public_url))
      return { status: 200, body: read, refs: [read.ref] }
    })
})
export const readCall = handle({ channel: "api", ...readSpec })

export const treeSpec = spec({
  operation: "list_structure",
  parse: ({ query }) => decodeStrict(TreeQuery, query, "query"),
  scopes: (q) => [q.scope],
  refs: (q) => (q.parent === undefined ? [] : [entityRef(q.parent)]),
  run: (q) =>
    Effect.gen(function*() {
      const store = yield* ScopeStore
      if (q.parent !== undefined && scopeOfGraphId(q.parent) !== q.scope) return yield* entityNotFound()
      const tree = yield* store.read(q.scope, ({ sql }) =>
        entityTree(sql, { scope: q.scope, parent: q.parent ?? null, depth: q.depth, page: q.page }))
      return { status: 200, body: tree, refs: tree.nodes.map((n) => entityRef(n.id)) }
    })
})
export const treeCall = handle({ channel: "api", ...treeSpec })

export const moveSpec = spec({
  operation: "move_entity",
  parse: ({ params, body }) =>
    Effect.gen(function*() {
      const id = yield* idOf(params)
      const req = yield* decodeStrict(MoveEntityRequest, body.value, "move")
      return { id, req }
    }),
  scopes: (p) => [p.req.scope],
  refs: (p) => [entityRef(p.id)],
  run: (p, ctx) =>
    Effect.map(moveEntity(p.id, p.req, actorOf(ctx.grant.id, ctx.channel)), (moved) => ({
      status: 200, body: moved, refs: [moved.ref]
    }))
})
export const moveCall = handle({ channel: "api", ...moveSpec })

export const updateSpec = spec({
  operation: "update_entity",
  parse: ({ params, body }) =>
    Effect.gen(function*() {
      const id = yield* idOf(params)
      const req = yield* decodeStrict(UpdateEntityRequest, body.value, "update")
      return { id, req }
    }),
  scopes: (p) => [p.req.scope],
  refs: (p) => [entityRef(p.id)],
  run: (p, ctx) =>
    Effect.map(updateEntity(p.id, p.req, actorOf(ctx.grant.id, ctx.channel)), (updated) => ({
      status: 200, body: updated, refs: [updated.ref]
    }))
})
export const updateCall = handle({ channel: "api", ...updateSpec })

export const EntitiesLive = HttpApiBuilder.group(Api, "entities", (h) =>
  h.handleRaw("resolve", ({ request }) => resolveCall(request))
    .handleRaw("create", ({ request }) => createCall(request))
    .handleRaw("tree", ({ request }) => treeCall(request))
    .handleRaw("read", ({ request, path }) => readCall(request, path))
    .handleRaw("move", ({ request, path }) => moveCall(request, path))
    .handleRaw("update", ({ request, path }) => updateCall(request, path)))
