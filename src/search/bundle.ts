/**
 * Bundles (architecture.md §6.5, §8; graph.md §11): the matched rule version as the head, and
 * around it the groups a reader needs to judge it, in the fixed order source, thread,
 * attachment, entity, predecessor, successor, contradicts, same-relation. Empty groups are
 * omitted; entries = the newest 5, count = all, more = count − entries.length.
 *
 * The graph (graph.md §11) adds head.entities (≤ 10), the entity and contradicts groups and the
 * same-relation rules linked to the head's entities or their ancestors, all through counted links
 * (G5) open on the target day; their entries carry the origin of the link they hang on and
 * proposed while it is proposed and not confirmed. Computed entries (source, thread, attachment,
 * predecessor, successor, relation matches) carry origin "deterministic" and proposed false. A
 * bundle without graph data is the same as before: head.entities [], no entity or contradicts
 * group.
 *
 * buildBundles builds the bundles of many heads (a search's answer) with one read per table or
 * kind of group for all of them (bundle-groups.ts); each bundle is the same as its head's alone
 * (buildBundle, buildBundles of one). Reads only: every query runs on the caller's connection
 * (inside its read transaction).
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option } from "effect"
import { AppConfig } from "../config/config.js"
import { ruleRef, scopeOfRuleId } from "../contracts/ids.js"
import { formatTimestamp } from "../domain/provenance.js"
import { type ReviewFacts, reviewFactsOf } from "../domain/adoption.js"
import { redactedMark, redactedOf, type Redacted } from "../domain/redacted.js"
import { allVersions, type RuleVersionRow } from "../domain/rules.js"
import type { Bundle, Entry, Group, Head } from "../domain/search-schemas.js"
import { dayIn } from "../contracts/time.js"
import { type CountedLink, type CountOptions, countedLinksOf, entitiesOfRules, type RuleEntity } from "../graph/counted.js"
import { endKindOf, entityEnd, ruleEnd, ruleIdOfEnd } from "../graph/link-types.js"
import { pathTitle } from "../graph/paths.js"
import {
  chainGroup, currentVersionsOf, group, type Mark, parseRelations, type RuleSetRequest, ruleSetGroups, sourceGroupsOf, sourcesOf
} from "./bundle-groups.js"
import { boundedContentPart, refreshStampCache } from "./lexical/stamp-cache.js"
import { bundleLine, GROUP_ORDER } from "./line.js"

export { GROUP_ENTRIES } from "./bundle-groups.js"

/** What the search knows about a head: the matched version and how it was found. */
export interface HeadInput {
  /** the matched rule version (never rejected) */
  readonly version: RuleVersionRow
  readonly scope: string
  readonly rank: Head["rank"]
  readonly found_via: ReadonlyArray<string>
  readonly coverage: number | null
  readonly matched_terms: number | null
}

export interface BundleOptions {
  /** config.zone */
  readonly zone: string
  /** config.file.recheck_after_days */
  readonly recheckAfterDays: number
  /** the injected clock's now (Clock.currentTimeMillis); age_days counts to today in zone */
  readonly nowMs: number
  /** as_of, else today in zone: the day the same-relation rules must be in force */
  readonly targetDay: string
  /** whether the search included proposals (same-relation shows them only then) */
  readonly includeProposals: boolean
  /**
   * config.graph.proposed_min_confidence for counted links (G5); left out, the running
   * AppConfig's value is read (null without one: only confirmed proposals count)
   */
  readonly minConfidence?: number | null
  /**
   * keep what a head's bundle is made of in the connection's stamp cache (the caller reads it in
   * one transaction: a search); left out, every bundle is read from the file
   */
  readonly keep?: boolean
}

const NO_RANK: Head["rank"] = { a: null, b: null, rrf: null, reranker: null }

const utcDay = (day: string): number => {
  const [y, m, d] = day.split("-").map(Number)
  return Date.UTC(y ?? 0, (m ?? 1) - 1, d ?? 1)
}

/** Calendar days between two days YYYY-MM-DD (to − from). */
export const daysBetween = (from: string, to: string): number => Math.round((utcDay(to) - utcDay(from)) / 86_400_000)

/**
 * age_days: calendar days in `zone` from the day of last_reviewed_at to today; never negative
 * (a review "after" the clock counts as today).
 */
export const ageDays = (lastReviewedAt: string, zone: string, nowMs: number): number =>
  Math.max(0, daysBetween(dayIn(zone, Date.parse(lastReviewedAt)), dayIn(zone, nowMs)))

/** recheck = "still valid?" iff the head is confirmed and age_days > recheck_after_days. */
export const recheckOf = (status: Head["status"], age: number, recheckAfterDays: number): Head["recheck"] =>
  status === "confirmed" && age > recheckAfterDays ? "still valid?" : null

const sourceKindOf = (sourceId: string): Head["source"]["kind"] => {
  const kind = sourceId.slice(0, sourceId.indexOf(":"))
  return kind === "jamie" || kind === "mail" ? kind : "manual"
}

// --- graph (graph.md §11): head.entities, entity and contradicts groups, same-relation via entities

/** head.entities holds at most this many; the entity group counts them all. */
export const HEAD_ENTITIES = 10

/** The count options of a bundle: the given minimum confidence, else the running config's. */
const countOptionsOf = (opts: BundleOptions): Effect.Effect<CountOptions> =>
  opts.minConfidence !== undefined
    ? Effect.succeed({ zone: opts.zone, minConfidence: opts.minConfidence })
    : Effect.map(Effect.serviceOption(AppConfig), (config) => ({
      zone: opts.zone,
      minConfidence: Option.match(config, { onNone: () => null, onSome: (c) => c.file.graph.proposed_min_confidence })
    }))

/** a is the better mark for one entry than b: a link not marked proposed wins. */
const betterMark = (a: Mark, b: Mark | undefined): boolean => b === undefined || (b.proposed && !a.proposed)

const markOf = (l: CountedLink): Mark => ({ origin: l.origin, proposed: l.proposed })

/** The links among `links` with one of `ends` at either end (order kept). */
const touching = (links: ReadonlyArray<CountedLink>, ends: ReadonlySet<string> | ReadonlyMap<string, unknown>) =>
  links.filter((l) => ends.has(l.from_ref) || ends.has(l.to_ref))

const headEntity = (e: RuleEntity, marks: Redacted): Head["entities"][number] => ({
  ref: entityEnd(e.entity_id),
  name: e.name,
  type: e.type,
  path: e.path.map((p) => ({ ref: entityEnd(p.id), name: p.name, type: p.type })),
  proposed: e.link.proposed,
  ...redactedMark(marks.row("entity_version", e.entity_id, e.version))
})

/** entity: every entity of the head (in head.entities' order), title = its path joined with ›. */
const entityGroup = (entities: ReadonlyArray<RuleEntity>, marks: Redacted): Group | null =>
  entities.length === 0 ? null : group("entity", entities.length, entities.map((e): Entry => ({
    ref: entityEnd(e.entity_id),
    kind: "entity",
    date: e.link.valid_from,
    title: pathTitle(e.path),
    excerpt: null,
    link: null,
    ...markOf(e.link),
    ...redactedMark(marks.row("entity_version", e.entity_id, e.version))
  })))

const ATTACHMENT_REF_RE = /^attachment\/(.+)#(\d+)$/

/**
 * An entry of a source, thread, predecessor, successor, contradicts or same-relation group with
 * `redacted: true` when a redaction touched what it shows: the rule version its ref names, any
 * text of the source, the attachment. Marked after the groups are read (a group may come from the
 * connection's cache), so the mark always belongs to this answer's read.
 */
const markedEntry = (e: Entry, marks: Redacted): Entry => {
  const touched = (): boolean => {
    if (e.kind === "rule" || e.kind === "note") {
      const m = /^rule\/(.+)@(\d+)$/.exec(e.ref)
      return m !== null && marks.row("rule_version", m[1] ?? "", Number(m[2]))
    }
    if (e.kind === "attachment") {
      const m = ATTACHMENT_REF_RE.exec(e.ref)
      return m !== null && marks.row("source_attachment", m[1] ?? "", Number(m[2]))
    }
    return e.kind !== "entity" && e.ref.startsWith("source/") && marks.source(e.ref.slice("source/".length))
  }
  return touched() ? { ...e, redacted: true } : e
}

const markedGroup = (g: Group, marks: Redacted): Group =>
  marks.none ? g : { ...g, entries: g.entries.map((e) => markedEntry(e, marks)) }

/** contradicts: the rules a counted contradicts link ties to the head, either direction, by rule id with their mark. */
const contradicting = (head: RuleVersionRow, links: ReadonlyArray<CountedLink>): Map<string, Mark> => {
  const self = ruleEnd(head.rule_id)
  const marks = new Map<string, Mark>()
  for (const l of links) {
    if (l.type !== "contradicts") continue
    const other = l.from_ref === self ? l.to_ref : l.from_ref
    if (other === self || endKindOf(other) !== "rule") continue
    const id = ruleIdOfEnd(other)
    if (betterMark(markOf(l), marks.get(id))) marks.set(id, markOf(l))
  }
  return marks
}

/**
 * The entity ends each head reaches (its entities and their ancestors, G8, via entity_closure),
 * each with whether it is reached only through head links marked proposed; one read for all heads.
 */
const reachedEnds = (sql: SqlClient, entitiesOf: ReadonlyArray<ReadonlyArray<RuleEntity>>) =>
  Effect.gen(function*() {
    const ids = [...new Set(entitiesOf.flatMap((es) => es.map((e) => e.entity_id)))]
    const up = ids.length === 0 ? [] : yield* sql<{ ancestor_id: string; descendant_id: string }>`
      SELECT ancestor_id, descendant_id FROM entity_closure WHERE descendant_id IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`
    const ancestors = new Map<string, Array<string>>()
    for (const r of up) ancestors.set(r.descendant_id, [...(ancestors.get(r.descendant_id) ?? []), r.ancestor_id])
    return entitiesOf.map((entities) => {
      /** entity end → whether it is reached only through head links marked proposed */
      const reached = new Map<string, boolean>()
      for (const e of entities) {
        for (const a of ancestors.get(e.entity_id) ?? []) {
          const end = entityEnd(a)
          reached.set(end, (reached.get(end) ?? true) && e.link.proposed)
        }
      }
      return reached
    })
  })

/**
 * The rules with a counted link (`links`) to one of the head's entities or to an ancestor of one
 * (`reached`), by rule id, each with the mark of its best link; proposed also when every head
 * link that reaches that entity is itself marked proposed.
 */
const entityRelatedRules = (head: RuleVersionRow, reached: ReadonlyMap<string, boolean>, links: ReadonlyArray<CountedLink>) => {
  const marks = new Map<string, Mark>()
  const self = ruleEnd(head.rule_id)
  for (const l of touching(links, reached)) {
    const [entity, other] = reached.has(l.to_ref) ? [l.to_ref, l.from_ref] : [l.from_ref, l.to_ref]
    if (other === self || endKindOf(other) !== "rule") continue
    const mark: Mark = { origin: l.origin, proposed: l.proposed || (reached.get(entity) ?? false) }
    const id = ruleIdOfEnd(other)
    if (betterMark(mark, marks.get(id))) marks.set(id, mark)
  }
  return marks
}

interface HeadGraph {
  /** its entities, ordered */
  readonly entities: ReadonlyArray<RuleEntity>
  /** its counted links */
  readonly links: ReadonlyArray<CountedLink>
  /** the rules related via entities */
  readonly related: ReadonlyMap<string, Mark>
}

/** The graph around each head rule on the target day, in the order of `heads`: two link reads for all. */
const graphsOf = (sql: SqlClient, heads: ReadonlyArray<RuleVersionRow>, opts: BundleOptions) =>
  Effect.gen(function*() {
    const count = yield* countOptionsOf(opts)
    const ruleIds = heads.map((v) => v.rule_id)
    const headLinks = yield* countedLinksOf(sql, ruleIds.map(ruleEnd), opts.targetDay, count)
    const entitiesByRule = yield* entitiesOfRules(sql, ruleIds, headLinks)
    const entitiesOf = ruleIds.map((id) => entitiesByRule.get(id) ?? [])
    const reached = yield* reachedEnds(sql, entitiesOf)
    const relatedLinks = yield* countedLinksOf(sql, reached.flatMap((r) => [...r.keys()]), opts.targetDay, count)
    return heads.map((v, i): HeadGraph => {
      const ends = reached[i] ?? new Map<string, boolean>()
      return {
        entities: entitiesOf[i] ?? [],
        links: touching(headLinks, new Set([ruleEnd(v.rule_id)])),
        related: entityRelatedRules(v, ends, relatedLinks)
      }
    })
  })

/** The head of a bundle from the matched version and its review facts (architecture.md §8). */
const headOf = (input: HeadInput, facts: ReviewFacts | undefined, opts: BundleOptions) =>
  Effect.gen(function*() {
    const v = input.version
    if (v.status === "rejected") return yield* Effect.dieMessage(`bundle head ${v.rule_id}@${v.version} is rejected`)
    const reviewed = facts?.lastReviewedAt ?? null
    if (facts === undefined || reviewed === null) return yield* Effect.dieMessage(`bundle head ${v.rule_id} names a missing rule`)
    const age = ageDays(reviewed, opts.zone, opts.nowMs)
    const head: Head = {
      ref: ruleRef(v.rule_id, v.version),
      kind: v.kind,
      date: v.said_at,
      title: v.statement,
      excerpt: v.quote,
      link: v.source_link,
      scope: input.scope,
      status: v.status,
      unconfirmed: v.status === "proposed",
      valid_from: v.valid_from,
      valid_until: v.valid_until,
      superseded_by: v.superseded_by,
      last_reviewed_at: reviewed,
      adoption: facts.adoption,
      age_days: age,
      recheck: recheckOf(v.status, age, opts.recheckAfterDays),
      source: {
        kind: sourceKindOf(v.source_id),
        id: v.source_id,
        quote: v.quote,
        timestamp: v.timestamp_s === null ? null : formatTimestamp(v.timestamp_s),
        link: v.source_link
      },
      speaker: v.speaker,
      relations: parseRelations(v.relations),
      rank: input.rank,
      found_via: [...input.found_via],
      coverage: input.coverage,
      matched_terms: input.matched_terms,
      entities: []
    }
    return head
  })

/**
 * The bundles of many heads, in their order: each the same as the bundle of its head alone
 * (head, groups in the fixed order, line), read with one statement per table or kind of group
 * for all heads (bundle-groups.ts). With `keep`, the bundles of heads shown before are taken from
 * the connection's stamp cache and only the others are read (keptBundles).
 */
export const buildBundles = (
  sql: SqlClient,
  inputs: ReadonlyArray<HeadInput>,
  opts: BundleOptions
): Effect.Effect<Array<Bundle>, SqlError> => (opts.keep === true ? keptBundles(sql, inputs, opts) : readBundles(sql, inputs, opts))

/**
 * A head's bundle apart from how the search found it (rank, found_via, coverage, matched_terms)
 * depends only on the matched version, the file's content and the day: kept per connection under
 * both stamps of the file (stamp-cache.ts boundedContentPart: every write of a table a bundle reads
 * moves the content stamp), so a head shown again by another question costs no read. At most
 * MAX_KEPT_BUNDLES, then the part starts again.
 */
const KEPT_PART = "bundles"
export const MAX_KEPT_BUNDLES = 2_000

const keptKey = (input: HeadInput, opts: BundleOptions): string =>
  JSON.stringify([input.version, input.scope, dayIn(opts.zone, opts.nowMs), opts.targetDay, opts.includeProposals, opts.minConfidence ?? "config", opts.zone, opts.recheckAfterDays])

/** The kept bundle with this search's finding on its head (the head's fields keep their order). */
const withFinding = (kept: Bundle, input: HeadInput): Bundle => ({
  head: { ...kept.head, rank: input.rank, found_via: [...input.found_via], coverage: input.coverage, matched_terms: input.matched_terms },
  groups: kept.groups,
  line: kept.line
})

const keptBundles = (sql: SqlClient, inputs: ReadonlyArray<HeadInput>, opts: BundleOptions): Effect.Effect<Array<Bundle>, SqlError> =>
  Effect.gen(function*() {
    if (inputs.length === 0) return []
    yield* refreshStampCache(sql)
    const kept = boundedContentPart(sql, KEPT_PART, () => new Map<string, Bundle>(), (m) => m.size, MAX_KEPT_BUNDLES - 1)
    if (kept === undefined) return yield* readBundles(sql, inputs, opts)
    const keys = inputs.map((input) => keptKey(input, opts))
    const todo = inputs.flatMap((input, i) => (kept.has(keys[i] as string) ? [] : [i]))
    const read = todo.length === 0 ? [] : yield* readBundles(sql, todo.map((i) => inputs[i] as HeadInput), opts)
    todo.forEach((i, j) => kept.set(keys[i] as string, read[j] as Bundle))
    return inputs.map((input, i) => {
      const at = todo.indexOf(i)
      return at >= 0 ? read[at] as Bundle : withFinding(kept.get(keys[i] as string) as Bundle, input)
    })
  })

const readBundles = (
  sql: SqlClient,
  inputs: ReadonlyArray<HeadInput>,
  opts: BundleOptions
): Effect.Effect<Array<Bundle>, SqlError> =>
  Effect.gen(function*() {
    if (inputs.length === 0) return []
    const marks = yield* redactedOf(sql)
    const versions = inputs.map((input) => input.version)
    const facts = yield* reviewFactsOf(sql, versions.map((v) => v.rule_id))
    const plain = yield* Effect.forEach(inputs, (input) => headOf(input, facts.get(input.version.rule_id), opts))
    const graphs = yield* graphsOf(sql, versions, opts)
    const sources = yield* sourcesOf(sql, versions.map((v) => v.source_id))
    const missing = versions.find((v) => !sources.has(v.source_id))
    if (missing !== undefined) return yield* Effect.dieMessage(`rule ${missing.rule_id} names a missing source`)
    const fromSources = yield* sourceGroupsOf(sql, [...sources.values()])
    const chain = yield* currentVersionsOf(sql, versions.flatMap((v) => [v.supersedes, v.superseded_by].filter((id): id is string => id !== null)))
    // contradicts and same-relation of all heads: one statement
    const ruleSets = yield* ruleSetGroups(sql, [
      ...versions.map((head, i): RuleSetRequest => ({
        kind: "contradicts", head, relations: [], linked: contradicting(head, graphs[i]?.links ?? [])
      })),
      ...versions.map((head, i): RuleSetRequest => ({
        kind: "same-relation", head, relations: plain[i]?.relations ?? [], linked: graphs[i]?.related ?? new Map()
      }))
    ], { targetDay: opts.targetDay, includeProposals: opts.includeProposals })
    const contradicts = ruleSets.slice(0, versions.length)
    const related = ruleSets.slice(versions.length)
    return inputs.map((input, i): Bundle => {
      const v = input.version
      const graph = graphs[i] as HeadGraph
      const head: Head = {
        ...(plain[i] as Head),
        entities: graph.entities.slice(0, HEAD_ENTITIES).map((e) => headEntity(e, marks)),
        ...redactedMark(marks.row("rule_version", v.rule_id, v.version))
      }
      const { groups: fromSource, unread } = fromSources.get(v.source_id) ?? { groups: [], unread: 0 }
      const groups = [
        ...fromSource,
        entityGroup(graph.entities, marks),
        v.supersedes === null ? null : chainGroup("predecessor", chain.get(v.supersedes)),
        v.superseded_by === null ? null : chainGroup("successor", chain.get(v.superseded_by)),
        contradicts[i] ?? null,
        related[i] ?? null
      ]
        .filter((g): g is Group => g !== null && g.count > 0)
        .sort((a, b) => GROUP_ORDER.indexOf(a.kind) - GROUP_ORDER.indexOf(b.kind))
        .map((g) => (g.kind === "entity" ? g : markedGroup(g, marks)))
      return { head, groups, line: bundleLine(head, groups, { zone: opts.zone, unreadAttachments: unread }) }
    })
  })

/** The bundle of one head: buildBundles of that head alone. */
export const buildBundle = (sql: SqlClient, input: HeadInput, opts: BundleOptions): Effect.Effect<Bundle, SqlError> =>
  Effect.map(buildBundles(sql, [input], opts), (bundles) => bundles[0] as Bundle)

/** In force on `day`: valid_from ≤ day < valid_until (open when null). */
const inForce = (validFrom: string, validUntil: string | null, day: string): boolean =>
  validFrom <= day && day < (validUntil ?? "9999-12-31")

/**
 * The version GET /v1/rules/:id shows: without as_of the current version; with as_of the newest
 * version in force that day. Only the last version of a rule can carry valid_until (superseded
 * is terminal), so an older version ends where the rule ended. Proposals only with
 * includeProposals; rejected never (a rule whose current version is rejected does not exist).
 */
export const chooseReadVersion = (
  versions: ReadonlyArray<RuleVersionRow>,
  asOf: string | null,
  includeProposals: boolean
): RuleVersionRow | undefined => {
  const current = versions[versions.length - 1]
  if (current === undefined || current.status === "rejected") return undefined
  const visible = (v: RuleVersionRow) => v.status !== "rejected" && (includeProposals || v.status !== "proposed")
  if (asOf === null) return visible(current) ? current : undefined
  return [...versions].reverse()
    .find((v) => visible(v) && inForce(v.valid_from, v.valid_until ?? current.valid_until, asOf))
}

export interface ReadOptions {
  readonly zone: string
  readonly recheckAfterDays: number
  readonly nowMs: number
  /** as_of of the request, or null for today */
  readonly asOf: string | null
  readonly includeProposals: boolean
  /** as BundleOptions.minConfidence: left out, the running config's */
  readonly minConfidence?: number | null
}

/**
 * The bundle of a rule for a read (GET /v1/rules/:id, read_rule): the version of
 * chooseReadVersion as the head with rank all null, found_via [], coverage and matched_terms
 * null; undefined when the rule does not exist for this read (unknown, rejected, a proposal
 * without includeProposals, nothing in force on as_of).
 */
export const readBundle = (sql: SqlClient, ruleId: string, opts: ReadOptions): Effect.Effect<Bundle | undefined, SqlError> =>
  Effect.gen(function*() {
    const versions = yield* allVersions(sql, ruleId)
    const version = chooseReadVersion(versions, opts.asOf, opts.includeProposals)
    if (version === undefined) return undefined
    return yield* buildBundle(sql, {
      version, scope: scopeOfRuleId(ruleId), rank: NO_RANK, found_via: [], coverage: null, matched_terms: null
    }, {
      zone: opts.zone,
      recheckAfterDays: opts.recheckAfterDays,
      nowMs: opts.nowMs,
      targetDay: opts.asOf ?? dayIn(opts.zone, opts.nowMs),
      includeProposals: opts.includeProposals,
      ...(opts.minConfidence === undefined ? {} : { minConfidence: opts.minConfidence })
    })
  })
