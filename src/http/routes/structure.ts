/**
 * GET /v1/structure?scope= (list_structure, channel api): the pending structure changes.
 * POST /v1/reviews (review_structure) and POST /v1/entities/:id/archive (archive_entity): the
 * approval channel, a person with decide, same origin and the csrf token checked before anything
 * else of the request is read (as POST /v1/rules/:id/decision). The only importer of
 * src/structure/** besides the approval pages (AT2b).
 */
import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import { Effect, Schema } from "effect"
import { handle } from "../../auth/scope-check.js"
import { AppConfig } from "../../config/config.js"
import { ScopeStore } from "../../db/scope-store.js"
import { ENTITY_ID_RE, ScopeName, scopeOfGraphId } from "../../domain/ids.js"
import { refuse } from "../../graph/errors.js"
import { archiveEntity, formToArchive, parseArchive } from "../../structure/archive.js"
import { structureOf } from "../../structure/pending.js"
import { formToReview, parseReview, applyReview, scopeOfTarget } from "../../structure/review.js"
import { Api } from "../api.js"
import { decodeStrict } from "../input.js"
import { checkCsrf } from "./decision.js"

const StructureQuery = Schema.Struct({ scope: ScopeName })

export const listStructureCall = handle({
  channel: "api",
  operation: "list_structure",
  parse: ({ query }) => decodeStrict(StructureQuery, query, "query"),
  scopes: (q) => [q.scope],
  run: (q) =>
    Effect.gen(function*() {
      const store = yield* ScopeStore
      const config = yield* AppConfig
      const out = yield* store.read(q.scope, ({ sql }) => structureOf(sql, { scope: q.scope, publicUrl: config.file.public_url, approval: false }))
      return { status: 200, body: out, refs: out.pending.map((p) => p.ref) }
    })
})

/** Where a form post of the structure page lands: back on the page, at the item. */
const backTo = (scope: string, anchor: string) =>
  HttpServerResponse.redirect(`/approval/structure?scope=${encodeURIComponent(scope)}#${encodeURIComponent(anchor)}`, { status: 303 })

export const reviewCall = handle({
  channel: "approval",
  operation: "review_structure",
  parse: (input) =>
    Effect.gen(function*() {
      yield* checkCsrf(input)
      const raw = input.body.form ? formToReview(input.body.value as Record<string, string>) : input.body.value
      const req = yield* parseReview(raw)
      return { req, scope: scopeOfTarget(req.target), form: input.body.form }
    }),
  scopes: (p) => [p.scope],
  refs: (p) => [p.req.target],
  run: (p, ctx) =>
    Effect.map(applyReview(p.req, { grantId: ctx.grant.id, identity: ctx.identity.identity }), (result) => ({
      status: 200,
      body: result,
      ...(p.form ? { response: backTo(p.scope, result.current.replace(/^(entity|link)\//, "").replace(/@\d+$/, "")) } : {}),
      refs: [p.req.target, result.current]
    }))
})

const entityNotFound = () =>
  refuse("not-found", { message: "no such entity in this scope", remedy: "reload the structure page: archive only what it lists", next: [] })

export const archiveCall = handle({
  channel: "approval",
  operation: "archive_entity",
  parse: (input) =>
    Effect.gen(function*() {
      yield* checkCsrf(input)
      const id = input.params.id ?? ""
      const raw = input.body.form ? formToArchive(input.body.value as Record<string, string>) : input.body.value
      const req = yield* parseArchive(raw)
      if (!ENTITY_ID_RE.test(id)) return yield* entityNotFound()
      return { id, req, form: input.body.form }
    }),
  scopes: (p) => [scopeOfGraphId(p.id)],
  refs: (p) => [`entity/${p.id}`],
  run: (p, ctx) =>
    Effect.map(archiveEntity(p.id, p.req, { grantId: ctx.grant.id, identity: ctx.identity.identity }), (result) => ({
      status: 200,
      body: result,
      ...(p.form ? { response: backTo(scopeOfGraphId(p.id), p.id) } : {}),
      refs: [result.current]
    }))
})


export const StructureLive = HttpApiBuilder.group(Api, "structure", (h) =>
  h.handleRaw("list", ({ request }) => listStructureCall(request))
    .handleRaw("review", ({ request }) => reviewCall(request))
    .handleRaw("archive", ({ path, request }) => archiveCall(request, path)))
