/** GET /v1/status: grant-wide (covers exactly the grant's scopes, names none). */
import { HttpApiBuilder } from "@effect/platform"
import { status } from "../../operations/status.js"
import { Api } from "../api.js"
import { operationRoute } from "../handle.js"

const statusRoute = operationRoute("api", status, "path")

export const StatusLive = HttpApiBuilder.group(Api, "status", (h) => h.handleRaw("status", ({ request }) => statusRoute(request)))
