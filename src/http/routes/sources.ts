/** POST /v1/sources (store_source) and GET /v1/sources/:id (the feeder's read-back, §6.2a). */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { handle } from "../../auth/scope-check.js"
import { ValidationFailed } from "../../contracts/errors.js"
import { sourceRef } from "../../contracts/ids.js"
import { parseInclude, SourceQuery, SourceRequest } from "../../domain/source-schemas.js"
import { readSource, storeSource } from "../../domain/sources.js"
import { Api } from "../api.js"
import { decodeStrict, SOURCES_BODY_LIMIT } from "../input.js"

export const storeCall = handle({
  channel: "api",
  operation: "store_source",
  bodyLimit: SOURCES_BODY_LIMIT,
  parse: ({ body }) => decodeStrict(SourceRequest, body.value, "source"),
  scopes: (req) => [req.scope],
  refs: (req) => [sourceRef(req.source.id)],
  run: (req, ctx) =>
    Effect.map(storeSource(req, ctx.grant.id), (stored) => ({
      status: stored.created ? 201 : 200, body: stored, refs: [sourceRef(stored.id)]
    }))
})

export const readCall = handle({
  channel: "api",
  operation: "read_source",
  parse: ({ params, query }) =>
    Effect.gen(function*() {
      const q = yield* decodeStrict(SourceQuery, query, "query")
      const include = parseInclude(q.include)
      if (include === null) {
        return yield* new ValidationFailed({
          message: "include is a comma list of text and attachments, each at most once",
          issues: [{ path: "include", message: "text | attachments, each at most once" }]
        })
      }
      return { scope: q.scope, id: params.id ?? "", include }
    }),
  scopes: (p) => [p.scope],
  run: (p, ctx) => Effect.map(readSource(p.scope, p.id, ctx.grant.id, p.include), (out) => ({ status: 200, body: out, refs: [] }))
})

export const SourcesLive = HttpApiBuilder.group(Api, "sources", (h) =>
  h.handleRaw("store", ({ request }) => storeCall(request))
    .handleRaw("read", ({ path, request }) => readCall(request, path)))
