/**
 * propose (POST /v1/proposals and the MCP tool propose_rule, one request: ProposalDraft, whose
 * left-out fields are filled first) and list_proposals (GET /v1/proposals). propose runs
 * intake(): the secret scan, the checks, the insert and the approval policy; 201 for a new
 * proposal (status proposed, or confirmed when the policy adopted it), 200 for a repeat of the
 * same grant (every field sent the same).
 */
import { Effect } from "effect"
import { CurrentCaller } from "../auth/caller.js"
import { operation } from "../auth/operation.js"
import { AppConfig } from "../config/config.js"
import { scopeOfRuleId } from "../contracts/ids.js"
import { afterSeq } from "../contracts/schemas.js"
import { ScopeStore } from "../db/scope-store.js"
import { exceptionsOf } from "../domain/exceptions.js"
import { completeDraft, intake, sentFields } from "../domain/intake.js"
import { approvalUrl, ListProposalsInput, ProposalDraft, type ProposalSummary } from "../domain/proposal-schemas.js"
import { createdAtOf, listCurrent } from "../domain/rules.js"

export const propose = operation({
  name: "propose",
  right: "propose",
  input: ProposalDraft,
  label: "proposal",
  scopes: (req) => [req.scope, ...(req.supersedes === undefined || req.supersedes === null ? [] : [scopeOfRuleId(req.supersedes)])],
  run: (draft, call) =>
    Effect.gen(function*() {
      const caller = yield* CurrentCaller
      const req = yield* completeDraft(draft)
      const by = { grantId: caller.grant.id, channel: caller.channel, requestId: call.requestId }
      const { status, created } = yield* intake(req, by, sentFields(draft))
      return { status, body: created, refs: [created.ref] }
    })
})

export const listProposals = operation({
  name: "list_proposals",
  right: "read",
  input: ListProposalsInput,
  label: "query",
  scopes: (q) => [q.scope, ...(q.after === undefined ? [] : [scopeOfRuleId(q.after)])],
  run: (q) =>
    Effect.gen(function*() {
      const store = yield* ScopeStore
      const config = yield* AppConfig
      const page = yield* store.read(q.scope, ({ sql }) =>
        Effect.gen(function*() {
          const list = yield* listCurrent(sql, { status: ["proposed"], relation: null, limit: q.limit, afterSeq: afterSeq(q.after) })
          const ids = list.rows.map((r) => r.rule_id)
          return { ...list, created: yield* createdAtOf(sql, ids), exceptions: yield* exceptionsOf(sql, ids) }
        })).pipe(Effect.orDie)
      const proposals: Array<ProposalSummary> = page.rows.map((v) => ({
        ref: `rule/${v.rule_id}@${v.version}`, kind: v.kind, statement: v.statement, said_at: v.said_at,
        source: { kind: v.source_id.slice(0, v.source_id.indexOf(":")), id: v.source_id }, supersedes: v.supersedes,
        created_at: page.created.get(v.rule_id) ?? v.changed_at, approval_url: approvalUrl(config.file.public_url, v.rule_id),
        exceptions: page.exceptions.get(v.rule_id) ?? []
      }))
      const last = page.rows[page.rows.length - 1]
      return {
        status: 200,
        body: { proposals, next_after: page.more && last !== undefined ? last.rule_id : null },
        refs: proposals.map((p) => p.ref)
      }
    })
})
