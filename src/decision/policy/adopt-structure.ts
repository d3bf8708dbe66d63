/**
 * adoptStructure(): the policy's writer for structure (gaps.md §13, migration 0011). Called only by
 * the structure policy (structure-live.ts), which the structure writers run inside the agent's
 * transaction. An adopted entity create becomes active: a version 'confirm', status active, on
 * the agent's channel, changed_by policy@<ruleset>; a move or update is adopted by the review row
 * alone (its version is in effect already, as a person's confirm of it). Then one review row:
 * origin auto, verdict confirm, decided_by and decided_by_identity policy@<ruleset>, the reason
 * saying why (the mode and the ruleset).
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { formatReviewId } from "../../contracts/ids.js"
import { POLICY_PREFIX } from "../../domain/adoption.js"
import { RULESET } from "./classify.js"

/** decided_by of the policy's structure adoptions, as of its rule adoptions. */
export const STRUCTURE_POLICY = `${POLICY_PREFIX}${RULESET}` as const

export interface StructureAdoption {
  readonly scope: string
  /** entity/<id>@<n> or link/<id> */
  readonly target: string
  readonly channel: "mcp" | "api"
  readonly reason: string
  readonly now: string
}

interface VersionRow {
  readonly id: string
  readonly version: number
  readonly type: string
  readonly name: string
  readonly aliases: string
  readonly parent_id: string | null
  readonly status: string
  readonly valid_from: string
  readonly evidence: string | null
  readonly change: string
}

const ENTITY_TARGET = /^entity\/(.+)@(\d+)$/

/** The next review row id and seq of the scope. */
export const nextReview = (sql: SqlClient, scope: string) =>
  Effect.map(sql<{ seq: number }>`SELECT coalesce(max(seq), 0) + 1 AS seq FROM review`, (rows) => {
    const seq = rows[0]?.seq ?? 1
    return { seq, id: formatReviewId(scope, seq) }
  })

/** Adopts the change; returns the version the confirm of a create wrote, else null. */
export const adoptStructure = (sql: SqlClient, a: StructureAdoption) =>
  Effect.gen(function*() {
    let newVersion: number | null = null
    const m = ENTITY_TARGET.exec(a.target)
    if (m !== null) {
      const id = m[1] ?? ""
      const n = Number(m[2])
      const v = (yield* sql<VersionRow>`SELECT * FROM entity_version WHERE id = ${id} AND version = ${n}`)[0]
      if (v === undefined) return yield* Effect.dieMessage(`adoptStructure: no version ${a.target}`)
      if (v.change === "create" && v.status === "unconfirmed") {
        newVersion = n + 1
        yield* sql`INSERT INTO entity_version (id, version, type, name, aliases, parent_id, status, valid_from, valid_to, evidence,
            change, channel, changed_by, changed_at, reason)
          VALUES (${id}, ${newVersion}, ${v.type}, ${v.name}, ${v.aliases}, ${v.parent_id}, 'active', ${v.valid_from}, NULL,
            ${v.evidence}, 'confirm', ${a.channel}, ${STRUCTURE_POLICY}, ${a.now}, ${a.reason})`.raw
      }
    }
    const review = yield* nextReview(sql, a.scope)
    yield* sql`INSERT INTO review (seq, id, target, verdict, decided_by, decided_by_identity, decided_at, reason, new_version, origin)
      VALUES (${review.seq}, ${review.id}, ${a.target}, 'confirm', ${STRUCTURE_POLICY}, ${STRUCTURE_POLICY}, ${a.now}, ${a.reason}, ${newVersion}, 'auto')`.raw
    return newVersion
  })
