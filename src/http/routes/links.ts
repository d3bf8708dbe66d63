/** POST /v1/links (propose_link) and GET /v1/links?scope=&ref=&grouped=&page= (list_links), channel api. */
import { HttpApiBuilder } from "@effect/platform"
import { listLinks, proposeLink } from "../../operations/links.js"
import { Api } from "../api.js"
import { operationRoute } from "../handle.js"

const proposeRoute = operationRoute("api", proposeLink, "body")
const listRoute = operationRoute("api", listLinks, "query")

export const LinksLive = HttpApiBuilder.group(Api, "links", (h) =>
  h.handleRaw("propose", ({ request }) => proposeRoute(request))
    .handleRaw("list", ({ request }) => listRoute(request)))
