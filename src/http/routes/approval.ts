/**
 * The approval pages (architecture.md §10, graph.md §12, gaps.md §3): GET /approval,
 * /approval/rules/:id, /approval/rejected?scope=, /approval/structure?scope=,
 * /approval/digest?since=, /approval/recheck[?scope=], /approval/redactions (redact) and the one
 * stylesheet. Every page runs through the scope-check pipeline on the approval channel (a
 * person; read, rejected: decide) and answers HTML with the headers of §5.3; a refusal of the
 * pipeline becomes a page with the same status (401 in dev-token mode: to the login page; a valid
 * sign-in without an active grant: the page that says so and how the operator creates one).
 */
import { HttpLayerRouter, HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { asPage, errorPage } from "../../approval/error-page.js"
import { pageResponse } from "../../approval/layout.js"
import { noGrantResponse } from "../../approval/no-grant-page.js"
import { digestPageCall, indexPageCall, type Page, recheckPageCall, rejectedPageCall, rulePageCall, structurePageCall } from "../../approval/pages.js"
import { redactionsPageCall } from "../../approval/redactions-view.js"
import { STYLESHEET, STYLESHEET_PATH } from "../../approval/style.js"
import { AppConfig } from "../../config/config.js"
import { serveRoute } from "../handle.js"

/** A page route: the page's call through the pipeline; a refusal answered as a page. */
const page = <I, R>(p: Page<I, R>) => {
  const route = serveRoute({ channel: "approval", call: p.call, parse: (parts) => p.parse(parts) })
  return Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const params = yield* HttpRouter.params
    const config = yield* AppConfig
    const response = yield* route(request, params)
    // a valid sign-in without an active grant: say so (a redirect to the login page would loop)
    if (response.status === 401) {
      const noGrant = yield* noGrantResponse(request, config)
      if (noGrant !== null) return noGrant
    }
    return asPage(response, { devToken: config.env.authMode === "dev-token", viewer: null, toLogin: true, returnTo: request.url })
  })
}

export const indexRoute = page(indexPageCall)
export const ruleRoute = page(rulePageCall)
export const rejectedRoute = page(rejectedPageCall)
export const structureRoute = page(structurePageCall)
export const redactionsRoute = page(redactionsPageCall)
export const digestRoute = page(digestPageCall)
export const recheckRoute = page(recheckPageCall)

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
    router.add("GET", "/approval/redactions", redactionsRoute),
    router.add("GET", "/approval/digest", digestRoute),
    router.add("GET", "/approval/recheck", recheckRoute),
    router.add("GET", STYLESHEET_PATH, stylesheetRoute),
    router.add("*", "/approval/*", unknownPageRoute)
  ]))
