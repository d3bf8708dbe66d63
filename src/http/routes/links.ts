/**
 * POST /v1/links (propose_link) and GET /v1/links?scope=&ref=&grouped=&page= (list_links),
 * channel api (gaps.md §3). A rule or entity end of a scope outside the grant is refused by the
 * pipeline like any foreign scope (403 scope-not-allowed, the same body whether it exists or not);
 * one of another scope inside the grant is answered by the domain with scope-mismatch.
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Schema } from "effect"
import type { Grant } from "../../contracts/grants.js"
import { handle, spec } from "../../auth/scope-check.js"
import { ScopeName } from "../../contracts/ids.js"
import { listLinks } from "../../graph/link-list.js"
import { Endpoint, endpointScopes, LinkRequest, linkRef } from "../../graph/link-types.js"
import { proposeLink } from "../../graph/links.js"
import { Api } from "../api.js"
import { decodeStrict } from "../input.js"
import { BoolString } from "../query.js"

/** Scopes named by rule/entity ends that the grant does not cover (the pipeline refuses them). */
export const outsideGrant = (scope: string, refs: ReadonlyArray<string>, grant: Grant): Array<string> =>
  endpointScopes(refs).filter((s) => s !== scope && !grant.scopes.includes(s))

export const proposeLinkSpec = spec({
  operation: "propose_link",
  parse: ({ body, grant }) =>
    Effect.map(decodeStrict(LinkRequest, body.value, "link"), (req) => ({
      req, outside: outsideGrant(req.scope, [req.from_ref, req.to_ref], grant)
    })),
  scopes: (p) => [p.req.scope, ...p.outside],
  refs: (p) => [p.req.from_ref, p.req.to_ref],
  run: (p, ctx) =>
    Effect.map(proposeLink(p.req, { grantId: ctx.grant.id }), (r) => ({
      status: r.created ? 201 : 200, body: r, refs: [linkRef(r.link.id ?? "")]
    }))
})
export const proposeLinkCall = handle({ channel: "api", ...proposeLinkSpec })

export const LinksQuery = Schema.Struct({
  scope: ScopeName,
  ref: Endpoint,
  grouped: Schema.optional(BoolString),
  page: Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 100_000)), { default: () => 1 })
})

export const listLinksSpec = spec({
  operation: "list_links",
  parse: ({ query, grant }) =>
    Effect.map(decodeStrict(LinksQuery, query, "query"), (q) => ({
      q: { scope: q.scope, ref: q.ref, grouped: q.grouped === "true", page: q.page },
      outside: outsideGrant(q.scope, [q.ref], grant)
    })),
  scopes: (p) => [p.q.scope, ...p.outside],
  refs: (p) => [p.q.ref],
  run: (p) =>
    Effect.map(listLinks(p.q), (answer) => ({
      status: 200,
      body: answer,
      refs: answer.grouped
        ? [answer.ref, ...answer.groups.flatMap((g) => g.entries.map((e) => e.ref))]
        : [answer.ref, ...answer.links.flatMap((l) => (l.id === null ? [] : [linkRef(l.id)]))]
    }))
})
export const listLinksCall = handle({ channel: "api", ...listLinksSpec })

export const LinksLive = HttpApiBuilder.group(Api, "links", (h) =>
  h.handleRaw("propose", ({ request }) => proposeLinkCall(request))
    .handleRaw("list", ({ request }) => listLinksCall(request)))
