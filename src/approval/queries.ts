/**
 * The read side of the approval pages: open proposals, one rule with everything a person needs
 * to decide, rejected rules, and the names of grants. Reads only, inside the caller's read
 * transaction; the approval channel sees rejected rules (invariant 8 holds outside it).
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { OpsStore } from "../db/ops-store.js"
import { parseRuleRef } from "../contracts/ids.js"
import type { Adoption } from "../contracts/schemas.js"
import { reviewFacts } from "../domain/adoption.js"
import { nearDuplicate } from "../domain/near-duplicate.js"
import { RuleIndex } from "../domain/rule-index.js"
import { provenanceOf } from "../domain/provenance.js"
import { allVersions, type RuleVersionRow } from "../domain/rules.js"
import { conflictsOf } from "./marks.js"
import { rejectedSimilar } from "./rejected-similar.js"

export interface ProposalRow {
  readonly seq: number
  readonly rule_id: string
  readonly created_at: string
  readonly version: number
  readonly kind: "rule" | "note"
  readonly statement: string
  readonly keywords: string
  readonly quote: string
  readonly source_id: string
  readonly timestamp_s: number | null
  readonly speaker: string | null
  readonly said_at: string
  readonly changed_by: string
  readonly source_kind: string | null
  readonly source_title: string | null
  readonly source_sender: string | null
  /** the policy's classification (JSON arrays), null for a proposal from before slice A */
  readonly exceptions: string | null
  readonly reasons: string | null
}

/** Open proposals of one scope, newest first, with why each waits for a person (its classification). */
export const openProposals = (sql: SqlClient, limit: number, offset = 0) =>
  sql<ProposalRow>`
    SELECT r.seq, r.id AS rule_id, r.created_at, v.version, v.kind, v.statement, v.keywords, v.quote, v.source_id, v.timestamp_s,
      v.speaker, v.said_at, v.changed_by, s.kind AS source_kind, s.title AS source_title, s.sender AS source_sender,
      c.exceptions, c.reasons
    FROM rule r
      JOIN rule_version v ON v.rule_id = r.id AND v.version = (SELECT max(w.version) FROM rule_version w WHERE w.rule_id = r.id)
      LEFT JOIN source s ON s.id = v.source_id
      LEFT JOIN classification c ON c.rule_id = r.id AND c.version = 1
    WHERE v.status = 'proposed'
    ORDER BY r.seq DESC LIMIT ${limit} OFFSET ${offset}`

/** A rule the policy adopted on a day, as it stands now. */
export interface AdoptedRow {
  readonly rule_id: string
  readonly version: number
  readonly statement: string
  readonly status: string
  readonly mode: string
  readonly class: string
  readonly reasons: string
  readonly classified_at: string
  /** origin of the newest confirm/review decision: auto while still retractable */
  readonly newest_origin: string | null
  /** kind of the newest decision (retract, reject, revoke, confirm, review) */
  readonly last_kind: string | null
}

/** The rules the policy adopted in this scope on `day` (config.zone), newest first. */
export const adoptedOn = (sql: SqlClient, day: string, limit: number) =>
  sql<AdoptedRow>`
    SELECT c.rule_id, v.version, v.statement, v.status, c.mode, c.class, c.reasons, c.classified_at,
      (SELECT d.origin FROM decision d WHERE d.rule_id = c.rule_id AND d.kind IN ('confirm','review') ORDER BY d.id DESC LIMIT 1) AS newest_origin,
      (SELECT d.kind FROM decision d WHERE d.rule_id = c.rule_id ORDER BY d.id DESC LIMIT 1) AS last_kind
    FROM classification c JOIN current_version v ON v.rule_id = c.rule_id
    WHERE c.day = ${day} AND c.outcome = 'auto'
    ORDER BY c.id DESC LIMIT ${limit}`

export interface ClassificationRow {
  readonly ruleset: string
  readonly class: string
  readonly exceptions: string
  readonly mode: string
  readonly outcome: string
  readonly reasons: string
  readonly day: string
  readonly daily_limit: number
  readonly classified_at: string
}

export interface ScopeCounts {
  readonly proposed: number
  readonly confirmed: number
  readonly superseded: number
  readonly rejected: number
}

export const statusCounts = (sql: SqlClient) =>
  Effect.map(
    sql<{ status: string; n: number }>`
      SELECT v.status, count(*) AS n FROM rule r
        JOIN rule_version v ON v.rule_id = r.id AND v.version = (SELECT max(w.version) FROM rule_version w WHERE w.rule_id = r.id)
      GROUP BY v.status`,
    (rows): ScopeCounts => {
      const n = (s: string) => rows.find((r) => r.status === s)?.n ?? 0
      return { proposed: n("proposed"), confirmed: n("confirmed"), superseded: n("superseded"), rejected: n("rejected") }
    }
  )

export interface DecisionRow {
  readonly id: number
  readonly kind: string
  readonly origin: string
  readonly mode: string | null
  readonly version: number
  readonly decided_by: string
  readonly decided_by_identity: string
  readonly decided_at: string
  readonly reason: string | null
  readonly new_version: number | null
}

export interface RuleHead {
  readonly seq: number
  readonly created_at: string
  readonly created_by: string
}

/** A redaction that replaced text the rule page shows: its id, the reason given and when. */
export interface RedactionNote {
  readonly id: string
  readonly reason: string
  readonly at: string
}

/**
 * The redactions that touched the rule's versions, its decisions or classifications, or its
 * source (text, segments, attachments, mail header), oldest first: one read of redaction_place.
 */
export const redactionsOfRule = (sql: SqlClient, ruleId: string, sourceId: string) =>
  sql<RedactionNote>`SELECT r.id, r.reason, r.at FROM redaction r WHERE EXISTS (
      SELECT 1 FROM redaction_place p WHERE p.redaction_seq = r.seq AND (
        (p.tbl = 'rule_version' AND json_extract(p.key, '$[0]') = ${ruleId})
        OR (p.tbl IN ('source', 'source_segment', 'source_attachment', 'source_auth') AND json_extract(p.key, '$[0]') = ${sourceId})
        OR (p.tbl = 'decision' AND json_extract(p.key, '$[0]') IN (SELECT id FROM decision WHERE rule_id = ${ruleId}))
        OR (p.tbl = 'classification' AND json_extract(p.key, '$[0]') IN (SELECT id FROM classification WHERE rule_id = ${ruleId}))))
    ORDER BY r.seq`

export interface Neighbour {
  readonly rule_id: string
  readonly version: number
  readonly statement: string
  readonly status: string
}

/** One rule as the rule page shows it; undefined when the rule does not exist. */
export const ruleDetail = (sql: SqlClient, ruleId: string, today: string) =>
  Effect.gen(function*() {
    const heads = yield* sql<RuleHead>`SELECT seq, created_at, created_by FROM rule WHERE id = ${ruleId}`
    const head = heads[0]
    if (head === undefined) return undefined
    const versions = yield* allVersions(sql, ruleId)
    const current = versions[versions.length - 1] as RuleVersionRow
    const decisions = yield* sql<DecisionRow>`
      SELECT id, kind, origin, mode, version, decided_by, decided_by_identity, decided_at, reason, new_version
      FROM decision WHERE rule_id = ${ruleId} ORDER BY id`
    const provenance = yield* provenanceOf(sql, current)
    const keywords = JSON.parse(current.keywords) as Array<string>
    const similar = yield* (yield* RuleIndex).similar(sql, { statement: current.statement, keywords }, head.seq, today)
    const duplicates = yield* Effect.forEach(similar, ({ ref, coverage }) =>
      Effect.map(neighbour(sql, parseRuleRef(ref)?.id ?? ""), (n) =>
        n === undefined ? undefined : { ...n, near: nearDuplicate(current.statement, n.statement, coverage) }))
    const rejected = yield* rejectedSimilar(sql, { statement: current.statement, keywords }, head.seq)
    const facts = yield* reviewFacts(sql, ruleId)
    const reviewedAt = facts.lastReviewedAt
    const adoption: Adoption = facts.adoption
    const classified = yield* sql<ClassificationRow>`
      SELECT ruleset, class, exceptions, mode, outcome, reasons, day, daily_limit, classified_at
      FROM classification WHERE rule_id = ${ruleId} ORDER BY id DESC LIMIT 1`
    const next = yield* sql<{ id: string }>`
      SELECT r.id FROM rule r
        JOIN rule_version v ON v.rule_id = r.id AND v.version = (SELECT max(w.version) FROM rule_version w WHERE w.rule_id = r.id)
      WHERE v.status = 'proposed' AND r.id <> ${ruleId}
      ORDER BY (r.seq < ${head.seq}) DESC, r.seq DESC LIMIT 1`
    const redactions = yield* redactionsOfRule(sql, ruleId, current.source_id)
    const near = duplicates.filter((d) => d?.near === true).map((d) => d?.rule_id ?? "")
    const conflicts = current.status === "proposed" ? yield* conflictsOf(sql, ruleId, near) : []
    const successor = current.superseded_by === null ? undefined : yield* neighbour(sql, current.superseded_by)
    const predecessor = current.supersedes === null ? undefined : yield* neighbour(sql, current.supersedes)
    return {
      head, versions, current, decisions, provenance,
      duplicates: duplicates.filter((d): d is Neighbour & { readonly near: boolean } => d !== undefined),
      rejected, reviewedAt, adoption, classification: classified[0] ?? null, nextProposal: next[0]?.id ?? null,
      successor: successor ?? null, predecessor: predecessor ?? null, redactions, conflicts
    }
  })
export type RuleDetail = NonNullable<Effect.Effect.Success<ReturnType<typeof ruleDetail>>>

const neighbour = (sql: SqlClient, ruleId: string) =>
  Effect.map(
    sql<Neighbour>`SELECT rule_id, version, statement, status FROM current_version WHERE rule_id = ${ruleId}`,
    (rows) => rows[0]
  )

export interface RejectedRow extends RuleVersionRow {
  readonly seq: number
  readonly decided_at: string | null
  readonly decided_by_identity: string | null
  readonly decision_reason: string | null
  readonly source_title: string | null
}

/** Rejected rules of a scope, newest rejection first. */
export const rejectedRules = (sql: SqlClient, limit: number, offset = 0) =>
  sql<RejectedRow>`
    SELECT r.seq, v.*, d.decided_at, d.decided_by_identity, d.reason AS decision_reason, s.title AS source_title
    FROM rule r
      JOIN rule_version v ON v.rule_id = r.id AND v.version = (SELECT max(w.version) FROM rule_version w WHERE w.rule_id = r.id)
      LEFT JOIN decision d ON d.id = (SELECT max(e.id) FROM decision e WHERE e.rule_id = r.id AND e.kind = 'reject')
      LEFT JOIN source s ON s.id = v.source_id
    WHERE v.status = 'rejected'
    ORDER BY d.decided_at DESC, r.seq DESC LIMIT ${limit} OFFSET ${offset}`

/** Grant id → how a person recognises it: the label, else a person's e-mail, else the id. */
export const grantNames = Effect.gen(function*() {
  const ops = yield* OpsStore
  const grants = yield* Effect.orDie(ops.listGrants())
  const names = new Map<string, string>()
  for (const g of grants) {
    const name = g.label ?? (g.kind === "person" ? g.identity : null)
    if (name !== null) names.set(g.id, name)
  }
  return names
})
export type GrantNames = ReadonlyMap<string, string>
