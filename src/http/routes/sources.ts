/** POST /v1/sources (store_source, 10 MiB) and GET /v1/sources/:id (the feeder's read-back, §6.2a). */
import { HttpApiBuilder } from "@effect/platform"
import { readSource, storeSource } from "../../operations/sources.js"
import { SOURCES_BODY_LIMIT } from "../../transport/body.js"
import { Api } from "../api.js"
import { operationRoute } from "../handle.js"

const storeRoute = operationRoute("api", storeSource, "body", { bodyLimit: SOURCES_BODY_LIMIT })
const readRoute = operationRoute("api", readSource, "query")

export const SourcesLive = HttpApiBuilder.group(Api, "sources", (h) =>
  h.handleRaw("store", ({ request }) => storeRoute(request))
    .handleRaw("read", ({ path, request }) => readRoute(request, path)))
