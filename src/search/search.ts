/**
 * search() (architecture.md §7): stage a per scope, the filter by validity on the target day
 * (superseded heads followed to their successor, ≤ 20 hops), proposals only when asked, the
 * relation and entity filters, dedupe by head, coverage for the first 50, min_coverage with
 * abstained, cross-scope interleaving, and bundles. Stages b and c report through the seam.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Effect } from "effect"
import { AppConfig } from "../config/config.js"
import { ScopeStore } from "../db/scope-store.js"
import type { RuleVersionRow } from "../domain/rules.js"
import type { Bundle, SearchRequest, SearchResponse, StageState } from "../domain/search-schemas.js"
import { dayIn } from "../contracts/time.js"
import { isCounted, type LinkRow, openOn, type Verdict } from "../graph/counted.js"
import { buildBundle } from "./bundle.js"
import { SearchStages, stageState } from "./stage.js"
import type { LexicalIndex } from "./lexical/index.js"
import { explainHit, stageA, type StageAResult } from "./stage-a.js"

export const MAX_SUPERSEDED_HOPS = 20
export const COVERAGE_CANDIDATES = 50

export interface ScopeResult {
  readonly scope: string
  readonly terms: ReadonlyArray<string>
  readonly variants: Readonly<Record<string, ReadonlyArray<string>>>
  readonly bundles: ReadonlyArray<Bundle>
  readonly candidates: number
  readonly bestCoverage: number | null
  readonly stageA: StageState
}

type PoolHit = StageAResult["pool"][number]

interface Candidate {
  /** the head: its rule and version, and its row once read */
  readonly ruleId: string
  readonly version: number
  readonly row: RuleVersionRow | undefined
  readonly hitSeq: number
  readonly rankA: number
}

const inForce = (v: Pick<RuleVersionRow, "valid_from" | "valid_until">, day: string): boolean =>
  v.valid_from <= day && day < (v.valid_until ?? "9999-12-31")

const currentOf = (sql: SqlClient, ruleId: string) =>
  Effect.map(sql<RuleVersionRow>`SELECT * FROM current_version WHERE rule_id = ${ruleId}`, (rows) => rows[0])

/**
 * The head for a hit on the target day: the version itself when it is in force (or a proposal
 * when proposals are included); a superseded version no longer in force is followed through
 * superseded_by to a rule in force on that day; else none. Rejected never.
 */
const headFor = (sql: SqlClient, v: RuleVersionRow, day: string, includeProposals: boolean) =>
  Effect.gen(function*() {
    let current: RuleVersionRow | undefined = v
    for (let hop = 0; current !== undefined && hop <= MAX_SUPERSEDED_HOPS; hop++) {
      if (current.status === "rejected") return undefined
      if (current.status === "proposed") return includeProposals ? current : undefined
      if (inForce(current, day)) return current
      if (current.status !== "superseded" || current.superseded_by === null || (current.valid_until ?? "9999-12-31") > day) return undefined
      current = yield* currentOf(sql, current.superseded_by)
    }
    return undefined
  })

/** A head whose version row is gone: the pool and rule_version disagree within one transaction. */
const missingRow = (c: { readonly ruleId: string; readonly version: number }): never => {
  throw new Error(`search head ${c.ruleId}@${c.version} has no rule_version row`)
}

/** The matched versions of the pool in one read, keyed "<rule_id>@<version>". */
const versionsOf = (sql: SqlClient, pool: ReadonlyArray<{ readonly rule_id: string; readonly version: number }>) =>
  Effect.map(
    pool.length === 0
      ? Effect.succeed([])
      : sql<RuleVersionRow>`SELECT v.* FROM json_each(${JSON.stringify(pool.map((h) => [h.rule_id, h.version]))}) j
          JOIN rule_version v ON v.rule_id = json_extract(j.value, '$[0]') AND v.version = json_extract(j.value, '$[1]')`,
    (rows) => new Map(rows.map((v) => [`${v.rule_id}@${v.version}`, v]))
  )

/**
 * The head of a hit decided from the pool alone (status and dates of the indexed version): the
 * hit itself when it is in force or an included proposal; null when it is dropped; undefined when
 * only its row can tell (a superseded version no longer in force follows superseded_by).
 */
const headOfHit = (hit: PoolHit, day: string, includeProposals: boolean): PoolHit | null | undefined => {
  if (hit.status === "proposed") return includeProposals ? hit : null
  if (inForce(hit, day)) return hit
  return hit.status === "superseded" && (hit.valid_until ?? "9999-12-31") <= day ? undefined : null
}

const relationMatches = (v: RuleVersionRow, relation: SearchRequest["relation"]): boolean => {
  if (relation === undefined) return true
  const rels = JSON.parse(v.relations) as Array<{ kind: string; name: string }>
  return rels.some((r) => r.kind === relation.kind && r.name.toLocaleLowerCase() === relation.name.toLocaleLowerCase())
}

/**
 * The entity filter (graph.md §11, G8): the rule ids with a counted link (G5), open on `day`, to
 * entity `entityId` or to an entity below it (entity_closure). Rule–entity links always end at
 * the entity (gaps.md §6), so the link_to index finds them. An entity unknown in the scope file
 * has no links: no head passes (an empty answer, abstained no-candidate, logged like any search).
 */
export const rulesOfEntityFilter = (
  sql: SqlClient,
  entityId: string,
  day: string,
  opts: { readonly zone: string; readonly minConfidence: number | null }
) =>
  Effect.gen(function*() {
    const rows = yield* sql<LinkRow & { verdict: Verdict | null }>`
      SELECT l.*, w.verdict FROM entity_closure c
      JOIN link l ON l.to_ref = 'entity/' || c.descendant_id
      LEFT JOIN review w ON w.target = 'link/' || l.id
      WHERE c.ancestor_id = ${entityId} AND substr(l.from_ref, 1, 5) = 'rule/'`
    const out = new Set<string>()
    for (const { verdict, ...l } of rows) {
      const reviews = new Map(verdict === null ? [] : [[`link/${l.id}`, verdict]])
      if (openOn(l, day, opts.zone) && isCounted(l, reviews, opts.minConfidence)) out.add(l.from_ref.slice("rule/".length))
    }
    return out
  })

/** One scope: stage a, filter, dedupe, coverage, min_coverage, limit, bundles. */
export const searchScope = (sql: SqlClient, scope: string, req: SearchRequest, targetDay: string) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const nowMs = yield* Clock.currentTimeMillis
    const t0 = performance.now()
    const input = { ...(req.text === undefined ? {} : { text: req.text }), ...(req.terms === undefined ? {} : { terms: req.terms }) }
    const minConfidence = config.file.graph.proposed_min_confidence
    const entityRules = req.entity === undefined
      ? null
      : yield* rulesOfEntityFilter(sql, req.entity, targetDay, { zone: config.file.zone, minConfidence })
    const a = yield* stageA(sql, input, { includeProposals: req.include_proposals, targetDay })
    const byHead = new Map<string, Candidate>()
    // A hit's row is read only where the pool cannot decide (a superseded version to follow, the
    // relation filter); the rows of the heads shown are read at the end.
    const decided = a.pool.map((hit) => ({ hit, fromPool: headOfHit(hit, targetDay, req.include_proposals) }))
    const hitRows = yield* versionsOf(sql, decided.flatMap((d) => (d.fromPool === undefined || (d.fromPool !== null && req.relation !== undefined) ? [d.hit] : [])))
    for (const { hit, fromPool } of decided) {
      if (fromPool === null) continue
      const hitRow = hitRows.get(`${hit.rule_id}@${hit.version}`)
      const followed = fromPool === undefined && hitRow !== undefined ? yield* headFor(sql, hitRow, targetDay, req.include_proposals) : undefined
      const row = fromPool === undefined ? followed : hitRow
      const head = fromPool === undefined ? followed : fromPool
      if (head === undefined) continue
      if (req.relation !== undefined && (row === undefined || !relationMatches(row, req.relation))) continue
      if (entityRules !== null && !entityRules.has(head.rule_id)) continue
      const known = byHead.get(head.rule_id)
      if (known === undefined || hit.rank_a > known.rankA) {
        byHead.set(head.rule_id, { ruleId: head.rule_id, version: head.version, row, hitSeq: hit.seq, rankA: hit.rank_a })
      }
    }
    const ordered = [...byHead.values()].sort((x, y) => y.rankA - x.rankA || x.hitSeq - y.hitSeq)
    type Explained = { readonly c: Candidate; readonly e: { found_via: Array<string>; coverage: number; matched_terms: number } | null }
    const explained: Array<Explained> = yield* Effect.forEach(ordered, (c, i): Effect.Effect<Explained, SqlError, LexicalIndex> =>
      i < COVERAGE_CANDIDATES ? Effect.map(explainHit(sql, a, c.hitSeq), (e) => ({ c, e })) : Effect.succeed({ c, e: null }))
    const minCoverage = config.file.search.min_coverage
    const passing = minCoverage > 0 ? explained.filter((x) => x.e !== null && x.e.coverage >= minCoverage) : explained
    const bestCoverage = explained.reduce<number | null>((best, x) => (x.e === null ? best : Math.max(best ?? 0, x.e.coverage)), null)
    const shown = passing.slice(0, req.limit)
    const headRows = yield* versionsOf(sql, shown.flatMap(({ c }) => (c.row === undefined ? [{ rule_id: c.ruleId, version: c.version }] : [])))
    const bundles = yield* Effect.forEach(shown, ({ c, e }) =>
      buildBundle(sql, {
        version: c.row ?? headRows.get(`${c.ruleId}@${c.version}`) ?? missingRow(c),
        scope,
        rank: { a: Math.round(c.rankA * 10_000) / 10_000, b: null, rrf: null, reranker: null },
        found_via: e?.found_via ?? [],
        coverage: e?.coverage ?? null,
        matched_terms: e?.matched_terms ?? null
      }, {
        zone: config.file.zone, recheckAfterDays: config.file.recheck_after_days, nowMs, targetDay,
        includeProposals: req.include_proposals, minConfidence
      }))
    return {
      scope,
      terms: a.terms,
      variants: a.variants,
      bundles,
      candidates: ordered.length,
      bestCoverage,
      stageA: { state: "ran", duration_ms: Math.round(performance.now() - t0), reason: null } satisfies StageState
    } satisfies ScopeResult
  })

/** Bundles of several scopes interleaved by per-scope position, ties in request order. */
export const interleave = <A>(lists: ReadonlyArray<ReadonlyArray<A>>, limit: number): Array<A> => {
  const out: Array<A> = []
  for (let i = 0; out.length < limit && lists.some((l) => i < l.length); i++) {
    for (const l of lists) {
      const x = l[i]
      if (x !== undefined && out.length < limit) out.push(x)
    }
  }
  return out
}

export interface SearchOutcome {
  readonly response: SearchResponse
  /** per scope: what its search_log row records */
  readonly perScope: ReadonlyArray<{ readonly scope: string; readonly refs: ReadonlyArray<string>; readonly terms: ReadonlyArray<string>; readonly variants: Readonly<Record<string, ReadonlyArray<string>>> }>
}

/** The search over the request's scopes (already checked and opened by the pipeline). */
export const search = Effect.fn("Search.search")(function*(req: SearchRequest, searchId: string) {
  const config = yield* AppConfig
  const store = yield* ScopeStore
  const scopes = [...new Set(req.scopes)]
  const targetDay = req.as_of ?? dayIn(config.file.zone, yield* Clock.currentTimeMillis)
  const results = yield* Effect.forEach(scopes, (scope) =>
    Effect.flatMap(store.use(scope), (h) => h.sql.withTransaction(searchScope(h.sql, scope, req, targetDay))))
  const { stages } = yield* SearchStages
  const terms: Array<string> = []
  const variants: Record<string, Array<string>> = {}
  for (const r of results) {
    for (const t of r.terms) if (!terms.includes(t)) terms.push(t)
    for (const [k, v] of Object.entries(r.variants)) variants[k] = [...new Set([...(variants[k] ?? []), ...v])]
  }
  const bundles = interleave(results.map((r) => r.bundles), req.limit)
  const candidates = results.reduce((n, r) => n + r.candidates, 0)
  const best = results.reduce<number | null>((b, r) => (r.bestCoverage === null ? b : Math.max(b ?? 0, r.bestCoverage)), null)
  const minCoverage = config.file.search.min_coverage
  const response: SearchResponse = {
    search_id: searchId,
    scopes,
    stages: {
      a: { state: "ran", duration_ms: results.reduce((ms, r) => ms + (r.stageA.duration_ms ?? 0), 0), reason: null },
      b: stageState(stages, "b", scopes[0] ?? ""),
      c: stageState(stages, "c", scopes[0] ?? "")
    },
    query: { terms, variants },
    bundles,
    abstained: bundles.length > 0
      ? null
      : candidates > 0 && minCoverage > 0
      ? { reason: "below-min-coverage", best_coverage: best, min_coverage: minCoverage }
      : { reason: "no-candidate", best_coverage: null, min_coverage: minCoverage }
  }
  return {
    response,
    perScope: results.map((r) => ({
      scope: r.scope,
      refs: r.bundles.map((b) => b.head.ref),
      terms: r.terms,
      variants: r.variants
    }))
  } satisfies SearchOutcome
})
