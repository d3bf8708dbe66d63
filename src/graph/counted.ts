/**
 * Counted links (graph.md §11 G5) and link validity on a target day (graph.md §4 "Validity").
 *
 * Computed links and stored deterministic/human links always count; a proposed link counts only
 * after a confirm review, or when graph.proposed_min_confidence is set, its confidence reaches it
 * and no reject exists; a rejected link never counts. Only links open on the target day count:
 * valid_from on or before that day (in config.zone), valid_to null or after it. Bundles, the
 * search filter `entity` and link_list read links through here.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import { AppConfig } from "../config/config.js"
import { dayIn } from "../contracts/time.js"
import { NOTHING_REDACTED, type Redacted, redactedMark } from "../domain/redacted.js"
import type { PathItem } from "../contracts/errors.js"
import { endKindOf, entityEnd, entityIdOfEnd, linkRef, type LinkOut, type LinkStatus, type LinkType, ruleEnd, ruleIdOfEnd } from "./link-types.js"
import { pathsOf } from "./paths.js"

/** A row of `link`. */
export interface LinkRow {
  readonly seq: number
  readonly id: string
  readonly from_ref: string
  readonly to_ref: string
  readonly type: LinkType
  readonly origin: "deterministic" | "proposed" | "human"
  readonly confidence: number | null
  readonly reason: string | null
  readonly evidence: string | null
  readonly valid_from: string
  readonly valid_to: string | null
  readonly created_at: string
  readonly created_by: string
}

export type Verdict = "confirm" | "reject" | "revert"
/** Verdicts by review target (`link/<id>`). */
export type Reviews = ReadonlyMap<string, Verdict>

export interface CountOptions {
  /** config.zone: the target day is a calendar day there */
  readonly zone: string
  /** config.graph.proposed_min_confidence */
  readonly minConfidence: number | null
}

/** The count options of the running config. */
export const countOptions: Effect.Effect<CountOptions, never, AppConfig> = Effect.map(AppConfig, (c) => ({
  zone: c.file.zone, minConfidence: c.file.graph.proposed_min_confidence
}))

/** status of LinkOut: deterministic/human confirmed; proposed by its review. */
export const linkStatus = (link: Pick<LinkRow, "origin">, verdict: Verdict | undefined): LinkStatus => {
  if (link.origin !== "proposed") return "confirmed"
  if (verdict === "confirm") return "confirmed"
  if (verdict === "reject") return "rejected"
  return "proposed"
}

/** G5 for one stored link, given the reviews of its scope (or at least of this link). */
export const isCounted = (
  link: Pick<LinkRow, "id" | "origin" | "confidence">,
  reviews: Reviews,
  minConfidence: number | null
): boolean => {
  if (link.origin !== "proposed") return true
  const verdict = reviews.get(linkRef(link.id))
  if (verdict === "reject") return false
  if (verdict === "confirm") return true
  return minConfidence !== null && link.confidence !== null && link.confidence >= minConfidence
}

/** Marked proposed in bundles and lists: a proposed link without a confirm review. */
export const isProposedMark = (link: Pick<LinkRow, "id" | "origin">, reviews: Reviews): boolean =>
  link.origin === "proposed" && reviews.get(linkRef(link.id)) !== "confirm"

/** Open on `day` (YYYY-MM-DD in `zone`): valid_from ≤ end of that day, valid_to null or later. */
export const openOn = (link: Pick<LinkRow, "valid_from" | "valid_to">, day: string, zone: string): boolean =>
  dayIn(zone, Date.parse(link.valid_from)) <= day &&
  (link.valid_to === null || dayIn(zone, Date.parse(link.valid_to)) > day)

/** The verdicts of the given links, by target `link/<id>`. */
export const reviewsOf = (sql: SqlClient, linkIds: ReadonlyArray<string>): Effect.Effect<Map<string, Verdict>, SqlError> =>
  linkIds.length === 0
    ? Effect.succeed(new Map())
    : Effect.map(
      // the newest verdict wins (a person's after the policy's adoption); a retract takes the adoption back
      sql<{ target: string; verdict: Verdict | "retract" }>`SELECT target, verdict FROM review
        WHERE target IN ${sql.in([...new Set(linkIds)].map(linkRef))} AND verdict <> 'close' ORDER BY seq`,
      (rows) => new Map(rows.map((r) => [r.target, r.verdict === "retract" ? "reject" : r.verdict]))
    )

/** A stored link that counts, with its status and whether it is marked proposed. */
export interface CountedLink extends LinkRow {
  readonly status: LinkStatus
  readonly proposed: boolean
}

/** Rule ids among the ends whose current version is rejected (they never leak, invariant 8). */
const rejectedRules = (sql: SqlClient, refs: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const ids = [...new Set(refs.filter((r) => endKindOf(r) === "rule").map(ruleIdOfEnd))]
    if (ids.length === 0) return new Set<string>()
    const rows = yield* sql<{ rule_id: string }>`SELECT rule_id FROM current_version WHERE status = 'rejected' AND rule_id IN ${sql.in(ids)}`
    return new Set(rows.map((r) => ruleEnd(r.rule_id)))
  })

/**
 * Stored links with any of `refs` at either end that count on `day` (G5), newest first. Links to
 * a rejected rule are left out. Computed links are not stored: see computedLinksOf.
 */
export const countedLinksOf = (
  sql: SqlClient,
  refs: ReadonlyArray<string>,
  day: string,
  opts: CountOptions
): Effect.Effect<Array<CountedLink>, SqlError> =>
  Effect.gen(function*() {
    if (refs.length === 0) return []
    const wanted = [...new Set(refs)]
    const rows = yield* sql<LinkRow>`SELECT * FROM link WHERE from_ref IN ${sql.in(wanted)}
      UNION SELECT * FROM link WHERE to_ref IN ${sql.in(wanted)}`
    const open = rows.filter((l) => openOn(l, day, opts.zone))
    const reviews = yield* reviewsOf(sql, open.filter((l) => l.origin === "proposed").map((l) => l.id))
    const rejected = yield* rejectedRules(sql, open.flatMap((l) => [l.from_ref, l.to_ref]))
    return open
      .filter((l) => isCounted(l, reviews, opts.minConfidence) && !rejected.has(l.from_ref) && !rejected.has(l.to_ref))
      .map((l): CountedLink => ({ ...l, status: linkStatus(l, reviews.get(linkRef(l.id))), proposed: isProposedMark(l, reviews) }))
      .sort((a, b) => b.valid_from.localeCompare(a.valid_from) || b.seq - a.seq)
  })

/** Link types that tie a rule to an entity for head.entities and the entity group (graph.md §11). */
export const ENTITY_LINK_TYPES: ReadonlyArray<LinkType> = ["concerns", "belongs_to", "mentions"]

export interface RuleEntity {
  readonly entity_id: string
  /** the entity's current version, whose name is shown */
  readonly version: number
  readonly name: string
  readonly type: string
  /** root first, the entity last */
  readonly path: ReadonlyArray<PathItem>
  readonly link: CountedLink
}

/**
 * The entities a counted concerns / belongs_to / mentions link ties to rule `ruleId` on `day`, not
 * archived, one per entity (its best link): not proposed first, then higher confidence
 * (deterministic and human count as 1), then newer. Head.entities takes the first 10.
 */
export const entityLinksOfRule = (
  sql: SqlClient,
  ruleId: string,
  day: string,
  opts: CountOptions
): Effect.Effect<Array<RuleEntity>, SqlError> =>
  Effect.flatMap(countedLinksOf(sql, [ruleEnd(ruleId)], day, opts), (links) =>
    Effect.map(entitiesOfRules(sql, [ruleId], links), (byRule) => byRule.get(ruleId) ?? []))

/**
 * entityLinksOfRule of many rules at once, keyed by rule id, from `links`: the counted links on
 * the day of (at least) these rules, as countedLinksOf gives them for their rule ends (a link
 * touching none of the rules is ignored). One read of entity_current and one of the paths for all.
 */
export const entitiesOfRules = (
  sql: SqlClient,
  ruleIds: ReadonlyArray<string>,
  links: ReadonlyArray<CountedLink>
): Effect.Effect<Map<string, Array<RuleEntity>>, SqlError> =>
  Effect.gen(function*() {
    const entityOf = (l: LinkRow) => entityIdOfEnd(endKindOf(l.to_ref) === "entity" ? l.to_ref : l.from_ref)
    const rank = (a: CountedLink, b: CountedLink) =>
      Number(a.proposed) - Number(b.proposed) || (b.confidence ?? 1) - (a.confidence ?? 1) ||
      b.valid_from.localeCompare(a.valid_from) || b.seq - a.seq
    const entityLinks = links.filter((l) =>
      ENTITY_LINK_TYPES.includes(l.type) && (endKindOf(l.from_ref) === "entity" || endKindOf(l.to_ref) === "entity"))
    const bestOf = new Map<string, Map<string, CountedLink>>()
    for (const ruleId of ruleIds) {
      const self = ruleEnd(ruleId)
      const best = new Map<string, CountedLink>()
      for (const l of entityLinks.filter((x) => x.from_ref === self || x.to_ref === self).sort(rank)) {
        if (!best.has(entityOf(l))) best.set(entityOf(l), l)
      }
      bestOf.set(ruleId, best)
    }
    const ids = [...new Set([...bestOf.values()].flatMap((best) => [...best.keys()]))]
    const live = ids.length === 0 ? [] : yield* sql<{ id: string; version: number; name: string; type: string }>`
      SELECT id, version, name, type FROM entity_current WHERE status <> 'archived' AND id IN ${sql.in(ids)}`
    const paths = yield* pathsOf(sql, live.map((e) => e.id))
    const byId = new Map(live.map((e) => [e.id, e]))
    return new Map([...bestOf.entries()].map(([ruleId, best]) => [
      ruleId,
      [...best.entries()].flatMap(([id, link]) => {
        const e = byId.get(id)
        return e === undefined ? [] : [{ entity_id: id, version: e.version, name: e.name, type: e.type, path: paths.get(id) ?? [], link }]
      }).sort((a, b) => rank(a.link, b.link))
    ]))
  })

/**
 * Rule ids with a counted link (any type, either direction) on `day` to entity `entityId` or one
 * of its ancestors (graph.md §11 "entity filter", via entity_closure).
 */
export const rulesLinkedToEntity = (
  sql: SqlClient,
  entityId: string,
  day: string,
  opts: CountOptions
): Effect.Effect<Set<string>, SqlError> =>
  Effect.gen(function*() {
    const up = yield* sql<{ ancestor_id: string }>`SELECT ancestor_id FROM entity_closure WHERE descendant_id = ${entityId}`
    const ends = up.map((r) => entityEnd(r.ancestor_id))
    const links = yield* countedLinksOf(sql, ends, day, opts)
    const out = new Set<string>()
    for (const l of links) {
      for (const end of [l.from_ref, l.to_ref]) if (endKindOf(end) === "rule") out.add(ruleIdOfEnd(end))
    }
    return out
  })

/** LinkOut of a stored link (graph.md §9.2). */
export const linkOut = (l: LinkRow, status: LinkStatus, marks: Redacted = NOTHING_REDACTED): LinkOut => ({
  id: l.id, from_ref: l.from_ref, to_ref: l.to_ref, type: l.type, origin: l.origin, confidence: l.confidence,
  status, reason: l.reason, evidence: l.evidence, valid_from: l.valid_from, valid_to: l.valid_to, created_at: l.created_at,
  ...redactedMark(marks.row("link", l.seq))
})
