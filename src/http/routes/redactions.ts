/**
 * POST /v1/redactions/preview and POST /v1/redactions (gaps.md §12): the approval channel only, a
 * person whose grant holds `redact`; same origin and the csrf token are checked before anything
 * else of the request is read (as POST /v1/rules/:id/decision). A JSON body is the operation's
 * input; a form post of /approval/redactions is answered with its page (previewed, erased, or
 * refused). The only importer of the redaction operation besides the approval pages.
 */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { asPageForFormPost } from "../../approval/error-page.js"
import { previewFromForm, redactFromForm } from "../../approval/redactions-form.js"
import type { Operation } from "../../auth/operation.js"
import { decodeInput } from "../../auth/scope-check.js"
import { createRedactionOp, previewRedactionOp } from "../../operations/redactions.js"
import { Api } from "../api.js"
import { type RequestParts, serveRoute } from "../handle.js"
import { checkCsrf } from "./decision.js"

type Input<I> = { readonly form: Readonly<Record<string, string>>; readonly scope: string } | { readonly req: I }

/** The scope a form names (checked by the pipeline like any other; an empty one is refused there). */
const formScope = (form: Readonly<Record<string, string>>): string => form.scope ?? ""

const parseWith = <I extends { readonly scope: string }, R>(op: Operation<I, R>) =>
  (parts: RequestParts) =>
    Effect.gen(function*() {
      yield* checkCsrf(parts)
      if (parts.body.form) {
        const form = parts.body.value as Record<string, string>
        return { form, scope: formScope(form) } satisfies Input<I>
      }
      return { req: yield* decodeInput(op, parts.body.value) } satisfies Input<I>
    })

const scopeOf = <I extends { readonly scope: string }>(p: Input<I>): Array<string> => ["form" in p ? p.scope : p.req.scope]

export const previewRoute = serveRoute({
  channel: "approval",
  call: {
    name: previewRedactionOp.name,
    right: previewRedactionOp.right,
    scopes: scopeOf,
    run: (p: Input<typeof previewRedactionOp.input.Type>, call) => ("form" in p ? previewFromForm(p.form) : previewRedactionOp.run(p.req, call))
  },
  parse: parseWith(previewRedactionOp)
})

export const redactRoute = serveRoute({
  channel: "approval",
  call: {
    name: createRedactionOp.name,
    right: createRedactionOp.right,
    scopes: scopeOf,
    run: (p: Input<typeof createRedactionOp.input.Type>, call) => ("form" in p ? redactFromForm(p.form) : createRedactionOp.run(p.req, call))
  },
  parse: parseWith(createRedactionOp)
})

export const RedactionsLive = HttpApiBuilder.group(Api, "redactions", (h) =>
  h.handleRaw("preview", ({ request }) => Effect.flatMap(previewRoute(request), asPageForFormPost(request)))
    .handleRaw("create", ({ request }) => Effect.flatMap(redactRoute(request), asPageForFormPost(request))))
