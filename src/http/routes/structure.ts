/**
 * GET /v1/structure?scope= (list_structure, channel api): the pending structure changes.
 * POST /v1/reviews (review_structure) and POST /v1/entities/:id/archive (archive_entity): the
 * approval channel, a person with decide, same origin and the csrf token checked before anything
 * else of the request is read (as POST /v1/rules/:id/decision). The only importer of
 * src/structure/** besides the approval pages (AT2b).
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Schema } from "effect"
import { asPageForFormPost } from "../../approval/error-page.js"
import { archiveFromForm, reviewFromForm } from "../../approval/structure-form.js"
import { handle } from "../../auth/scope-check.js"
import { AppConfig } from "../../config/config.js"
import { ScopeStore } from "../../db/scope-store.js"
import { ENTITY_ID_RE, ScopeName, scopeOfGraphId } from "../../contracts/ids.js"
import { refuse } from "../../contracts/errors.js"
import { LINK_REF_RE } from "../../graph/link-types.js"
import { ENTITY_VERSION_REF_RE } from "../../graph/review-schemas.js"
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

/** A form post of the approval pages: its target names the scope; reviewed (and refused) on its page, in run. */
const formTarget = (form: Readonly<Record<string, string>>): string | null => {
  const target = form.target ?? ""
  return ENTITY_VERSION_REF_RE.test(target) || LINK_REF_RE.test(target) ? target : null
}

export const reviewCall = handle({
  channel: "approval",
  operation: "review_structure",
  parse: (input) =>
    Effect.gen(function*() {
      yield* checkCsrf(input)
      if (input.body.form) {
        const form = input.body.value as Record<string, string>
        const target = formTarget(form)
        if (target !== null) return { form, target, scope: scopeOfTarget(target) } as const
      }
      const raw = input.body.form ? formToReview(input.body.value as Record<string, string>) : input.body.value
      const req = yield* parseReview(raw)
      return { req, target: req.target, scope: scopeOfTarget(req.target) } as const
    }),
  scopes: (p) => [p.scope],
  refs: (p) => [p.target],
  run: (p, ctx) =>
    "form" in p
      ? reviewFromForm(p.scope, p.form, ctx)
      : Effect.map(applyReview(p.req, { grantId: ctx.grant.id, identity: ctx.identity.identity }), (result) => ({
        status: 200,
        body: result,
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
      if (input.body.form && ENTITY_ID_RE.test(id)) return { id, form: input.body.value as Record<string, string> } as const
      const raw = input.body.form ? formToArchive(input.body.value as Record<string, string>) : input.body.value
      const req = yield* parseArchive(raw)
      if (!ENTITY_ID_RE.test(id)) return yield* entityNotFound()
      return { id, req } as const
    }),
  scopes: (p) => [scopeOfGraphId(p.id)],
  refs: (p) => [`entity/${p.id}`],
  run: (p, ctx) =>
    "form" in p
      ? archiveFromForm(p.id, scopeOfGraphId(p.id), p.form, ctx)
      : Effect.map(archiveEntity(p.id, p.req, { grantId: ctx.grant.id, identity: ctx.identity.identity }), (result) => ({
        status: 200,
        body: result,
        refs: [result.current]
      }))
})


export const StructureLive = HttpApiBuilder.group(Api, "structure", (h) =>
  h.handleRaw("list", ({ request }) => listStructureCall(request))
    .handleRaw("review", ({ request }) => Effect.flatMap(reviewCall(request), asPageForFormPost(request)))
    .handleRaw("archive", ({ path, request }) => Effect.flatMap(archiveCall(request, path), asPageForFormPost(request))))
