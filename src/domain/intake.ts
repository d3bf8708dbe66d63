/**
 * intake(): the one way a proposal comes in, for POST /v1/proposals and the MCP tool propose_rule
 * alike (architecture.md §6.3 "Slice A", gaps.md §10, invariants 2 and 12):
 *
 *  1. the secret scan over every text the proposal brings (statement, quote, keywords, speaker,
 *     relation names): a hit is 422 secret-detected and only the secret_finding rows are written;
 *  2. in one transaction of the scope: a repeat by the same grant (every field the caller sent the
 *     same as in the earlier proposal, which is not rejected) answers the existing rule with 200;
 *     anything else is a new proposal: the checks and the insert of §6.3 (source-unknown, quote-not-found,
 *     reference-unknown; rule, version 1, FTS and index rows, possible duplicates), then the
 *     policy (ApprovalPolicy): a classification row for every proposal and, when the outcome is
 *     auto, the adoption (version 2 confirmed, decision origin auto) in the same transaction.
 *
 * completeDraft fills what a caller left out (both doors take ProposalDraft); sentFields says which
 * optional fields the caller sent, for the repeat check.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { AppConfig } from "../config/config.js"
import { ruleRef } from "../contracts/ids.js"
import type { Channel } from "../contracts/schemas.js"
import { dayIn, nowInstant, todayIn } from "../contracts/time.js"
import { ScopeStore } from "../db/scope-store.js"
import type { SecretField } from "../security/secrets.js"
import { PERSON, reviewFacts } from "./adoption.js"
import { ApprovalPolicy, type PolicyVerdict } from "./approval-policy.js"
import { approvalUrl, type ProposalCreated, type ProposalDraft, type ProposalRequest } from "./proposal-schemas.js"
import { ALL_SENT, findRepeat, insertProposal, type OptionalField } from "./proposals.js"
import { currentVersion } from "./rules.js"
import { refuseSecrets } from "./secret-findings.js"

export interface Intaker {
  readonly grantId: string
  readonly channel: Channel
  /** the id of the request's search_log row (null outside the pipeline, e.g. the demo seed) */
  readonly requestId: string | null
}

export interface IntakeResult {
  /** 201 created, 200 an identical repeat answered with the existing rule */
  readonly status: 200 | 201
  readonly created: ProposalCreated
}

/** Every text of a proposal that would be stored, by the name a refusal gives it. */
export const proposalTexts = (req: ProposalRequest): Array<SecretField> => [
  { field: "statement", text: req.statement },
  { field: "source.quote", text: req.source.quote },
  ...(typeof req.source.link === "string" ? [{ field: "source.link", text: req.source.link }] : []),
  ...req.keywords.map((text, i) => ({ field: `keywords[${i}]`, text })),
  ...(req.speaker === null ? [] : [{ field: "speaker", text: req.speaker }]),
  ...req.relations.flatMap((r, i) => [
    { field: `relations[${i}].name`, text: r.name },
    ...(r.ref === null ? [] : [{ field: `relations[${i}].ref`, text: r.ref }])
  ])
]

/** valid.in_force: only a confirmed rule is in force, from valid_from on. */
const validity = (status: string, from: string, until: string | null, today: string): ProposalCreated["valid"] => ({
  from, until, in_force: status === "confirmed" && from <= today && (until === null || today < until)
})

/** The answer for a new proposal after the policy's verdict. */
const answer = (
  ins: { readonly id: string; readonly duplicates: ReadonlyArray<string>; readonly checked: boolean },
  req: ProposalRequest,
  verdict: PolicyVerdict,
  publicUrl: string,
  today: string
): ProposalCreated => {
  const adopted = verdict.adoptedVersion !== null
  const status = adopted ? "confirmed" : "proposed"
  return {
    ref: ruleRef(ins.id, verdict.adoptedVersion ?? 1),
    status,
    quote_check: { checked: ins.checked },
    possible_duplicates: [...ins.duplicates],
    approval_url: approvalUrl(publicUrl, ins.id),
    adoption: adopted ? { kind: "auto", ruleset: verdict.ruleset } : PERSON,
    valid: validity(status, req.valid_from, null, today),
    marking: adopted ? "auto-adopted" : "unconfirmed",
    exceptions: [...verdict.exceptions],
    reasons: [...verdict.reasons]
  }
}

/** The answer for a repeat: the existing rule as it stands now, with its classification's exceptions and reasons. */
const repeatAnswer = (sql: SqlClient, ruleId: string, publicUrl: string, today: string) =>
  Effect.gen(function*() {
    const cur = yield* currentVersion(sql, ruleId)
    if (cur === undefined) return yield* Effect.dieMessage(`repeat of a missing rule ${ruleId}`)
    const facts = yield* reviewFacts(sql, ruleId)
    const classified = yield* sql<{ exceptions: string; reasons: string }>`
      SELECT exceptions, reasons FROM classification WHERE rule_id = ${ruleId} ORDER BY id DESC LIMIT 1`
    const status = cur.status === "confirmed" ? "confirmed" : "proposed"
    const created: ProposalCreated = {
      ref: ruleRef(ruleId, cur.version),
      status,
      quote_check: { checked: !cur.source_id.startsWith("manual:") },
      possible_duplicates: [],
      approval_url: approvalUrl(publicUrl, ruleId),
      adoption: facts.adoption,
      valid: validity(status, cur.valid_from, cur.valid_until, today),
      marking: status !== "confirmed" ? "unconfirmed" : facts.adoption.kind === "auto" ? "auto-adopted" : "human-confirmed",
      exceptions: classified[0] === undefined ? [] : JSON.parse(classified[0].exceptions) as ProposalCreated["exceptions"],
      reasons: classified[0] === undefined ? [] : JSON.parse(classified[0].reasons) as Array<string>
    }
    return created
  })

/**
 * A proposal through the secret scan, the checks, the insert and the policy (see the module
 * comment). `sent` names the optional fields the caller sent (default: all of them); a repeat is
 * only a repeat when those and the required fields are the same. Fails with secret-detected,
 * source-unknown, quote-not-found, reference-unknown or scope-locked; nothing of the proposal is
 * stored on any of them.
 */
export const intake = Effect.fn("Intake.propose")(function*(req: ProposalRequest, by: Intaker, sent: ReadonlySet<OptionalField> = ALL_SENT) {
  yield* refuseSecrets(req.scope, proposalTexts(req), { ...by, operation: "propose" })
  const store = yield* ScopeStore
  const config = yield* AppConfig
  const policy = yield* ApprovalPolicy
  const now = yield* nowInstant
  const today = yield* todayIn(config.file.zone)
  const publicUrl = config.file.public_url
  return yield* store.write(req.scope, ({ sql }) =>
    Effect.gen(function*() {
      const repeat = yield* findRepeat(sql, req, by.grantId, sent)
      if (repeat !== null) {
        return { status: 200, created: yield* repeatAnswer(sql, repeat, publicUrl, today) } satisfies IntakeResult
      }
      const ins = yield* insertProposal(sql, req, by, { now, today })
      const verdict = yield* policy.apply(sql, { scope: req.scope, ruleId: ins.id, request: req, duplicates: ins.duplicates, now })
      return { status: 201, created: answer(ins, req, verdict, publicUrl, today) } satisfies IntakeResult
    })
  )
})

/**
 * The optional fields a caller sent: present and, for said_at, valid_from and a jamie link, not
 * null (null there asks for the default, like leaving the field out).
 */
export const sentFields = (draft: ProposalDraft): ReadonlySet<OptionalField> => {
  const sent = new Set<OptionalField>()
  if (draft.said_at !== undefined && draft.said_at !== null) sent.add("said_at")
  if (draft.valid_from !== undefined && draft.valid_from !== null) sent.add("valid_from")
  if (draft.speaker !== undefined) sent.add("speaker")
  if (draft.relations !== undefined) sent.add("relations")
  if (draft.keywords !== undefined) sent.add("keywords")
  if (draft.supersedes !== undefined) sent.add("supersedes")
  const link = draft.source.link
  if (link !== undefined && (link !== null || draft.source.kind !== "jamie")) sent.add("source.link")
  return sent
}

/**
 * The ProposalRequest of a proposal (POST /v1/proposals or propose_rule): what the caller left
 * out or sent as null where null means the default, filled: said_at = the stored source's
 * occurred_at (manual, or a source that is not stored: now), valid_from = the day of said_at in
 * config.zone, speaker and supersedes null, relations and keywords [], source.link = the stored
 * meeting's link (jamie) or null. An unknown source is refused later by intake (source-unknown),
 * never here.
 */
export const completeDraft = Effect.fn("Intake.completeDraft")(function*(draft: ProposalDraft) {
  const store = yield* ScopeStore
  const config = yield* AppConfig
  const now = yield* nowInstant
  const src = draft.source
  const stored = src.kind === "manual" || (draft.said_at != null && (src.kind !== "jamie" || src.link != null))
    ? undefined
    : (yield* store.read(draft.scope, ({ sql }) =>
      sql<{ occurred_at: string | null; link: string | null; kind: string }>`SELECT occurred_at, link, kind FROM source WHERE id = ${src.id}`))[0]
  const known = stored !== undefined && stored.kind === src.kind ? stored : undefined
  const saidAt = draft.said_at ?? known?.occurred_at ?? now
  const source: ProposalRequest["source"] = src.kind === "jamie"
    // a jamie source that is not stored gets a placeholder link: intake refuses it (source-unknown) before storing anything
    ? { ...src, link: src.link ?? known?.link ?? "https://invalid.example/" }
    : { ...src, link: src.link ?? null }
  const req: ProposalRequest = {
    scope: draft.scope,
    kind: draft.kind,
    statement: draft.statement,
    source,
    said_at: saidAt,
    speaker: draft.speaker ?? null,
    relations: draft.relations ?? [],
    keywords: draft.keywords ?? [],
    valid_from: draft.valid_from ?? dayIn(config.file.zone, Date.parse(saidAt)),
    supersedes: draft.supersedes ?? null
  }
  return req
})
