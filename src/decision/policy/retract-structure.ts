/**
 * retractStructure(): takes back a structure change the policy adopted (gaps.md §13), while no
 * person decided on it. Reached only through the retract operation (src/operations/retract.ts):
 * POST /v1/structure/:id/retract and the MCP tool structure_retract. Any grant with the right
 * propose may ask, as for rules. `id` is an entity id (its newest adoption is taken back) or a
 * link id. The undo is what a person's revert or reject does for that kind, on the agent's
 * channel: an adopted create is archived (a 'revert' version, valid_to today), an adopted move or
 * update restores the version before it (closure and entity_fts follow), an adopted link is
 * closed (valid_to now). Then one review row: verdict retract, origin grant, the reason. The
 * trigger review_ends refuses a retract once a person decided (mapped to already-decided).
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { AppConfig } from "../../config/config.js"
import { type GraphRefusal, refuse } from "../../contracts/errors.js"
import { ENTITY_ID_RE, LINK_ID_RE, scopeOfGraphId } from "../../contracts/ids.js"
import type { Adoption } from "../../contracts/schemas.js"
import { nowInstant, todayIn } from "../../contracts/time.js"
import { triggerMessage } from "../../db/errors.js"
import { ScopeStore } from "../../db/scope-store.js"
import { closureOnMove } from "../../graph/closure.js"
import { syncEntityFts } from "../../graph/fts.js"
import { nextReview } from "./adopt-structure.js"

/** Who asks: the grant and its identity. */
export interface StructureRetractor {
  readonly grantId: string
  readonly identity: string
}

export interface StructureRetractResult {
  /** what was taken back: entity/<id>@<n> or link/<id> */
  readonly retracted: string
  /** entity/<id>@<n> after the undo, or link/<id> */
  readonly current: string
  /** the entity's status after the undo, or the link's (closed: rejected, it no longer counts) */
  readonly status: string
  /** whom the undone change was adopted by */
  readonly adoption: Adoption
  readonly review: {
    readonly id: string
    readonly target: string
    readonly verdict: "retract"
    readonly origin: "grant"
    readonly by: string
    readonly at: string
    readonly reason: string
  }
}

export const NOT_RETRACTABLE_STRUCTURE =
  "a person decided on this change, so it is no longer retractable; only a person can change it on the structure page"

interface Version {
  readonly id: string
  readonly version: number
  readonly type: string
  readonly name: string
  readonly aliases: string
  readonly parent_id: string | null
  readonly status: string
  readonly valid_from: string
  readonly valid_to: string | null
  readonly evidence: string | null
  readonly change: string
  readonly channel: "mcp" | "api" | "approval"
}

interface ReviewRow {
  readonly target: string
  readonly verdict: string
  readonly origin: string
  readonly decided_by: string
  readonly new_version: number | null
}

const STRUCTURE_PAGE = "ask a person to decide on the structure page"

const notFound = (id: string) =>
  refuse("not-found", {
    message: `no ${LINK_ID_RE.test(id) ? "link" : "entity"} ${id} in this scope`,
    remedy: "check the id (an entity id or a link id from an answer marked auto-adopted)",
    next: [{ tool: "entity_resolve", why: "find the entity" }]
  })

const decided = (message: string, current: string) =>
  refuse("already-decided", { message, remedy: STRUCTURE_PAGE, current, next: [] })

const mapTrigger = (current: string) => (e: SqlError): Effect.Effect<never, GraphRefusal | SqlError> => {
  switch (triggerMessage(e)) {
    case "not-retractable":
    case "already-decided":
      return Effect.fail(decided(NOT_RETRACTABLE_STRUCTURE, current))
    case "has-children":
      return Effect.fail(refuse("has-children", { message: "the entity has children that are not archived", remedy: STRUCTURE_PAGE, next: [] }))
    case "parent-archived":
      return Effect.fail(refuse("parent-archived", { message: "the parent before the change is archived", remedy: STRUCTURE_PAGE, next: [] }))
    case "cycle":
      return Effect.fail(refuse("cycle", { message: "the parent before the change lies inside the entity's subtree now", remedy: STRUCTURE_PAGE, next: [] }))
    default:
      return Effect.fail(e)
  }
}

const adoptionOf = (r: ReviewRow): Adoption => ({ kind: "auto", ruleset: r.decided_by.replace(/^policy@/, "") })

const insertRetract = (sql: SqlClient, scope: string, target: string, reason: string, by: StructureRetractor, at: string) =>
  Effect.gen(function*() {
    const next = yield* nextReview(sql, scope)
    yield* sql`INSERT INTO review (seq, id, target, verdict, decided_by, decided_by_identity, decided_at, reason, new_version, origin)
      VALUES (${next.seq}, ${next.id}, ${target}, 'retract', ${by.grantId}, ${by.identity}, ${at}, ${reason}, NULL, 'grant')`.raw
    return { id: next.id, target, verdict: "retract" as const, origin: "grant" as const, by: by.grantId, at, reason }
  })

/** The verdicts on a target: the adoption, and whether a person decided or it was taken back. */
const verdicts = (sql: SqlClient, target: string) =>
  Effect.map(sql<ReviewRow>`SELECT target, verdict, origin, decided_by, new_version FROM review WHERE target = ${target} ORDER BY seq`, (rows) => ({
    adopted: rows.find((r) => r.origin === "auto"),
    ended: rows.find((r) => r.origin === "grant")
  }))

const retractLink = (sql: SqlClient, scope: string, id: string, reason: string, by: StructureRetractor, at: string) =>
  Effect.gen(function*() {
    const target = `link/${id}`
    const link = (yield* sql<{ id: string; valid_to: string | null }>`SELECT id, valid_to FROM link WHERE id = ${id}`)[0]
    if (link === undefined) return yield* notFound(id)
    const v = yield* verdicts(sql, target)
    if (v.adopted === undefined) {
      return yield* decided(`${target} was not adopted by the policy: it waits for a person, so there is nothing to retract`, target)
    }
    if (v.ended !== undefined) return yield* decided(v.ended.verdict === "retract" ? `${target} is retracted already` : NOT_RETRACTABLE_STRUCTURE, target)
    const review = yield* insertRetract(sql, scope, target, reason, by, at).pipe(Effect.catchTag("SqlError", mapTrigger(target)))
    if (link.valid_to === null) yield* sql`UPDATE link SET valid_to = ${at} WHERE id = ${id}`.raw
    const result: StructureRetractResult = { retracted: target, current: target, status: "rejected", adoption: adoptionOf(v.adopted), review }
    return result
  })

const retractEntity = (sql: SqlClient, scope: string, id: string, reason: string, by: StructureRetractor, at: string, today: string) =>
  Effect.gen(function*() {
    const cur = (yield* sql<Version>`SELECT * FROM entity_current WHERE id = ${id}`)[0]
    if (cur === undefined) return yield* notFound(id)
    const currentRef = `entity/${id}@${cur.version}`
    const adopted = (yield* sql<ReviewRow>`SELECT target, verdict, origin, decided_by, new_version FROM review
      WHERE target GLOB ${`entity/${id}@*`} AND origin = 'auto' ORDER BY seq DESC LIMIT 1`)[0]
    if (adopted === undefined) {
      return yield* decided(`entity ${id} has no change the policy adopted: what it has waits for a person, so there is nothing to retract`, currentRef)
    }
    const v = yield* verdicts(sql, adopted.target)
    if (v.ended !== undefined) {
      return yield* decided(v.ended.verdict === "retract" ? `${adopted.target} is retracted already` : NOT_RETRACTABLE_STRUCTURE, currentRef)
    }
    const n = Number(adopted.target.slice(adopted.target.lastIndexOf("@") + 1))
    if ((adopted.new_version ?? n) !== cur.version) {
      return yield* decided(`entity ${id} changed after the adopted ${adopted.target}; ${NOT_RETRACTABLE_STRUCTURE.replace(/^a person decided on this change, so it/, "it")}`, currentRef)
    }
    const adoptedRow = (yield* sql<Version>`SELECT * FROM entity_version WHERE id = ${id} AND version = ${n}`)[0]
    if (adoptedRow === undefined) return yield* notFound(id)
    const channel = adoptedRow.channel === "approval" ? "api" : adoptedRow.channel
    const base = { ...cur, version: cur.version + 1 }
    let next: Version
    if (adoptedRow.change === "create") {
      next = { ...base, status: "archived", valid_to: today < cur.valid_from ? cur.valid_from : today, change: "revert", channel }
    } else {
      const before = (yield* sql<Version>`SELECT * FROM entity_version WHERE id = ${id} AND version = ${n - 1}`)[0]
      if (before === undefined) return yield* notFound(id)
      next = {
        ...base, type: before.type, name: before.name, aliases: before.aliases, parent_id: before.parent_id, change: "revert", channel
      }
    }
    const review = yield* Effect.gen(function*() {
      // the review first: the trigger review_ends refuses it once a person decided
      const written = yield* insertRetract(sql, scope, adopted.target, reason, by, at)
      yield* sql`INSERT INTO entity_version (id, version, type, name, aliases, parent_id, status, valid_from, valid_to, evidence,
          change, channel, changed_by, changed_at, reason)
        VALUES (${id}, ${next.version}, ${next.type}, ${next.name}, ${next.aliases}, ${next.parent_id}, ${next.status},
          ${next.valid_from}, ${next.valid_to}, ${next.evidence}, 'revert', ${channel}, ${by.grantId}, ${at}, ${`retracted: ${reason}`})`.raw
      return written
    }).pipe(Effect.catchTag("SqlError", mapTrigger(currentRef)))
    if (next.parent_id !== cur.parent_id) yield* closureOnMove(sql, id, next.parent_id)
    if (next.name !== cur.name || next.aliases !== cur.aliases) {
      const seq = (yield* sql<{ seq: number }>`SELECT seq FROM entity WHERE id = ${id}`)[0]?.seq ?? 0
      yield* syncEntityFts(sql, { seq, name: next.name, aliases: JSON.parse(next.aliases) as Array<string> })
    }
    const result: StructureRetractResult = {
      retracted: adopted.target, current: `entity/${id}@${next.version}`, status: next.status, adoption: adoptionOf(adopted), review
    }
    return result
  })

export const retractStructure = Effect.fn("Policy.retractStructure")(function*(id: string, reason: string, by: StructureRetractor) {
  const isLink = LINK_ID_RE.test(id)
  if (!isLink && !ENTITY_ID_RE.test(id)) return yield* notFound(id)
  const store = yield* ScopeStore
  const config = yield* AppConfig
  const scope = scopeOfGraphId(id)
  if (!store.configured.includes(scope)) return yield* notFound(id)
  const at = yield* nowInstant
  const today = yield* todayIn(config.file.zone)
  return yield* store.write(scope, ({ sql }) =>
    isLink ? retractLink(sql, scope, id, reason, by, at) : retractEntity(sql, scope, id, reason, by, at, today))
})
