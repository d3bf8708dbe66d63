/**
 * Who adopted a structure item (gaps.md §13): the policy while the newest verdict on it is the
 * policy's adoption (a review of origin auto), else a person — also for a pending item, which a
 * person decides. A retract or a person's verdict after the adoption ends the policy's mark.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import type { Adoption } from "../contracts/schemas.js"

const PERSON: Adoption = { kind: "person" }
const POLICY_PREFIX = "policy@"

const of = (row: { origin: string; decided_by: string } | undefined): Adoption =>
  row !== undefined && row.origin === "auto" && row.decided_by.startsWith(POLICY_PREFIX)
    ? { kind: "auto", ruleset: row.decided_by.slice(POLICY_PREFIX.length) }
    : PERSON

/** The adoption of each entity, from the newest review of any of its versions. */
export const entityAdoptions = (sql: SqlClient, ids: ReadonlyArray<string>) =>
  ids.length === 0
    ? Effect.succeed(new Map<string, Adoption>())
    : Effect.map(
      sql<{ id: string; origin: string; decided_by: string }>`
        SELECT j.value AS id, r.origin, r.decided_by FROM json_each(${JSON.stringify([...new Set(ids)])}) j
        JOIN review r ON r.seq = (SELECT max(s.seq) FROM review s WHERE s.target GLOB 'entity/' || j.value || '@*')`,
      (rows) => new Map(ids.map((id) => [id, of(rows.find((r) => r.id === id))]))
    ).pipe(Effect.orDie)

/** The adoption of each link, from its newest review (a close by a person is no verdict on the adoption). */
export const linkAdoptions = (sql: SqlClient, ids: ReadonlyArray<string>) =>
  ids.length === 0
    ? Effect.succeed(new Map<string, Adoption>())
    : Effect.map(
      sql<{ id: string; origin: string; decided_by: string }>`
        SELECT j.value AS id, r.origin, r.decided_by FROM json_each(${JSON.stringify([...new Set(ids)])}) j
        JOIN review r ON r.seq = (SELECT max(s.seq) FROM review s WHERE s.target = 'link/' || j.value AND s.verdict <> 'close')`,
      (rows) => new Map(ids.map((id) => [id, of(rows.find((r) => r.id === id))]))
    ).pipe(Effect.orDie)
