/** GET /v1/rules, /v1/rules/:id, /v1/rules/:id/versions, /v1/rules/:id/provenance (api channel). */
import { HttpApiBuilder } from "@effect/platform"
import { Clock, Effect, Schema } from "effect"
import { handle, spec } from "../../auth/scope-check.js"
import { AppConfig } from "../../config/config.js"
import { ScopeStore } from "../../db/scope-store.js"
import { NotFound } from "../../contracts/errors.js"
import { RULE_ID_RE, ruleRef, ScopeName, scopeOfRuleId } from "../../contracts/ids.js"
import { provenanceOf } from "../../domain/provenance.js"
import { allVersions, currentVersion, decisionsOf, listCurrent, ruleVersionOut } from "../../domain/rules.js"
import { readBundle } from "../../search/bundle.js"
import { Day } from "../../contracts/schemas.js"
import { Api } from "../api.js"
import { decodeStrict } from "../input.js"
import { After, afterSeq, BoolString, Limit } from "../query.js"

const RELATION_RE = /^(customer|product|supplier):(.+)$/s

const RulesQuery = Schema.Struct({
  scope: ScopeName,
  status: Schema.optional(Schema.Literal("proposed", "confirmed", "superseded")),
  relation: Schema.optional(Schema.String.pipe(Schema.pattern(RELATION_RE, { message: () => "must be <customer|product|supplier>:<name>" }))),
  limit: Limit,
  after: After
})

export const listCall = handle({
  channel: "api",
  operation: "list_rules",
  parse: ({ query }) => decodeStrict(RulesQuery, query, "query"),
  scopes: (q) => [q.scope],
  run: (q) =>
    Effect.gen(function*() {
      const store = yield* ScopeStore
      const m = q.relation === undefined ? null : RELATION_RE.exec(q.relation)
      const page = yield* store.read(q.scope, ({ sql }) => listCurrent(sql, {
        status: q.status === undefined ? ["proposed", "confirmed", "superseded"] : [q.status],
        relation: m === null ? null : { kind: m[1] ?? "", name: m[2] ?? "" },
        limit: q.limit,
        afterSeq: afterSeq(q.after)
      }))
      const rules = page.rows.map(ruleVersionOut)
      const last = page.rows[page.rows.length - 1]
      return { status: 200, body: { rules, next_after: page.more && last !== undefined ? last.rule_id : null }, refs: rules.map((r) => r.ref) }
    })
})

const notFound = (id: string) => new NotFound({ message: `no rule ${id}` })

/** The rule id of the path; a malformed id is 404 like an unknown one. */
const ruleIdOf = (params: Readonly<Record<string, string>>) =>
  Effect.suspend(() => {
    const id = params.id ?? ""
    return RULE_ID_RE.test(id) ? Effect.succeed(id) : Effect.fail(notFound(id))
  })

const ReadQuery = Schema.Struct({ as_of: Schema.optional(Day), include_proposals: Schema.optional(BoolString) })

export const readSpec = spec({
  operation: "read_rule",
  parse: ({ params, query }) =>
    Effect.gen(function*() {
      const id = yield* ruleIdOf(params)
      const q = yield* decodeStrict(ReadQuery, query, "query")
      return { id, asOf: q.as_of ?? null, includeProposals: q.include_proposals === "true" }
    }),
  scopes: (p) => [scopeOfRuleId(p.id)],
  refs: (p) => [ruleRef(p.id)],
  run: (p) =>
    Effect.gen(function*() {
      const store = yield* ScopeStore
      const config = yield* AppConfig
      const nowMs = yield* Clock.currentTimeMillis
      // Rejected never leaks (invariant 8), also with include_proposals or as_of.
      const bundle = yield* store.read(scopeOfRuleId(p.id), ({ sql }) => readBundle(sql, p.id, {
        zone: config.file.zone, recheckAfterDays: config.file.recheck_after_days, nowMs, asOf: p.asOf, includeProposals: p.includeProposals
      }))
      if (bundle === undefined) return yield* notFound(p.id)
      return { status: 200, body: bundle, refs: [bundle.head.ref] }
    })
})
export const readCall = handle({ channel: "api", ...readSpec })

/** parse, scopes and refs of a call about one rule named by the path's :id. */
const byRuleId = {
  parse: ({ params }: { readonly params: Readonly<Record<string, string>> }) => ruleIdOf(params),
  scopes: (id: string) => [scopeOfRuleId(id)],
  refs: (id: string) => [ruleRef(id)]
}

export const versionsCall = handle({
  channel: "api",
  operation: "read_rule",
  ...byRuleId,
  run: (id) =>
    Effect.gen(function*() {
      const store = yield* ScopeStore
      const [versions, decisions] = yield* store.read(scopeOfRuleId(id), ({ sql }) => Effect.all([allVersions(sql, id), decisionsOf(sql, id)]))
      const current = versions[versions.length - 1]
      if (current === undefined || current.status === "rejected") return yield* notFound(id)
      return {
        status: 200,
        body: { rule_id: id, current: ruleRef(id, current.version), versions: versions.map(ruleVersionOut), decisions },
        refs: [ruleRef(id, current.version)]
      }
    })
})

export const provenanceSpec = spec({
  operation: "provenance",
  ...byRuleId,
  run: (id) =>
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
export const provenanceCall = handle({ channel: "api", ...provenanceSpec })

export const RulesLive = HttpApiBuilder.group(Api, "rules", (h) =>
  h.handleRaw("list", ({ request }) => listCall(request))
    .handleRaw("read", ({ path, request }) => readCall(request, path))
    .handleRaw("versions", ({ path, request }) => versionsCall(request, path))
    .handleRaw("provenance", ({ path, request }) => provenanceCall(request, path)))

