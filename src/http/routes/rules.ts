/** GET /v1/rules, /v1/rules/:id, /v1/rules/:id/versions, /v1/rules/:id/provenance, POST /v1/rules/:id/retract (channel api). */
import { HttpApiBuilder } from "@effect/platform"
import { retract } from "../../operations/retract.js"
import { listRules, readRule, ruleProvenance, ruleVersions } from "../../operations/rules.js"
import { Api } from "../api.js"
import { operationRoute } from "../handle.js"

const listRoute = operationRoute("api", listRules, "query")
const readRoute = operationRoute("api", readRule, "query")
const versionsRoute = operationRoute("api", ruleVersions, "path")
const provenanceRoute = operationRoute("api", ruleProvenance, "path")
const retractRoute = operationRoute("api", retract, "body")

export const RulesLive = HttpApiBuilder.group(Api, "rules", (h) =>
  h.handleRaw("list", ({ request }) => listRoute(request))
    .handleRaw("read", ({ path, request }) => readRoute(request, path))
    .handleRaw("versions", ({ path, request }) => versionsRoute(request, path))
    .handleRaw("provenance", ({ path, request }) => provenanceRoute(request, path))
    .handleRaw("retract", ({ path, request }) => retractRoute(request, path)))
