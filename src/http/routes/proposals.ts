/** POST /v1/proposals (propose) and GET /v1/proposals (list_proposals), channel api. */
import { HttpApiBuilder } from "@effect/platform"
import { listProposals, propose } from "../../operations/proposals.js"
import { Api } from "../api.js"
import { operationRoute } from "../handle.js"

const proposeRoute = operationRoute("api", propose, "body")
const listRoute = operationRoute("api", listProposals, "query")

export const ProposalsLive = HttpApiBuilder.group(Api, "proposals", (h) =>
  h.handleRaw("propose", ({ request }) => proposeRoute(request))
    .handleRaw("list", ({ request }) => listRoute(request)))
