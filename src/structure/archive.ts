/**
 * Archive (graph.md §3.2 G3, §10): a person archives one entity, bottom-up: a non-archived child
 * refuses with has-children. The version copies the current one with change 'archive', status
 * 'archived', valid_to = today (config.zone), channel approval. Reachable only from POST
 * /v1/entities/:id/archive on the approval channel and the approval pages (AT2b).
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, type ParseResult, Schema } from "effect"
import { AppConfig } from "../config/config.js"
import { triggerMessage } from "../db/errors.js"
import { ScopeStore } from "../db/scope-store.js"
import { type ValidationFailed, validationFailed } from "../contracts/errors.js"
import { ENTITY_ID_RE, scopeOfGraphId } from "../contracts/ids.js"
import { STRICT } from "../contracts/schemas.js"
import { nowInstant, todayIn } from "../contracts/time.js"
import { type GraphRefusal, refuse } from "../contracts/errors.js"
import { pathOf } from "../graph/paths.js"
import { ArchiveRequest, type ArchiveResult } from "../graph/review-schemas.js"
import { currentVersionRow, hasChildren, insertPersonVersion, type Person, versionRef, type VersionRow } from "./review.js"

export const parseArchive = (raw: unknown): Effect.Effect<ArchiveRequest, ValidationFailed> =>
  Schema.decodeUnknown(ArchiveRequest, STRICT)(raw).pipe(Effect.mapError((e: ParseResult.ParseError) => validationFailed(e, "archive")))

/** The form post of the approval page: version as a number, empty reason dropped, csrf dropped. */
export const formToArchive = (form: Readonly<Record<string, string>>): unknown => {
  const out: Record<string, unknown> = { version: form.version === undefined || form.version === "" ? undefined : Number(form.version) }
  if (form.reason !== undefined && form.reason !== "") out.reason = form.reason
  return out
}

const notFound = () =>
  refuse("not-found", {
    message: "no such entity in this scope",
    remedy: "reload the structure page: archive only what it lists",
    next: []
  })

/**
 * Checks in this order: not-found, already-decided (archived already; current), version-outdated
 * (current: entity/<id>@<n>), has-children (a child that is not archived); then one version row.
 */
export const archiveEntity = Effect.fn("Structure.archive")(function*(id: string, req: ArchiveRequest, person: Person) {
  const store = yield* ScopeStore
  const config = yield* AppConfig
  if (!ENTITY_ID_RE.test(id)) return yield* notFound()
  const scope = scopeOfGraphId(id)
  if (!store.configured.includes(scope)) return yield* notFound()
  const at = yield* nowInstant
  const today = yield* todayIn(config.file.zone)
  return yield* store.write(scope, ({ sql }): Effect.Effect<ArchiveResult, GraphRefusal | SqlError> =>
    Effect.gen(function*() {
      const cur = yield* currentVersionRow(sql, id)
      if (cur === undefined) return yield* notFound()
      const current = versionRef(id, cur.version)
      if (cur.status === "archived") {
        return yield* refuse("already-decided", {
          message: `${id} is archived already`, remedy: "archived is final: create a new entity if it is needed again", current, next: []
        })
      }
      if (req.version !== cur.version) {
        return yield* refuse("version-outdated", {
          message: `version ${req.version} is not the current version ${cur.version} of ${id}`,
          remedy: `look at ${current} and archive that version`,
          current,
          next: []
        })
      }
      const children = yield* sql<{ id: string }>`SELECT k.id FROM entity_closure c JOIN entity_current k ON k.id = c.descendant_id
        WHERE c.ancestor_id = ${id} AND c.depth = 1 AND k.status <> 'archived' ORDER BY k.id`
      if (children.length > 0) return yield* hasChildren(id, children.map((c) => c.id), "archive")
      const path = yield* pathOf(sql, id)
      const next: VersionRow = {
        ...cur, version: cur.version + 1, status: "archived", valid_to: today < cur.valid_from ? cur.valid_from : today,
        change: "archive", channel: "approval", changed_by: person.grantId, changed_at: at, reason: req.reason ?? "archived"
      }
      yield* insertPersonVersion(sql, next).pipe(Effect.catchAll((e): Effect.Effect<never, GraphRefusal | SqlError> =>
        triggerMessage(e) === "has-children"
          ? Effect.fail(refuse("has-children", { message: `${id} has children that are not archived`, remedy: "archive the children first", next: [] }))
          : Effect.fail(e)))
      return {
        archived: true as const,
        id,
        version: next.version,
        current: versionRef(id, next.version),
        valid_to: next.valid_to ?? today,
        path,
        next: cur.parent_id === null ? [] : [{ tool: "entity_tree", why: `see the level of ${cur.parent_id}` }]
      }
    }))
})
