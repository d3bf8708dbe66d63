/**
 * Proposals (architecture.md §6.3): an agent or feeder proposes a rule with a verbatim quote;
 * the quote is checked in code against the stored source. The only writer of proposed
 * versions (AT3): a new rule with version 1, status proposed, and its rule_fts row.
 *
 * In src/ only intake() (src/domain/intake.ts) imports this module (AT2d): every proposal passes
 * the secret scan and the classification. propose() (the path before slice A, without either) is
 * kept for the tests' seeding and the bench's comparison.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { AppConfig } from "../config/config.js"
import { syncRuleFts } from "../db/fts.js"
import { ScopeStore } from "../db/scope-store.js"
import { QuoteNotFound, ReferenceUnknown, SourceUnknown } from "../contracts/errors.js"
import { formatRuleId, ruleRef, scopeOfRuleId } from "../contracts/ids.js"
import { approvalUrl, type ProposalCreated, type ProposalRequest } from "./proposal-schemas.js"
import {
  type Closest, closestInSegments, closestPassage, holdsMarker, JAMIE_WINDOW_S, jamieQuoteFound, mailQuoteFound, MIN_QUOTE_CHARS,
  normalizeQuote
} from "./quote-check.js"
import { recordNeighbours } from "./neighbours.js"
import { RuleIndex } from "./rule-index.js"
import type { Channel } from "../contracts/schemas.js"
import { ensureManualSource } from "./sources.js"
import { nowInstant, todayIn } from "../contracts/time.js"

export interface Proposer {
  readonly grantId: string
  readonly channel: Channel
}


const QUOTE_NOT_FOUND =
  "the quote was not found in the stored source (compared after normalization; a jamie quote within ±120 s of timestamp_s)"

/**
 * The refusal of a quote that is not there, with the closest passage of the stored text (of a
 * meeting: within one segment, whose start_s the message names).
 */
const quoteNotFound = (quote: string, closest: Closest | null, segmentStart: number | null) => {
  const short = [...normalizeQuote(quote)].length < MIN_QUOTE_CHARS
  const where = segmentStart === null ? "" : `; the closest passage lies in the segment at timestamp_s ${segmentStart}`
  const message = short
    ? `the quote is shorter than ${MIN_QUOTE_CHARS} characters after normalization; copy a longer passage of the source`
    : closest === null
    ? `${QUOTE_NOT_FOUND}; no passage of the source resembles it: check the source id and copy the quote from the source`
    : `${QUOTE_NOT_FOUND}; it first differs at character ${closest.differs_at} of the normalized quote${where}. closest.passage passes the check as the quote`
  return new QuoteNotFound({
    message,
    closest: closest === null
      ? null
      : { passage: closest.passage, differs_at: closest.differs_at, quote_from: closest.quote_from, source_from: closest.source_from }
  })
}

/** The refusal of a quote that holds the redaction marker (gaps.md §12), of any source kind. */
export const QUOTE_HOLDS_MARKER =
  "the quote holds the marker [redacted]: redacted text is not evidence; quote only text the source still shows"

/**
 * Checks the quote of a jamie or mail proposal against the stored source (§6.3); a quote that
 * holds the redaction marker is refused for every kind, a manual one too.
 */
const checkQuote = (sql: SqlClient, source: ProposalRequest["source"]) =>
  Effect.gen(function*() {
    if (holdsMarker(source.quote)) return yield* new QuoteNotFound({ message: QUOTE_HOLDS_MARKER, closest: null })
    if (source.kind === "manual") return
    const rows = yield* sql<{ kind: string; excerpt: string | null }>`SELECT kind, excerpt FROM source WHERE id = ${source.id}`
    const row = rows[0]
    if (row === undefined || row.kind !== source.kind) {
      return yield* new SourceUnknown({ message: `no ${source.kind} source ${source.id} is stored in this scope` })
    }
    if (source.kind === "mail") {
      const text = row.excerpt ?? ""
      if (!mailQuoteFound(source.quote, text)) return yield* quoteNotFound(source.quote, closestPassage(source.quote, text), null)
      return
    }
    const segments = yield* sql<{ n: number; start_s: number; text: string }>`
      SELECT n, start_s, text FROM source_segment WHERE source_id = ${source.id}
        AND start_s BETWEEN ${source.timestamp_s - JAMIE_WINDOW_S} AND ${source.timestamp_s + JAMIE_WINDOW_S}
      ORDER BY n`
    if (jamieQuoteFound(source.quote, segments, source.timestamp_s)) return
    // not in the window: the closest passage of the whole transcript (it may lie at another time), within one segment
    const all = yield* sql<{ n: number; start_s: number; text: string }>`SELECT n, start_s, text FROM source_segment WHERE source_id = ${source.id} ORDER BY n`
    const closest = closestInSegments(source.quote, all)
    return yield* quoteNotFound(source.quote, closest, closest?.start_s ?? null)
  })

/** supersedes must name a confirmed rule of the same scope (422 reference-unknown). */
const checkSupersedes = (sql: SqlClient, scope: string, supersedes: string | null) =>
  Effect.gen(function*() {
    if (supersedes === null) return
    const rows = scopeOfRuleId(supersedes) === scope
      ? yield* sql<{ status: string }>`SELECT status FROM current_version WHERE rule_id = ${supersedes}`
      : []
    if (rows[0]?.status !== "confirmed") {
      return yield* new ReferenceUnknown({ message: `supersedes: ${supersedes} is not a confirmed rule of scope ${scope}` })
    }
  })

/** What the transaction of a proposal wrote: the rule, its seq, version 1 and the possible duplicates. */
export interface Inserted {
  readonly id: string
  readonly seq: number
  readonly duplicates: ReadonlyArray<string>
  readonly checked: boolean
}

/**
 * Inside the caller's write transaction, in this order: source exists (source-unknown), quote
 * check (quote-not-found), supersedes (reference-unknown); then rule, version 1 proposed, FTS and
 * index rows, and the possible duplicates with their stored marks (proposal_neighbour).
 */
export const insertProposal = (sql: SqlClient, req: ProposalRequest, by: Proposer, at: { readonly now: string; readonly today: string }) =>
  Effect.gen(function*() {
    const index = yield* RuleIndex
    const { now, today } = at
    yield* checkQuote(sql, req.source)
    yield* checkSupersedes(sql, req.scope, req.supersedes)
    const src = req.source
    const sourceId = src.kind === "manual" ? yield* ensureManualSource(sql, by.grantId, now) : src.id
    const timestamp = src.kind === "jamie" ? src.timestamp_s : null
    const next = yield* sql<{ seq: number }>`SELECT coalesce(max(seq), 0) + 1 AS seq FROM rule`
    const seq = next[0]?.seq ?? 1
    const id = formatRuleId(req.scope, seq)
    yield* sql`INSERT INTO rule (seq, id, created_at, created_by) VALUES (${seq}, ${id}, ${now}, ${by.grantId})`.raw
    yield* sql`INSERT INTO rule_version (rule_id, version, kind, statement, source_id, quote, timestamp_s, source_link,
        said_at, speaker, relations, keywords, valid_from, valid_until, supersedes, superseded_by, status, reason,
        changed_by, changed_at)
      VALUES (${id}, 1, ${req.kind}, ${req.statement}, ${sourceId}, ${src.quote}, ${timestamp}, ${src.link},
        ${req.said_at}, ${req.speaker}, ${JSON.stringify(req.relations)}, ${JSON.stringify(req.keywords)},
        ${req.valid_from}, NULL, ${req.supersedes}, NULL, 'proposed', ${`proposed via ${by.channel}`},
        ${by.grantId}, ${now})`.raw
    yield* syncRuleFts(sql, id)
    yield* index.reindexRule(sql, id)
    // one stage-a run: the possible duplicates of the answer and the stored duplicate marks
    const similar = yield* index.similar(sql, req, seq, today)
    yield* recordNeighbours(sql, id, 1, req.statement, similar)
    const duplicates = similar.map((c) => c.ref)
    return { id, seq, duplicates, checked: src.kind !== "manual" } satisfies Inserted
  })

/** The optional fields of a proposal: a repeat compares those the caller sent. */
export type OptionalField = "said_at" | "speaker" | "relations" | "keywords" | "valid_from" | "supersedes" | "source.link"

/** Every optional field: a full ProposalRequest sent them all. */
export const ALL_SENT: ReadonlySet<OptionalField> = new Set<OptionalField>(["said_at", "speaker", "relations", "keywords", "valid_from", "supersedes", "source.link"])

interface FirstVersion {
  readonly rule_id: string
  readonly kind: string
  readonly timestamp_s: number | null
  readonly source_link: string | null
  readonly said_at: string
  readonly speaker: string | null
  readonly relations: string
  readonly keywords: string
  readonly valid_from: string
  readonly supersedes: string | null
}

/** Version 1 holds every field the caller sent as the request has it (the required ones always). */
const sameAsSent = (v: FirstVersion, req: ProposalRequest, sent: ReadonlySet<OptionalField>): boolean =>
  v.kind === req.kind &&
  v.timestamp_s === (req.source.kind === "jamie" ? req.source.timestamp_s : null) &&
  (!sent.has("source.link") || v.source_link === req.source.link) &&
  (!sent.has("said_at") || v.said_at === req.said_at) &&
  (!sent.has("speaker") || v.speaker === req.speaker) &&
  (!sent.has("relations") || v.relations === JSON.stringify(req.relations)) &&
  (!sent.has("keywords") || v.keywords === JSON.stringify(req.keywords)) &&
  (!sent.has("valid_from") || v.valid_from === req.valid_from) &&
  (!sent.has("supersedes") || v.supersedes === req.supersedes)

/**
 * A repeat of a proposal by the same grant: version 1 of a rule of this scope proposed by
 * `grantId` with the same statement, source and quote and every other field the caller sent the
 * same, not rejected (a rejected rule never leaks) and not superseded. Anything else is a new
 * proposal with all its checks (a changed supersedes is checked, never answered with the old
 * rule). The rule id, or null.
 */
export const findRepeat = (sql: SqlClient, req: ProposalRequest, grantId: string, sent: ReadonlySet<OptionalField>) =>
  Effect.map(
    sql.unsafe<FirstVersion>(REPEAT_SQL, [req.source.kind === "manual" ? `manual:${grantId}` : req.source.id, req.statement, grantId, req.statement, req.source.quote]),
    (rows) => rows.find((v) => sameAsSent(v, req, sent))?.rule_id ?? null
  )

/**
 * findRepeat's statement (source id, statement, grant, statement, quote): found through the first versions'
 * index by source and statement length (migration 0013), not by comparing every statement of the
 * source.
 */
export const REPEAT_SQL = `
  SELECT f.rule_id, f.kind, f.timestamp_s, f.source_link, f.said_at, f.speaker, f.relations, f.keywords, f.valid_from, f.supersedes
  FROM rule_version f JOIN current_version c ON c.rule_id = f.rule_id
  WHERE f.version = 1 AND f.source_id = ? AND length(f.statement) = length(?)
    AND f.changed_by = ? AND f.statement = ? AND f.quote = ?
    AND c.status IN ('proposed', 'confirmed')
  ORDER BY f.rule_id`

/**
 * The path before slice A, for the tests' seeding and the bench: the checks and the insert in one
 * transaction, no secret scan, no classification. In src/ use intake().
 */
export const propose = Effect.fn("Proposals.propose")(function*(req: ProposalRequest, by: Proposer) {
  const store = yield* ScopeStore
  const config = yield* AppConfig
  const now = yield* nowInstant
  const today = yield* todayIn(config.file.zone)
  return yield* store.write(req.scope, ({ sql }) =>
    Effect.gen(function*() {
      const ins = yield* insertProposal(sql, req, by, { now, today })
      const created: ProposalCreated = {
        ref: ruleRef(ins.id, 1),
        status: "proposed",
        quote_check: { checked: ins.checked },
        possible_duplicates: [...ins.duplicates],
        approval_url: approvalUrl(config.file.public_url, ins.id),
        adoption: { kind: "person" },
        valid: { from: req.valid_from, until: null, in_force: false },
        marking: "unconfirmed",
        exceptions: [],
        reasons: []
      }
      return created
    })
  )
})
