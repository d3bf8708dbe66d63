/**
 * search() (architecture.md §7): per scope stage a, the filter by validity on the target day
 * (superseded heads followed to their successor, ≤ 20 hops), proposals only when asked, the
 * relation and entity filters, dedupe by head; stage b's pool through the same filters, fused
 * with stage a's heads by RRF (k = 60); coverage for the first 50; stage c over the first 50
 * fused heads where it may run (its threshold replacing min_coverage there), else min_coverage;
 * abstained; cross-scope interleaving; bundles.
 *
 * Stages b and c come from the SearchStages layer (stage.ts). Stage b starts embedding the
 * question before stage a runs; a scope where neither b nor c runs is searched in one read
 * transaction, as stage a alone always was. Where b or c runs, the stage's wait (the question's
 * vector, the reranker's answer) happens outside any transaction — the scope's one connection is
 * never held while a model or a provider works — so stage a, the fusion and the bundles are read
 * in short transactions of their own. Every way a stage does not run is a StageState and the
 * answer of the stages that did; never an error of the search.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Cause, Clock, Effect } from "effect"
import { rowsOf } from "../db/held-connection.js"
import { AppConfig } from "../config/config.js"
import { ScopeStore } from "../db/scope-store.js"
import type { RuleVersionRow } from "../domain/rules.js"
import type { Bundle, SearchRequest, SearchResponse, StageState } from "../domain/search-schemas.js"
import { dayIn } from "../contracts/time.js"
import { isCounted, type LinkRow, openOn, type Verdict } from "../graph/counted.js"
import { buildBundles } from "./bundle.js"
import { applyRerank, RERANK_TOP, STAGE_C_REASONS } from "./reranker/stage-c.js"
import { STAGE_B_REASONS } from "./semantic/errors.js"
import { foundViaOf, rrf } from "./semantic/fuse.js"
import { ruleEmbeddingText } from "./semantic/rule-text.js"
import type { SemanticHit } from "./semantic/stage-b.js"
import {
  availabilityOf, combineStates, FAILED_INTERNAL, type SearchStage, SearchStages, type StageCCandidate, type StageOutcome,
  stageNamed
} from "./stage.js"
import { boundedContentPart, stampOf } from "./lexical/stamp-cache.js"
import { answerKeyOf, explainHits, stageA, type StageAResult } from "./stage-a.js"

export const MAX_SUPERSEDED_HOPS = 20
export const COVERAGE_CANDIDATES = 50
/** The bound of one run of a stage that names none (the question's embedding; the reranker call). */
export const DEFAULT_STAGE_TIMEOUT_MS = 2_000

const TIMEOUT_REASON = { b: STAGE_B_REASONS.timeout, c: STAGE_C_REASONS.timeout } as const
const RAN_UNTIMED: StageState = { state: "ran", duration_ms: null, reason: null }

export interface ScopeResult {
  readonly scope: string
  readonly terms: ReadonlyArray<string>
  readonly variants: Readonly<Record<string, ReadonlyArray<string>>>
  readonly bundles: ReadonlyArray<Bundle>
  readonly candidates: number
  readonly bestCoverage: number | null
  readonly stageA: StageState
  readonly stageB: StageState
  readonly stageC: StageState
  /** stage c ran over heads of this scope and none reached its threshold */
  readonly belowThreshold: boolean
  /**
   * the stamps of the file (stamp-cache.ts readStamp) the whole answer was read under: a scope
   * searched in one transaction on a connection that keeps a cache; else null
   */
  readonly stamp: string | null
}

/** A hit of stage a's or stage b's pool: a rule version with the dates and status of that version. */
type Hit = Omit<SemanticHit, "rank_b">

interface Candidate {
  /** the head: its rule and version, and its row once read */
  readonly ruleId: string
  readonly version: number
  readonly row: RuleVersionRow | undefined
  readonly hitSeq: number
  /** the head rule's seq (the lexical index's rowid): the hit's own, or the followed successor's */
  readonly headSeq: number
  /** the pool's score of the best hit of this head (rank_a, or stage b's cosine) */
  readonly score: number
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

const keyOf = (ruleId: string, version: number) => `${ruleId}@${version}`

/** A rule's seq (rowid of the lexical index): read only for a followed successor. */
const seqOfRule = (sql: SqlClient, ruleId: string) =>
  Effect.map(sql<{ seq: number }>`SELECT seq FROM rule WHERE id = ${ruleId}`, (rows) => rows[0]?.seq ?? -1)

/** The matched versions of the pool in one read, keyed "<rule_id>@<version>". */
const versionsOf = (sql: SqlClient, pool: ReadonlyArray<{ readonly rule_id: string; readonly version: number }>) =>
  Effect.map(
    pool.length === 0
      ? Effect.succeed([])
      : rowsOf(sql, sql<RuleVersionRow>`SELECT v.* FROM json_each(${JSON.stringify(pool.map((h) => [h.rule_id, h.version]))}) j
          JOIN rule_version v ON v.rule_id = json_extract(j.value, '$[0]') AND v.version = json_extract(j.value, '$[1]')`),
    (rows) => new Map(rows.map((v) => [keyOf(v.rule_id, v.version), v]))
  )

/**
 * The head of a hit decided from the pool alone (status and dates of the hit's version): the
 * hit itself when it is in force or an included proposal; null when it is dropped; undefined when
 * only its row can tell (a superseded version no longer in force follows superseded_by).
 */
const headOfHit = <H extends Hit>(hit: H, day: string, includeProposals: boolean): H | null | undefined => {
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
 * The entity filter (graph.md §11, G8; architecture.md §7.5): the rule ids with a counted link
 * (G5), open on `day`, to entity `entityId` or to one of its ancestors (entity_closure upwards: a
 * rule filed at the customer's department applies to the customer too). Rule–entity links always
 * end at the entity (gaps.md §6), so the link_to index finds them. An entity unknown in the scope
 * file has no links: no head passes (an empty answer, abstained no-candidate, logged like any
 * search).
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
      JOIN link l ON l.to_ref = 'entity/' || c.ancestor_id
      LEFT JOIN review w ON w.target = 'link/' || l.id
      WHERE c.descendant_id = ${entityId} AND substr(l.from_ref, 1, 5) = 'rule/'`
    const out = new Set<string>()
    for (const { verdict, ...l } of rows) {
      const reviews = new Map(verdict === null ? [] : [[`link/${l.id}`, verdict]])
      if (openOn(l, day, opts.zone) && isCounted(l, reviews, opts.minConfidence)) out.add(l.from_ref.slice("rule/".length))
    }
    return out
  })

interface FilterContext {
  readonly targetDay: string
  readonly includeProposals: boolean
  readonly relation: SearchRequest["relation"]
  /** null: no entity filter */
  readonly entityRules: ReadonlySet<string> | null
}

/**
 * The heads of a pool's hits (steps 5 and 6 of §7, the same for stage a and stage b): validity on
 * the target day with superseded versions followed, proposals only when asked, the relation and
 * entity filters, dedupe by head keeping its best hit; best score first, ties by the hit's seq.
 * A hit's row is read only where the pool cannot decide (a superseded version to follow, the
 * relation filter); the rows of the heads shown are read at the end.
 */
const headsOf = <H extends Hit>(sql: SqlClient, hits: ReadonlyArray<H>, scoreOf: (hit: H) => number, ctx: FilterContext) =>
  Effect.gen(function*() {
    const byHead = new Map<string, Candidate>()
    const decided = hits.map((hit) => ({ hit, fromPool: headOfHit(hit, ctx.targetDay, ctx.includeProposals) }))
    const hitRows = yield* versionsOf(sql, decided.flatMap((d) => (d.fromPool === undefined || (d.fromPool !== null && ctx.relation !== undefined) ? [d.hit] : [])))
    for (const { hit, fromPool } of decided) {
      if (fromPool === null) continue
      const hitRow = hitRows.get(keyOf(hit.rule_id, hit.version))
      const followed = fromPool === undefined && hitRow !== undefined ? yield* headFor(sql, hitRow, ctx.targetDay, ctx.includeProposals) : undefined
      const row = fromPool === undefined ? followed : hitRow
      const head = fromPool === undefined ? followed : fromPool
      if (head === undefined) continue
      if (ctx.relation !== undefined && (row === undefined || !relationMatches(row, ctx.relation))) continue
      if (ctx.entityRules !== null && !ctx.entityRules.has(head.rule_id)) continue
      const score = scoreOf(hit)
      const known = byHead.get(head.rule_id)
      if (known === undefined || score > known.score) {
        const headSeq = head.rule_id === hit.rule_id ? hit.seq : known?.headSeq ?? (yield* seqOfRule(sql, head.rule_id))
        byHead.set(head.rule_id, { ruleId: head.rule_id, version: head.version, row, hitSeq: hit.seq, headSeq, score })
      }
    }
    return [...byHead.values()].sort((x, y) => y.score - x.score || x.hitSeq - y.hitSeq)
  })

const round4 = (x: number): number => Math.round(x * 10_000) / 10_000

/** A head in the scope's final order, with its ranks. */
interface Ranked {
  readonly c: Candidate
  readonly rank: { readonly a: number | null; readonly b: number | null; readonly rrf: number | null; readonly reranker: number | null }
  /** found only by stage b: found_via ["semantic"] */
  readonly onlyB: boolean
}

/** Stage a's heads alone, or fused with stage b's by RRF (fuse.ts). */
const rankHeads = (aHeads: ReadonlyArray<Candidate>, bHeads: ReadonlyArray<Candidate> | null): Array<Ranked> => {
  if (bHeads === null) return aHeads.map((c) => ({ c, rank: { a: round4(c.score), b: null, rrf: null, reranker: null }, onlyB: false }))
  const fromA = new Map(aHeads.map((c) => [c.ruleId, c]))
  const fromB = new Map(bHeads.map((c) => [c.ruleId, c]))
  return rrf(aHeads.map((c) => ({ key: c.ruleId, rankA: c.score })), bHeads.map((c) => ({ key: c.ruleId, score: c.score }))).map((f) => ({
    c: fromA.get(f.key) ?? (fromB.get(f.key) as Candidate),
    rank: { a: f.rank.a === null ? null : round4(f.rank.a), b: f.rank.b, rrf: f.rank.rrf, reranker: null },
    onlyB: f.onlyB
  }))
}

/**
 * A scope's answer held under both stamps of its file (stamp-cache.ts: the lexical index's and the
 * content's, migration 0007): the bundles, the number of candidates and the best coverage of one
 * stage-a answer (stage-a.ts answerKeyOf) with the same filters, limit and day. Only for a scope
 * where neither stage b nor c runs (one read transaction; nothing there varies between two runs).
 * Today's day is in the key: a bundle's age_days counts to it. The bundles are shared by every
 * answer that uses them (nothing changes a response after search()). At most MAX_HELD_ANSWERS per
 * connection (~40–120 KB each with ten bundles), then it starts again.
 */
interface HeldAnswer {
  readonly bundles: ReadonlyArray<Bundle>
  readonly candidates: number
  readonly bestCoverage: number | null
}
const HELD_PART = "scope-answers"
export const MAX_HELD_ANSWERS = 200
const heldAnswersOf = (sql: SqlClient) =>
  boundedContentPart(sql, HELD_PART, () => new Map<string, HeldAnswer>(), (m) => m.size, MAX_HELD_ANSWERS - 1)
const heldKeyOf = (a: StageAResult, req: SearchRequest, today: string): string | undefined => {
  const answer = answerKeyOf(a)
  return answer === undefined ? undefined : JSON.stringify([answer, req.relation ?? null, req.entity ?? null, req.limit, today])
}

/** What search() hands one scope of the stages b and c: a state where the stage does not run, else its run. */
export interface ScopeStages {
  readonly b:
    | { readonly state: StageState }
    | { readonly run: (db: SqlClient) => Effect.Effect<StageOutcome<ReadonlyArray<SemanticHit>>> }
  readonly c:
    | { readonly state: StageState }
    | { readonly run: (candidates: ReadonlyArray<StageCCandidate>) => Effect.Effect<StageOutcome<ReadonlyMap<string, number>>>; readonly threshold: number }
}

const OFF_STAGES: ScopeStages = {
  b: { state: { state: "off", duration_ms: null, reason: "disabled in config" } },
  c: { state: { state: "off", duration_ms: null, reason: "disabled in config" } }
}

const stateOf = <A>(o: StageOutcome<A>, extraMs = 0): StageState =>
  o.state === "ran"
    ? { state: "ran", duration_ms: o.duration_ms + Math.round(extraMs), reason: null }
    : { state: o.state, duration_ms: o.duration_ms, reason: o.reason }

/**
 * One scope: stage a, stage b, filter, fusion, coverage, stage c or min_coverage, limit, bundles.
 * `sql` is the scope's connection outside any transaction (searchScope opens its own).
 */
export const searchScope = (sql: SqlClient, scope: string, req: SearchRequest, targetDay: string, stages: ScopeStages = OFF_STAGES) =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const nowMs = yield* Clock.currentTimeMillis
    const runB = "run" in stages.b ? stages.b.run : null
    const runC = "run" in stages.c ? stages.c : null
    const alone = runB === null && runC === null
    /** a read transaction of its own, unless the whole scope is one (no stage waits) */
    const tx = <A, E, R>(e: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError, R> => (alone ? e : sql.withTransaction(e))
    const minConfidence = config.file.graph.proposed_min_confidence
    const body = Effect.gen(function*() {
      // stage a and its heads
      const t0 = performance.now()
      const input = { ...(req.text === undefined ? {} : { text: req.text }), ...(req.terms === undefined ? {} : { terms: req.terms }) }
      const first = yield* tx(Effect.gen(function*() {
        const a = yield* stageA(sql, input, { includeProposals: req.include_proposals, targetDay })
        // a scope searched in one transaction: its answer to this analysis and these filters may be held
        const key = alone ? heldKeyOf(a, req, dayIn(config.file.zone, nowMs)) : undefined
        const stamp = alone ? stampOf(sql) ?? null : null
        const held = key === undefined ? undefined : heldAnswersOf(sql)?.get(key)
        if (held !== undefined) return { a, stamp, held }
        const entityRules = req.entity === undefined
          ? null
          : yield* rulesOfEntityFilter(sql, req.entity, targetDay, { zone: config.file.zone, minConfidence })
        const ctx: FilterContext = { targetDay, includeProposals: req.include_proposals, relation: req.relation, entityRules }
        return { a, stamp, key, ctx, heads: yield* headsOf(sql, a.pool, (h) => h.rank_a, ctx) }
      }))
      const a: StageAResult = first.a
      const stageAState: StageState = { state: "ran", duration_ms: Math.round(performance.now() - t0), reason: null }
      const stageStates = { stageA: stageAState, stageB: "state" in stages.b ? stages.b.state : RAN_UNTIMED, stageC: "state" in stages.c ? stages.c.state : RAN_UNTIMED }
      if ("held" in first) {
        return { scope, terms: a.terms, variants: a.variants, ...first.held, ...stageStates, belowThreshold: false, stamp: first.stamp } satisfies ScopeResult
      }

      // stage b: its pool through the same filters
      let stageB: StageState = stageStates.stageB
      let bHeads: Array<Candidate> | null = null
      if (runB !== null) {
        const out = yield* runB(sql)
        const t1 = performance.now()
        if (out.state === "ran") bHeads = yield* tx(headsOf(sql, out.value, (h) => h.rank_b, first.ctx))
        stageB = stateOf(out, performance.now() - t1)
      }

      // fusion; coverage, matched_terms and found_via for the first 50 heads
      const ranked = rankHeads(first.heads, bHeads)
      type Explained = Ranked & { readonly e: { found_via: Array<string>; coverage: number; matched_terms: number } | null }
      // the first 50 heads explained together, in one read per table (stage b's own heads too) —
      // where something reads their coverage past the heads shown: min_coverage's filter and the
      // best coverage of an abstained answer, stage c. Else the first `limit` (≤ 50) are all that
      // is shown and all that is explained: the heads shown carry the same explanation either way
      const minCoverage = config.file.search.min_coverage
      const explainedCount = runC !== null || minCoverage > 0 ? COVERAGE_CANDIDATES : Math.min(req.limit, COVERAGE_CANDIDATES)
      // found_via is what matched the hit (§7.6); coverage and matched_terms are what the head
      // matches (§7.6a): a followed successor is explained on its own text for those two
      const firstSeqs = [...new Set(ranked.slice(0, explainedCount).flatMap((x) => [x.c.hitSeq, x.c.headSeq]))]
      const explanations = yield* tx(explainHits(sql, a, firstSeqs))
      const explanationOf = (c: Candidate): Explained["e"] => {
        const hit = explanations.get(c.hitSeq)
        const head = explanations.get(c.headSeq)
        if (hit === undefined) return null
        return c.headSeq === c.hitSeq ? hit : { found_via: hit.found_via, coverage: head?.coverage ?? 0, matched_terms: head?.matched_terms ?? 0 }
      }
      // no default threshold (§7.6a): a head found through lexicon expansions alone stays, with its coverage
      const explained: Array<Explained> = ranked.map((x, i) =>
        ({ c: x.c, rank: x.rank, onlyB: x.onlyB, e: i < explainedCount ? explanationOf(x.c) : null }))
      const bestCoverage = explained.reduce<number | null>((best, x) => (x.e === null ? best : Math.max(best ?? 0, x.e.coverage)), null)
      const rows = new Map<string, RuleVersionRow>()
      const rowOf = (c: Candidate) => c.row ?? rows.get(keyOf(c.ruleId, c.version)) ?? missingRow(c)
      const readRows = (cs: ReadonlyArray<Candidate>) =>
        Effect.map(versionsOf(sql, cs.flatMap((c) => (c.row === undefined && !rows.has(keyOf(c.ruleId, c.version)) ? [{ rule_id: c.ruleId, version: c.version }] : []))),
          (read) => read.forEach((v, k) => rows.set(k, v)))

      // stage c over the first 50 fused heads; where it ran its threshold replaces min_coverage
      let stageC: StageState = stageStates.stageC
      let passing: Array<Explained>
      let belowThreshold = false
      const sent = explained.slice(0, RERANK_TOP)
      const out = runC === null ? null : yield* Effect.gen(function*() {
        yield* tx(readRows(sent.map((x) => x.c)))
        return yield* runC.run(sent.map((x) => ({ key: x.c.ruleId, text: ruleEmbeddingText(rowOf(x.c)) })))
      })
      if (out !== null) stageC = stateOf(out)
      if (out !== null && out.state === "ran" && runC !== null) {
        const byKey = new Map(sent.map((x) => [x.c.ruleId, x]))
        passing = applyRerank(sent.map((x) => x.c.ruleId), out.value, runC.threshold).kept.map(({ key, score }) => {
          const x = byKey.get(key) as Explained
          return { ...x, rank: { ...x.rank, reranker: score } }
        })
        belowThreshold = sent.length > 0 && passing.length === 0
      } else {
        passing = minCoverage > 0 ? explained.filter((x) => x.e !== null && x.e.coverage >= minCoverage) : explained
      }

      // bundles
      const shown = passing.slice(0, req.limit)
      const bundles = yield* tx(Effect.gen(function*() {
        yield* readRows(shown.map((x) => x.c))
        return yield* buildBundles(sql, shown.map((x) => ({
          version: rowOf(x.c),
          scope,
          rank: x.rank,
          found_via: foundViaOf(x, x.e?.found_via ?? []),
          coverage: x.e?.coverage ?? null,
          matched_terms: x.e?.matched_terms ?? null
        })), {
          zone: config.file.zone, recheckAfterDays: config.file.recheck_after_days, nowMs, targetDay,
          includeProposals: req.include_proposals, minConfidence, keep: true
        })
      }))
      if (first.key !== undefined) heldAnswersOf(sql)?.set(first.key, { bundles, candidates: ranked.length, bestCoverage })
      return {
        scope,
        terms: a.terms,
        variants: a.variants,
        bundles,
        candidates: ranked.length,
        bestCoverage,
        stageA: stageAState,
        stageB,
        stageC,
        belowThreshold,
        stamp: first.stamp
      } satisfies ScopeResult
    })
    return yield* (alone ? sql.withTransaction(body) : body)
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
  readonly perScope: ReadonlyArray<{
    readonly scope: string
    readonly refs: ReadonlyArray<string>
    readonly terms: ReadonlyArray<string>
    readonly variants: Readonly<Record<string, ReadonlyArray<string>>>
    readonly stages: { readonly a: StageState; readonly b: StageState; readonly c: StageState }
    /** ScopeResult.stamp */
    readonly stamp: string | null
  }>
}

/** A stage's part of the search that dies (throws) is failed "internal error"; the search goes on. */
const internal = (stage: SearchStage["name"], cause: Cause.Cause<unknown>) => {
  const e = Cause.squash(cause)
  return Effect.logError("search stage failed").pipe(Effect.annotateLogs({
    stage, error: e instanceof Error ? `${e.name}: ${e.message.slice(0, 200)}` : "defect"
  }))
}

/** A run bounded by the stage's timeout (failed with its timeout reason), a defect failed "internal error". */
const guarded = <A>(stage: SearchStage, run: Effect.Effect<StageOutcome<A>>): Effect.Effect<StageOutcome<A>> => {
  const ms = stage.timeoutMs ?? DEFAULT_STAGE_TIMEOUT_MS
  return Effect.suspend(() => run).pipe(
    Effect.timeoutTo({
      duration: ms,
      onSuccess: (o): StageOutcome<A> => o,
      onTimeout: (): StageOutcome<A> => ({ state: "failed", duration_ms: ms, reason: TIMEOUT_REASON[stage.name] })
    }),
    Effect.catchAllCause((cause) =>
      Cause.isInterruptedOnly(cause)
        ? Effect.failCause(cause)
        : Effect.as(internal(stage.name, cause), { state: "failed", duration_ms: null, reason: FAILED_INTERNAL.reason } as StageOutcome<A>))
  )
}

/** The question as stages b and c see it: the text, else the given terms. */
const stageQueryText = (req: SearchRequest): string => req.text ?? (req.terms ?? []).join(" ")

/** start() of a stage when it will run somewhere; null when it runs nowhere; "failed" when start died. */
const startOf = <R>(stage: SearchStage | undefined, available: ReadonlyArray<StageState | null>, start: () => Effect.Effect<R>) =>
  stage === undefined || !available.some((x) => x === null) || stage.start === undefined
    ? Effect.succeed(null)
    : Effect.suspend(start).pipe(
      Effect.catchAllCause((cause) => Cause.isInterruptedOnly(cause) ? Effect.failCause(cause) : Effect.as(internal(stage.name, cause), "failed" as const))
    )

/** The search over the request's scopes (already checked and opened by the pipeline). */
export const search = Effect.fn("Search.search")(function*(req: SearchRequest, searchId: string) {
  const config = yield* AppConfig
  const store = yield* ScopeStore
  const { stages } = yield* SearchStages
  const scopes = [...new Set(req.scopes)]
  const targetDay = req.as_of ?? dayIn(config.file.zone, yield* Clock.currentTimeMillis)
  const b = stageNamed(stages, "b")
  const c = stageNamed(stages, "c")
  const availableB = scopes.map((s) => availabilityOf(b, s))
  const availableC = scopes.map((s) => availabilityOf(c, s))
  const text = stageQueryText(req)
  const deadline = (stage: SearchStage) => Date.now() + (stage.timeoutMs ?? DEFAULT_STAGE_TIMEOUT_MS)
  // stage b begins embedding the question here, while stage a runs
  const startedB = b === undefined ? null : yield* startOf(b, availableB, () => b.start?.({ text, deadline: deadline(b) }) ?? Effect.die("no start"))
  const startedC = c === undefined ? null : yield* startOf(c, availableC, () => c.start?.({ text, deadline: deadline(c) }) ?? Effect.die("no start"))

  const stagesOf = (i: number): ScopeStages => {
    const scope = scopes[i] ?? ""
    const ab = availableB[i] ?? null
    const ac = availableC[i] ?? null
    return {
      b: ab !== null ? { state: ab }
        : startedB === "failed" ? { state: FAILED_INTERNAL }
        : startedB === null || b === undefined ? { state: RAN_UNTIMED }
        : { run: (db) => guarded(b, startedB.run({ scope, db, includeProposals: req.include_proposals })) },
      c: ac !== null ? { state: ac }
        : startedC === "failed" ? { state: FAILED_INTERNAL }
        : startedC === null || c === undefined ? { state: RAN_UNTIMED }
        : { run: (candidates) => guarded(c, startedC.run({ scope, candidates })), threshold: c.threshold ?? 0 }
    }
  }
  const results = yield* Effect.forEach(scopes, (scope, i) =>
    Effect.flatMap(store.use(scope), (h) => searchScope(h.sql, scope, req, targetDay, stagesOf(i))))
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
      b: combineStates(results.map((r) => r.stageB)),
      c: combineStates(results.map((r) => r.stageC))
    },
    query: { terms, variants },
    bundles,
    abstained: bundles.length > 0
      ? null
      : results.some((r) => r.belowThreshold)
      ? { reason: "below-reranker-threshold", best_coverage: best, min_coverage: minCoverage }
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
      variants: r.variants,
      stages: { a: r.stageA, b: r.stageB, c: r.stageC },
      stamp: r.stamp
    }))
  } satisfies SearchOutcome
})
