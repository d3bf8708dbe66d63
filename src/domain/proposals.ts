/**
 * Proposals (architecture.md §6.3): an agent or feeder proposes a rule with a verbatim quote;
 * the quote is checked in code against the stored source. The only writer of proposed
 * versions (AT3): a new rule with version 1, status proposed, and its rule_fts row.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { AppConfig } from "../config/config.js"
import { syncRuleFts } from "../db/fts.js"
import { ScopeStore } from "../db/scope-store.js"
import { QuoteNotFound, ReferenceUnknown, SourceUnknown } from "../contracts/errors.js"
import { formatRuleId, ruleRef, scopeOfRuleId } from "../contracts/ids.js"
import type { ProposalCreated, ProposalRequest } from "./proposal-schemas.js"
import { JAMIE_WINDOW_S, jamieQuoteFound, mailQuoteFound } from "./quote-check.js"
import { RuleIndex } from "./rule-index.js"
import type { Channel } from "../contracts/schemas.js"
import { ensureManualSource } from "./sources.js"
import { nowInstant, todayIn } from "../contracts/time.js"

export interface Proposer {
  readonly grantId: string
  readonly channel: Channel
}

export const approvalUrl = (publicUrl: string, ruleId: string): string => `${publicUrl}/approval/rules/${ruleId}`

const QUOTE_NOT_FOUND =
  "the quote was not found in the stored source (compared after normalization; a jamie quote within ±120 s of timestamp_s)"

/** Checks the quote of a jamie or mail proposal against the stored source (§6.3). */
const checkQuote = (sql: SqlClient, source: ProposalRequest["source"]) =>
  Effect.gen(function*() {
    if (source.kind === "manual") return
    const rows = yield* sql<{ kind: string; excerpt: string | null }>`SELECT kind, excerpt FROM source WHERE id = ${source.id}`
    const row = rows[0]
    if (row === undefined || row.kind !== source.kind) {
      return yield* new SourceUnknown({ message: `no ${source.kind} source ${source.id} is stored in this scope` })
    }
    let found: boolean
    if (source.kind === "mail") {
      found = mailQuoteFound(source.quote, row.excerpt ?? "")
    } else {
      const segments = yield* sql<{ n: number; start_s: number; text: string }>`
        SELECT n, start_s, text FROM source_segment WHERE source_id = ${source.id}
          AND start_s BETWEEN ${source.timestamp_s - JAMIE_WINDOW_S} AND ${source.timestamp_s + JAMIE_WINDOW_S}
        ORDER BY n`
      found = jamieQuoteFound(source.quote, segments, source.timestamp_s)
    }
    if (!found) return yield* new QuoteNotFound({ message: QUOTE_NOT_FOUND })
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

/**
 * Order: source exists (source-unknown), quote check (quote-not-found), supersedes
 * (reference-unknown); then one transaction: rule, version 1 proposed, FTS row.
 */
export const propose = Effect.fn("Proposals.propose")(function*(req: ProposalRequest, by: Proposer) {
  const store = yield* ScopeStore
  const config = yield* AppConfig
  const index = yield* RuleIndex
  const now = yield* nowInstant
  const today = yield* todayIn(config.file.zone)
  return yield* store.write(req.scope, ({ sql }) =>
    Effect.gen(function*() {
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
      const duplicates = yield* index.possibleDuplicates(sql, req, seq, today)
      const created: ProposalCreated = {
        ref: ruleRef(id, 1),
        status: "proposed",
        quote_check: { checked: src.kind !== "manual" },
        possible_duplicates: duplicates,
        approval_url: approvalUrl(config.file.public_url, id)
      }
      return created
    })
  )
})
