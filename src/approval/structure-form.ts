/**
 * Form posts of the structure page and the rule page's link forms: POST /v1/reviews and POST
 * /v1/entities/:id/archive through the same writers as a JSON post. Saved → 303 back to the page
 * (the rule page the link form came from, else the structure page at the item) with the outcome;
 * refused → that page itself with the refusal's status, its code, remedy, the current version and
 * what changed since the version the person saw.
 */
import { HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { type Caller, CurrentCaller } from "../auth/caller.js"
import { type DomainError, ERROR_STATUS, toErrorBody } from "../contracts/errors.js"
import { archiveEntity, formToArchive, parseArchive } from "../structure/archive.js"
import { applyReview, formToReview, parseReview } from "../structure/review.js"
import { viewerOf } from "./context.js"
import { refusedOutcome } from "./decision-form.js"
import { errorPage } from "./error-page.js"
import { PAGE_HEADERS, segment } from "./html.js"
import { pageResponse } from "./layout.js"
import type { DoneKind, Outcome } from "./outcome.js"
import { structurePath } from "./structure-page.js"
import { loadStructurePage } from "./structure-view.js"
import { loadRulePage } from "./views.js"

const RULE_BACK_RE = /^\/approval\/rules\/[a-z][a-z0-9-]{1,39}-\d{4,}$/

/** Where a structure form lands: the rule page it came from (checked), else the structure page. */
const backOf = (form: Readonly<Record<string, string>>): string | null => (form.back !== undefined && RULE_BACK_RE.test(form.back) ? form.back : null)

const DONE_OF: Readonly<Record<string, DoneKind>> = { confirm: "structure-confirm", reject: "structure-reject", revert: "structure-revert" }

export const landing = (scope: string, back: string | null, done: DoneKind, target: string, anchor: string) => {
  const query = `done=${done}&target=${encodeURIComponent(target)}`
  const location = back === null ? `${structurePath(scope)}&${query}#${segment(anchor)}` : `${back}?${query}#${segment(anchor)}`
  return HttpServerResponse.redirect(location, { status: 303, headers: PAGE_HEADERS })
}

/** A refusal of a structure form: the page it came from, with the refusal and its status (`refine` may name the field). */
export const refusedPage = (
  scope: string, back: string | null, e: DomainError, form: Readonly<Record<string, string>>, ctx: Caller,
  refine: (o: Outcome) => Outcome = (o) => o
) =>
  Effect.gen(function*() {
    const viewer = yield* viewerOf(ctx.identity.identity, ctx.grant.id)
    const status = ERROR_STATUS[e.code]
    const outcome = refine(refusedOutcome(e, form))
    const canDecide = ctx.grant.rights.includes("decide")
    const doc = back === null
      ? (yield* loadStructurePage(scope, { viewer, canDecide, outcome })).page
      : (yield* loadRulePage(back.slice("/approval/rules/".length), { viewer, canDecide, outcome })) ??
        errorPage({ status, code: e.code, message: toErrorBody(e).message ?? "", viewer })
    return { status, response: pageResponse(doc, status), refs: [outcome.kind === "refused" && outcome.current !== null ? outcome.current : scope] }
  })

/** POST /v1/reviews from a form of the structure page or a rule page. */
export const reviewFromForm = (scope: string, form: Readonly<Record<string, string>>) =>
  Effect.gen(function*() {
    const ctx = yield* CurrentCaller
    const back = backOf(form)
    const done = yield* Effect.flatMap(parseReview(formToReview(form)), (req) =>
      applyReview(req, { grantId: ctx.grant.id, identity: ctx.identity.identity })).pipe(
      Effect.catchTag("SqlError", (e) => Effect.die(e)),
      Effect.either
    )
    if (done._tag === "Left") return yield* refusedPage(scope, back, done.left, form, ctx)
    const r = done.right
    const anchor = r.current.replace(/^(entity|link)\//, "").replace(/@\d+$/, "")
    return { status: 200, response: landing(scope, back, DONE_OF[r.review.verdict] ?? "structure-confirm", r.current, anchor), refs: [r.review.target, r.current] }
  })

/** POST /v1/entities/:id/archive from a form of the structure page. */
export const archiveFromForm = (id: string, scope: string, form: Readonly<Record<string, string>>) =>
  Effect.gen(function*() {
    const ctx = yield* CurrentCaller
    const done = yield* Effect.flatMap(parseArchive(formToArchive(form)), (req) =>
      archiveEntity(id, req, { grantId: ctx.grant.id, identity: ctx.identity.identity })).pipe(
      Effect.catchTag("SqlError", (e) => Effect.die(e)),
      Effect.either
    )
    if (done._tag === "Left") return yield* refusedPage(scope, null, done.left, { archive: id, ...form }, ctx)
    return { status: 200, response: landing(scope, null, "archive", done.right.current, id), refs: [done.right.current] }
  })
