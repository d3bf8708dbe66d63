/**
 * Graph fixtures for the link and structure tests: entities written with raw SQL as the writers
 * would (entity, versions, closure), sources and rules through the real writers.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { ScopeStore } from "../../src/db/scope-store.js"
import { closureOnMove } from "../../src/graph/closure.js"
import { syncEntityFts } from "../../src/graph/fts.js"
import { decide } from "../../src/decision/decide.js"
import { propose } from "../../src/domain/proposals.js"
import { storeSource } from "../../src/domain/sources.js"
import { mailProposal, mailSource } from "../support/fixtures.js"
import { sqlOf } from "../support/run.js"

export const AT = "2026-01-05T10:00:00.000Z"

export interface EntityFixture {
  readonly name: string
  readonly type?: string
  readonly parent?: string | null
  readonly status?: "active" | "unconfirmed" | "archived"
  readonly scope?: string
  readonly channel?: "mcp" | "api"
}

/** One entity (head, version 1 create by an agent, closure; version 2 confirm/archive by a person). */
export const addEntity = (sql: SqlClient, f: EntityFixture) =>
  Effect.gen(function*() {
    const scope = f.scope ?? "sales"
    const next = yield* sql<{ seq: number }>`SELECT coalesce(max(seq), 0) + 1 AS seq FROM entity`
    const seq = next[0]?.seq ?? 1
    const id = `${scope}-e${String(seq).padStart(4, "0")}`
    const type = f.type ?? "project"
    const parent = f.parent ?? null
    const channel = f.channel ?? "mcp"
    yield* sql`INSERT INTO entity (seq, id, scope, created_at, created_by) VALUES (${seq}, ${id}, ${scope}, ${AT}, 'agent')`
    yield* sql`INSERT INTO entity_version (id, version, type, name, aliases, parent_id, status, valid_from, change, channel, changed_by, changed_at, reason, evidence)
      VALUES (${id}, 1, ${type}, ${f.name}, '[]', ${parent}, 'unconfirmed', '2026-01-05', 'create', ${channel}, 'person:1', ${AT}, 'created via mcp', 'source/mail:<x@y>')`
    yield* sql`INSERT INTO entity_closure (ancestor_id, descendant_id, depth) VALUES (${id}, ${id}, 0)`
    if (parent !== null) {
      yield* sql`INSERT INTO entity_closure (ancestor_id, descendant_id, depth)
        SELECT ancestor_id, ${id}, depth + 1 FROM entity_closure WHERE descendant_id = ${parent}`
    }
    if (f.status === "active") {
      yield* sql`INSERT INTO entity_version (id, version, type, name, aliases, parent_id, status, valid_from, change, channel, changed_by, changed_at, reason)
        VALUES (${id}, 2, ${type}, ${f.name}, '[]', ${parent}, 'active', '2026-01-05', 'confirm', 'approval', 'person:1', ${AT}, 'checked')`
    }
    if (f.status === "archived") {
      yield* sql`INSERT INTO entity_version (id, version, type, name, aliases, parent_id, status, valid_from, valid_to, change, channel, changed_by, changed_at, reason)
        VALUES (${id}, 2, ${type}, ${f.name}, '[]', ${parent}, 'archived', '2026-01-05', '2026-01-06', 'archive', 'approval', 'person:1', ${AT}, 'gone')`
    }
    yield* syncEntityFts(sql, { seq, name: f.name, aliases: [] })
    return id
  })

/** Entities in scope "sales" in one write. */
export const seedEntities = (fixtures: ReadonlyArray<EntityFixture | ((ids: ReadonlyArray<string>) => EntityFixture)>) =>
  Effect.flatMap(ScopeStore, (store) =>
    store.write("sales", ({ sql }) =>
      Effect.gen(function*() {
        const ids: Array<string> = []
        for (const f of fixtures) ids.push(yield* addEntity(sql, typeof f === "function" ? f(ids) : f))
        return ids
      })))

/** A raw link row (for validity fixtures the writer never produces). */
export const insertLinkRow = (scope: string, row: {
  from_ref: string; to_ref: string; type: string; origin?: "proposed" | "human" | "deterministic"; confidence?: number | null
  valid_from?: string; valid_to?: string | null
}) =>
  Effect.flatMap(ScopeStore, (store) =>
    store.write(scope, ({ sql }) =>
      Effect.gen(function*() {
        const seq = (yield* sql<{ seq: number }>`SELECT coalesce(max(seq), 0) + 1 AS seq FROM link`)[0]?.seq ?? 1
        const id = `${scope}-l${String(seq).padStart(4, "0")}`
        const origin = row.origin ?? "human"
        yield* sql`INSERT INTO link (seq, id, from_ref, to_ref, type, origin, confidence, reason, evidence, valid_from, valid_to, created_at, created_by)
          VALUES (${seq}, ${id}, ${row.from_ref}, ${row.to_ref}, ${row.type}, ${origin}, ${row.confidence ?? (origin === "proposed" ? 0.5 : null)},
            ${origin === "deterministic" ? null : "fixture"}, NULL, ${row.valid_from ?? AT}, ${row.valid_to ?? null}, ${AT},
            ${origin === "deterministic" ? "code" : "person:1"})`
        return id
      })))

/** A review row written directly (for counted-link fixtures). */
export const insertReview = (scope: string, target: string, verdict: "confirm" | "reject" | "revert") =>
  Effect.flatMap(ScopeStore, (store) =>
    store.write(scope, ({ sql }) =>
      Effect.gen(function*() {
        const seq = (yield* sql<{ seq: number }>`SELECT coalesce(max(seq), 0) + 1 AS seq FROM review`)[0]?.seq ?? 1
        yield* sql`INSERT INTO review (seq, id, target, verdict, decided_by, decided_by_identity, decided_at, reason, new_version)
          VALUES (${seq}, ${`${scope}-r${String(seq).padStart(4, "0")}`}, ${target}, ${verdict}, 'person:1', 'dev@example.com', ${AT},
            ${verdict === "confirm" ? null : "fixture"}, NULL)`
      })))

export const MAIL_ID = "mail:<order-rule@example.com>"
export const MAIL_REF = `source/${MAIL_ID}`
export const REPLY_ID = "mail:<reply@example.com>"

/** The order mail (two attachments), a reply in its thread, and rules sales-0001 (proposed), sales-0002 (confirmed), sales-0003 (rejected). */
export const seedSourcesAndRules = Effect.gen(function*() {
  yield* storeSource(mailSource(), "service:2")
  yield* storeSource(mailSource({
    source: { kind: "mail", id: REPLY_ID, title: "Re: Bestellungen", occurred_at: "2026-03-13T09:15:00Z", sender: "tom@example.com", thread: MAIL_ID, link: null },
    attachments: []
  }, REPLY_ID), "service:2")
  const by = { grantId: "service:2", channel: "api" as const }
  yield* propose(mailProposal(), by)
  yield* propose(mailProposal({ statement: "Always confirm the delivery time in writing before ordering" }), by)
  yield* propose(mailProposal({ statement: "Never order hook rails without a written delivery time" }), by)
  const person = { grantId: "person:1", identity: "dev@example.com" }
  yield* decide("sales-0002", { decision: "confirm", version: 1 }, person)
  yield* decide("sales-0003", { decision: "reject", version: 1, reason: "duplicate" }, person)
})

/** Row counts of the graph tables. */
export const graphCounts = (scope = "sales") =>
  Effect.gen(function*() {
    const sql = yield* sqlOf(scope)
    const out: Record<string, number> = {}
    for (const t of ["entity", "entity_version", "entity_closure", "link", "review"]) {
      out[t] = (yield* sql.unsafe<{ n: number }>(`SELECT count(*) AS n FROM ${t}`))[0]?.n ?? 0
    }
    return out
  })

/** Archives an entity with a raw approval version (for read-side fixtures). */
export const archiveRaw = (id: string, scope = "sales") =>
  Effect.flatMap(ScopeStore, (store) =>
    store.write(scope, ({ sql }) =>
      sql`INSERT INTO entity_version (id, version, type, name, aliases, parent_id, status, valid_from, valid_to, change, channel, changed_by, changed_at, reason)
        SELECT id, version + 1, type, name, aliases, parent_id, 'archived', valid_from, '2026-01-06', 'archive', 'approval', 'person:1', ${AT}, 'gone'
        FROM entity_current WHERE id = ${id}`))

/** An agent version as entities.ts would write it: a move (closure follows) or a rename. */
export const agentChange = (id: string, change: { parent?: string | null; name?: string; at?: string }, scope = "sales") =>
  Effect.flatMap(ScopeStore, (store) =>
    store.write(scope, ({ sql }) =>
      Effect.gen(function*() {
        const at = change.at ?? "2026-01-07T10:00:00.000Z"
        const moves = change.parent !== undefined
        yield* sql`INSERT INTO entity_version (id, version, type, name, aliases, parent_id, status, valid_from, change, channel, changed_by, changed_at, reason, evidence)
          SELECT id, version + 1, type, coalesce(${change.name ?? null}, name), aliases,
            CASE WHEN ${moves ? 1 : 0} = 1 THEN ${change.parent ?? null} ELSE parent_id END,
            status, valid_from, ${moves ? "move" : "update"}, 'mcp', 'person:1', ${at}, 'the agent said so', 'source/mail:<x@y>'
          FROM entity_current WHERE id = ${id}`
        if (moves) yield* closureOnMove(sql, id, change.parent ?? null)
        const v = yield* sql<{ version: number; seq: number; name: string }>`
          SELECT k.version, e.seq, k.name FROM entity_current k JOIN entity e ON e.id = k.id WHERE k.id = ${id}`
        if (change.name !== undefined) yield* syncEntityFts(sql, { seq: v[0]?.seq ?? 0, name: v[0]?.name ?? "", aliases: [] })
        return v[0]?.version ?? 0
      })))
