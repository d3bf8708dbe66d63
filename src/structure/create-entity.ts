/**
 * A person creates an entity on the structure page (gaps.md §13, graph.md §15 Q2): the agent's
 * create with all its checks (src/graph/entities.ts: type, parent, depth, literal and similar
 * duplicate), born confirmed: entity.created_by 'human', version 1 'create', status 'active',
 * channel approval, changed_by the person, the person's reason. Reachable only from the approval
 * channel (AT2b).
 */
import { Effect, type ParseResult, Schema } from "effect"
import { type ValidationFailed, validationFailed } from "../contracts/errors.js"
import { STRICT } from "../contracts/schemas.js"
import { PersonEntityRequest } from "../graph/correction-schemas.js"
import { createEntityBy, type Creator } from "../graph/entities.js"
import { insertPersonVersion, type Person } from "./review.js"

export const parsePersonEntity = (raw: unknown): Effect.Effect<PersonEntityRequest, ValidationFailed> =>
  Schema.decodeUnknown(PersonEntityRequest, STRICT)(raw).pipe(Effect.mapError((e: ParseResult.ParseError) => validationFailed(e, "entity")))

/** The form of the structure page: empty optional fields dropped, aliases one a comma, force a checkbox. */
export const formToPersonEntity = (form: Readonly<Record<string, string>>): unknown => {
  const out: Record<string, unknown> = {
    scope: form.scope, type: form.type, name: form.name, reason: form.reason ?? "",
    parent_id: form.parent_id === undefined || form.parent_id.trim() === "" ? null : form.parent_id.trim()
  }
  const aliases = (form.aliases ?? "").split(",").map((a) => a.trim()).filter((a) => a.length > 0)
  if (aliases.length > 0) out.aliases = aliases
  if (form.evidence !== undefined && form.evidence.trim() !== "") out.evidence = form.evidence.trim()
  if (form.force === "true" || form.force === "on") out.force = true
  return out
}

const personCreator = (person: Person): Creator => ({
  createdBy: "human",
  channel: null,
  defaultReason: "created by a person",
  writeVersion: (sql, v) =>
    insertPersonVersion(sql, {
      ...v, version: 1, status: "active", valid_to: null, change: "create", channel: "approval", changed_by: person.grantId
    })
})

/** The person's create: the answer of entity_create (created, the entity, path, next). */
export const createEntityByPerson = (req: PersonEntityRequest, person: Person) => createEntityBy(req, personCreator(person))
