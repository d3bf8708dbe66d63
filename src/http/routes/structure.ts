/**
 * GET /v1/structure?scope= (list_structure, channel api): the pending structure changes.
 * POST /v1/reviews (review_structure) and POST /v1/entities/:id/archive (archive_entity): the
 * approval channel, a person with decide, same origin and the csrf token checked before anything
 * else of the request is read (as POST /v1/rules/:id/decision). The only importer of
 * src/structure/** besides the approval pages (AT2b).
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { asPageForFormPost } from "../../approval/error-page.js"
import { archiveFromForm, reviewFromForm } from "../../approval/structure-form.js"
import { CurrentCaller } from "../../auth/caller.js"
import { AppConfig } from "../../config/config.js"
import { ScopeStore } from "../../db/scope-store.js"
import { ENTITY_ID_RE, scopeOfGraphId } from "../../contracts/ids.js"
import { refuse } from "../../contracts/errors.js"
import { LINK_REF_RE } from "../../graph/link-types.js"
import { type ArchiveRequest, ENTITY_VERSION_REF_RE, type ReviewRequest } from "../../graph/review-schemas.js"
import { archiveEntity, formToArchive, parseArchive } from "../../structure/archive.js"
import { structureOf } from "../../structure/pending.js"
import { formToReview, parseReview, applyReview, scopeOfTarget } from "../../structure/review.js"
import { operation } from "../../auth/operation.js"
import { retractStructure } from "../../operations/retract.js"
import { ScopeInput } from "../../domain/rule-schemas.js"
import { Api } from "../api.js"
import { operationRoute, serveRoute } from "../handle.js"
import { checkCsrf } from "./decision.js"

/** list_structure (GET /v1/structure): the pending structure changes of a scope, newest first. */
export const listStructure = operation({
  name: "list_structure",
  right: "read",
  input: ScopeInput,
  label: "query",
  scopes: (q) => [q.scope],
  run: (q) =>
    Effect.gen(function*() {
      const store = yield* ScopeStore
      const config = yield* AppConfig
      const out = yield* store.read(q.scope, ({ sql }) => structureOf(sql, { scope: q.scope, publicUrl: config.file.public_url, approval: false }))
      return { status: 200, body: out, refs: out.pending.map((p) => p.ref) }
    })
})
const listStructureRoute = operationRoute("api", listStructure, "query")
const retractRoute = operationRoute("api", retractStructure, "body")

/** A form post of the approval pages: its target names the scope; reviewed (and refused) on its page, in run. */
const formTarget = (form: Readonly<Record<string, string>>): string | null => {
  const target = form.target ?? ""
  return ENTITY_VERSION_REF_RE.test(target) || LINK_REF_RE.test(target) ? target : null
}

type ReviewInput =
  | { readonly form: Readonly<Record<string, string>>; readonly target: string; readonly scope: string }
  | { readonly req: ReviewRequest; readonly target: string; readonly scope: string }

export const reviewRoute = serveRoute({
  channel: "approval",
  call: {
    name: "review_structure",
    right: "decide",
    scopes: (p: ReviewInput) => [p.scope],
    refs: (p: ReviewInput) => [p.target],
    run: (p: ReviewInput) =>
      "form" in p
        ? reviewFromForm(p.scope, p.form)
        : Effect.gen(function*() {
          const caller = yield* CurrentCaller
          const result = yield* applyReview(p.req, { grantId: caller.grant.id, identity: caller.identity.identity })
          return { status: 200, body: result, refs: [p.req.target, result.current] }
        })
  },
  parse: (input) =>
    Effect.gen(function*() {
      yield* checkCsrf(input)
      if (input.body.form) {
        const form = input.body.value as Record<string, string>
        const target = formTarget(form)
        if (target !== null) return { form, target, scope: scopeOfTarget(target) } satisfies ReviewInput
      }
      const raw = input.body.form ? formToReview(input.body.value as Record<string, string>) : input.body.value
      const req = yield* parseReview(raw)
      return { req, target: req.target, scope: scopeOfTarget(req.target) } satisfies ReviewInput
    })
})

const entityNotFound = () =>
  refuse("not-found", { message: "no such entity in this scope", remedy: "reload the structure page: archive only what it lists", next: [] })

type ArchiveInput =
  | { readonly id: string; readonly form: Readonly<Record<string, string>> }
  | { readonly id: string; readonly req: ArchiveRequest }

export const archiveRoute = serveRoute({
  channel: "approval",
  call: {
    name: "archive_entity",
    right: "decide",
    scopes: (p: ArchiveInput) => [scopeOfGraphId(p.id)],
    refs: (p: ArchiveInput) => [`entity/${p.id}`],
    run: (p: ArchiveInput) =>
      "form" in p
        ? archiveFromForm(p.id, scopeOfGraphId(p.id), p.form)
        : Effect.gen(function*() {
          const caller = yield* CurrentCaller
          const result = yield* archiveEntity(p.id, p.req, { grantId: caller.grant.id, identity: caller.identity.identity })
          return { status: 200, body: result, refs: [result.current] }
        })
  },
  parse: (input) =>
    Effect.gen(function*() {
      yield* checkCsrf(input)
      const id = input.params.id ?? ""
      if (input.body.form && ENTITY_ID_RE.test(id)) return { id, form: input.body.value as Record<string, string> } satisfies ArchiveInput
      const raw = input.body.form ? formToArchive(input.body.value as Record<string, string>) : input.body.value
      const req = yield* parseArchive(raw)
      if (!ENTITY_ID_RE.test(id)) return yield* entityNotFound()
      return { id, req } satisfies ArchiveInput
    })
})


export const StructureLive = HttpApiBuilder.group(Api, "structure", (h) =>
  h.handleRaw("list", ({ request }) => listStructureRoute(request))
    .handleRaw("review", ({ request }) => Effect.flatMap(reviewRoute(request), asPageForFormPost(request)))
    .handleRaw("archive", ({ path, request }) => Effect.flatMap(archiveRoute(request, path), asPageForFormPost(request)))
    .handleRaw("retract", ({ path, request }) => retractRoute(request, path)))
