/** POST /v1/search (the full SearchResponse) and POST /v1/search/:search_id/feedback, channel api. */
import { HttpApiBuilder } from "@effect/platform"
import { feedback, search } from "../../operations/search.js"
import { Api } from "../api.js"
import { operationRoute } from "../handle.js"

const searchRoute = operationRoute("api", search, "body")
const feedbackRoute = operationRoute("api", feedback, "body")

export const SearchLive = HttpApiBuilder.group(Api, "search", (h) =>
  h.handleRaw("search", ({ request }) => searchRoute(request))
    .handleRaw("feedback", ({ path, request }) => feedbackRoute(request, path)))
