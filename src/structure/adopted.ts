/**
 * What the policy adopted in a scope and no person decided on yet (gaps.md §13): the structure
 * page lists it under "Adopted by the policy", newest first, so a person sees what changed
 * without them; a retract or a person's verdict takes an item off the list. Reads only.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import type { PathItem } from "../contracts/errors.js"
import { pathsOf } from "../graph/paths.js"
import type { PendingEnd } from "../graph/review-schemas.js"
import { describeEnds } from "./link-ends.js"

export interface AdoptedItem {
  /** entity/<id>@<n> or link/<id> */
  readonly target: string
  readonly ruleset: string
  readonly at: string
  /** the entity's path, or the link's type and ends (described as on the pending list) */
  readonly path: ReadonlyArray<PathItem>
  readonly link: { readonly type: string; readonly from: typeof PendingEnd.Type; readonly to: typeof PendingEnd.Type } | null
}

/** At most `limit` adoptions without a later verdict on their target, newest first. */
export const adoptedOf = (sql: SqlClient, limit = 50) =>
  Effect.gen(function*() {
    const rows = yield* sql<{ target: string; decided_by: string; decided_at: string; type: string | null; from_ref: string | null; to_ref: string | null }>`
      SELECT r.target, r.decided_by, r.decided_at, l.type, l.from_ref, l.to_ref FROM review r
      LEFT JOIN link l ON r.target = 'link/' || l.id
      WHERE r.origin = 'auto' AND NOT EXISTS (SELECT 1 FROM review g WHERE g.target = r.target AND g.origin = 'grant')
      ORDER BY r.seq DESC LIMIT ${limit}`
    const ids = rows.filter((r) => r.target.startsWith("entity/")).map((r) => r.target.slice("entity/".length).replace(/@\d+$/, ""))
    const paths = yield* pathsOf(sql, ids)
    const ends = yield* describeEnds(sql, rows.flatMap((r) => (r.from_ref === null || r.to_ref === null ? [] : [r.from_ref, r.to_ref])))
    return rows.map((r): AdoptedItem => ({
      target: r.target,
      ruleset: r.decided_by.replace(/^policy@/, ""),
      at: r.decided_at,
      path: r.target.startsWith("entity/") ? (paths.get(r.target.slice("entity/".length).replace(/@\d+$/, "")) ?? []) : [],
      link: r.type === null || r.from_ref === null || r.to_ref === null ? null : { type: r.type, from: ends.describe(r.from_ref), to: ends.describe(r.to_ref) }
    }))
  })
