/** Proposal schemas (architecture.md §6.3). */
import { Schema } from "effect"
import { JamieId, MailId, RuleId, RuleRef, ScopeName } from "../contracts/ids.js"
import { Adoption, After, Day, Exceptions, Instant, Keywords, Link, PageLimit, Relation, RuleKind } from "../contracts/schemas.js"

/**
 * Text stored in rule_version: SQLite's length() stops at a NUL character, so a NUL would slip
 * past the length checks of the schema and fail the table's CHECK (docs/decisions.md, §6 HTTP API).
 */
const RuleText = (min: number, max: number) =>
  Schema.String.pipe(
    Schema.minLength(min),
    Schema.maxLength(max),
    Schema.filter((s) => !s.includes("\u0000") || "must not contain a NUL character (U+0000)")
  )

export const JamieQuote = Schema.Struct({
  kind: Schema.Literal("jamie"),
  id: JamieId,
  quote: RuleText(20, 2000),
  timestamp_s: Schema.Number.pipe(Schema.int(), Schema.nonNegative()),
  link: Link
})
export const MailQuote = Schema.Struct({
  kind: Schema.Literal("mail"),
  id: MailId,
  quote: RuleText(20, 2000),
  link: Schema.NullOr(Link)
})
export const ManualQuote = Schema.Struct({
  kind: Schema.Literal("manual"),
  quote: RuleText(1, 2000),
  link: Schema.NullOr(Link)
})
export const ProposalSource = Schema.Union(JamieQuote, MailQuote, ManualQuote)
export type ProposalSource = typeof ProposalSource.Type

/** A proposal with every field (architecture.md §6.3): what intake() checks and stores, after completeDraft filled the defaults. */
export const ProposalRequest = Schema.Struct({
  scope: ScopeName,
  kind: RuleKind,
  statement: RuleText(10, 500),
  source: ProposalSource,
  said_at: Instant,
  speaker: Schema.NullOr(RuleText(1, 200)),
  relations: Schema.Array(Relation).pipe(Schema.maxItems(20)),
  keywords: Keywords,
  valid_from: Day,
  supersedes: Schema.NullOr(RuleId)
})
export type ProposalRequest = typeof ProposalRequest.Type

/** The approval page of a rule: <public_url>/approval/rules/<id>. */
export const approvalUrl = (publicUrl: string, ruleId: string): string => `${publicUrl}/approval/rules/${ruleId}`

/** The validity of the created version: from, until, and whether it is in force today (only a confirmed rule is). */
export const Validity = Schema.Struct({ from: Day, until: Schema.NullOr(Day), in_force: Schema.Boolean })

/**
 * The answer of a proposal (architecture.md §6.3, slice A): status proposed, or confirmed when
 * the policy adopted it in the same transaction; adoption (who confirmed it: the policy with its
 * ruleset, or a person — for a proposal: a person decides), valid, marking (auto-adopted,
 * unconfirmed, or human-confirmed for an identical repeat of a rule a person confirmed), the
 * mandatory exceptions that hold it for a person by their codes ([] when none) and the reasons of
 * the classification (why it was adopted or waits for a person).
 */
export const ProposalCreated = Schema.Struct({
  ref: RuleRef,
  status: Schema.Literal("proposed", "confirmed"),
  quote_check: Schema.Struct({ checked: Schema.Boolean }),
  possible_duplicates: Schema.Array(RuleRef).pipe(Schema.maxItems(3)),
  approval_url: Schema.String,
  adoption: Adoption,
  valid: Validity,
  marking: Schema.Literal("auto-adopted", "human-confirmed", "unconfirmed"),
  exceptions: Exceptions,
  reasons: Schema.Array(Schema.String)
})
export type ProposalCreated = typeof ProposalCreated.Type

export const ProposalSummary = Schema.Struct({
  ref: RuleRef,
  kind: RuleKind,
  statement: Schema.String,
  said_at: Instant,
  source: Schema.Struct({ kind: Schema.String, id: Schema.String }),
  supersedes: Schema.NullOr(RuleId),
  created_at: Instant,
  approval_url: Schema.String,
  exceptions: Exceptions
})
export type ProposalSummary = typeof ProposalSummary.Type

/** GET /v1/proposals: the open proposals of a scope, in pages ordered by seq. */
export const ListProposalsInput = Schema.Struct({ scope: ScopeName, limit: PageLimit, after: After })
export type ListProposalsInput = typeof ListProposalsInput.Type

// ---------------------------------------------------------------------------------------------
// What a caller sends: POST /v1/proposals and the MCP tool propose_rule take the same request

/** An optional field: absent or null takes the server's default. */
const OrDefault = <S extends Schema.Schema.Any>(schema: S, description: string) =>
  Schema.optional(Schema.NullOr(schema)).annotations({ description })

/**
 * The request of both doors (POST /v1/proposals, propose_rule): ProposalRequest with said_at,
 * speaker, relations, keywords, valid_from, supersedes and source.link optional. The operation
 * fills what is left out (domain/intake.ts completeDraft): said_at and valid_from absent or null =
 * the stored source's date (manual: now) and its day in config.zone; source.link absent (jamie:
 * also null) = the stored meeting's link, else null; speaker and supersedes null; relations and
 * keywords [].
 */
export const ProposalDraft = Schema.Struct({
  ...ProposalRequest.fields,
  source: Schema.Union(
    Schema.Struct({
      ...JamieQuote.fields,
      link: OrDefault(JamieQuote.fields.link, "http(s) URL of the passage; default (absent or null): the stored meeting's link")
    }),
    Schema.Struct({
      ...MailQuote.fields,
      link: Schema.optional(MailQuote.fields.link).annotations({ description: "http(s) URL or null; default null" })
    }),
    Schema.Struct({
      ...ManualQuote.fields,
      link: Schema.optional(ManualQuote.fields.link).annotations({ description: "http(s) URL or null; default null" })
    })
  ),
  said_at: OrDefault(
    ProposalRequest.fields.said_at,
    "when it was said: a UTC instant YYYY-MM-DDTHH:MM:SSZ; default (absent or null): the date of the stored mail or meeting (manual: now)"
  ),
  speaker: Schema.optional(ProposalRequest.fields.speaker).annotations({ description: "who said it (1–200 characters) or null; default null" }),
  relations: Schema.optional(ProposalRequest.fields.relations).annotations({
    description: "up to 20 of {kind: customer | product | supplier, name, ref: string | null}; default []"
  }),
  keywords: Schema.optional(ProposalRequest.fields.keywords).annotations({ description: "up to 30 words of 2–100 characters; default []" }),
  valid_from: OrDefault(
    ProposalRequest.fields.valid_from,
    "the first day it applies: a calendar day YYYY-MM-DD; default (absent or null): the day of said_at in the instance's zone"
  ),
  supersedes: Schema.optional(ProposalRequest.fields.supersedes).annotations({
    description: "the id <scope>-<nnnn> of a confirmed rule this one replaces, or null; default null"
  })
})
export type ProposalDraft = typeof ProposalDraft.Type

// ---------------------------------------------------------------------------------------------
// Retract (gaps.md §10): POST /v1/rules/:id/retract {reason}, the MCP tool rule_retract {ref, reason}

const RetractReason = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(1000)).annotations({
  description: "why the adoption is taken back (1–1000 characters, not blank)"
})

/** The body of POST /v1/rules/:id/retract. */
export const RetractRequest = Schema.Struct({ reason: RetractReason })
export type RetractRequest = typeof RetractRequest.Type

/** The operation's input: the rule id of the path and the body. */
export const RetractInput = Schema.Struct({ id: Schema.String, reason: RetractReason })
export type RetractInput = typeof RetractInput.Type

/** The arguments of the MCP tool rule_retract: the rule by its ref (rule/<id> or rule/<id>@<n>) and the reason. */
export const RuleRetractArgs = Schema.Struct({ ref: RuleRef, reason: RetractReason })

/** The answer of a retract: the retracted version, the new current version (superseded) and the decision. */
export const RetractResult = Schema.Struct({
  retracted: RuleRef,
  current: RuleRef,
  status: Schema.Literal("superseded"),
  valid_until: Day,
  adoption: Adoption,
  decision: Schema.Struct({
    kind: Schema.Literal("retract"),
    origin: Schema.Literal("grant"),
    version: Schema.Number,
    new_version: Schema.Number,
    decided_by: Schema.String,
    decided_at: Instant,
    reason: Schema.String
  })
})
export type RetractResult = typeof RetractResult.Type
