/**
 * What the classifier needs from the scope file (gaps.md §10): the facts of the proposal's source
 * (kind, sender, source_auth), the confirmed rules the proposal nearly repeats and those tied to
 * them by a contradicts link, the largest entity subtree its relations name, and how many
 * proposals the policy adopted on a day. Reads only, inside the proposal's transaction.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { parseRuleRef } from "../../contracts/ids.js"
import { dayIn } from "../../contracts/time.js"
import type { ProposalRequest } from "../../domain/proposal-schemas.js"
import { nearDuplicate } from "../../domain/near-duplicate.js"
import { negated, type ScopeFacts, type SourceFacts } from "./classify.js"

/** The source of the proposal as the classifier sees it. */
export const sourceFacts = (sql: SqlClient, req: ProposalRequest) =>
  Effect.gen(function*() {
    const src = req.source
    if (src.kind !== "mail") return { kind: src.kind } satisfies SourceFacts
    const rows = yield* sql<{ sender: string | null; mail_from: string | null; authentication_results: string | null }>`
      SELECT s.sender, a.mail_from, a.authentication_results FROM source s LEFT JOIN source_auth a ON a.source_id = s.id WHERE s.id = ${src.id}`
    const r = rows[0]
    return {
      kind: "mail",
      sender: r?.sender ?? null,
      auth: r?.mail_from === null || r?.mail_from === undefined ? null : { from: r.mail_from, authentication_results: r.authentication_results ?? "" }
    } satisfies SourceFacts
  })

export interface NearFacts extends ScopeFacts {
  /** confirmed rules the proposal nearly repeats with the same polarity (a person decides: same rule, or a successor) */
  readonly sameMeaning: ReadonlyArray<string>
}

/**
 * The confirmed near duplicates among the possible duplicates (nearDuplicate, the one definition
 * the approval pages mark by too), the confirmed rules an open contradicts link ties to one of them (they
 * contradict the proposal too), and the largest entity subtree a relation names (by an entity
 * ref or id in relation.ref, or by the name of an entity that is not archived).
 */
export const scopeFacts = (sql: SqlClient, req: ProposalRequest, duplicates: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const ids = [...new Set(duplicates.map((r) => parseRuleRef(r)?.id).filter((id): id is string => id !== undefined))]
    const candidates = ids.length === 0
      ? []
      : yield* sql<{ rule_id: string; statement: string }>`
        SELECT rule_id, statement FROM current_version WHERE rule_id IN ${sql.in(ids)} AND status = 'confirmed' ORDER BY rule_id`
    const near = candidates.filter((c) => nearDuplicate(req.statement, c.statement))
    const nearRefs = near.map((n) => `rule/${n.rule_id}`)
    const contradicting = nearRefs.length === 0
      ? []
      : yield* sql<{ other: string }>`
        SELECT CASE WHEN l.from_ref IN ${sql.in(nearRefs)} THEN l.to_ref ELSE l.from_ref END AS other
        FROM link l
        WHERE l.type = 'contradicts' AND l.valid_to IS NULL
          AND (l.from_ref IN ${sql.in(nearRefs)} OR l.to_ref IN ${sql.in(nearRefs)})
          AND NOT EXISTS (SELECT 1 FROM review w WHERE w.target = 'link/' || l.id AND w.verdict = 'reject')`
    const otherIds = [...new Set(contradicting.map((c) => c.other).filter((o) => o.startsWith("rule/")).map((o) => o.slice(5)))]
    const contradictedBy = otherIds.length === 0
      ? []
      : (yield* sql<{ rule_id: string }>`SELECT rule_id FROM current_version WHERE rule_id IN ${sql.in(otherIds)} AND status = 'confirmed'`)
        .map((r) => r.rule_id)
    let largestSubtree = 0
    for (const rel of req.relations) {
      const byRef = rel.ref === null ? null : rel.ref.replace(/^entity\//, "").replace(/@\d+$/, "")
      const rows = yield* sql<{ n: number }>`
        SELECT count(*) AS n FROM entity_closure c WHERE c.ancestor_id = (
          SELECT e.id FROM entity_current e
          WHERE e.status <> 'archived' AND (e.id = ${byRef ?? ""} OR lower(e.name) = lower(${rel.name}))
          ORDER BY e.id = ${byRef ?? ""} DESC, e.id LIMIT 1)`
      largestSubtree = Math.max(largestSubtree, rows[0]?.n ?? 0)
    }
    const statement = req.statement
    return {
      contradictedBy,
      confirmedNearDuplicates: near.map((n) => ({ id: n.rule_id, statement: n.statement })),
      largestSubtree,
      sameMeaning: near.filter((n) => negated(n.statement) === negated(statement)).map((n) => n.rule_id)
    } satisfies NearFacts
  })

/**
 * How many rules and structure changes the policy adopted in this scope on `day` (config.zone):
 * one daily limit for both (gaps.md §13). A structure adoption is a review of origin auto; its
 * instant is read back over the last days and counted by its day in `zone`.
 */
export const adoptedOn = (sql: SqlClient, day: string, zone: string, nowMs: number) =>
  Effect.gen(function*() {
    const rules = yield* sql<{ n: number }>`SELECT count(*) AS n FROM classification WHERE day = ${day} AND outcome = 'auto'`
    // a calendar day lasts at most 26 hours in any zone: three days back hold all of today's
    const since = new Date(nowMs - 3 * 86_400_000).toISOString()
    const reviews = yield* sql<{ decided_at: string }>`SELECT decided_at FROM review WHERE origin = 'auto' AND decided_at >= ${since}`
    return (rules[0]?.n ?? 0) + reviews.filter((r) => dayIn(zone, Date.parse(r.decided_at)) === day).length
  })

/**
 * The rules the proposal repeats that a person or agent took back after the policy adopted them
 * (retracted: superseded by a retract decision), by statement and source: the policy never adopts
 * the same again. Found through the first versions' index by source and statement length
 * (migration 0013). A proposal in the proposer's own words has none: the policy never adopts one
 * (unchecked-quote is a mandatory exception), so none was ever retracted.
 */
export const retractedRepeats = (sql: SqlClient, req: ProposalRequest, ruleId: string) =>
  req.source.kind === "manual" ? Effect.succeed<ReadonlyArray<string>>([]) : Effect.map(
    sql<{ rule_id: string }>`
      SELECT DISTINCT f.rule_id FROM rule_version f JOIN decision d ON d.rule_id = f.rule_id AND d.kind = 'retract'
      WHERE f.version = 1 AND f.rule_id <> ${ruleId} AND f.statement = ${req.statement}
        AND f.source_id = ${req.source.id} AND length(f.statement) = length(${req.statement})
      ORDER BY f.rule_id`,
    (rows): ReadonlyArray<string> => rows.map((r) => r.rule_id)
  )
