/**
 * The digest (gaps.md §13 "Digest"): per scope, what the approval policy adopted since a day
 * (config.zone), what waits for a person (open rule proposals and pending structure changes) and
 * which confirmed rules are due for recheck ("still valid?", oldest first). Written once: the
 * approval page GET /approval/digest (the scopes of the person's grant), the ops socket's
 * GET /ops/digest (every configured scope) and through it `groundnote approvals digest` and the
 * post of `backup nightly` to approval.digest_url. Reads only, one read transaction per scope.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { AppConfig } from "../config/config.js"
import { decodeStrict } from "../contracts/decode.js"
import { DigestQuery, type DigestJson } from "../contracts/digest.js"
import { ruleRef } from "../contracts/ids.js"
import { instantOfLocal, todayIn } from "../contracts/time.js"
import { ScopeStore } from "../db/scope-store.js"
import { POLICY_PREFIX } from "../domain/adoption.js"
import { type DueRule, dueForRecheck } from "../search/due-for-recheck.js"
import type { SqlError } from "@effect/sql/SqlError"

/** The query string decoded strictly: a missing or bad `since` is 400 validation-failed naming it. */
export const parseDigestQuery = (query: Readonly<Record<string, string>>) => decodeStrict(DigestQuery, query, "query")

/** A rule the policy adopted since the day, as it stands now. */
export interface AdoptedRule {
  readonly rule_id: string
  /** the version the policy's confirm made */
  readonly version: number
  /** the current statement */
  readonly statement: string
  /** the current status (confirmed while the adoption stands or a person confirmed it) */
  readonly status: string
  /** the day of the adoption (config.zone) and its instant */
  readonly day: string
  readonly adopted_at: string
  readonly mode: string
  readonly class: string
  /** origin of the newest confirm/review decision: auto while still retractable */
  readonly newest_origin: string | null
  /** kind of the newest decision (retract, reject, revoke, confirm, review) */
  readonly last_kind: string | null
}

export interface ScopeDigest {
  readonly scope: string
  /** null: readable; else why not (locked, no file yet) */
  readonly unavailable: string | null
  /** newest adoption first */
  readonly adopted: ReadonlyArray<AdoptedRule>
  /** refs of the entity and link changes the policy adopted since the day (adoptedStructureSince) */
  readonly adoptedStructure: ReadonlyArray<string>
  readonly waiting: { readonly rules: number; readonly structure: number }
  /** oldest review first */
  readonly dueForRecheck: ReadonlyArray<DueRule>
}

export interface Digest {
  readonly instance: string
  readonly since: string
  /** today in config.zone: the digest covers since … today */
  readonly today: string
  readonly scopes: ReadonlyArray<ScopeDigest>
}

/** The rules the policy adopted on `since` or later (its confirm: origin auto, decided_by policy@<ruleset>), newest first. */
const adoptedRulesSince = (sql: SqlClient, since: string) =>
  sql<AdoptedRule>`
    SELECT d.rule_id, d.new_version AS version, cur.statement, cur.status, c.day, d.decided_at AS adopted_at, c.mode, c.class,
      (SELECT e.origin FROM decision e WHERE e.rule_id = d.rule_id AND e.kind IN ('confirm', 'review') ORDER BY e.id DESC LIMIT 1) AS newest_origin,
      (SELECT e.kind FROM decision e WHERE e.rule_id = d.rule_id ORDER BY e.id DESC LIMIT 1) AS last_kind
    FROM classification c
      JOIN decision d ON d.rule_id = c.rule_id AND d.classification_id = c.id
      JOIN current_version cur ON cur.rule_id = d.rule_id
    WHERE c.outcome = 'auto' AND c.day >= ${since}
      AND d.origin = 'auto' AND d.kind = 'confirm' AND d.decided_by GLOB ${`${POLICY_PREFIX}*`}
    ORDER BY d.id DESC`

/**
 * The entity and link changes the policy adopted since the day, as refs (entity/<id>@<n>,
 * link/<id>), newest first: its review rows (origin auto, decided_by policy@<ruleset>) decided on
 * or after the start of `since` in config.zone; a retracted one is left out. Their refs join
 * `adopted` after the rules' in every door.
 */
const adoptedStructureSince = (sql: SqlClient, since: string, zone: string): Effect.Effect<ReadonlyArray<string>, SqlError> =>
  Effect.map(sql<{ target: string }>`
    SELECT r.target FROM review r
    WHERE r.origin = 'auto' AND r.decided_by GLOB ${`${POLICY_PREFIX}*`} AND r.decided_at >= ${instantOfLocal(zone, `${since} 00:00`) ?? `${since}T00:00:00Z`}
      AND NOT EXISTS (SELECT 1 FROM review x WHERE x.target = r.target AND x.verdict = 'retract')
    ORDER BY r.seq DESC`, (rows) => rows.map((row) => row.target))

const openRuleProposals = (sql: SqlClient) =>
  Effect.map(sql<{ n: number }>`SELECT count(*) AS n FROM current_version WHERE status = 'proposed'`, (rows) => rows[0]?.n ?? 0)

/**
 * How many structure changes of a scope wait for a person: the approval pages' pending list
 * (src/structure/pending.ts, which only the approval side and the structure route may import),
 * handed in by the door.
 */
export type StructureWaiting = (sql: SqlClient, scope: string) => Effect.Effect<number, SqlError, AppConfig>

/** The digest of one readable scope, in one read transaction. */
const scopeDigest = (scope: string, since: string, nowMs: number, structureWaiting: StructureWaiting) =>
  Effect.gen(function*() {
    const store = yield* ScopeStore
    const config = yield* AppConfig
    const recheck = { zone: config.file.zone, recheckAfterDays: config.file.recheck_after_days, nowMs }
    return yield* store.read(scope, ({ sql }) =>
      Effect.gen(function*() {
        const adopted = yield* adoptedRulesSince(sql, since)
        const adoptedStructure = yield* adoptedStructureSince(sql, since, config.file.zone)
        const rules = yield* openRuleProposals(sql)
        const structure = yield* structureWaiting(sql, scope)
        const due = yield* dueForRecheck(sql, recheck)
        return { scope, unavailable: null, adopted, adoptedStructure, waiting: { rules, structure }, dueForRecheck: due } satisfies ScopeDigest
      }))
  })

/**
 * The digest of `scopes` since `since`: a scope that is locked or has no file yet is listed with
 * why (the others are still read); a failure of storage stays a failure.
 */
export const digestOf = (scopes: ReadonlyArray<string>, since: string, structureWaiting: StructureWaiting) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const today = yield* todayIn(config.file.zone)
    const nowMs = yield* Effect.clockWith((c) => c.currentTimeMillis)
    const out: Array<ScopeDigest> = []
    for (const scope of scopes) {
      const read = yield* Effect.either(scopeDigest(scope, since, nowMs, structureWaiting))
      if (read._tag === "Right") {
        out.push(read.right)
        continue
      }
      if (read.left._tag !== "ScopeLocked") return yield* read.left
      out.push({ scope, unavailable: read.left.message, adopted: [], adoptedStructure: [], waiting: { rules: 0, structure: 0 }, dueForRecheck: [] })
    }
    return { instance: config.file.instance, since, today, scopes: out } satisfies Digest
  })

/** The digest as JSON (GET /ops/digest, the CLI's --json, the nightly's post): refs, counts. */
export const digestJson = (d: Digest): DigestJson => ({
  instance: d.instance,
  since: d.since,
  today: d.today,
  scopes: d.scopes.map((s) => ({
    scope: s.scope,
    available: s.unavailable === null,
    message: s.unavailable,
    adopted: [...s.adopted.map((a) => ruleRef(a.rule_id, a.version)), ...s.adoptedStructure],
    waiting: s.waiting,
    due_for_recheck: s.dueForRecheck.map((r) => ruleRef(r.rule_id, r.version))
  }))
})

/** GET /ops/digest?since=: every configured scope (the ops socket sees them all), as JSON. */
export const opsDigest = (query: Readonly<Record<string, string>>, structureWaiting: StructureWaiting) =>
  Effect.gen(function*() {
    const q = yield* parseDigestQuery(query)
    const store = yield* ScopeStore
    return digestJson(yield* digestOf(store.configured, q.since, structureWaiting))
  })
