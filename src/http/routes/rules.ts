/** GET /v1/rules, /v1/rules/:id, /v1/rules/:id/versions, /v1/rules/:id/provenance (channel api). */
import { HttpApiBuilder } from "@effect/platform"
import { listRules, readRule, ruleProvenance, ruleVersions } from "../../operations/rules.js"
import { Api } from "../api.js"
import { operationRoute } from "../handle.js"

const listRoute = operationRoute("api", listRules, "query")
const readRoute = operationRoute("api", readRule, "query")
const versionsRoute = operationRoute("api", ruleVersions, "path")
const provenanceRoute = operationRoute("api", ruleProvenance, "path")

export const RulesLive = HttpApiBuilder.group(Api, "rules", (h) =>
  h.handleRaw("list", ({ request }) => listRoute(request))
    .handleRaw("read", ({ path, request }) => readRoute(request, path))
    .handleRaw("versions", ({ path, request }) => versionsRoute(request, path))
    .handleRaw("provenance", ({ path, request }) => provenanceRoute(request, path)))
