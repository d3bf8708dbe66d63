/**
 * A person closes a confirmed link (gaps.md §13, graph.md §15 Q3): link.valid_to = now (the one
 * change link_end_once allows) and a review row verdict 'close', origin 'grant', with the reason,
 * in one transaction. Reachable only from the approval channel (AT2b).
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, type ParseResult, Schema } from "effect"
import { ScopeStore } from "../db/scope-store.js"
import { triggerMessage } from "../db/errors.js"
import { type GraphRefusal, refuse, type ValidationFailed, validationFailed } from "../contracts/errors.js"
import { LINK_ID_RE, scopeOfGraphId } from "../contracts/ids.js"
import { STRICT } from "../contracts/schemas.js"
import { nowInstant } from "../contracts/time.js"
import { CloseLinkRequest } from "../graph/correction-schemas.js"
import type { LinkRow } from "../graph/counted.js"
import { linkRef } from "../graph/link-types.js"
import { entityEndOf } from "../graph/links.js"
import { pathOf } from "../graph/paths.js"
import { insertReview, type Person } from "./review.js"

export const parseCloseLink = (raw: unknown): Effect.Effect<CloseLinkRequest, ValidationFailed> =>
  Schema.decodeUnknown(CloseLinkRequest, STRICT)(raw).pipe(Effect.mapError((e: ParseResult.ParseError) => validationFailed(e, "close")))

export const formToCloseLink = (form: Readonly<Record<string, string>>): unknown => ({ reason: form.reason ?? "" })

const notFound = (id: string) =>
  refuse("not-found", {
    message: `no link ${id} in this scope`,
    remedy: "choose a link the structure page lists under \"Close a link\"",
    issues: [{ path: "link", message: "is not a link of this scope" }],
    next: []
  })

/** Not confirmed: a proposed link is confirmed or rejected, not closed (review_ends' invalid-transition). */
const notConfirmed = (id: string) =>
  refuse("validation-failed", {
    message: `link ${id} is not confirmed; only a confirmed link is closed`,
    remedy: "a proposed link is rejected (or confirmed) in the list of pending changes instead",
    issues: [{ path: "link", message: "is not a confirmed link: reject it in the list instead" }],
    next: []
  })

/**
 * Checks in this order: not-found (an unknown link id of the scope), already-decided (closed
 * already), validation-failed naming `link` (computed or not confirmed); then the valid_to and the
 * review row. The trigger's refusals map to the same answers (backstop).
 */
export const closeLink = Effect.fn("Structure.closeLink")(function*(id: string, req: CloseLinkRequest, person: Person) {
  const store = yield* ScopeStore
  if (!LINK_ID_RE.test(id)) return yield* notFound(id)
  const scope = scopeOfGraphId(id)
  if (!store.configured.includes(scope)) return yield* notFound(id)
  const at = yield* nowInstant
  return yield* store.write(scope, ({ sql }) =>
    Effect.gen(function*() {
      const link = (yield* sql<LinkRow>`SELECT * FROM link WHERE id = ${id}`)[0]
      if (link === undefined) return yield* notFound(id)
      const target = linkRef(id)
      if (link.valid_to !== null) {
        return yield* refuse("already-decided", {
          message: `link ${id} is closed already (since ${link.valid_to})`, remedy: "nothing to do: the link no longer holds", current: target, next: []
        })
      }
      const verdicts = (yield* sql<{ verdict: string }>`SELECT verdict FROM review WHERE target = ${target}`).map((r) => r.verdict)
      if (link.origin === "deterministic" || !verdicts.includes("confirm") || verdicts.includes("reject")) return yield* notConfirmed(id)
      const review = yield* Effect.gen(function*() {
        const review = yield* insertReview(sql, scope, { target, verdict: "close", person, at, reason: req.reason, newVersion: null })
        yield* sql`UPDATE link SET valid_to = ${at} WHERE id = ${id}`.raw
        return review
      }).pipe(Effect.catchTag("SqlError", (e): Effect.Effect<never, GraphRefusal | SqlError> => {
        switch (triggerMessage(e)) {
          case "invalid-transition":
            return Effect.fail(notConfirmed(id))
          case "append-only":
            return Effect.fail(refuse("already-decided", { message: `link ${id} is closed already`, remedy: "nothing to do", current: target, next: [] }))
          default:
            return Effect.fail(e)
        }
      }))
      const entity = entityEndOf(link.from_ref, link.to_ref)
      return {
        closed: true as const,
        link: target,
        valid_to: at,
        review,
        path: entity === null ? [] : yield* pathOf(sql, entity),
        next: []
      }
    }))
})
