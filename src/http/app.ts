/**
 * The public listener's routes: the HttpApi of /v1 (with /openapi.json), the approval session
 * routes, /healthz and the protected-resource document. Unknown routes answer 404 not-found.
 * A path the router cannot match at all — malformed percent-encoding (`%ZZ`, `%`), encoded bytes
 * that are not UTF-8 (`%FF%FE`, `%ED%A0%80`, `%C0%AE`), a parameter over 100 characters — answers
 * its ErrorBody too (400 validation-failed or 404 not-found; a page under /approval), never an
 * empty 404. No ops route is ever served here (the ops listener is a Unix socket).
 */
import { HttpLayerRouter, type HttpServerError, HttpServerResponse } from "@effect/platform"
import { Effect, Layer } from "effect"
import { errorPage } from "../approval/error-page.js"
import { pageResponse } from "../approval/layout.js"
import { mcpMethodNotAllowed, mcpPost } from "../mcp/server.js"
import { Api } from "./api.js"
import { errorResponse } from "../transport/responses.js"
import { ApprovalRoutes } from "./routes/approval.js"
import { DecisionLive } from "./routes/decision.js"
import { EntitiesLive } from "./routes/entities.js"
import { ExportLive } from "./routes/export.js"
import { healthz, protectedResource } from "./routes/health.js"
import { LinksLive } from "./routes/links.js"
import { ProposalsLive } from "./routes/proposals.js"
import { RedactionsLive } from "./routes/redactions.js"
import { RulesLive } from "./routes/rules.js"
import { SearchLive } from "./routes/search.js"
import { login, loginPage, logout } from "./routes/session.js"
import { SourcesLive } from "./routes/sources.js"
import { StructureLive } from "./routes/structure.js"
import { StatusLive } from "./routes/status.js"

const RawRoutes = HttpLayerRouter.use((router) =>
  Effect.all([
    router.add("GET", "/healthz", healthz),
    // the service's address opened in a browser: the approval pages
    router.add("GET", "/", Effect.succeed(HttpServerResponse.redirect("/approval", { status: 303 }))),
    router.add("GET", "/.well-known/oauth-protected-resource", protectedResource),
    router.add("GET", "/approval/login", loginPage),
    router.add("POST", "/approval/login", login),
    router.add("POST", "/approval/logout", logout),
    router.add("POST", "/mcp", mcpPost),
    ...(["GET", "PUT", "PATCH", "DELETE"] as const).map((method) => router.add(method, "/mcp", mcpMethodNotAllowed)),
    router.add("*", "/*", Effect.succeed(errorResponse("not-found", { message: "no such route" })))
  ]))

/** The path of a request URL as sent (no decoding), or "/" when there is none. */
const rawPath = (url: string): string => {
  const end = url.search(/[?#]/)
  return end === -1 ? url : url.slice(0, end)
}

const decodes = (path: string): boolean => {
  try {
    decodeURIComponent(path)
    return true
  } catch {
    return false
  }
}

/** The answer to a request no route matched: only a path that cannot be decoded, or a parameter over the router's length. */
export const unmatched = (url: string): HttpServerResponse.HttpServerResponse => {
  const path = rawPath(url)
  const bad = !decodes(path)
  const message = bad ? "the path is not valid percent-encoded UTF-8" : "no such route"
  if (path === "/approval" || path.startsWith("/approval/")) {
    const status = bad ? 400 : 404
    return pageResponse(errorPage({ status, code: bad ? "validation-failed" : "not-found", message, viewer: null }), status)
  }
  return bad
    ? errorResponse("validation-failed", { message: `request is invalid: (path): ${message}`, issues: [{ path: "(path)", message }] })
    : errorResponse("not-found", { message })
}

/** Every request through the router: one that matches no route gets its ErrorBody (above). */
const UnmatchedAnswered = HttpLayerRouter.middleware((app) =>
  Effect.catchAll(app, (e) => {
    const notFound = e as unknown as Partial<HttpServerError.RouteNotFound>
    return notFound._tag === "RouteNotFound" && notFound.request !== undefined ? Effect.succeed(unmatched(notFound.request.url)) : Effect.fail(e)
  }), { global: true })

const ApiRoutes = HttpLayerRouter.addHttpApi(Api, { openapiPath: "/openapi.json" }).pipe(
  Layer.provide([SourcesLive, ProposalsLive, RulesLive, DecisionLive, StatusLive, ExportLive, SearchLive, EntitiesLive, LinksLive, StructureLive, RedactionsLive])
)

export const AppRoutes = Layer.mergeAll(ApiRoutes, RawRoutes, ApprovalRoutes, UnmatchedAnswered)
