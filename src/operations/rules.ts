/**
 * The rule reads (gaps.md §3): list_rules (GET /v1/rules), read_rule (GET /v1/rules/:id as a
 * full bundle, and its versions), provenance. A malformed rule id is the same 404 as an unknown
 * one; rejected never leaks (invariant 8), also with include_proposals or as_of.
 */
import { Clock, Effect } from "effect"
import { operation } from "../auth/operation.js"
import { AppConfig } from "../config/config.js"
import { NotFound } from "../contracts/errors.js"
import { RULE_ID_RE, ruleRef, scopeOfRuleId } from "../contracts/ids.js"
import { afterSeq } from "../contracts/schemas.js"
import { PERSON, reviewFacts, reviewFactsOf } from "../domain/adoption.js"
import { ScopeStore } from "../db/scope-store.js"
import { exceptionsOf } from "../domain/exceptions.js"
import { provenanceOf } from "../domain/provenance.js"
import { ListRulesInput, ReadRuleInput, RELATION_RE, RuleIdInput } from "../domain/rule-schemas.js"
import { redactedOf } from "../domain/redacted.js"
import { allVersions, currentVersion, decisionsOf, listCurrent, markedVersionOut } from "../domain/rules.js"
import { readBundle } from "../search/bundle.js"

const notFound = (id: string) => new NotFound({ message: `no rule ${id}` })

/** not-found for a rule that exists only as a proposal, with how to read it. */
const proposalOnly = (id: string) =>
  new NotFound({
    message: `${id} is a proposal a person has not confirmed yet`,
    remedy: "read it with include_proposals: true (it is unconfirmed: say so when you cite it)"
  })

/** The checks and scope of a call about one rule named by its id. */
const byRuleId = {
  check: (input: { readonly id: string }) => (RULE_ID_RE.test(input.id) ? Effect.void : Effect.fail(notFound(input.id))),
  scopes: (input: { readonly id: string }) => [scopeOfRuleId(input.id)],
  refs: (input: { readonly id: string }) => [ruleRef(input.id)]
}

export const listRules = operation({
  name: "list_rules",
  right: "read",
  input: ListRulesInput,
  label: "query",
  scopes: (q) => [q.scope, ...(q.after === undefined ? [] : [scopeOfRuleId(q.after)])],
  run: (q) =>
    Effect.gen(function*() {
      const store = yield* ScopeStore
      const m = q.relation === undefined ? null : RELATION_RE.exec(q.relation)
      const { page, facts, exceptions, marks } = yield* store.read(q.scope, ({ sql }) =>
        Effect.gen(function*() {
          const page = yield* listCurrent(sql, {
            status: q.status === undefined ? ["proposed", "confirmed", "superseded"] : [q.status],
            relation: m === null ? null : { kind: m[1] ?? "", name: m[2] ?? "" },
            limit: q.limit,
            afterSeq: afterSeq(q.after)
          })
          const ids = page.rows.map((r) => r.rule_id)
          return { page, facts: yield* reviewFactsOf(sql, ids), exceptions: yield* exceptionsOf(sql, ids), marks: yield* redactedOf(sql) }
        }))
      // every answer marks an auto-adopted rule (gaps.md §10): the adoption of each rule of the page, and its exception codes
      const rules = page.rows.map((r) => ({
        ...markedVersionOut(r, marks), adoption: facts.get(r.rule_id)?.adoption ?? PERSON, exceptions: exceptions.get(r.rule_id) ?? []
      }))
      const last = page.rows[page.rows.length - 1]
      return { status: 200, body: { rules, next_after: page.more && last !== undefined ? last.rule_id : null }, refs: rules.map((r) => r.ref) }
    })
})

export const readRule = operation({
  name: "read_rule",
  right: "read",
  input: ReadRuleInput,
  label: "query",
  ...byRuleId,
  run: (p) =>
    Effect.gen(function*() {
      const store = yield* ScopeStore
      const config = yield* AppConfig
      const nowMs = yield* Clock.currentTimeMillis
      const read = yield* store.read(scopeOfRuleId(p.id), ({ sql }) =>
        Effect.gen(function*() {
          const bundle = yield* readBundle(sql, p.id, {
            zone: config.file.zone, recheckAfterDays: config.file.recheck_after_days, nowMs,
            asOf: p.as_of ?? null, includeProposals: p.include_proposals ?? false
          })
          // a rule that exists only as a proposal: say how to read it (a rejected one never leaks)
          const proposal = bundle === undefined && p.include_proposals !== true && (yield* currentVersion(sql, p.id))?.status === "proposed"
          return { bundle, proposal }
        }))
      if (read.proposal) return yield* proposalOnly(p.id)
      if (read.bundle === undefined) return yield* notFound(p.id)
      return { status: 200, body: read.bundle, refs: [read.bundle.head.ref] }
    })
})

export const ruleVersions = operation({
  name: "read_rule",
  right: "read",
  input: RuleIdInput,
  label: "path",
  ...byRuleId,
  run: ({ id }) =>
    Effect.gen(function*() {
      const store = yield* ScopeStore
      const [versions, decisions, facts, exceptions, marks] = yield* store.read(scopeOfRuleId(id), ({ sql }) =>
        Effect.flatMap(redactedOf(sql), (marks) =>
          Effect.all([allVersions(sql, id), decisionsOf(sql, id, marks), reviewFacts(sql, id), exceptionsOf(sql, [id]), Effect.succeed(marks)])))
      const current = versions[versions.length - 1]
      if (current === undefined || current.status === "rejected") return yield* notFound(id)
      return {
        status: 200,
        body: {
          rule_id: id, current: ruleRef(id, current.version), adoption: facts.adoption, exceptions: exceptions.get(id) ?? [],
          versions: versions.map((v) => markedVersionOut(v, marks)), decisions
        },
        refs: [ruleRef(id, current.version)]
      }
    })
})

export const ruleProvenance = operation({
  name: "provenance",
  right: "read",
  input: RuleIdInput,
  label: "path",
  ...byRuleId,
  run: ({ id }) =>
    Effect.gen(function*() {
      const store = yield* ScopeStore
      const prov = yield* store.read(scopeOfRuleId(id), ({ sql }) =>
        Effect.gen(function*() {
          const current = yield* currentVersion(sql, id)
          if (current === undefined || current.status === "rejected") return null
          return yield* provenanceOf(sql, current)
        }))
      if (prov === null) return yield* notFound(id)
      return { status: 200, body: prov, refs: [prov.ref] }
    })
})
