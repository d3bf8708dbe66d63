/**
 * Form posts of the structure page's corrections (gaps.md §13): create an entity, create a link,
 * close a link, unarchive an entity, each through the same writer as its JSON post. Saved → 303
 * back to the structure page at the corrections with the outcome; refused → the structure page
 * with the refusal, the field named, and what the person typed kept in the form.
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { CurrentCaller } from "../auth/caller.js"
import type { DomainError } from "../contracts/errors.js"
import { closeLink, formToCloseLink, parseCloseLink } from "../structure/close-link.js"
import { createEntityByPerson, formToPersonEntity, parsePersonEntity } from "../structure/create-entity.js"
import { createLinkByPerson, formToPersonLink, parsePersonLink } from "../structure/create-link.js"
import type { Person } from "../structure/review.js"
import { formToUnarchive, parseUnarchive, unarchiveEntity } from "../structure/unarchive.js"
import type { Outcome } from "./outcome.js"
import { landing, refusedPage } from "./structure-form.js"

/** The anchor of the corrections section of the structure page. */
export const CORRECTIONS_ANCHOR = "corrections"

type Kind = "entity" | "link" | "close" | "unarchive"

/**
 * The field a refusal is about when the writer named none (the form shows it by its label).
 * Codes of the entity checks name the parent or the name, a link's unknown end names its side.
 */
const fieldOf = (kind: Kind, o: Extract<Outcome, { kind: "refused" }>): string => {
  switch (kind) {
    case "entity":
      if (o.code === "duplicate-candidate") return o.message.includes("force does not override") ? "name" : "force"
      if (o.code === "reason-missing") return "reason"
      if (o.code === "validation-failed") return "type"
      return "parent_id"
    case "link": {
      if (o.code === "already-decided") return "type"
      const to = o.sent.to_ref?.trim() ?? ""
      return to !== "" && o.message.includes(to) ? "to_ref" : "from_ref"
    }
    case "close":
      return "link"
    case "unarchive":
      return "entity"
  }
}

/** Names the field: an issue of its own where the refusal has none. */
const namesField = (kind: Kind) => (o: Outcome): Outcome =>
  o.kind !== "refused" || o.issues.length > 0 ? o : { ...o, issues: [{ path: fieldOf(kind, o), message: o.message }] }

type Done = "entity-created" | "link-created" | "link-closed" | "unarchive"

/** Runs one correction: saved → the landing, refused → the page with the refusal (storage failures stay 500). */
const run = <A, R>(
  kind: Kind,
  scope: string,
  form: Readonly<Record<string, string>>,
  write: (person: Person) => Effect.Effect<A, DomainError | SqlError, R>,
  saved: (a: A) => { readonly done: Done; readonly target: string }
) =>
  Effect.gen(function*() {
    const ctx = yield* CurrentCaller
    const done = yield* write({ grantId: ctx.grant.id, identity: ctx.identity.identity }).pipe(
      Effect.catchTag("SqlError", (e) => Effect.die(e)),
      Effect.either
    )
    if (done._tag === "Left") return yield* refusedPage(scope, null, done.left, { correction: kind, ...form }, ctx, namesField(kind))
    const s = saved(done.right)
    return { status: 200, response: landing(scope, null, s.done, s.target, CORRECTIONS_ANCHOR), refs: [s.target] }
  })

/** POST /v1/structure/entities from the structure page (the scope is the page's). */
export const createEntityFromForm = (scope: string, form: Readonly<Record<string, string>>) =>
  run("entity", scope, form, (person) =>
    Effect.flatMap(parsePersonEntity(formToPersonEntity({ ...form, scope })), (req) => createEntityByPerson(req, person)),
  (a) => ({ done: "entity-created", target: `entity/${a.id}@${a.version}` }))

/** POST /v1/structure/links from the structure page. */
export const createLinkFromForm = (scope: string, form: Readonly<Record<string, string>>) =>
  run("link", scope, form, (person) =>
    Effect.flatMap(parsePersonLink(formToPersonLink({ ...form, scope })), (req) => createLinkByPerson(req, person)),
  (a) => ({ done: "link-created", target: a.review.target }))

/** POST /v1/links/:id/close from the structure page (the link chosen in the form is the path's id). */
export const closeLinkFromForm = (id: string, scope: string, form: Readonly<Record<string, string>>) =>
  run("close", scope, { link: id, ...form }, (person) =>
    Effect.flatMap(parseCloseLink(formToCloseLink(form)), (req) => closeLink(id, req, person)),
  (a) => ({ done: "link-closed", target: a.link }))

/** POST /v1/entities/:id/unarchive from the structure page. */
export const unarchiveFromForm = (id: string, scope: string, form: Readonly<Record<string, string>>) =>
  run("unarchive", scope, { entity: id, ...form }, (person) =>
    Effect.flatMap(parseUnarchive(formToUnarchive(form)), (req) => unarchiveEntity(id, req, person)),
  (a) => ({ done: "unarchive", target: a.current }))
