/**
 * Search feedback (architecture.md §6.5): every ref's scope must hold a search_log row with this
 * id, operation search and the caller's grant (else the same 404 as an unknown id); one feedback
 * row per item in that scope. The writer of `feedback`.
 */
import { Clock, Effect } from "effect"
import { ScopeStore } from "../db/scope-store.js"
import { NotFound } from "../contracts/errors.js"
import { parseRuleRef, scopeOfRuleId } from "../contracts/ids.js"
import type { FeedbackRequest } from "../domain/search-schemas.js"

export const FEEDBACK_NOT_FOUND = "no such search"

interface Item {
  readonly scope: string
  readonly ref: string
  readonly verdict: "relevant" | "irrelevant" | "missing"
}

export const feedbackItems = (req: FeedbackRequest): ReadonlyArray<Item> => [
  ...req.bundles.map((b) => ({ scope: scopeOfRuleId(parseRuleRef(b.ref)?.id ?? ""), ref: b.ref, verdict: b.verdict })),
  // a missing rule is recorded without a version: rule/<id>
  ...req.missing.map((m) => ({ scope: scopeOfRuleId(parseRuleRef(m)?.id ?? ""), ref: `rule/${parseRuleRef(m)?.id ?? ""}`, verdict: "missing" as const }))
]

export const feedbackScopes = (req: FeedbackRequest): ReadonlyArray<string> => [...new Set(feedbackItems(req).map((i) => i.scope))]

export const recordFeedback = Effect.fn("Search.feedback")(function*(searchId: string, req: FeedbackRequest, grantId: string) {
  const store = yield* ScopeStore
  const items = feedbackItems(req)
  const scopes = feedbackScopes(req)
  const at = new Date(yield* Clock.currentTimeMillis).toISOString()
  // Every scope must know the search before anything is written.
  for (const scope of scopes) {
    const rows = yield* store.read(scope, ({ sql }) =>
      sql<{ n: number }>`SELECT count(*) AS n FROM search_log WHERE id = ${searchId} AND operation = 'search' AND grant_id = ${grantId}`)
    if ((rows[0]?.n ?? 0) === 0) return yield* new NotFound({ message: FEEDBACK_NOT_FOUND })
  }
  for (const scope of scopes) {
    yield* store.write(scope, ({ sql }) =>
      Effect.forEach(items.filter((i) => i.scope === scope), (i) =>
        sql`INSERT INTO feedback (search_id, ref, verdict, given_by, given_at) VALUES (${searchId}, ${i.ref}, ${i.verdict}, ${grantId}, ${at})`.raw,
      { discard: true }))
  }
  return { recorded: items.length }
})
