/**
 * A decision posted by a form of the rule page (architecture.md §10): the same decide() path as
 * a JSON post; afterwards the person lands back on the rule page. Saved → 303 to the page with
 * the outcome; a stale version (409 version-outdated) → 303 to the page, which says somebody
 * decided first and what changed since the version the person saw; any other refusal → the page
 * itself with the refusal's status, its code, the current version and what they sent.
 */
import { HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { CurrentCaller } from "../auth/caller.js"
import { applyDecision, parseDecision } from "../decision/decide.js"
import { ERROR_STATUS, type DomainError, toErrorBody } from "../contracts/errors.js"
import { ruleRef } from "../contracts/ids.js"
import { errorPage } from "./error-page.js"
import { PAGE_HEADERS } from "./html.js"
import { pageResponse } from "./layout.js"
import { DONE_KINDS, type Outcome } from "./outcome.js"
import { rulePath } from "./rule-page.js"
import { viewerOf } from "./context.js"
import { loadRulePage } from "./views.js"

/** The posted fields worth showing back (never the csrf token, nor where the form lands). */
export const sentFields = (form: Readonly<Record<string, string>>): Record<string, string> => {
  const { csrf: _csrf, back: _back, said_at_shown: _shown, ...rest } = form
  return rest
}

export const refusedOutcome = (e: DomainError, form: Readonly<Record<string, string>>): Outcome => {
  const body = toErrorBody(e)
  return {
    kind: "refused",
    status: ERROR_STATUS[e.code],
    code: body.error,
    message: body.message ?? "",
    issues: body.issues ?? [],
    remedy: body.remedy ?? null,
    current: body.current ?? null,
    sent: sentFields(form)
  }
}

/** Runs the decision of a form post; `raw` is the form as a DecisionRequest (keywords split, relations parsed). */
export const decideFromForm = (ruleId: string, raw: unknown, form: Readonly<Record<string, string>>) =>
  Effect.gen(function*() {
    const ctx = yield* CurrentCaller
    const decided = yield* Effect.flatMap(parseDecision(raw), (req) =>
      applyDecision(ruleId, req, { grantId: ctx.grant.id, identity: ctx.identity.identity })).pipe(
      // a failure of our own storage stays a 500 of the pipeline
      Effect.catchTag("SqlError", (e) => Effect.die(e)),
      Effect.either
    )
    if (decided._tag === "Right") {
      const r = decided.right
      const v = r.decision.new_version
      const location = `${rulePath(ruleId)}?done=${r.decision.kind}${v === null ? "" : `&v=${v}`}#outcome`
      return { status: 200, response: HttpServerResponse.redirect(location, { status: 303, headers: PAGE_HEADERS }), refs: [r.current] }
    }
    const e = decided.left
    const status = ERROR_STATUS[e.code]
    if (e.code === "version-outdated") {
      // somebody decided first: the browser leaves the POST address for the rule page, which says what happened and what changed
      const saw = Number(form.version)
      const kind = DONE_KINDS.find((k) => k === form.decision)
      const location = `${rulePath(ruleId)}?stale=${Number.isInteger(saw) && saw > 0 ? saw : 0}${kind === undefined ? "" : `&tried=${kind}`}#outcome`
      return { status, response: HttpServerResponse.redirect(location, { status: 303, headers: PAGE_HEADERS }), refs: [toErrorBody(e).current ?? ruleRef(ruleId)] }
    }
    const viewer = yield* viewerOf(ctx.identity.identity, ctx.grant.id)
    const outcome = refusedOutcome(e, form)
    const page = e.code === "not-found"
      ? undefined
      : yield* loadRulePage(ruleId, { viewer, canDecide: ctx.grant.rights.includes("decide"), outcome })
    const doc = page ?? errorPage({ status, code: e.code, message: toErrorBody(e).message ?? "", viewer })
    return {
      status,
      response: pageResponse(doc, status),
      refs: [outcome.kind === "refused" && outcome.current !== null ? outcome.current : ruleRef(ruleId)]
    }
  })

