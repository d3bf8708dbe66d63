/**
 * The approval pages (architecture.md §10, graph.md §12, gaps.md §3): GET /approval,
 * /approval/rules/:id, /approval/rejected?scope=, /approval/structure?scope= and the one
 * stylesheet. Every page runs through the scope-check pipeline on the approval channel (a
 * person; read, rejected: decide) and answers HTML with the headers of §5.3; a refusal of the
 * pipeline becomes a page with the same status (401 in dev-token mode: to the login page).
 */
import { HttpLayerRouter, HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Schema } from "effect"
import { asPage, errorPage } from "../../approval/error-page.js"
import type { Html } from "../../approval/html.js"
import { indexPage, PAGE_SIZE, type ScopeSection } from "../../approval/index-page.js"
import { pageResponse } from "../../approval/layout.js"
import { outcomeFromQuery } from "../../approval/outcome.js"
import { openProposals, rejectedRules, statusCounts } from "../../approval/queries.js"
import { REJECTED_PAGE_SIZE, rejectedPage } from "../../approval/rejected-page.js"
import { STYLESHEET, STYLESHEET_PATH } from "../../approval/style.js"
import { clockwork, viewerOf } from "../../approval/context.js"
import { structureSection } from "../../approval/structure-page.js"
import { loadStructurePage, pendingOf } from "../../approval/structure-view.js"
import { loadRulePage } from "../../approval/views.js"
import { handle } from "../../auth/scope-check.js"
import { AppConfig } from "../../config/config.js"
import { ScopeStore } from "../../db/scope-store.js"
import { NotFound } from "../../contracts/errors.js"
import { RULE_ID_RE, ruleRef, ScopeName, scopeOfRuleId } from "../../contracts/ids.js"
import { decodeStrict } from "../input.js"

const Page = Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 100_000)), { default: () => 1 })
const IndexQuery = Schema.Struct({ scope: Schema.optional(ScopeName), page: Page })
const ScopeQuery = Schema.Struct({ scope: ScopeName, page: Page })
/** After a post the page names the outcome; the values are checked again by outcomeFromQuery. */
const OutcomeQuery = Schema.Struct({ done: Schema.optional(Schema.String), v: Schema.optional(Schema.String), target: Schema.optional(Schema.String) })

const html = (doc: Html, status = 200) => ({ status, response: pageResponse(doc, status), refs: [] as Array<string> })

export const indexCall = handle({
  channel: "approval",
  operation: "list_proposals",
  parse: ({ query }) => decodeStrict(IndexQuery, query, "query"),
  scopes: (q) => (q.scope === undefined ? "grant" : [q.scope]),
  run: (q, ctx) =>
    Effect.gen(function*() {
      const store = yield* ScopeStore
      const config = yield* AppConfig
      const viewer = yield* viewerOf(ctx.identity.identity, ctx.grant.id)
      const clock = yield* clockwork
      const page = q.scope === undefined ? 1 : q.page
      const sections: Array<ScopeSection> = []
      for (const scope of ctx.scopes) {
        const read = yield* Effect.either(store.read(scope, ({ sql }) =>
          Effect.all({
            counts: statusCounts(sql),
            proposals: openProposals(sql, PAGE_SIZE, (page - 1) * PAGE_SIZE),
            pending: pendingOf(sql, scope, config.file.public_url)
          })))
        if (read._tag === "Left") {
          if (read.left._tag !== "ScopeLocked") return yield* read.left
          sections.push({ scope, unavailable: read.left.message, counts: { proposed: 0, confirmed: 0, superseded: 0, rejected: 0 }, proposals: [], page, structure: null })
          continue
        }
        const { counts, proposals, pending } = read.right
        sections.push({ scope, unavailable: null, counts, proposals, page, structure: structureSection(scope, pending, clock) })
      }
      const refs = sections.flatMap((s) => s.proposals.map((p) => ruleRef(p.rule_id, p.version)))
      return { ...html(indexPage({ viewer, sections, clock, single: q.scope !== undefined })), refs }
    })
})

export const ruleCall = handle({
  channel: "approval",
  operation: "read_rule",
  parse: ({ params, query }) =>
    Effect.gen(function*() {
      const id = params.id ?? ""
      if (!RULE_ID_RE.test(id)) return yield* new NotFound({ message: `no rule ${id}` })
      const q = yield* decodeStrict(OutcomeQuery, query, "query")
      return { id, outcome: outcomeFromQuery(q) }
    }),
  scopes: (p) => [scopeOfRuleId(p.id)],
  refs: (p) => [ruleRef(p.id)],
  run: (p, ctx) =>
    Effect.gen(function*() {
      const viewer = yield* viewerOf(ctx.identity.identity, ctx.grant.id)
      const doc = yield* loadRulePage(p.id, { viewer, canDecide: ctx.grant.rights.includes("decide"), outcome: p.outcome })
      if (doc === undefined) return yield* new NotFound({ message: `no rule ${p.id}` })
      return { ...html(doc), refs: [ruleRef(p.id)] }
    })
})

export const rejectedPageCall = handle({
  channel: "approval",
  operation: "list_rejected",
  parse: ({ query }) => decodeStrict(ScopeQuery, query, "query"),
  scopes: (q) => [q.scope],
  run: (q, ctx) =>
    Effect.gen(function*() {
      const store = yield* ScopeStore
      const viewer = yield* viewerOf(ctx.identity.identity, ctx.grant.id)
      const clock = yield* clockwork
      const { rows, counts } = yield* store.read(q.scope, ({ sql }) =>
        Effect.all({ rows: rejectedRules(sql, REJECTED_PAGE_SIZE, (q.page - 1) * REJECTED_PAGE_SIZE), counts: statusCounts(sql) }))
      const doc = rejectedPage({ viewer, scope: q.scope, rows, total: counts.rejected, page: q.page, clock })
      return { ...html(doc), refs: rows.map((r) => ruleRef(r.rule_id, r.version)) }
    })
})

const StructureQuery = Schema.Struct({ scope: ScopeName, ...OutcomeQuery.fields })

export const structurePageCall = handle({
  channel: "approval",
  operation: "list_structure",
  parse: ({ query }) =>
    Effect.map(decodeStrict(StructureQuery, query, "query"), (q) => ({ scope: q.scope, outcome: outcomeFromQuery(q) })),
  scopes: (q) => [q.scope],
  run: (q, ctx) =>
    Effect.gen(function*() {
      const viewer = yield* viewerOf(ctx.identity.identity, ctx.grant.id)
      const { items, page } = yield* loadStructurePage(q.scope, { viewer, canDecide: ctx.grant.rights.includes("decide"), outcome: q.outcome })
      return { ...html(page), refs: items.map((i) => i.ref) }
    })
})

/** A page route: the pipeline's call with its path parameters; a refusal answered as a page. */
const page = <R>(call: (request: HttpServerRequest.HttpServerRequest, params: Readonly<Record<string, string>>) => Effect.Effect<HttpServerResponse.HttpServerResponse, never, R>) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const params = yield* HttpRouter.params
    const config = yield* AppConfig
    const clean: Record<string, string> = {}
    for (const [k, v] of Object.entries(params)) if (v !== undefined) clean[k] = v
    const response = yield* call(request, clean)
    return asPage(response, { devToken: config.env.authMode === "dev-token", viewer: null, toLogin: true })
  })

export const indexRoute = page(indexCall)
export const ruleRoute = page(ruleCall)
export const rejectedRoute = page(rejectedPageCall)
export const structureRoute = page(structurePageCall)

/** The one stylesheet ('self'); public like the login page, cached for a day (its URL carries its hash). */
export const stylesheetRoute = Effect.succeed(HttpServerResponse.text(STYLESHEET, {
  contentType: "text/css; charset=utf-8",
  headers: { "x-content-type-options": "nosniff", "cache-control": "public, max-age=86400" }
}))

/** Any other address under /approval: 404 as a page (with the headers of §5.3). */
export const unknownPageRoute = Effect.succeed(pageResponse(errorPage({ status: 404, code: "not-found", message: "There is no such page.", viewer: null }), 404))

/** The page routes, merged into the public listener's routes by app.ts. */
export const ApprovalRoutes = HttpLayerRouter.use((router) =>
  Effect.all([
    router.add("GET", "/approval", indexRoute),
    router.add("GET", "/approval/rules/:id", ruleRoute),
    router.add("GET", "/approval/rejected", rejectedRoute),
    router.add("GET", "/approval/structure", structureRoute),
    router.add("GET", STYLESHEET_PATH, stylesheetRoute),
    router.add("*", "/approval/*", unknownPageRoute)
  ]))
