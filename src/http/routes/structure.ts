/**
 * GET /v1/structure?scope= (list_structure, channel api): the pending structure changes.
 * POST /v1/reviews (review_structure) and POST /v1/entities/:id/archive (archive_entity): the
 * approval channel, a person with decide, same origin and the csrf token checked before anything
 * else of the request is read (as POST /v1/rules/:id/decision); so are a person's corrections
 * (POST /v1/structure/entities, /v1/structure/links, /v1/links/:id/close,
 * /v1/entities/:id/unarchive). The only importer of src/structure/** besides the approval pages (AT2b).
 */
import { HttpApiBuilder } from "@effect/platform"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { asPageForFormPost } from "../../approval/error-page.js"
import { reviewManyFromForm, selectedOf } from "../../approval/bulk-form.js"
import { closeLinkFromForm, createEntityFromForm, createLinkFromForm, unarchiveFromForm } from "../../approval/structure-corrections-form.js"
import { archiveFromForm, reviewFromForm } from "../../approval/structure-form.js"
import { CurrentCaller } from "../../auth/caller.js"
import { AppConfig } from "../../config/config.js"
import { ScopeStore } from "../../db/scope-store.js"
import { isBulkBody } from "../../contracts/bulk.js"
import { ENTITY_ID_RE, LINK_ID_RE, SCOPE_NAME_RE, scopeOfGraphId } from "../../contracts/ids.js"
import { type DomainError, refuse } from "../../contracts/errors.js"
import { LINK_REF_RE } from "../../graph/link-types.js"
import { type ArchiveRequest, ENTITY_VERSION_REF_RE, type ReviewRequest } from "../../graph/review-schemas.js"
import { archiveEntity, formToArchive, parseArchive } from "../../structure/archive.js"
import { closeLink, formToCloseLink, parseCloseLink } from "../../structure/close-link.js"
import { createEntityByPerson, formToPersonEntity, parsePersonEntity } from "../../structure/create-entity.js"
import { createLinkByPerson, formToPersonLink, parsePersonLink } from "../../structure/create-link.js"
import { formToUnarchive, parseUnarchive, unarchiveEntity } from "../../structure/unarchive.js"
import { structureOf } from "../../structure/pending.js"
import { applyReview, applyReviews, formToReview, parseReview, parseReviews, scopeOfTarget } from "../../structure/review.js"
import { operation, type OperationName, type Outcome } from "../../auth/operation.js"
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
  | { readonly bulkForm: Readonly<Record<string, string>>; readonly scope: string; readonly scopes: ReadonlyArray<string> }
  | { readonly reqs: ReadonlyArray<ReviewRequest>; readonly scopes: ReadonlyArray<string> }

const scopesOf = (p: ReviewInput): ReadonlyArray<string> => ("scopes" in p ? p.scopes : [p.scope])

const targetsOf = (p: ReviewInput): ReadonlyArray<string> =>
  "reqs" in p ? p.reqs.map((r) => r.target) : "bulkForm" in p ? selectedOf(p.bulkForm).map(([t]) => t) : [p.target]

const bulkScope = (form: Readonly<Record<string, string>>) =>
  SCOPE_NAME_RE.test(form.scope ?? "")
    ? Effect.succeed(form.scope ?? "")
    : Effect.fail(refuse("validation-failed", {
      message: "reviews is invalid: scope: must name the scope of the form", issues: [{ path: "scope", message: "must name the scope of the form" }],
      remedy: "reload the structure page", next: []
    }))

/**
 * POST /v1/reviews: one review `{target, verdict, reason?}`, or several of one scope `{items:
 * [...]}` in one transaction (all or nothing, the refused item named), counted as one decision by
 * the rate limit. A form post of the structure page (one item, or the bulk form with `bulk`) is
 * reviewed (and refused) on its page.
 */
export const reviewRoute = serveRoute({
  channel: "approval",
  call: {
    name: "review_structure",
    right: "decide",
    // more than one scope is 400 multiple-scopes-without-flag
    scopes: scopesOf,
    refs: targetsOf,
    run: (p: ReviewInput) => {
      if ("form" in p) return reviewFromForm(p.scope, p.form)
      if ("bulkForm" in p) return reviewManyFromForm(p.scope, p.bulkForm)
      return Effect.gen(function*() {
        const caller = yield* CurrentCaller
        const person = { grantId: caller.grant.id, identity: caller.identity.identity }
        if ("reqs" in p) {
          const result = yield* applyReviews(p.reqs, person)
          return { status: 200, body: result as unknown, refs: [...p.reqs.map((r) => r.target), ...result.current] }
        }
        const result = yield* applyReview(p.req, person)
        return { status: 200, body: result as unknown, refs: [p.req.target, result.current] }
      })
    }
  },
  parse: (input) =>
    Effect.gen(function*() {
      yield* checkCsrf(input)
      if (input.body.form) {
        const form = input.body.value as Record<string, string>
        if (form.bulk === "1") {
          const scope = yield* bulkScope(form)
          // a selected target of another scope than the form's is refused by the scope check, never reviewed
          const named = selectedOf(form).map(([t]) => (ENTITY_VERSION_REF_RE.test(t) || LINK_REF_RE.test(t) ? scopeOfTarget(t) : scope))
          return { bulkForm: form, scope, scopes: [...new Set([scope, ...named])] } satisfies ReviewInput
        }
        const target = formTarget(form)
        if (target !== null) return { form, target, scope: scopeOfTarget(target) } satisfies ReviewInput
      }
      if (!input.body.form && isBulkBody(input.body.value)) {
        const reqs = yield* parseReviews(input.body.value)
        return { reqs, scopes: [...new Set(reqs.map((r) => scopeOfTarget(r.target)))] } satisfies ReviewInput
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


// ---- a person's corrections (gaps.md §13): create an entity or a link (the scope in the body),
// close a link or unarchive an entity (the id in the path); a form post is run on its page

type Form = Readonly<Record<string, string>>

/** A person of the approval channel: the grant and the verified e-mail. */
const personOf = Effect.map(CurrentCaller, (c) => ({ grantId: c.grant.id, identity: c.identity.identity }))
type Person = Effect.Effect.Success<typeof personOf>

/** A form names its scope in a field; a malformed one is refused as JSON would be, before anything is written. */
const formScope = (form: Form): string | null => (typeof form.scope === "string" && SCOPE_NAME_RE.test(form.scope) ? form.scope : null)

/** A create: the scope in the body. */
const createRoute = <Q extends { readonly scope: string }, A, R>(c: {
  readonly name: OperationName
  readonly parse: (raw: unknown) => Effect.Effect<Q, DomainError>
  readonly formTo: (form: Record<string, string>) => unknown
  readonly fromForm: (scope: string, form: Form) => Effect.Effect<Outcome, DomainError | SqlError, R | CurrentCaller>
  readonly write: (req: Q, person: Person) => Effect.Effect<A, DomainError | SqlError, R>
  readonly ref: (result: A) => string
}) => {
  type Input = { readonly scope: string; readonly form: Form } | { readonly scope: string; readonly req: Q }
  return serveRoute({
    channel: "approval",
    call: {
      name: c.name,
      right: "decide",
      scopes: (p: Input) => [p.scope],
      run: (p: Input): Effect.Effect<Outcome, DomainError | SqlError, R | CurrentCaller> =>
        "form" in p
          ? c.fromForm(p.scope, p.form)
          : Effect.gen(function*() {
            const result = yield* c.write(p.req, yield* personOf)
            return { status: 201, body: result, refs: [c.ref(result)] } satisfies Outcome
          })
    },
    parse: (input) =>
      Effect.gen(function*() {
        yield* checkCsrf(input)
        if (input.body.form) {
          const form = input.body.value as Record<string, string>
          const scope = formScope(form)
          if (scope !== null) return { scope, form } satisfies Input
        }
        const req = yield* c.parse(input.body.form ? c.formTo(input.body.value as Record<string, string>) : input.body.value)
        return { scope: req.scope, req } satisfies Input
      })
  })
}

/** A change of an existing entity or link: its id in the path (a malformed one is the 404 of an unknown one). */
const changeRoute = <Q, A, R>(c: {
  readonly name: OperationName
  readonly kind: "entity" | "link"
  readonly idRe: RegExp
  readonly notFound: () => DomainError
  readonly parse: (raw: unknown) => Effect.Effect<Q, DomainError>
  readonly formTo: (form: Record<string, string>) => unknown
  readonly fromForm: (id: string, scope: string, form: Form) => Effect.Effect<Outcome, DomainError | SqlError, R | CurrentCaller>
  readonly write: (id: string, req: Q, person: Person) => Effect.Effect<A, DomainError | SqlError, R>
  readonly ref: (result: A) => string
}) => {
  type Input = { readonly id: string; readonly form: Form } | { readonly id: string; readonly req: Q }
  return serveRoute({
    channel: "approval",
    call: {
      name: c.name,
      right: "decide",
      scopes: (p: Input) => [scopeOfGraphId(p.id)],
      refs: (p: Input) => [`${c.kind}/${p.id}`],
      run: (p: Input): Effect.Effect<Outcome, DomainError | SqlError, R | CurrentCaller> =>
        "form" in p
          ? c.fromForm(p.id, scopeOfGraphId(p.id), p.form)
          : Effect.gen(function*() {
            const result = yield* c.write(p.id, p.req, yield* personOf)
            return { status: 200, body: result, refs: [c.ref(result)] } satisfies Outcome
          })
    },
    parse: (input) =>
      Effect.gen(function*() {
        yield* checkCsrf(input)
        const id = input.params.id ?? ""
        if (input.body.form && c.idRe.test(id)) return { id, form: input.body.value as Record<string, string> } satisfies Input
        const req = yield* c.parse(input.body.form ? c.formTo(input.body.value as Record<string, string>) : input.body.value)
        if (!c.idRe.test(id)) return yield* Effect.fail(c.notFound())
        return { id, req } satisfies Input
      })
  })
}

const linkNotFound = () =>
  refuse("not-found", { message: "no such link in this scope", remedy: "reload the structure page: close only what it lists", next: [] })

export const createEntityRoute = createRoute({
  name: "create_entity", parse: parsePersonEntity, formTo: formToPersonEntity, fromForm: createEntityFromForm, write: createEntityByPerson, ref: (r) => r.ref
})

export const createLinkRoute = createRoute({
  name: "propose_link", parse: parsePersonLink, formTo: formToPersonLink, fromForm: createLinkFromForm, write: createLinkByPerson, ref: (r) => r.review.target
})

export const closeLinkRoute = changeRoute({
  name: "review_structure", kind: "link", idRe: LINK_ID_RE, notFound: linkNotFound,
  parse: parseCloseLink, formTo: formToCloseLink, fromForm: closeLinkFromForm, write: closeLink, ref: (r) => r.link
})

export const unarchiveRoute = changeRoute({
  name: "archive_entity", kind: "entity", idRe: ENTITY_ID_RE, notFound: entityNotFound,
  parse: parseUnarchive, formTo: formToUnarchive, fromForm: unarchiveFromForm, write: unarchiveEntity, ref: (r) => r.current
})

export const StructureLive = HttpApiBuilder.group(Api, "structure", (h) =>
  h.handleRaw("list", ({ request }) => listStructureRoute(request))
    .handleRaw("review", ({ request }) => Effect.flatMap(reviewRoute(request), asPageForFormPost(request)))
    .handleRaw("archive", ({ path, request }) => Effect.flatMap(archiveRoute(request, path), asPageForFormPost(request)))
    .handleRaw("createEntity", ({ request }) => Effect.flatMap(createEntityRoute(request), asPageForFormPost(request)))
    .handleRaw("createLink", ({ request }) => Effect.flatMap(createLinkRoute(request), asPageForFormPost(request)))
    .handleRaw("closeLink", ({ path, request }) => Effect.flatMap(closeLinkRoute(request, path), asPageForFormPost(request)))
    .handleRaw("unarchive", ({ path, request }) => Effect.flatMap(unarchiveRoute(request, path), asPageForFormPost(request)))
    .handleRaw("retract", ({ path, request }) => retractRoute(request, path)))
