/**
 * The only writer of `link` (AT3): proposeLink (link_propose, POST /v1/links) with the checks of
 * graph.md §4 "Link" in order. Agents write proposed links only (origin 'proposed', created_by =
 * grant id, valid_from = now); computed links are never stored (link-types.ts).
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { AppConfig } from "../config/config.js"
import { ScopeStore } from "../db/scope-store.js"
import { formatLinkId } from "../contracts/ids.js"
import { nowInstant } from "../contracts/time.js"
import { linkOut, type LinkRow, linkStatus, reviewsOf } from "./counted.js"
import { linkAdoptions } from "./adoption.js"
import { applyStructurePolicy, type PolicyPart } from "./structure-policy.js"
import type { Adoption } from "../contracts/schemas.js"
import { redactedOf } from "../domain/redacted.js"
import { type Next, type PathItem, refuse } from "../contracts/errors.js"
import {
  type EndKind,
  endKindOf,
  entityIdOfEnd,
  isComputed,
  isProposable,
  LINK_ENDS,
  linkRef,
  type LinkOut,
  type LinkRequest,
  type LinkStatus,
  parseAttachmentEnd,
  PROPOSABLE_TYPES,
  ruleIdOfEnd,
  scopeOfEndpoint,
  SYMMETRIC_TYPES
} from "./link-types.js"
import { pathOf } from "./paths.js"

export interface LinkWriter {
  /** grant id of the caller (created_by) */
  readonly grantId: string
  /** the caller's channel (the policy adopts on it); api when not named */
  readonly channel?: "mcp" | "api"
}

/** The answer of link_propose / POST /v1/links, with the guidance of graph.md §8. */
export interface ProposeLinkResult {
  readonly created: boolean
  readonly status: LinkStatus
  readonly link: LinkOut
  /** path of the entity end (the to end first), else [] */
  readonly path: ReadonlyArray<PathItem>
  readonly next: ReadonlyArray<Next>
  /** the approval page while the link waits for a person, else null */
  readonly approval_url: string | null
  /** who adopted the link: the policy (auto-adopted) or a person (also: it waits for one) */
  readonly adoption?: Adoption
  /** what the policy did with a new link, and why */
  readonly policy?: PolicyPart["policy"]
}

const KIND_WORD: Record<EndKind, string> = { rule: "rule", source: "source", attachment: "attachment", entity: "entity" }

const FIND_END: Record<EndKind, { remedy: string; next: ReadonlyArray<Next> }> = {
  rule: { remedy: "find the rule with search_rules and use its id (rule/<id>, without @version)", next: [{ tool: "search_rules", why: "find the rule" }] },
  entity: { remedy: "find the entity with entity_resolve and use its id (entity/<id>)", next: [{ tool: "entity_resolve", why: "find the entity" }] },
  source: { remedy: "store the source first (POST /v1/sources) or check its id (source/mail:<…> or source/jamie:…)", next: [] },
  attachment: { remedy: "check the source id and the attachment number (attachment/<source id>#<n>, counted from 1)", next: [] }
}

const joinWords = (words: ReadonlyArray<string>): string =>
  words.length <= 1 ? words.join("") : `${words.slice(0, -1).join(", ")} or ${words[words.length - 1] ?? ""}`

/** The current status of a rule or entity end, "present" for sources and attachments, null when unknown. */
const endState = (sql: SqlClient, ref: string, kind: EndKind) =>
  Effect.gen(function*() {
    switch (kind) {
      case "rule": {
        const rows = yield* sql<{ status: string }>`SELECT status FROM current_version WHERE rule_id = ${ruleIdOfEnd(ref)}`
        return rows[0]?.status ?? null
      }
      case "entity": {
        const rows = yield* sql<{ status: string }>`SELECT status FROM entity_current WHERE id = ${entityIdOfEnd(ref)}`
        return rows[0]?.status ?? null
      }
      case "source": {
        const rows = yield* sql<{ n: number }>`SELECT count(*) AS n FROM source WHERE id = ${ref.slice("source/".length)}`
        return (rows[0]?.n ?? 0) > 0 ? "present" : null
      }
      case "attachment": {
        const { sourceId, n } = parseAttachmentEnd(ref)
        const rows = yield* sql<{ c: number }>`SELECT count(*) AS c FROM source_attachment WHERE source_id = ${sourceId} AND n = ${n}`
        return (rows[0]?.c ?? 0) > 0 ? "present" : null
      }
    }
  })

/** The open link with the same (from_ref, type, to_ref), or its reverse for a symmetric type. */
const openTwin = (sql: SqlClient, req: LinkEnds) =>
  Effect.map(
    sql<LinkRow>`SELECT * FROM link WHERE valid_to IS NULL AND type = ${req.type} AND (
        (from_ref = ${req.from_ref} AND to_ref = ${req.to_ref})
        OR (${SYMMETRIC_TYPES.has(req.type as never) ? 1 : 0} = 1 AND from_ref = ${req.to_ref} AND to_ref = ${req.from_ref}))
      ORDER BY (from_ref = ${req.from_ref}) DESC, seq LIMIT 1`,
    (rows) => rows[0]
  )

/** The entity end a link answer is about: the to end first (what something is filed under). */
export const entityEndOf = (from: string, to: string): string | null =>
  endKindOf(to) === "entity" ? entityIdOfEnd(to) : endKindOf(from) === "entity" ? entityIdOfEnd(from) : null

export const structureApprovalUrl = (publicUrl: string, scope: string, anchor: string): string =>
  `${publicUrl}/approval/structure?scope=${encodeURIComponent(scope)}#${encodeURIComponent(anchor)}`

/** The ends and type of a link as any writer sends them. */
export interface LinkEnds {
  readonly scope: string
  readonly from_ref: string
  readonly to_ref: string
  readonly type: string
}

/** scope-mismatch: a rule or entity id of another scope, decided from the id before any lookup. */
const checkEndScopes = (req: LinkEnds) =>
  Effect.gen(function*() {
    const ends = [req.from_ref, req.to_ref] as const
    for (const [i, end] of ends.entries()) {
      const of = scopeOfEndpoint(end)
      if (of !== null && of !== req.scope) {
        return yield* refuse("scope-mismatch", {
          message: `${i === 0 ? "from_ref" : "to_ref"} ${end} belongs to another scope than ${req.scope}`,
          remedy: `links exist only inside one scope: link items of scope ${req.scope} only`,
          issues: [{ path: i === 0 ? "from_ref" : "to_ref", message: `not an id of scope ${req.scope}` }]
        })
      }
    }
  })

/**
 * The checks of graph.md §4 "Link" after the scope of the ids, in order: both ends exist in the
 * scope → reference-unknown; a rule end that is rejected → not-found (invariant 8); an archived
 * entity end → reference-unknown naming it archived; the type is proposable and takes these ends
 * → validation-failed. Answers the path of the entity end and the guidance.
 */
const checkLink = (sql: SqlClient, req: LinkEnds) =>
  Effect.gen(function*() {
    const scope = req.scope
    const ends = [req.from_ref, req.to_ref] as const
    const kinds = ends.map((e) => endKindOf(e) as EndKind)
    const states: Array<string | null> = []
    for (const [i, end] of ends.entries()) {
      const kind = kinds[i] as EndKind
      const state = yield* endState(sql, end, kind)
      if (state === null) {
        return yield* refuse("reference-unknown", {
          message: `no ${KIND_WORD[kind]} ${end} in scope ${scope}`,
          remedy: FIND_END[kind].remedy,
          next: FIND_END[kind].next
        })
      }
      states.push(state)
    }
    for (const [i, end] of ends.entries()) {
      if (kinds[i] === "rule" && states[i] === "rejected") {
        // invariant 8: outside the approval channel a rejected rule does not exist
        return yield* refuse("not-found", {
          message: `no rule ${ruleIdOfEnd(end)}`,
          remedy: FIND_END.rule.remedy,
          next: FIND_END.rule.next
        })
      }
    }
    for (const [i, end] of ends.entries()) {
      if (kinds[i] === "entity" && states[i] === "archived") {
        return yield* refuse("reference-unknown", {
          message: `${end} is archived`,
          remedy: `entity ${entityIdOfEnd(end)} is archived and takes no new links; find the entity that replaces it with entity_resolve`,
          next: [{ tool: "entity_resolve", why: "find the current entity" }]
        })
      }
    }
    if (!isProposable(req.type)) {
      return yield* refuse("validation-failed", {
        message: isComputed(req.type)
          ? `${req.type} links are computed from the stored sources and rules; they are never proposed`
          : `${req.type} is not a link type`,
        remedy: `propose one of ${PROPOSABLE_TYPES.join(", ")}; thread, attachment, source and supersedes links exist already`,
        issues: [{ path: "type", message: `must be one of ${PROPOSABLE_TYPES.join(", ")}` }]
      })
    }
    const allowed = LINK_ENDS[req.type]
    const [fromKind, toKind] = kinds as [EndKind, EndKind]
    if (!allowed.from.includes(fromKind) || !allowed.to.includes(toKind)) {
      const path = allowed.from.includes(fromKind) ? "to_ref" : "from_ref"
      return yield* refuse("validation-failed", {
        message: `a ${req.type} link goes from a ${joinWords(allowed.from)} to a ${joinWords(allowed.to)}, not from a ${fromKind} to a ${toKind}`,
        remedy: `choose the type that fits the ends: ${PROPOSABLE_TYPES.map((t) => `${t} (${joinWords(LINK_ENDS[t].from)} → ${joinWords(LINK_ENDS[t].to)})`).join("; ")}`,
        issues: [{ path, message: `a ${req.type} link takes ${joinWords(path === "to_ref" ? allowed.to : allowed.from)} here` }]
      })
    }

    const entityId = entityEndOf(req.from_ref, req.to_ref)
    const path = entityId === null ? [] : yield* pathOf(sql, entityId)
    const next: ReadonlyArray<Next> = entityId === null
      ? []
      : [{ tool: "link_list", why: "see everything about the entity (grouped: true)" }]
    const type = req.type
    return { path, next, type }
  })

/**
 * Proposes one link inside one scope. Checks in this order (graph.md §4 "Link"): a rule or entity
 * id of another scope → scope-mismatch (decided from the id, so it runs before the lookup: such an
 * id never exists in this file); both ends exist in the scope → reference-unknown; a rule end that
 * is rejected → not-found (invariant 8); an archived entity end → reference-unknown naming it
 * archived; the type is proposable and takes these ends → validation-failed; an open link with the
 * same (from_ref, type, to_ref) → created: false with its status (a rejected one is never
 * re-proposed). Then one insert: origin 'proposed', created_by = grant id, valid_from = now.
 */
export const proposeLink = Effect.fn("Links.propose")(function*(req: LinkRequest, writer: LinkWriter) {
  const store = yield* ScopeStore
  const config = yield* AppConfig
  const scope = req.scope
  yield* checkEndScopes(req)
  const now = yield* nowInstant
  return yield* store.write(scope, ({ sql }) =>
    Effect.gen(function*() {
      const { path, next, type } = yield* checkLink(sql, req)
      const existing = yield* openTwin(sql, req)
      if (existing !== undefined) {
        const status = linkStatus(existing, (yield* reviewsOf(sql, [existing.id])).get(linkRef(existing.id)))
        const adoption = (yield* linkAdoptions(sql, [existing.id])).get(existing.id) ?? { kind: "person" as const }
        const result: ProposeLinkResult = {
          created: false,
          status,
          link: { ...linkOut(existing, status, yield* redactedOf(sql)), adoption },
          adoption,
          path,
          next,
          approval_url: status === "proposed" ? structureApprovalUrl(config.file.public_url, scope, existing.id) : null
        }
        return result
      }

      const seqRows = yield* sql<{ seq: number }>`SELECT coalesce(max(seq), 0) + 1 AS seq FROM link`
      const seq = seqRows[0]?.seq ?? 1
      const id = formatLinkId(scope, seq)
      const evidence = req.evidence ?? null
      yield* sql`INSERT INTO link (seq, id, from_ref, to_ref, type, origin, confidence, reason, evidence, valid_from, valid_to, created_at, created_by)
        VALUES (${seq}, ${id}, ${req.from_ref}, ${req.to_ref}, ${req.type}, 'proposed', ${req.confidence}, ${req.reason}, ${evidence},
          ${now}, NULL, ${now}, ${writer.grantId})`.raw
      const row: LinkRow = {
        seq, id, from_ref: req.from_ref, to_ref: req.to_ref, type, origin: "proposed", confidence: req.confidence,
        reason: req.reason, evidence, valid_from: now, valid_to: null, created_at: now, created_by: writer.grantId
      }
      const policy = yield* applyStructurePolicy(sql, {
        scope, kind: "link", target: linkRef(id), channel: writer.channel ?? "api", forcedDuplicate: false, subtree: 0, now,
        texts: [{ field: "reason", text: req.reason }, ...(evidence === null ? [] : [{ field: "evidence", text: evidence }])]
      })
      const status: LinkStatus = policy.adoption.kind === "auto" ? "confirmed" : "proposed"
      const result: ProposeLinkResult = {
        created: true,
        status,
        link: { ...linkOut(row, status), adoption: policy.adoption },
        ...policy,
        path,
        next,
        approval_url: status === "proposed" ? structureApprovalUrl(config.file.public_url, scope, id) : null
      }
      return result
    })
  )
})

/** A person's link, created on the approval channel (gaps.md §13): no confidence, a reason always. */
export interface PersonLinkEnds extends LinkEnds {
  readonly reason: string
  readonly evidence?: string | undefined
}

/**
 * A person creates a link directly (gaps.md §13, graph.md §15 Q2): the checks of proposeLink in
 * their order; an open link with the same ends and type is refused (already-decided, naming it:
 * a proposed one is confirmed in the list instead). Then one insert, origin 'human', created_by
 * the person's grant, and `confirm` (the person's review row, written by src/structure/**) in the
 * same transaction, so the link is born confirmed and can be closed later.
 */
export const createPersonLink = <A, E>(
  req: PersonLinkEnds,
  personGrantId: string,
  confirm: (sql: SqlClient, row: LinkRow) => Effect.Effect<A, E>
) =>
  Effect.gen(function*() {
    const store = yield* ScopeStore
    yield* checkEndScopes(req)
    const now = yield* nowInstant
    return yield* store.write(req.scope, ({ sql }) =>
      Effect.gen(function*() {
        const { path, type } = yield* checkLink(sql, req)
        const existing = yield* openTwin(sql, req)
        if (existing !== undefined) {
          const status = linkStatus(existing, (yield* reviewsOf(sql, [existing.id])).get(linkRef(existing.id)))
          return yield* refuse("already-decided", {
            message: `an open ${req.type} link between these two exists already (${existing.id}, ${status})`,
            remedy: status === "proposed" ? `confirm the proposed link ${existing.id} in the list on this page` : "nothing to add: the link is there",
            current: linkRef(existing.id),
            next: []
          })
        }
        const seq = (yield* sql<{ seq: number }>`SELECT coalesce(max(seq), 0) + 1 AS seq FROM link`)[0]?.seq ?? 1
        const id = formatLinkId(req.scope, seq)
        const evidence = req.evidence ?? null
        yield* sql`INSERT INTO link (seq, id, from_ref, to_ref, type, origin, confidence, reason, evidence, valid_from, valid_to, created_at, created_by)
          VALUES (${seq}, ${id}, ${req.from_ref}, ${req.to_ref}, ${req.type}, 'human', NULL, ${req.reason}, ${evidence},
            ${now}, NULL, ${now}, ${personGrantId})`.raw
        const row: LinkRow = {
          seq, id, from_ref: req.from_ref, to_ref: req.to_ref, type, origin: "human", confidence: null,
          reason: req.reason, evidence, valid_from: now, valid_to: null, created_at: now, created_by: personGrantId
        }
        const review = yield* confirm(sql, row)
        return { link: linkOut(row, "confirmed"), path, review }
      }))
  })
