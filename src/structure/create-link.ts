/**
 * A person creates a link on the structure page (gaps.md §13, graph.md §15 Q2): the checks of a
 * proposed link (src/graph/links.ts), origin 'human', created_by the person, the reason required,
 * and in the same transaction the person's 'confirm' review row, so the link is born confirmed and
 * a person may close it later (the close needs a confirm). Reachable only from the approval
 * channel (AT2b).
 */
import { Effect, type ParseResult, Schema } from "effect"
import { type ValidationFailed, validationFailed } from "../contracts/errors.js"
import { STRICT } from "../contracts/schemas.js"
import { PersonLinkRequest } from "../graph/correction-schemas.js"
import { linkRef } from "../graph/link-types.js"
import { createPersonLink } from "../graph/links.js"
import { nowInstant } from "../contracts/time.js"
import { insertReview, type Person } from "./review.js"

export const parsePersonLink = (raw: unknown): Effect.Effect<PersonLinkRequest, ValidationFailed> =>
  Schema.decodeUnknown(PersonLinkRequest, STRICT)(raw).pipe(Effect.mapError((e: ParseResult.ParseError) => validationFailed(e, "link")))

/** The form of the structure page: the ends as typed (trimmed), empty evidence dropped. */
export const formToPersonLink = (form: Readonly<Record<string, string>>): unknown => {
  const out: Record<string, unknown> = {
    scope: form.scope, from_ref: (form.from_ref ?? "").trim(), to_ref: (form.to_ref ?? "").trim(), type: form.type ?? "", reason: form.reason ?? ""
  }
  if (form.evidence !== undefined && form.evidence.trim() !== "") out.evidence = form.evidence.trim()
  return out
}

/** The person's link: {created: true, link, path, review}. */
export const createLinkByPerson = (req: PersonLinkRequest, person: Person) =>
  Effect.gen(function*() {
    const at = yield* nowInstant
    const out = yield* createPersonLink(req, person.grantId, (sql, row) =>
      insertReview(sql, req.scope, { target: linkRef(row.id), verdict: "confirm", person, at, reason: req.reason, newVersion: null }))
    return { created: true as const, ...out }
  })
