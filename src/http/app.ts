/**
 * The public listener's routes: the HttpApi of /v1 (with /openapi.json), the approval session
 * routes, /healthz and the protected-resource document. Unknown routes answer 404 not-found.
 * No ops route is ever served here (the ops listener is a Unix socket).
 */
import { HttpLayerRouter } from "@effect/platform"
import { Effect, Layer } from "effect"
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
import { RulesLive } from "./routes/rules.js"
import { SearchLive } from "./routes/search.js"
import { login, loginPage, logout } from "./routes/session.js"
import { SourcesLive } from "./routes/sources.js"
import { StructureLive } from "./routes/structure.js"
import { StatusLive } from "./routes/status.js"

const RawRoutes = HttpLayerRouter.use((router) =>
  Effect.all([
    router.add("GET", "/healthz", healthz),
    router.add("GET", "/.well-known/oauth-protected-resource", protectedResource),
    router.add("GET", "/approval/login", loginPage),
    router.add("POST", "/approval/login", login),
    router.add("POST", "/approval/logout", logout),
    router.add("POST", "/mcp", mcpPost),
    ...(["GET", "PUT", "PATCH", "DELETE"] as const).map((method) => router.add(method, "/mcp", mcpMethodNotAllowed)),
    router.add("*", "/*", Effect.succeed(errorResponse("not-found", { message: "no such route" })))
  ]))

const ApiRoutes = HttpLayerRouter.addHttpApi(Api, { openapiPath: "/openapi.json" }).pipe(
  Layer.provide([SourcesLive, ProposalsLive, RulesLive, DecisionLive, StatusLive, ExportLive, SearchLive, EntitiesLive, LinksLive, StructureLive])
)

export const AppRoutes = Layer.mergeAll(ApiRoutes, RawRoutes, ApprovalRoutes)
