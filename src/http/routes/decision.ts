/**
 * POST /v1/rules/:id/decision and POST /v1/decisions (several in one) — the approval channel, a
 * person with decide (invariant 2). The only importer of src/decision/** besides the approval
 * pages (AT2). Same origin and the csrf
 * token are checked before anything else of the request is read (architecture.md §5.3).
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Redacted } from "effect"
import { decideFromForm } from "../../approval/decision-form.js"
import { relationsFromRows } from "../../approval/relation-rows.js"
import { asPageForFormPost } from "../../approval/error-page.js"
import { CurrentCaller } from "../../auth/caller.js"
import { csrfOk } from "../../auth/csrf.js"
import { AppConfig } from "../../config/config.js"
import { decideManyFromForm, selectedOf } from "../../approval/bulk-form.js"
import { applyDecision, applyDecisions, type DecisionItem, parseDecision, parseDecisions } from "../../decision/decide.js"
import type { DecisionRequest } from "../../domain/decision-schemas.js"
import { CsrfFailed, NotFound, ValidationFailed } from "../../contracts/errors.js"
import { RULE_ID_RE, ruleRef, SCOPE_NAME_RE, scopeOfRuleId } from "../../contracts/ids.js"
import { instantOfLocal } from "../../contracts/time.js"
import { Api } from "../api.js"
import { type RequestParts, serveRoute } from "../handle.js"

type DecideInput =
  | { readonly id: string; readonly form: Readonly<Record<string, string>> }
  | { readonly id: string; readonly req: DecisionRequest }

const supersededScope = (p: DecideInput): Array<string> => {
  if (!("req" in p) || p.req.decision !== "confirm") return []
  const named = p.req.change?.supersedes
  return typeof named === "string" ? [scopeOfRuleId(named)] : []
}

export const CSRF_FAILED_MESSAGE = "same-origin request with a valid csrf token required"

/** Same origin and the csrf token (form field or header `csrf`) of the caller's identity. */
export const checkCsrf = (input: RequestParts) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const caller = yield* CurrentCaller
    const form = input.body.form ? (input.body.value as Record<string, string>) : {}
    const ok = csrfOk({
      secret: Redacted.value(config.env.sessionSecret),
      identity: caller.identity.identity,
      publicUrl: config.file.public_url,
      origin: input.request.headers.origin,
      secFetchSite: input.request.headers["sec-fetch-site"],
      token: input.request.headers.csrf ?? form.csrf
    })
    if (!ok) return yield* new CsrfFailed({ message: CSRF_FAILED_MESSAGE })
  })

const CHANGE_FIELDS = ["statement", "kind", "valid_from", "said_at", "speaker", "supersedes", "source", "quote", "timestamp_s", "source_link", "link"] as const

/**
 * A form post of the approval pages as a DecisionRequest: keywords comma-separated, relations as
 * the confirm form's rows (relationsFromRows; a JSON `relations` field still works), empty
 * fields left out; change fields go into `change`.
 */
export const formToDecision = (form: Readonly<Record<string, string>>, zone: string): unknown => {
  const present = (k: string) => form[k] !== undefined && form[k] !== ""
  const change: Record<string, unknown> = {}
  for (const f of CHANGE_FIELDS) if (present(f)) change[f] = f === "timestamp_s" ? Number(form[f]) : form[f]
  // said_at as the page shows it, local time in config.zone: only a changed value is a change (a bad one fails the schema)
  const local = (form.said_at_local ?? "").trim()
  if (local !== "" && local !== (form.said_at_shown ?? "").trim()) change.said_at = instantOfLocal(zone, local) ?? local
  if (present("keywords")) change.keywords = (form.keywords ?? "").split(",").map((k) => k.trim()).filter((k) => k.length > 0)
  const rows = relationsFromRows(form)
  if (rows !== undefined) change.relations = rows
  else if (present("relations")) {
    try {
      change.relations = JSON.parse(form.relations ?? "")
    } catch {
      change.relations = form.relations
    }
  }
  const out: Record<string, unknown> = { decision: form.decision, version: Number(form.version) }
  if (present("reason")) out.reason = form.reason
  if (present("valid_until")) out.valid_until = form.valid_until
  if (Object.keys(change).length > 0) out.change = change
  return out
}

export const decideRoute = serveRoute({
  channel: "approval",
  call: {
    name: "decide",
    right: "decide",
    // the rule's scope and, for a confirm that changes supersedes, the superseded rule's (§5.2 steps 2–3)
    scopes: (p: DecideInput) => [scopeOfRuleId(p.id), ...supersededScope(p)],
    refs: (p: DecideInput) => [ruleRef(p.id)],
    run: (p: DecideInput) =>
      "form" in p
        ? Effect.flatMap(AppConfig, (config) => decideFromForm(p.id, formToDecision(p.form, config.file.zone), p.form))
        : Effect.gen(function*() {
          const caller = yield* CurrentCaller
          const result = yield* applyDecision(p.id, p.req, { grantId: caller.grant.id, identity: caller.identity.identity })
          return { status: 200, body: result, refs: [result.current] }
        })
  },
  parse: (input) =>
    Effect.gen(function*() {
      yield* checkCsrf(input)
      const id = input.params.id ?? ""
      // A form post of the approval pages is decided (and refused) on its page: parsed in run.
      if (input.body.form) {
        if (!RULE_ID_RE.test(id)) return yield* new NotFound({ message: `no rule ${id}` })
        return { id, form: input.body.value as Record<string, string> } satisfies DecideInput
      }
      const req = yield* parseDecision(input.body.value)
      if (!RULE_ID_RE.test(id)) return yield* new NotFound({ message: `no rule ${id}` })
      return { id, req } satisfies DecideInput
    })
})

type DecideManyInput =
  | { readonly scopes: ReadonlyArray<string>; readonly scope: string; readonly form: Readonly<Record<string, string>> }
  | { readonly scopes: ReadonlyArray<string>; readonly items: ReadonlyArray<DecisionItem> }

const scopeField = (form: Readonly<Record<string, string>>) =>
  SCOPE_NAME_RE.test(form.scope ?? "")
    ? Effect.succeed(form.scope ?? "")
    : Effect.fail(new ValidationFailed({ message: "decisions is invalid: scope: must name the scope of the form", issues: [{ path: "scope", message: "must name the scope of the form" }] }))

/**
 * POST /v1/decisions — several decisions of one scope in one POST (one transaction, all or
 * nothing, the refused item named), counted as one decision by the rate limit (call decide). A
 * form post of the approval index is decided (and refused) on the index.
 */
export const decideManyRoute = serveRoute({
  channel: "approval",
  call: {
    name: "decide",
    right: "decide",
    // every named rule's scope and every superseded rule's: more than one is 400 multiple-scopes-without-flag
    scopes: (p: DecideManyInput) => p.scopes,
    refs: (p: DecideManyInput) => ("items" in p ? p.items.map((i) => ruleRef(i.rule_id)) : selectedOf(p.form).map(([id]) => `rule/${id}`)),
    run: (p: DecideManyInput) =>
      "form" in p
        ? decideManyFromForm(p.scope, p.form)
        : Effect.gen(function*() {
          const caller = yield* CurrentCaller
          const result = yield* applyDecisions(p.items, { grantId: caller.grant.id, identity: caller.identity.identity })
          return { status: 200, body: result, refs: result.current }
        })
  },
  parse: (input) =>
    Effect.gen(function*() {
      yield* checkCsrf(input)
      if (input.body.form) {
        const form = input.body.value as Record<string, string>
        const scope = yield* scopeField(form)
        // a selected rule of another scope than the form's is refused by the scope check, never decided
        const named = selectedOf(form).map(([id]) => (RULE_ID_RE.test(id) ? scopeOfRuleId(id) : scope))
        return { scopes: [...new Set([scope, ...named])], scope, form } satisfies DecideManyInput
      }
      const items = yield* parseDecisions(input.body.value)
      const scopes = [...new Set(items.flatMap((i) => [scopeOfRuleId(i.rule_id), ...supersededScope({ id: i.rule_id, req: i.req })]))]
      return { scopes, items } satisfies DecideManyInput
    })
})

export const DecisionLive = HttpApiBuilder.group(Api, "decision", (h) =>
  h.handleRaw("decide", ({ path, request }) => Effect.flatMap(decideRoute(request, path), asPageForFormPost(request)))
    .handleRaw("decideMany", ({ request }) => Effect.flatMap(decideManyRoute(request), asPageForFormPost(request))))
