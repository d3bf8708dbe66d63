/**
 * POST /v1/rules/:id/decision — the approval channel, a person with decide (invariant 2). The
 * only importer of src/decision/** besides the approval pages (AT2). Same origin and the csrf
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
import { applyDecision, parseDecision } from "../../decision/decide.js"
import type { DecisionRequest } from "../../domain/decision-schemas.js"
import { CsrfFailed, NotFound } from "../../contracts/errors.js"
import { RULE_ID_RE, ruleRef, scopeOfRuleId } from "../../contracts/ids.js"
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

export const DecisionLive = HttpApiBuilder.group(Api, "decision", (h) =>
  h.handleRaw("decide", ({ path, request }) => Effect.flatMap(decideRoute(request, path), asPageForFormPost(request))))
