/**
 * The forms of /approval/redactions, posted to POST /v1/redactions/preview and POST
 * /v1/redactions: the same operation as a JSON post (src/operations/redactions.ts). A preview
 * answers the preview page; a redaction → 303 to /approval/redactions?scope=&done=<id>#outcome;
 * a refusal answers the page with the refusal's status (a stale preview shows the preview as the
 * scope stands now, so the person checks it and confirms again). Nothing of the term or the
 * reason goes to an address or a log.
 */
import { HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { CurrentCaller } from "../auth/caller.js"
import { decodeStrict } from "../contracts/decode.js"
import { type DomainError, ERROR_STATUS, toErrorBody } from "../contracts/errors.js"
import { RedactionCreate, RedactionPreviewRequest } from "../contracts/redaction.js"
import { previewTerm, redactTerm } from "../operations/redactions.js"
import { viewerOf } from "./context.js"
import { PAGE_HEADERS } from "./html.js"
import { pageResponse } from "./layout.js"
import { previewPage, redactionsPath, type Refusal } from "./redactions-page.js"
import { loadRedactionsPage } from "./redactions-view.js"

/** The fields of a form without the csrf token. */
const fields = (form: Readonly<Record<string, string>>): Record<string, string> => {
  const { csrf: _csrf, ...rest } = form
  return rest
}

const refusalOf = (e: DomainError): Refusal => ({ status: ERROR_STATUS[e.code], code: e.code, message: toErrorBody(e).message ?? "" })

/** A refusal of a form: the preview page of the term as it stands now, or the start page when the term cannot be previewed. */
const refusedPage = (form: Readonly<Record<string, string>>, e: DomainError) =>
  Effect.gen(function*() {
    const ctx = yield* CurrentCaller
    const refusal = refusalOf(e)
    const scope = form.scope ?? ""
    const term = form.term ?? ""
    const again = yield* Effect.flatMap(decodeStrict(RedactionPreviewRequest, { scope, term }, "redaction preview"), previewTerm).pipe(
      Effect.catchTag("SqlError", (x) => Effect.die(x)),
      Effect.either
    )
    const viewer = yield* viewerOf(ctx.identity.identity, ctx.grant.id)
    const doc = again._tag === "Right"
      ? previewPage({ viewer, scopes: ctx.grant.scopes, term, preview: again.right.body, refusal, reason: form.reason ?? "" })
      : yield* loadRedactionsPage({ shown: ctx.grant.scopes.includes(scope) ? [scope] : [], scope: ctx.grant.scopes.includes(scope) ? scope : null, erased: null, refusal, term })
    return { status: refusal.status, response: pageResponse(doc, refusal.status), refs: [] as Array<string> }
  })

/** POST /v1/redactions/preview from the form: the preview page. */
export const previewFromForm = (form: Readonly<Record<string, string>>) =>
  Effect.gen(function*() {
    const ctx = yield* CurrentCaller
    const done = yield* Effect.flatMap(decodeStrict(RedactionPreviewRequest, fields(form), "redaction preview"), previewTerm).pipe(
      Effect.catchTag("SqlError", (e) => Effect.die(e)),
      Effect.either
    )
    if (done._tag === "Left") return yield* refusedPage(form, done.left)
    const viewer = yield* viewerOf(ctx.identity.identity, ctx.grant.id)
    const doc = previewPage({ viewer, scopes: ctx.grant.scopes, term: form.term ?? "", preview: done.right.body })
    return { status: 200, response: pageResponse(doc), refs: done.right.body.rules }
  })

/** POST /v1/redactions from the confirmation form: 303 to the start page naming the redaction. */
export const redactFromForm = (form: Readonly<Record<string, string>>) =>
  Effect.gen(function*() {
    const done = yield* Effect.flatMap(decodeStrict(RedactionCreate, fields(form), "redaction"), redactTerm).pipe(
      Effect.catchTag("SqlError", (e) => Effect.die(e)),
      Effect.either
    )
    if (done._tag === "Left") return yield* refusedPage(form, done.left)
    const held = done.right.checkpointed === false ? "&wal=held" : ""
    const location = `${redactionsPath(done.right.scope)}&done=${encodeURIComponent(done.right.id)}${held}#outcome`
    return { status: 201, response: HttpServerResponse.redirect(location, { status: 303, headers: PAGE_HEADERS }), refs: [] as Array<string> }
  })
