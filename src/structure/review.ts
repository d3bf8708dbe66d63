/**
 * Person reviews of structure (graph.md §10, §12; invariant 10): confirm or revert an agent's
 * entity version, confirm or reject a proposed link. Reachable only from POST /v1/reviews on the
 * approval channel and from the approval pages (AT2b). One transaction per review — or per bulk
 * request of one scope, every item its own rows: the version row a confirm or revert writes
 * (closure and entity_fts follow a reverted move or rename), then one review row.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, type ParseResult, Schema } from "effect"
import { AppConfig } from "../config/config.js"
import { triggerMessage } from "../db/errors.js"
import { ScopeStore } from "../db/scope-store.js"
import { ReasonMissing, type ValidationFailed, validationFailed } from "../contracts/errors.js"
import { bulkItems, forItem, itemRefusal, namedTwice } from "../contracts/bulk.js"
import { formatReviewId, scopeOfGraphId } from "../contracts/ids.js"
import { STRICT } from "../contracts/schemas.js"
import { nowInstant, todayIn } from "../contracts/time.js"
import { closureOnMove } from "../graph/closure.js"
import { type GraphRefusal, type Next, refuse } from "../contracts/errors.js"
import { syncEntityFts } from "../graph/fts.js"
import { linkStatus, type LinkRow } from "../graph/counted.js"
import { linkRef } from "../graph/link-types.js"
import { pathOf } from "../graph/paths.js"
import { entityIdOfVersionRef, ReviewRequest, type ReviewResult } from "../graph/review-schemas.js"

/** The reviewing person: grant id (person:<n>) and the e-mail of the verified credential. */
export interface Person {
  readonly grantId: string
  readonly identity: string
}

/** A stored entity version, aliases as the stored JSON text (copied byte for byte). */
export interface VersionRow {
  readonly id: string
  readonly version: number
  readonly type: string
  readonly name: string
  readonly aliases: string
  readonly parent_id: string | null
  readonly status: "active" | "unconfirmed" | "archived"
  readonly valid_from: string
  readonly valid_to: string | null
  readonly evidence: string | null
  readonly change: "create" | "move" | "update" | "confirm" | "revert" | "archive" | "unarchive"
  readonly channel: "mcp" | "api" | "approval"
  readonly changed_by: string
  readonly changed_at: string
  readonly reason: string
}

export const currentVersionRow = (sql: SqlClient, id: string) =>
  Effect.map(sql<VersionRow>`SELECT * FROM entity_current WHERE id = ${id}`, (rows) => rows[0])

export const versionRef = (id: string, version: number): string => `entity/${id}@${version}`

/** The one writer of person versions of entity_version (AT3: src/structure/**). */
export const insertPersonVersion = (sql: SqlClient, v: VersionRow) =>
  sql`INSERT INTO entity_version (id, version, type, name, aliases, parent_id, status, valid_from, valid_to, evidence, change,
      channel, changed_by, changed_at, reason)
    VALUES (${v.id}, ${v.version}, ${v.type}, ${v.name}, ${v.aliases}, ${v.parent_id}, ${v.status}, ${v.valid_from}, ${v.valid_to},
      ${v.evidence}, ${v.change}, 'approval', ${v.changed_by}, ${v.changed_at}, ${v.reason})`.raw

/** One person's review row (origin 'grant'): a verdict on an agent's change, a person's own link's confirm, a close. */
export const insertReview = <V extends "confirm" | "reject" | "revert" | "close">(sql: SqlClient, scope: string, row: {
  target: string; verdict: V; person: Person; at: string; reason: string | null; newVersion: number | null
}) =>
  Effect.gen(function*() {
    const seq = (yield* sql<{ seq: number }>`SELECT coalesce(max(seq), 0) + 1 AS seq FROM review`)[0]?.seq ?? 1
    const id = formatReviewId(scope, seq)
    yield* sql`INSERT INTO review (seq, id, target, verdict, decided_by, decided_by_identity, decided_at, reason, new_version)
      VALUES (${seq}, ${id}, ${row.target}, ${row.verdict}, ${row.person.grantId}, ${row.person.identity}, ${row.at}, ${row.reason},
        ${row.newVersion})`.raw
    return { id, target: row.target, verdict: row.verdict, by: row.person.grantId, at: row.at, reason: row.reason, new_version: row.newVersion }
  })

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** reason-missing before the schema (as the decision, architecture.md §6.4), then validation-failed. */
export const parseReview = (raw: unknown): Effect.Effect<ReviewRequest, ReasonMissing | ValidationFailed> =>
  Effect.gen(function*() {
    if (isRecord(raw) && (raw.verdict === "reject" || raw.verdict === "revert")) {
      if (typeof raw.reason !== "string" || raw.reason.trim().length === 0) {
        return yield* new ReasonMissing({ message: `a ${raw.verdict} needs a non-blank reason` })
      }
    }
    return yield* Schema.decodeUnknown(ReviewRequest, STRICT)(raw).pipe(
      Effect.mapError((e: ParseResult.ParseError) => validationFailed(e, "review"))
    )
  })

/** The form post of the approval page as a ReviewRequest (csrf and empty fields dropped). */
export const formToReview = (form: Readonly<Record<string, string>>): unknown => {
  const out: Record<string, unknown> = { target: form.target, verdict: form.verdict }
  if (form.reason !== undefined && form.reason !== "") out.reason = form.reason
  return out
}

/** The scope a review target names. */
export const scopeOfTarget = (target: string): string =>
  scopeOfGraphId(target.startsWith("link/") ? target.slice("link/".length) : (entityIdOfVersionRef(target)?.id ?? ""))

const STRUCTURE_NEXT: ReadonlyArray<Next> = []

const notFound = (target: string) =>
  refuse("not-found", {
    message: `no ${target.startsWith("link/") ? "link" : "entity"} ${target.replace(/^(link|entity)\//, "").replace(/@\d+$/, "")} in this scope`,
    remedy: "reload the structure page: review only what it lists",
    next: STRUCTURE_NEXT
  })

/**
 * The last reviewed state before version `n`: the newest approval version, or the newest agent
 * version a person confirmed (a confirm of an active entity writes only the review row); undefined
 * when no person has reviewed the entity yet.
 */
const lastReviewed = (sql: SqlClient, id: string, n: number) =>
  Effect.map(
    sql<VersionRow>`SELECT v.* FROM entity_version v WHERE v.id = ${id} AND v.version < ${n}
      AND (v.channel = 'approval' OR EXISTS (SELECT 1 FROM review r WHERE r.target = 'entity/' || v.id || '@' || v.version
        AND r.verdict = 'confirm' AND r.origin <> 'auto'))
      ORDER BY v.version DESC LIMIT 1`,
    (rows) => rows[0]
  )

/** Non-archived direct children. */
const liveChildren = (sql: SqlClient, id: string) =>
  Effect.map(
    sql<{ id: string }>`SELECT k.id FROM entity_closure c JOIN entity_current k ON k.id = c.descendant_id
      WHERE c.ancestor_id = ${id} AND c.depth = 1 AND k.status <> 'archived' ORDER BY k.id`,
    (rows) => rows.map((r) => r.id)
  )

export const hasChildren = (id: string, children: ReadonlyArray<string>, what: string) =>
  refuse("has-children", {
    message: `${id} has ${children.length} ${children.length === 1 ? "child" : "children"} that are not archived`,
    remedy: `${what} bottom-up: archive or move the children first (${children.slice(0, 5).join(", ")}${children.length > 5 ? ", …" : ""})`,
    next: [{ tool: "entity_tree", why: `see the children of ${id}` }]
  })

/** Maps a trigger refusal that slipped past the checks in code to its code (backstop). */
const mapTrigger = (id: string) => (e: SqlError): Effect.Effect<never, GraphRefusal | SqlError> => {
  switch (triggerMessage(e)) {
    case "cycle":
      return Effect.fail(refuse("cycle", { message: "the restored parent lies inside the entity's subtree", remedy: "archive or move the subtree first", next: [] }))
    case "parent-archived":
      return Effect.fail(refuse("parent-archived", { message: "the restored parent is archived", remedy: "confirm the entity where it is", next: [] }))
    case "has-children":
      return Effect.fail(refuse("has-children", { message: `${id} has children that are not archived`, remedy: "archive the children first", next: [] }))
    default:
      return Effect.fail(e)
  }
}

/**
 * Revert of agent version `cur` (the current one): restore the last reviewed state (type, name,
 * aliases, parent, status), or, for an entity no person has reviewed yet, archive it (a reverted
 * create). The closure follows a restored parent, entity_fts a restored name or aliases.
 */
const revertVersion = (sql: SqlClient, cur: VersionRow, person: Person, reason: string, at: string, today: string, maxDepth: number) =>
  Effect.gen(function*() {
    const base = { ...cur, version: cur.version + 1, change: "revert" as const, channel: "approval" as const, changed_by: person.grantId, changed_at: at, reason }
    const restore = yield* lastReviewed(sql, cur.id, cur.version)
    if (restore === undefined) {
      const children = yield* liveChildren(sql, cur.id)
      if (children.length > 0) return yield* hasChildren(cur.id, children, "revert a create")
      const archived: VersionRow = { ...base, status: "archived", valid_to: today < cur.valid_from ? cur.valid_from : today }
      yield* insertPersonVersion(sql, archived).pipe(Effect.catchAll(mapTrigger(cur.id)))
      return archived
    }
    const next: VersionRow = {
      ...base, type: restore.type, name: restore.name, aliases: restore.aliases, parent_id: restore.parent_id,
      status: restore.status === "archived" ? cur.status : restore.status, valid_to: null
    }
    const moves = next.parent_id !== cur.parent_id
    if (moves && next.parent_id !== null) {
      const parent = yield* currentVersionRow(sql, next.parent_id)
      if (parent === undefined || parent.status === "archived") {
        return yield* refuse("parent-archived", {
          message: `the parent before the change, ${next.parent_id}, is archived`,
          remedy: "confirm the entity where it is, or archive it",
          next: []
        })
      }
      const inside = yield* sql<{ n: number }>`SELECT count(*) AS n FROM entity_closure WHERE ancestor_id = ${cur.id} AND descendant_id = ${next.parent_id}`
      if ((inside[0]?.n ?? 0) > 0) {
        return yield* refuse("cycle", {
          message: `the parent before the change, ${next.parent_id}, lies inside the subtree of ${cur.id} now`,
          remedy: "confirm the entity where it is: restoring the old parent would make a cycle",
          next: [{ tool: "entity_path", why: `see the place of ${next.parent_id}` }],
          paths: { entity: yield* pathOf(sql, cur.id), target: yield* pathOf(sql, next.parent_id) }
        })
      }
      const level = (yield* sql<{ n: number }>`SELECT count(*) AS n FROM entity_closure WHERE descendant_id = ${next.parent_id}`)[0]?.n ?? 0
      const height = (yield* sql<{ h: number | null }>`SELECT max(depth) AS h FROM entity_closure WHERE ancestor_id = ${cur.id}`)[0]?.h ?? 0
      if (level + 1 + height > maxDepth) {
        return yield* refuse("depth-limit", {
          message: `restoring the parent ${next.parent_id} would put an entity at level ${level + 1 + height}`,
          remedy: "confirm the entity where it is",
          next: [],
          limit: maxDepth
        })
      }
    }
    yield* insertPersonVersion(sql, next).pipe(Effect.catchAll(mapTrigger(cur.id)))
    if (moves) yield* closureOnMove(sql, cur.id, next.parent_id)
    if (next.name !== cur.name || next.aliases !== cur.aliases) {
      const seq = (yield* sql<{ seq: number }>`SELECT seq FROM entity WHERE id = ${cur.id}`)[0]?.seq ?? 0
      yield* syncEntityFts(sql, { seq, name: next.name, aliases: JSON.parse(next.aliases) as Array<string> })
    }
    return next
  })

/**
 * Applies a person's review. Checks in this order: not-found (unknown target), already-decided (a
 * review of this target exists), version-outdated (not the current version; current:
 * entity/<id>@<n>), already-decided (the current version is a person's, or a link is not
 * proposed); then the writes in one transaction.
 */
export const applyReview = Effect.fn("Structure.review")(function*(req: ReviewRequest, person: Person) {
  const store = yield* ScopeStore
  const config = yield* AppConfig
  const scope = scopeOfTarget(req.target)
  if (!store.configured.includes(scope)) return yield* notFound(req.target)
  const at = yield* nowInstant
  const today = yield* todayIn(config.file.zone)
  return yield* store.write(scope, ({ sql }) => reviewIn(sql, { scope, person, at, today, maxDepth: config.file.graph.max_depth }, req))
})

/** The answer of a bulk review: how many were reviewed and each target's current ref afterwards, in the items' order. */
export interface BulkReviewResult {
  readonly reviewed: number
  readonly current: ReadonlyArray<string>
}

/**
 * The bulk body of POST /v1/reviews, `{items: [{target, verdict, reason?}]}`: 1 to
 * MAX_BULK_ITEMS items, each checked as a single review (parseReview) in order, a target named
 * once; a refusal names its item with the single review's code.
 */
export const parseReviews = (raw: unknown): Effect.Effect<ReadonlyArray<ReviewRequest>, ReasonMissing | ValidationFailed> =>
  Effect.gen(function*() {
    const items = yield* bulkItems(raw, "reviews")
    const seen = new Map<string, number>()
    const out: Array<ReviewRequest> = []
    for (const [i, item] of items.entries()) {
      const req = yield* forItem(i, typeof item.target === "string" ? item.target : `items[${i}]`, parseReview(item))
      const key = req.target.replace(/@\d+$/, "")
      const first = seen.get(key)
      if (first !== undefined) return yield* namedTwice("reviews", i, first, "target")
      seen.set(key, i)
      out.push(req)
    }
    return out
  })

/**
 * Applies a person's reviews of one scope's structure in one write transaction, each its own
 * version and review row as a single review writes them; the first refused item refuses them all
 * (nothing written) and is named in the refusal (itemRefusal).
 */
export const applyReviews = Effect.fn("Structure.reviewMany")(function*(reqs: ReadonlyArray<ReviewRequest>, person: Person) {
  const store = yield* ScopeStore
  const config = yield* AppConfig
  const scopes = [...new Set(reqs.map((r) => scopeOfTarget(r.target)))]
  const scope = scopes[0]
  if (scope === undefined || scopes.length > 1) {
    return yield* refuse("validation-failed", {
      message: scope === undefined ? "reviews is invalid: items: is empty" : `reviews is invalid: items: name targets of one scope (${scopes.join(", ")})`,
      issues: [{ path: "items", message: scope === undefined ? "is empty: name at least one item" : "name targets of one scope: one request per scope" }],
      remedy: "send one request per scope",
      next: []
    })
  }
  const unknown = reqs.findIndex((r) => !store.configured.includes(scopeOfTarget(r.target)))
  if (unknown >= 0) return yield* itemRefusal(notFound(reqs[unknown]?.target ?? ""), unknown, reqs[unknown]?.target ?? "")
  const at = yield* nowInstant
  const today = yield* todayIn(config.file.zone)
  return yield* store.write(scope, ({ sql }) =>
    Effect.gen(function*() {
      const current: Array<string> = []
      for (const [i, req] of reqs.entries()) {
        const done = yield* forItem(i, req.target, reviewIn(sql, { scope, person, at, today, maxDepth: config.file.graph.max_depth }, req))
        current.push(done.current)
      }
      return { reviewed: current.length, current } satisfies BulkReviewResult
    }))
})

interface Reviewing {
  readonly scope: string
  readonly person: Person
  readonly at: string
  readonly today: string
  readonly maxDepth: number
}

/** One review inside the caller's write transaction: the checks, then the version and review rows. */
const reviewIn = (sql: SqlClient, w: Reviewing, req: ReviewRequest): Effect.Effect<ReviewResult, GraphRefusal | SqlError> => {
  const { scope, person, at, today, maxDepth } = w
  const reason = req.reason ?? null
  return Effect.gen(function*() {
      // the policy's adoption leaves the person's verdict open (gaps.md §13); a retract ends it
      const decided = (yield* sql<{ id: string }>`SELECT id FROM review WHERE target = ${req.target} AND origin <> 'auto'`)[0]
      if (req.target.startsWith("link/")) {
        const linkId = req.target.slice("link/".length)
        const link = (yield* sql<LinkRow>`SELECT * FROM link WHERE id = ${linkId}`)[0]
        if (link === undefined) return yield* notFound(req.target)
        if (decided !== undefined || link.origin !== "proposed") {
          return yield* refuse("already-decided", {
            message: decided !== undefined ? `${req.target} is reviewed already (${decided.id})` : `${req.target} is not a proposed link`,
            remedy: "reload the structure page: review only what it lists",
            current: linkRef(linkId),
            next: []
          })
        }
        const review = yield* insertReview(sql, scope, { target: req.target, verdict: req.verdict, person, at, reason, newVersion: null })
        const entityEnd = [link.to_ref, link.from_ref].find((r) => r.startsWith("entity/"))
        return {
          review,
          current: linkRef(linkId),
          status: linkStatus(link, req.verdict),
          path: entityEnd === undefined ? [] : yield* pathOf(sql, entityEnd.slice("entity/".length)),
          next: []
        }
      }

      const target = entityIdOfVersionRef(req.target)
      const cur = target === null ? undefined : yield* currentVersionRow(sql, target.id)
      if (target === null || cur === undefined) return yield* notFound(req.target)
      const current = versionRef(cur.id, cur.version)
      if (decided !== undefined) {
        return yield* refuse("already-decided", {
          message: `${req.target} is reviewed already (${decided.id})`,
          remedy: "reload the structure page: review only what it lists",
          current,
          next: []
        })
      }
      // an adopted create is current as the policy's confirm right after it: a person still decides on the create
      const adoptedCreate = cur.change === "confirm" && cur.channel !== "approval" && target.version === cur.version - 1
      if (target.version !== cur.version && !adoptedCreate) {
        return yield* refuse("version-outdated", {
          message: `version ${target.version} is not the current version ${cur.version} of ${cur.id}`,
          remedy: `review the current version ${current}`,
          current,
          next: []
        })
      }
      if (cur.channel === "approval") {
        return yield* refuse("already-decided", {
          message: `${current} is a person's version (${cur.change}); there is nothing to review`,
          remedy: "reload the structure page: review only what it lists",
          current,
          next: []
        })
      }

      let written: VersionRow | null = null
      if (req.verdict === "confirm") {
        if (cur.status === "unconfirmed") {
          written = {
            ...cur, version: cur.version + 1, status: "active", valid_to: null, change: "confirm", channel: "approval",
            changed_by: person.grantId, changed_at: at, reason: reason ?? "confirmed"
          }
          yield* insertPersonVersion(sql, written)
        }
      } else {
        written = yield* revertVersion(sql, cur, person, reason ?? "reverted", at, today, maxDepth)
      }
      const review = yield* insertReview(sql, scope, {
        target: req.target, verdict: req.verdict, person, at, reason, newVersion: written?.version ?? null
      })
      const after = written ?? cur
      return {
        review,
        current: versionRef(after.id, after.version),
        status: after.status,
        path: yield* pathOf(sql, after.id),
        next: after.status === "archived" ? [] : [{ tool: "entity_tree", why: `see ${after.id} in its place` }]
      }
    })
}

/** parseReview, then applyReview. */
export const review = (raw: unknown, person: Person) => Effect.flatMap(parseReview(raw), (req) => applyReview(req, person))
