/** POST /v1/proposals (propose) and GET /v1/proposals (list_proposals). */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Schema } from "effect"
import { handle, spec } from "../../auth/scope-check.js"
import { AppConfig } from "../../config/config.js"
import { ScopeStore } from "../../db/scope-store.js"
import { ScopeName, scopeOfRuleId } from "../../contracts/ids.js"
import { ProposalRequest, type ProposalSummary } from "../../domain/proposal-schemas.js"
import { approvalUrl, propose } from "../../domain/proposals.js"
import { listCurrent } from "../../domain/rules.js"
import { Api } from "../api.js"
import { decodeStrict } from "../input.js"
import { After, afterSeq, Limit } from "../query.js"

export const proposeSpec = spec({
  operation: "propose",
  parse: ({ body }) => decodeStrict(ProposalRequest, body.value, "proposal"),
  scopes: (req) => [req.scope, ...(req.supersedes === null ? [] : [scopeOfRuleId(req.supersedes)])],
  run: (req, ctx) =>
    Effect.map(propose(req, { grantId: ctx.grant.id, channel: ctx.channel }), (created) => ({
      status: 201, body: created, refs: [created.ref]
    }))
})
export const proposeCall = handle({ channel: "api", ...proposeSpec })

const ProposalsQuery = Schema.Struct({ scope: ScopeName, limit: Limit, after: After })

export const listCall = handle({
  channel: "api",
  operation: "list_proposals",
  parse: ({ query }) => decodeStrict(ProposalsQuery, query, "query"),
  scopes: (q) => [q.scope],
  run: (q) =>
    Effect.gen(function*() {
      const store = yield* ScopeStore
      const config = yield* AppConfig
      const page = yield* store.read(q.scope, ({ sql }) =>
        Effect.gen(function*() {
          const list = yield* listCurrent(sql, { status: ["proposed"], relation: null, limit: q.limit, afterSeq: afterSeq(q.after) })
          const created = yield* sql<{ id: string; created_at: string }>`SELECT id, created_at FROM rule WHERE id IN ${sql.in(list.rows.map((r) => r.rule_id))}`
          return { ...list, created: new Map(created.map((c) => [c.id, c.created_at])) }
        })).pipe(Effect.orDie)
      const proposals: Array<ProposalSummary> = page.rows.map((v) => ({
        ref: `rule/${v.rule_id}@${v.version}`, kind: v.kind, statement: v.statement, said_at: v.said_at,
        source: { kind: v.source_id.slice(0, v.source_id.indexOf(":")), id: v.source_id }, supersedes: v.supersedes,
        created_at: page.created.get(v.rule_id) ?? v.changed_at, approval_url: approvalUrl(config.file.public_url, v.rule_id)
      }))
      const last = page.rows[page.rows.length - 1]
      return {
        status: 200,
        body: { proposals, next_after: page.more && last !== undefined ? last.rule_id : null },
        refs: proposals.map((p) => p.ref)
      }
    })
})

export const ProposalsLive = HttpApiBuilder.group(Api, "proposals", (h) =>
  h.handleRaw("propose", ({ request }) => proposeCall(request))
    .handleRaw("list", ({ request }) => listCall(request)))
