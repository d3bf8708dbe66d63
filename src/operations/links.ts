/**
 * propose_link (POST /v1/links) and list_links (GET /v1/links), gaps.md §3. A rule or entity end
 * of a scope outside the grant is refused by the pipeline like any foreign scope (403
 * scope-not-allowed, the same body whether it exists or not); one of another scope inside the
 * grant is answered by the domain with scope-mismatch.
 */
import { Effect } from "effect"
import { type Caller, CurrentCaller } from "../auth/caller.js"
import { operation } from "../auth/operation.js"
import { listLinks as list } from "../graph/link-list.js"
import { endpointScopes, LinkRequest, linkRef, ListLinksInput } from "../graph/link-types.js"
import { proposeLink as propose } from "../graph/links.js"
import { withForeignScopes } from "./foreign-scopes.js"

/** The scope of the request and the scopes named by rule/entity ends that the grant does not cover (the pipeline refuses them). */
const withEnds = (scope: string, refs: ReadonlyArray<string>, caller: Caller): Array<string> =>
  withForeignScopes(scope, endpointScopes(refs), caller)

export const proposeLink = operation({
  name: "propose_link",
  right: "propose",
  input: LinkRequest,
  label: "link",
  scopes: (req, caller) => withEnds(req.scope, [req.from_ref, req.to_ref], caller),
  refs: (req) => [req.from_ref, req.to_ref],
  run: (req) =>
    Effect.gen(function*() {
      const caller = yield* CurrentCaller
      const r = yield* propose(req, { grantId: caller.grant.id, channel: caller.channel === "mcp" ? "mcp" : "api" })
      return { status: r.created ? 201 : 200, body: r, refs: [linkRef(r.link.id ?? "")] }
    })
})

export const listLinks = operation({
  name: "list_links",
  right: "read",
  input: ListLinksInput,
  label: "query",
  scopes: (q, caller) => withEnds(q.scope, [q.ref], caller),
  refs: (q) => [q.ref],
  run: (q) =>
    Effect.map(list({ scope: q.scope, ref: q.ref, grouped: q.grouped ?? false, page: q.page }), (answer) => ({
      status: 200,
      body: answer,
      refs: answer.grouped
        ? [answer.ref, ...answer.groups.flatMap((g) => g.entries.map((e) => e.ref))]
        : [answer.ref, ...answer.links.flatMap((l) => (l.id === null ? [] : [linkRef(l.id)]))]
    }))
})
