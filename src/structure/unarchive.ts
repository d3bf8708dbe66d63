/**
 * A person unarchives an entity (gaps.md §13, graph.md §15 Q3): a new version, change 'unarchive',
 * status 'active', valid_to NULL, channel approval, everything else as the archived version.
 * Reachable only from the approval channel (AT2b).
 */
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, type ParseResult, Schema } from "effect"
import { ScopeStore } from "../db/scope-store.js"
import { triggerMessage } from "../db/errors.js"
import { type GraphRefusal, refuse, type ValidationFailed, validationFailed } from "../contracts/errors.js"
import { ENTITY_ID_RE, scopeOfGraphId } from "../contracts/ids.js"
import { STRICT } from "../contracts/schemas.js"
import { nowInstant } from "../contracts/time.js"
import { UnarchiveRequest } from "../graph/correction-schemas.js"
import { checkLiteral } from "../graph/entities.js"
import { pathOf } from "../graph/paths.js"
import { currentVersionRow, insertPersonVersion, type Person, versionRef, type VersionRow } from "./review.js"

export const parseUnarchive = (raw: unknown): Effect.Effect<UnarchiveRequest, ValidationFailed> =>
  Schema.decodeUnknown(UnarchiveRequest, STRICT)(raw).pipe(Effect.mapError((e: ParseResult.ParseError) => validationFailed(e, "unarchive")))

/** The form: the version as a number (the chosen entity's, sent as `<id>@<version>` or by `version`). */
export const formToUnarchive = (form: Readonly<Record<string, string>>): unknown => ({
  version: form.version === undefined || form.version === "" ? undefined : Number(form.version),
  reason: form.reason ?? ""
})

const notFound = () =>
  refuse("not-found", {
    message: "no such entity in this scope",
    remedy: "choose an entity the structure page lists under \"Unarchive an entity\"",
    issues: [{ path: "entity", message: "is not an entity of this scope" }],
    next: []
  })

const parentArchived = (id: string, parentId: string) =>
  refuse("parent-archived", {
    message: `the parent of ${id}, ${parentId}, is archived`,
    remedy: `unarchive the parent ${parentId} first`,
    issues: [{ path: "entity", message: `its parent ${parentId} is archived: unarchive the parent first` }],
    next: []
  })

/**
 * Checks in this order: not-found, already-decided (not archived: 'invalid-transition' of the
 * trigger), version-outdated, parent-archived, a literal duplicate now in its place
 * (duplicate-candidate); then one version row.
 */
export const unarchiveEntity = Effect.fn("Structure.unarchive")(function*(id: string, req: UnarchiveRequest, person: Person) {
  const store = yield* ScopeStore
  if (!ENTITY_ID_RE.test(id)) return yield* notFound()
  const scope = scopeOfGraphId(id)
  if (!store.configured.includes(scope)) return yield* notFound()
  const at = yield* nowInstant
  return yield* store.write(scope, ({ sql }) =>
    Effect.gen(function*() {
      const cur = yield* currentVersionRow(sql, id)
      if (cur === undefined) return yield* notFound()
      const current = versionRef(id, cur.version)
      if (cur.status !== "archived") {
        return yield* refuse("already-decided", {
          message: `${id} is not archived (${cur.status}); only an archived entity is unarchived`,
          remedy: "reload the structure page: it lists the archived entities",
          issues: [{ path: "entity", message: "is not archived" }],
          current,
          next: []
        })
      }
      if (req.version !== cur.version) {
        return yield* refuse("version-outdated", {
          message: `version ${req.version} is not the current version ${cur.version} of ${id}`,
          remedy: `look at ${current} and unarchive that version`,
          current,
          next: []
        })
      }
      if (cur.parent_id !== null) {
        const parent = yield* currentVersionRow(sql, cur.parent_id)
        if (parent?.status === "archived") return yield* parentArchived(id, cur.parent_id)
      }
      yield* checkLiteral(sql, { parentId: cur.parent_id, type: cur.type, name: cur.name, excludeId: id })
      const next: VersionRow = {
        ...cur, version: cur.version + 1, status: "active", valid_to: null, change: "unarchive", channel: "approval",
        changed_by: person.grantId, changed_at: at, reason: req.reason
      }
      yield* insertPersonVersion(sql, next).pipe(Effect.catchTag("SqlError", (e): Effect.Effect<never, GraphRefusal | SqlError> => {
        switch (triggerMessage(e)) {
          case "parent-archived":
            return Effect.fail(parentArchived(id, cur.parent_id ?? ""))
          case "invalid-transition":
            return Effect.fail(refuse("already-decided", { message: `${id} is not archived`, remedy: "reload the structure page", current, next: [] }))
          default:
            return Effect.fail(e)
        }
      }))
      return {
        unarchived: true as const,
        id,
        version: next.version,
        current: versionRef(id, next.version),
        path: yield* pathOf(sql, id),
        next: [{ tool: "entity_tree", why: `see ${id} in its place` }]
      }
    }))
})
