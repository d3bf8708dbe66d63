/**
 * The entity routes of gaps.md §3 (channel api): GET /v1/entities/resolve, POST /v1/entities,
 * GET /v1/entities/:id, GET /v1/entities (tree), POST /v1/entities/:id/move, POST
 * /v1/entities/:id/update. Refusals are GraphErrorBody (graph.md §8).
 */
import { HttpApiBuilder } from "@effect/platform"
import { createEntity, entityTree, moveEntity, readEntity, resolveEntity, updateEntity } from "../../operations/entities.js"
import { Api } from "../api.js"
import { operationRoute } from "../handle.js"

const resolveRoute = operationRoute("api", resolveEntity, "query")
const createRoute = operationRoute("api", createEntity, "body")
const treeRoute = operationRoute("api", entityTree, "query")
const readRoute = operationRoute("api", readEntity, "query")
const moveRoute = operationRoute("api", moveEntity, "body")
const updateRoute = operationRoute("api", updateEntity, "body")

export const EntitiesLive = HttpApiBuilder.group(Api, "entities", (h) =>
  h.handleRaw("resolve", ({ request }) => resolveRoute(request))
    .handleRaw("create", ({ request }) => createRoute(request))
    .handleRaw("tree", ({ request }) => treeRoute(request))
    .handleRaw("read", ({ request, path }) => readRoute(request, path))
    .handleRaw("move", ({ request, path }) => moveRoute(request, path))
    .handleRaw("update", ({ request, path }) => updateRoute(request, path)))
