/**
 * The link vocabulary (graph.md §9.2/§9.3, gaps.md §6): which types an agent may propose, which
 * ends each type takes, and the computed links that are never stored (id null, origin
 * deterministic, status confirmed). Also the link schemas shared by the HTTP API and MCP.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Schema } from "effect"
import { ENTITY_ID_RE, RULE_ID_RE, ScopeName } from "../contracts/ids.js"
import { Adoption, Instant, RedactedFlag } from "../contracts/schemas.js"

export const PROPOSABLE_TYPES = ["concerns", "belongs_to", "contradicts", "mentions", "same_as"] as const
export const COMPUTED_TYPES = ["replies_to", "attachment_of", "sourced_from", "supersedes"] as const
export const LINK_TYPES = [...PROPOSABLE_TYPES, ...COMPUTED_TYPES] as const

export const ProposableType = Schema.Literal(...PROPOSABLE_TYPES)
export type ProposableType = typeof ProposableType.Type
export const LinkType = Schema.Literal(...LINK_TYPES)
export type LinkType = typeof LinkType.Type

export type EndKind = "rule" | "source" | "attachment" | "entity"

/** Which ends each type takes (gaps.md §6). */
export const LINK_ENDS: Record<LinkType, { readonly from: ReadonlyArray<EndKind>; readonly to: ReadonlyArray<EndKind> }> = {
  concerns: { from: ["rule", "source", "attachment"], to: ["entity"] },
  belongs_to: { from: ["source", "attachment", "entity"], to: ["entity"] },
  mentions: { from: ["rule", "source", "attachment"], to: ["entity"] },
  contradicts: { from: ["rule"], to: ["rule"] },
  same_as: { from: ["entity"], to: ["entity"] },
  replies_to: { from: ["source"], to: ["source"] },
  attachment_of: { from: ["attachment"], to: ["source"] },
  sourced_from: { from: ["rule"], to: ["source", "attachment"] },
  supersedes: { from: ["rule"], to: ["rule"] }
}

/** Types whose direction carries no meaning: the reverse of an open link is the same link. */
export const SYMMETRIC_TYPES: ReadonlySet<LinkType> = new Set<LinkType>(["contradicts", "same_as"])

export const isProposable = (type: string): type is ProposableType => (PROPOSABLE_TYPES as ReadonlyArray<string>).includes(type)
export const isComputed = (type: string): boolean => (COMPUTED_TYPES as ReadonlyArray<string>).includes(type)

// Endpoints (graph.md §2): versionless refs stored in `link`.
export const RULE_END_RE = /^rule\/[a-z][a-z0-9-]{1,39}-\d{4,}$/
export const SOURCE_END_RE = /^source\/(jamie:[A-Za-z0-9._-]{1,200}|mail:<[^<>\s]+>)$/
export const ATTACHMENT_END_RE = /^attachment\/(jamie:[A-Za-z0-9._-]{1,200}|mail:<[^<>\s]+>)#[1-9]\d*$/
export const ENTITY_END_RE = /^entity\/[a-z][a-z0-9-]{1,39}-e\d{4,}$/
export const LINK_REF_RE = /^link\/[a-z][a-z0-9-]{1,39}-l\d{4,}$/
/** Longest endpoint we accept: "attachment/" + a mail id (≤ 1,000; docs/decisions.md, §4 Storage) + "#" + n. */
export const ENDPOINT_MAX = 1100

/** The kind of an endpoint ref, or null when it is none of the four forms. */
export const endKindOf = (ref: string): EndKind | null => {
  if (RULE_END_RE.test(ref)) return "rule"
  if (ENTITY_END_RE.test(ref)) return "entity"
  if (SOURCE_END_RE.test(ref)) return "source"
  if (ATTACHMENT_END_RE.test(ref)) return "attachment"
  return null
}

/** The scope a rule or entity endpoint names; null for sources and attachments (they carry none, D61). */
export const scopeOfEndpoint = (ref: string): string | null => {
  if (RULE_END_RE.test(ref)) return ref.slice("rule/".length).replace(/-\d{4,}$/, "")
  if (ENTITY_END_RE.test(ref)) return ref.slice("entity/".length).replace(/-e\d{4,}$/, "")
  return null
}

export const Endpoint = Schema.String.pipe(
  Schema.maxLength(ENDPOINT_MAX),
  Schema.filter((s) => endKindOf(s) !== null ||
    "must be rule/<id>, source/<mail:<…>|jamie:…>, attachment/<source id>#<n> or entity/<id> (no @version)")
)

export const linkRef = (id: string): string => `link/${id}`
export const entityEnd = (id: string): string => `entity/${id}`
export const ruleEnd = (id: string): string => `rule/${id}`
export const ruleIdOfEnd = (ref: string): string => ref.slice("rule/".length)
export const entityIdOfEnd = (ref: string): string => ref.slice("entity/".length)
/** source id and n of attachment/<source id>#<n>. */
export const parseAttachmentEnd = (ref: string): { sourceId: string; n: number } => {
  const body = ref.slice("attachment/".length)
  const hash = body.lastIndexOf("#")
  return { sourceId: body.slice(0, hash), n: Number(body.slice(hash + 1)) }
}

export const LinkStatus = Schema.Literal("confirmed", "proposed", "rejected")
export type LinkStatus = typeof LinkStatus.Type
export const LinkOrigin = Schema.Literal("deterministic", "proposed", "human")
export type LinkOrigin = typeof LinkOrigin.Type

/** LinkOut (graph.md §9.2): a stored or computed link as answered. */
export const LinkOut = Schema.Struct({
  id: Schema.NullOr(Schema.String),
  from_ref: Schema.String,
  to_ref: Schema.String,
  type: LinkType,
  origin: LinkOrigin,
  confidence: Schema.NullOr(Schema.Number),
  status: LinkStatus,
  reason: Schema.NullOr(Schema.String),
  evidence: Schema.NullOr(Schema.String),
  valid_from: Instant,
  valid_to: Schema.NullOr(Instant),
  created_at: Schema.NullOr(Instant),
  /** a redaction touched its reason or evidence */
  redacted: RedactedFlag,
  /** a stored proposed link: who adopted it, the policy (auto-adopted) or a person (also: pending) */
  adoption: Schema.optional(Adoption)
})
export type LinkOut = typeof LinkOut.Type

const nonBlank = (max: number) => Schema.String.pipe(
  Schema.minLength(1), Schema.maxLength(max),
  Schema.filter((s) => s.trim().length > 0 || "must not be blank")
)

/**
 * POST /v1/links (gaps.md §3) and link_propose. `type` is any vocabulary word here so that a
 * computed type is answered with a remedy after the endpoint checks (graph.md §4 order); the
 * MCP input schema narrows it to ProposableType.
 */
export const LinkRequest = Schema.Struct({
  scope: ScopeName,
  from_ref: Endpoint,
  to_ref: Endpoint,
  type: Schema.String.pipe(Schema.pattern(/^[a-z_]{3,40}$/, { message: () => `must be one of ${PROPOSABLE_TYPES.join(", ")}` })),
  confidence: Schema.Number.pipe(Schema.between(0, 1)),
  reason: nonBlank(1000),
  evidence: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(1000)))
}).pipe(Schema.filter((r) => r.from_ref !== r.to_ref || { path: ["to_ref"], message: "a link needs two different ends" }))
export type LinkRequest = typeof LinkRequest.Type

/** GET /v1/links: the links of one item; grouped (an entity only) is everything about it and below it; 50 a page. */
export const ListLinksInput = Schema.Struct({
  scope: ScopeName,
  ref: Endpoint,
  grouped: Schema.optional(Schema.Boolean),
  page: Schema.optionalWith(Schema.Number.pipe(Schema.int(), Schema.between(1, 100_000)), { default: () => 1 })
})
export type ListLinksInput = typeof ListLinksInput.Type

/** Rule and entity ids of an endpoint, for the scope check: ids of other scopes. */
export const endpointScopes = (refs: ReadonlyArray<string>): Array<string> =>
  refs.map(scopeOfEndpoint).filter((s): s is string => s !== null)

export const isRuleId = (id: string): boolean => RULE_ID_RE.test(id)
export const isEntityId = (id: string): boolean => ENTITY_ID_RE.test(id)

// -------------------------------------------------------------------------------------------------
// Computed links (gaps.md §6): derived on read from source.thread, source_attachment,
// rule_version.source_id and rule_version.supersedes; never stored.

const computedLink = (from_ref: string, to_ref: string, type: LinkType, validFrom: string): LinkOut => ({
  id: null, from_ref, to_ref, type, origin: "deterministic", confidence: null, status: "confirmed",
  reason: null, evidence: null, valid_from: validFrom, valid_to: null, created_at: null
})

const sourceEnd = (id: string): string => `source/${id}`
const attachmentEnd = (sourceId: string, n: number): string => `attachment/${sourceId}#${n}`
/** Source ids that are endpoints: mail and jamie (a manual source has no endpoint form). */
const endpointSource = (id: string): boolean => SOURCE_END_RE.test(sourceEnd(id))

/**
 * The computed links with `ref` at either end, in the scope file of `sql`. A rule end whose current
 * version is rejected is left out (invariant 8): the caller refuses a rejected rule as `ref` itself.
 */
export const computedLinksOf = (sql: SqlClient, ref: string): Effect.Effect<Array<LinkOut>, SqlError> =>
  Effect.gen(function*() {
    const kind = endKindOf(ref)
    const out: Array<LinkOut> = []
    if (kind === "rule") {
      const id = ruleIdOfEnd(ref)
      const rows = yield* sql<{ source_id: string; supersedes: string | null; status: string; created_at: string; since: string | null }>`
        SELECT v.source_id, v.supersedes, v.status, r.created_at,
          (SELECT min(w.changed_at) FROM rule_version w WHERE w.rule_id = v.rule_id AND w.supersedes = v.supersedes) AS since
        FROM current_version v JOIN rule r ON r.id = v.rule_id WHERE v.rule_id = ${id}`
      const v = rows[0]
      if (v === undefined || v.status === "rejected") return out
      if (endpointSource(v.source_id)) out.push(computedLink(ref, sourceEnd(v.source_id), "sourced_from", v.created_at))
      if (v.supersedes !== null) {
        const pred = yield* sql<{ status: string }>`SELECT status FROM current_version WHERE rule_id = ${v.supersedes}`
        if (pred[0] !== undefined && pred[0].status !== "rejected") {
          out.push(computedLink(ref, ruleEnd(v.supersedes), "supersedes", v.since ?? v.created_at))
        }
      }
      const successors = yield* sql<{ rule_id: string; since: string }>`
        SELECT v.rule_id, (SELECT min(w.changed_at) FROM rule_version w WHERE w.rule_id = v.rule_id AND w.supersedes = ${id}) AS since
        FROM current_version v WHERE v.supersedes = ${id} AND v.status <> 'rejected' ORDER BY v.rule_id`
      for (const s of successors) out.push(computedLink(ruleEnd(s.rule_id), ref, "supersedes", s.since))
    } else if (kind === "source") {
      const id = ref.slice("source/".length)
      const rows = yield* sql<{ id: string; thread: string | null; occurred_at: string | null; fetched_at: string }>`
        SELECT id, thread, occurred_at, fetched_at FROM source WHERE id = ${id}`
      const src = rows[0]
      if (src === undefined) return out
      const since = src.occurred_at ?? src.fetched_at
      if (src.thread !== null && src.thread !== src.id) {
        const root = yield* sql<{ id: string }>`SELECT id FROM source WHERE id = ${src.thread}`
        if (root.length > 0) out.push(computedLink(ref, sourceEnd(src.thread), "replies_to", since))
      }
      const replies = yield* sql<{ id: string; at: string }>`
        SELECT id, coalesce(occurred_at, fetched_at) AS at FROM source WHERE thread = ${id} AND id <> ${id} ORDER BY id`
      for (const r of replies) out.push(computedLink(sourceEnd(r.id), ref, "replies_to", r.at))
      const attachments = yield* sql<{ n: number }>`SELECT n FROM source_attachment WHERE source_id = ${id} ORDER BY n`
      for (const a of attachments) out.push(computedLink(attachmentEnd(id, a.n), ref, "attachment_of", since))
      const rules = yield* sql<{ rule_id: string; created_at: string }>`
        SELECT v.rule_id, r.created_at FROM current_version v JOIN rule r ON r.id = v.rule_id
        WHERE v.source_id = ${id} AND v.status <> 'rejected' ORDER BY r.seq`
      for (const r of rules) out.push(computedLink(ruleEnd(r.rule_id), ref, "sourced_from", r.created_at))
    } else if (kind === "attachment") {
      const { sourceId, n } = parseAttachmentEnd(ref)
      const rows = yield* sql<{ at: string }>`
        SELECT coalesce(s.occurred_at, s.fetched_at) AS at FROM source_attachment a JOIN source s ON s.id = a.source_id
        WHERE a.source_id = ${sourceId} AND a.n = ${n}`
      const a = rows[0]
      if (a !== undefined) out.push(computedLink(ref, sourceEnd(sourceId), "attachment_of", a.at))
    }
    // entities: no computed link ends at an entity (gaps.md §6)
    return out
  })
