/** POST /v1/search (the full SearchResponse) and POST /v1/search/:search_id/feedback. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { handle, spec } from "../../auth/scope-check.js"
import { NotFound } from "../../contracts/errors.js"
import { FeedbackRequest, SearchRequest } from "../../domain/search-schemas.js"
import { feedbackScopes, FEEDBACK_NOT_FOUND, recordFeedback } from "../../search/feedback.js"
import { search } from "../../search/search.js"
import { Api } from "../api.js"
import { decodeStrict } from "../input.js"

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

export const searchSpec = spec({
  operation: "search",
  parse: ({ body }) => decodeStrict(SearchRequest, body.value, "search"),
  scopes: (req) => req.scopes,
  crossScope: (req) => req.cross_scope,
  run: (req, ctx) =>
    Effect.map(search(req, ctx.requestId), ({ response }) => ({
      status: 200,
      body: response,
      refs: response.bundles.map((b) => b.head.ref),
      perScope: response.scopes.map((scope) => ({
        scope,
        refs: response.bundles.filter((b) => b.head.scope === scope).map((b) => b.head.ref),
        log: { terms: response.query.terms, variants: response.query.variants, stages: response.stages }
      }))
    }))
})
export const searchCall = handle({ channel: "api", ...searchSpec })

export const feedbackSpec = spec({
  operation: "feedback",
  parse: ({ body, params }) =>
    Effect.gen(function*() {
      const searchId = params.search_id ?? ""
      const req = yield* decodeStrict(FeedbackRequest, body.value, "feedback")
      if (!UUID_RE.test(searchId)) return yield* new NotFound({ message: FEEDBACK_NOT_FOUND })
      return { searchId, req }
    }),
  scopes: (p) => feedbackScopes(p.req),
  // the refs of one search may span the scopes of a cross-scope search
  crossScope: () => true,
  run: (p, ctx) =>
    Effect.map(recordFeedback(p.searchId, p.req, ctx.grant.id), (out) => ({
      status: 200, body: out, refs: [...p.req.bundles.map((b) => b.ref), ...p.req.missing]
    }))
})
export const feedbackCall = handle({ channel: "api", ...feedbackSpec })

export const SearchLive = HttpApiBuilder.group(Api, "search", (h) =>
  h.handleRaw("search", ({ request }) => searchCall(request))
    .handleRaw("feedback", ({ path, request }) => feedbackCall(request, path)))
