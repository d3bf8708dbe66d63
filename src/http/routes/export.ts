/** GET /v1/export/:scope and GET /v1/rejected — the approval channel, a person with decide. */
import { HttpApiBuilder } from "@effect/platform"
import { exportScope, listRejected } from "../../operations/export.js"
import { Api } from "../api.js"
import { operationRoute } from "../handle.js"

const exportRoute = operationRoute("approval", exportScope, "query")
const rejectedRoute = operationRoute("approval", listRejected, "query")

export const ExportLive = HttpApiBuilder.group(Api, "export", (h) =>
  h.handleRaw("export", ({ path, request }) => exportRoute(request, path))
    .handleRaw("rejected", ({ request }) => rejectedRoute(request)))
