/**
 * The bulk forms of the approval pages: the index's per-scope form (POST /v1/decisions, confirm or
 * reject every selected proposal), the recheck list's per-scope form (POST /v1/decisions with
 * `back=recheck`, mark every selected rule reviewed) and the structure page's form (POST /v1/reviews with `bulk`,
 * confirm or revert/reject every selected change), through the same writers as a JSON post.
 * Saved → 303 to the page with how many were saved; refused → that page itself with the refusal's
 * status, the refused item marked and named, the selection and the reason kept (nothing saved).
 */
import { HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { type Caller, CurrentCaller } from "../auth/caller.js"
import { type DomainError, ERROR_STATUS } from "../contracts/errors.js"
import { applyDecisions, parseDecisions } from "../decision/decide.js"
import { applyReviews, parseReviews } from "../structure/review.js"
import { viewerOf } from "./context.js"
import { refusedOutcome } from "./decision-form.js"
import { PAGE_HEADERS } from "./html.js"
import { indexPage } from "./index-page.js"
import { loadIndexSections } from "./index-view.js"
import { pageResponse } from "./layout.js"
import type { BulkState, Outcome } from "./outcome.js"
import { recheckPath } from "./recheck-list.js"
import { recheckPage } from "./recheck-page.js"
import { loadRecheckSections } from "./recheck-view.js"
import { structurePath } from "./structure-page.js"
import { loadStructurePage } from "./structure-view.js"

const ITEM = "item:"

/** The selected items of a bulk form, in the page's order: [name after `item:`, value]. */
export const selectedOf = (form: Readonly<Record<string, string>>): Array<readonly [string, string]> =>
  Object.entries(form).filter(([k]) => k.startsWith(ITEM)).map(([k, v]) => [k.slice(ITEM.length), v] as const)

const reasonOf = (form: Readonly<Record<string, string>>) => (form.reason !== undefined && form.reason !== "" ? { reason: form.reason } : {})

/** The index's bulk form as the body of POST /v1/decisions: `item:<rule id>` = the version seen. */
export const formToDecisions = (form: Readonly<Record<string, string>>): unknown => ({
  items: selectedOf(form).map(([ruleId, version]) => ({ rule_id: ruleId, decision: form.decision, version: Number(version), ...reasonOf(form) }))
})

/** The structure page's bulk form as the bulk body of POST /v1/reviews: `item:<target>`; "revert" rejects a selected link. */
export const formToReviews = (form: Readonly<Record<string, string>>): unknown => ({
  items: selectedOf(form).map(([target]) => ({
    target, verdict: form.verdict === "revert" && target.startsWith("link/") ? "reject" : form.verdict, ...reasonOf(form)
  }))
})

const ITEM_PATH = /^items\[(\d+)\](?:\.(.+))?$/

/**
 * A refusal of a bulk form in the page's words: each issue labelled with the item it names (its
 * rule id or structure change), what the person sent (decision, reason, the selection), and the
 * refused item with its note for the list.
 */
const bulkRefusal = (e: DomainError, form: Readonly<Record<string, string>>, button: "decision" | "verdict", what: string) => {
  const selected = selectedOf(form).map(([name]) => name)
  const base = refusedOutcome(e, {})
  if (base.kind !== "refused") return { outcome: base, state: null }
  let refused: string | null = null
  let note: string | null = null
  const issues = base.issues.map((i) => {
    if (i.path === "items") return { path: "Selection", message: selected.length === 0 ? `select at least one ${what}` : i.message }
    const m = ITEM_PATH.exec(i.path)
    const name = m === null ? undefined : selected[Number(m[1])]
    if (name === undefined) return i
    refused ??= name
    note ??= i.message
    return { path: `${what[0]?.toUpperCase() ?? ""}${what.slice(1)} ${name}${m?.[2] === undefined ? "" : ` (${m[2]})`}`, message: i.message }
  })
  const sent: Record<string, string> = {
    ...(form[button] === undefined ? {} : { [button === "decision" ? "decision" : "verdict"]: form[button] ?? "" }),
    reason: form.reason ?? "",
    Selected: selected.length === 0 ? "nothing" : selected.join(", ")
  }
  const outcome: Outcome = { ...base, issues, sent }
  const state: BulkState = { checked: new Set(selected), refused, note, reason: form.reason ?? "" }
  return { outcome, state }
}

const person = (ctx: Caller) => ({ grantId: ctx.grant.id, identity: ctx.identity.identity })

const PAGE_RE = /^[1-9]\d{0,5}$/

/** The page a bulk decision form came from: the recheck list says so (`back=recheck`), else the index. */
const fromRecheck = (form: Readonly<Record<string, string>>): boolean => form.back === "recheck"

/** POST /v1/decisions from a scope's bulk form of the approval index or of the recheck list. */
export const decideManyFromForm = (scope: string, form: Readonly<Record<string, string>>) =>
  Effect.gen(function*() {
    const ctx = yield* CurrentCaller
    const done = yield* Effect.flatMap(parseDecisions(formToDecisions(form)), (items) => applyDecisions(items, person(ctx))).pipe(
      // a failure of our own storage stays a 500 of the pipeline
      Effect.catchTag("SqlError", (e) => Effect.die(e)),
      Effect.either
    )
    if (done._tag === "Right") {
      // every item was decided with the form's decision (a review of rules due for recheck too)
      const kind = ["confirm", "reject", "revoke", "review"].includes(form.decision ?? "") ? form.decision ?? "confirm" : "confirm"
      const page = fromRecheck(form) ? `${recheckPath(scope)}&` : `/approval?scope=${encodeURIComponent(scope)}&`
      const location = `${page}done=${kind}&n=${done.right.decided}#outcome`
      return { status: 200, response: HttpServerResponse.redirect(location, { status: 303, headers: PAGE_HEADERS }), refs: done.right.current }
    }
    const e = done.left
    const status = ERROR_STATUS[e.code]
    const viewer = yield* viewerOf(ctx.identity.identity, ctx.grant.id)
    const refs = selectedOf(form).map(([id]) => `rule/${id}`)
    if (fromRecheck(form)) {
      const { outcome, state } = bulkRefusal(e, form, "decision", "rule")
      const { sections, recheckAfterDays } = yield* loadRecheckSections([scope])
      const doc = recheckPage({
        viewer, sections, recheckAfterDays, canDecide: true, single: true, outcome, bulk: state === null ? null : { scope, state }
      })
      return { status, response: pageResponse(doc, status), refs }
    }
    const page = PAGE_RE.test(form.page ?? "") ? Number(form.page) : 1
    const { sections, clock } = yield* loadIndexSections([scope], page)
    const { outcome, state } = bulkRefusal(e, form, "decision", "proposal")
    const doc = indexPage({
      viewer, sections, clock, single: true, canRedact: ctx.grant.rights.includes("redact"), canDecide: true, outcome,
      bulk: state === null ? null : { scope, state }
    })
    return { status, response: pageResponse(doc, status), refs }
  })

/** POST /v1/reviews from the bulk form of the structure page. */
export const reviewManyFromForm = (scope: string, form: Readonly<Record<string, string>>) =>
  Effect.gen(function*() {
    const ctx = yield* CurrentCaller
    const done = yield* Effect.flatMap(parseReviews(formToReviews(form)), (reqs) => applyReviews(reqs, person(ctx))).pipe(
      Effect.catchTag("SqlError", (e) => Effect.die(e)),
      Effect.either
    )
    if (done._tag === "Right") {
      const kind = form.verdict === "revert" ? "structure-revert" : "structure-confirm"
      const location = `${structurePath(scope)}&done=${kind}&n=${done.right.reviewed}#outcome`
      return { status: 200, response: HttpServerResponse.redirect(location, { status: 303, headers: PAGE_HEADERS }), refs: done.right.current }
    }
    const e = done.left
    const status = ERROR_STATUS[e.code]
    const viewer = yield* viewerOf(ctx.identity.identity, ctx.grant.id)
    const { outcome, state } = bulkRefusal(e, form, "verdict", "change")
    const { page } = yield* loadStructurePage(scope, { viewer, canDecide: true, outcome, bulk: state })
    return { status, response: pageResponse(page, status), refs: selectedOf(form).map(([target]) => target) }
  })
