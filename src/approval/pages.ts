/**
 * The approval pages as calls of the scope-check pipeline (approval channel, a person): GET
 * /approval (list_proposals, grant-wide without a scope), /approval/rules/:id (read_rule),
 * /approval/rejected?scope= (list_rejected, decide) and /approval/structure?scope=
 * (list_structure). Each reads its request, names its scopes and renders its page; the public
 * listener serves them (src/http/routes/approval.ts).
 */
import { Effect, Schema } from "effect"
import { CurrentCaller } from "../auth/caller.js"
import type { Call } from "../auth/operation.js"
import { AppConfig } from "../config/config.js"
import { decodeStrict } from "../contracts/decode.js"
import { dayBefore } from "../contracts/time.js"
import { type DomainError, NotFound } from "../contracts/errors.js"
import { RULE_ID_RE, ruleRef, ScopeName, scopeOfRuleId } from "../contracts/ids.js"
import type { OpsStore } from "../db/ops-store.js"
import { ScopeStore } from "../db/scope-store.js"
import type { RuleIndex } from "../domain/rule-index.js"
import { digestOf, parseDigestQuery } from "../operations/digest.js"
import { clockwork, viewerOf } from "./context.js"
import { digestPage } from "./digest-page.js"
import type { Html } from "./html.js"
import { indexPage } from "./index-page.js"
import { loadIndexSections } from "./index-view.js"
import { pageResponse } from "./layout.js"
import { type Outcome, outcomeFromQuery } from "./outcome.js"
import { rejectedRules, statusCounts } from "./queries.js"
import { recheckPage } from "./recheck-page.js"
import { loadRecheckSections } from "./recheck-view.js"
import { REJECTED_PAGE_SIZE, rejectedPage } from "./rejected-page.js"
import { loadStructurePage, structureWaiting } from "./structure-view.js"
import { loadRulePage } from "./views.js"

/** What a page reads of its request. */
export interface PageRequest {
  readonly params: Readonly<Record<string, string>>
  readonly query: Readonly<Record<string, string>>
}

/** A page: its call of the pipeline and how it reads its request. */
export interface Page<I, R> {
  readonly call: Call<I, R>
  readonly parse: (request: PageRequest) => Effect.Effect<I, DomainError>
}

const PageNumber = Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 100_000)), { default: () => 1 })
const ScopeQuery = Schema.Struct({ scope: ScopeName, page: PageNumber })
/** After a post the page names the outcome; the values are checked again by outcomeFromQuery. */
const OutcomeQuery = Schema.Struct({
  done: Schema.optional(Schema.String), v: Schema.optional(Schema.String), target: Schema.optional(Schema.String),
  stale: Schema.optional(Schema.String), tried: Schema.optional(Schema.String), n: Schema.optional(Schema.String)
})
const IndexQuery = Schema.Struct({ scope: Schema.optional(ScopeName), page: PageNumber, ...OutcomeQuery.fields })
const StructureQuery = Schema.Struct({ scope: ScopeName, ...OutcomeQuery.fields })

const html = (doc: Html, status = 200) => ({ status, response: pageResponse(doc, status), refs: [] as Array<string> })

/** The viewer line, the clock and whether the caller may decide or redact, for every page. */
const pageContext = Effect.gen(function*() {
  const caller = yield* CurrentCaller
  // the right redact is looked up by its name: the list of rights may hold it (gaps.md §12)
  const rights: ReadonlyArray<string> = caller.grant.rights
  return {
    viewer: yield* viewerOf(caller.identity.identity, caller.grant.id),
    canDecide: rights.includes("decide"),
    canRedact: rights.includes("redact")
  }
})

export const indexPageCall: Page<{ readonly scope?: string | undefined; readonly page: number; readonly outcome: Outcome | null }, AppConfig | ScopeStore | RuleIndex> = {
  parse: ({ query }) => Effect.map(decodeStrict(IndexQuery, query, "query"), (q) => ({ scope: q.scope, page: q.page, outcome: outcomeFromQuery(q) })),
  call: {
    name: "list_proposals",
    right: "read",
    scopes: (q) => (q.scope === undefined ? "grant" : [q.scope]),
    run: (q, call) =>
      Effect.gen(function*() {
        const { viewer, canDecide } = yield* pageContext
        const page = q.scope === undefined ? 1 : q.page
        const { sections, clock, today } = yield* loadIndexSections(call.scopes, page)
        const refs = sections.flatMap((s) => [...s.proposals.map((p) => ruleRef(p.rule_id, p.version)), ...s.adopted.map((a) => ruleRef(a.rule_id, a.version))])
        const canRedact = (yield* CurrentCaller).grant.rights.includes("redact")
        return { ...html(indexPage({ viewer, sections, clock, single: q.scope !== undefined, canRedact, canDecide, outcome: q.outcome, bulk: null, digestSince: dayBefore(today) })), refs }
      })
  }
}

const RecheckQuery = Schema.Struct({ scope: Schema.optional(ScopeName), ...OutcomeQuery.fields })

/** GET /approval/digest?since=: the digest (src/operations/digest.ts) of the grant's scopes as a page. */
export const digestPageCall: Page<{ readonly since: string }, AppConfig | ScopeStore> = {
  parse: ({ query }) => parseDigestQuery(query),
  call: {
    name: "list_proposals",
    right: "read",
    scopes: () => "grant",
    run: (q, call) =>
      Effect.gen(function*() {
        const config = yield* AppConfig
        const { viewer, canDecide } = yield* pageContext
        const clock = yield* clockwork
        const digest = yield* digestOf(call.scopes, q.since, structureWaiting)
        const doc = digestPage({ viewer, digest, clock, recheckAfterDays: config.file.recheck_after_days, canDecide })
        const refs = digest.scopes.flatMap((s) => [...s.adopted.map((a) => ruleRef(a.rule_id, a.version)), ...s.dueForRecheck.map((r) => ruleRef(r.rule_id, r.version))])
        return { ...html(doc), refs }
      })
  }
}

/** GET /approval/recheck[?scope=]: the confirmed rules due for recheck, oldest first, per scope. */
export const recheckPageCall: Page<{ readonly scope?: string | undefined; readonly outcome: Outcome | null }, AppConfig | ScopeStore> = {
  parse: ({ query }) => Effect.map(decodeStrict(RecheckQuery, query, "query"), (q) => ({ scope: q.scope, outcome: outcomeFromQuery(q) })),
  call: {
    name: "list_proposals",
    right: "read",
    scopes: (q) => (q.scope === undefined ? "grant" : [q.scope]),
    run: (q, call) =>
      Effect.gen(function*() {
        const { viewer, canDecide } = yield* pageContext
        const { sections, recheckAfterDays } = yield* loadRecheckSections(call.scopes)
        const doc = recheckPage({ viewer, sections, recheckAfterDays, canDecide, single: q.scope !== undefined, outcome: q.outcome, bulk: null })
        return { ...html(doc), refs: sections.flatMap((s) => s.due.map((r) => ruleRef(r.rule_id, r.version))) }
      })
  }
}

export const rulePageCall: Page<{ readonly id: string; readonly outcome: Outcome | null }, AppConfig | ScopeStore | OpsStore | RuleIndex> = {
  parse: ({ params, query }) =>
    Effect.gen(function*() {
      const id = params.id ?? ""
      if (!RULE_ID_RE.test(id)) return yield* new NotFound({ message: `no rule ${id}` })
      const q = yield* decodeStrict(OutcomeQuery, query, "query")
      return { id, outcome: outcomeFromQuery(q) }
    }),
  call: {
    name: "read_rule",
    right: "read",
    scopes: (p) => [scopeOfRuleId(p.id)],
    refs: (p) => [ruleRef(p.id)],
    run: (p) =>
      Effect.gen(function*() {
        const { viewer, canDecide, canRedact } = yield* pageContext
        const doc = yield* loadRulePage(p.id, { viewer, canDecide, canRedact, outcome: p.outcome })
        if (doc === undefined) return yield* new NotFound({ message: `no rule ${p.id}` })
        return { ...html(doc), refs: [ruleRef(p.id)] }
      })
  }
}

export const rejectedPageCall: Page<{ readonly scope: string; readonly page: number }, AppConfig | ScopeStore> = {
  parse: ({ query }) => decodeStrict(ScopeQuery, query, "query"),
  call: {
    name: "list_rejected",
    right: "decide",
    scopes: (q) => [q.scope],
    run: (q) =>
      Effect.gen(function*() {
        const store = yield* ScopeStore
        const { viewer } = yield* pageContext
        const clock = yield* clockwork
        const { rows, counts } = yield* store.read(q.scope, ({ sql }) =>
          Effect.all({ rows: rejectedRules(sql, REJECTED_PAGE_SIZE, (q.page - 1) * REJECTED_PAGE_SIZE), counts: statusCounts(sql) }))
        const doc = rejectedPage({ viewer, scope: q.scope, rows, total: counts.rejected, page: q.page, clock })
        return { ...html(doc), refs: rows.map((r) => ruleRef(r.rule_id, r.version)) }
      })
  }
}

export const structurePageCall: Page<{ readonly scope: string; readonly outcome: Outcome | null }, AppConfig | ScopeStore | OpsStore | RuleIndex> = {
  parse: ({ query }) => Effect.map(decodeStrict(StructureQuery, query, "query"), (q) => ({ scope: q.scope, outcome: outcomeFromQuery(q) })),
  call: {
    name: "list_structure",
    right: "read",
    scopes: (q) => [q.scope],
    run: (q) =>
      Effect.gen(function*() {
        const { viewer, canDecide } = yield* pageContext
        const { items, page } = yield* loadStructurePage(q.scope, { viewer, canDecide, outcome: q.outcome })
        return { ...html(page), refs: items.map((i) => i.ref) }
      })
  }
}
