/**
 * decide(): the person path of the decision (architecture.md §6.4, invariant 2). Reachable only
 * from POST /v1/rules/:id/decision and POST /v1/decisions on the approval channel (AT2). One
 * transaction per decision — or per bulk request of one scope, every item its own rows:
 * version row(s), one decision row (origin grant), rule_fts / rejected_fts.
 *
 * A rule the policy adopted (its newest confirm/review decision is the policy's) is confirmed and
 * still retractable; a person may then confirm it (a new version, confirmed by the person: that
 * ends retractability, and the change fields apply as for a proposal), review it (also ends
 * retractability) or revoke it. A reject of any confirmed rule is 409 already-decided (§6.4):
 * agents read it while it was in force, so it is revoked from a day and as_of reads of the days
 * before still show it.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect, type ParseResult, Schema } from "effect"
import { ftsColumns, syncRuleFts } from "../db/fts.js"
import { ScopeStore } from "../db/scope-store.js"
import {
  AlreadyDecided,
  NotFound,
  ReasonMissing,
  ReferenceUnknown,
  SourceImmutable,
  ValidationFailed,
  validationFailed,
  VersionOutdated
} from "../contracts/errors.js"
import { bulkItems, forItem, itemRefusal, namedTwice } from "../contracts/bulk.js"
import { RULE_ID_RE, ruleRef, scopeOfRuleId } from "../contracts/ids.js"
import { STRICT } from "../contracts/schemas.js"
import { reviewFacts } from "../domain/adoption.js"
import { currentVersion, type RuleVersionRow } from "../domain/rules.js"
import { RuleIndex } from "../domain/rule-index.js"
import { nowInstant } from "../contracts/time.js"
import { type Change, DecisionRequest, type DecisionResult, IMMUTABLE_CHANGE_FIELDS } from "../domain/decision-schemas.js"

/** The deciding person: grant id and the e-mail from the verified credential. */
export interface Person {
  readonly grantId: string
  readonly identity: string
}


const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * The checks before the schema, in the contract's order: source-immutable, then reason-missing,
 * then validation-failed.
 */
export const parseDecision = (raw: unknown): Effect.Effect<DecisionRequest, SourceImmutable | ReasonMissing | ValidationFailed> =>
  Effect.gen(function*() {
    if (isRecord(raw) && isRecord(raw.change)) {
      const named = IMMUTABLE_CHANGE_FIELDS.filter((f) => f in (raw.change as Record<string, unknown>))
      if (named.length > 0) {
        return yield* new SourceImmutable({
          message: `the quote and its source never change (change names ${named.join(", ")}); propose a new rule instead`
        })
      }
    }
    if (isRecord(raw) && (raw.decision === "reject" || raw.decision === "revoke")) {
      if (typeof raw.reason !== "string" || raw.reason.trim().length === 0) {
        return yield* new ReasonMissing({ message: `a ${raw.decision} needs a non-blank reason` })
      }
    }
    return yield* Schema.decodeUnknown(DecisionRequest, STRICT)(raw).pipe(
      Effect.mapError((e: ParseResult.ParseError) => validationFailed(e, "decision"))
    )
  })

const insertVersion = (sql: SqlClient, v: RuleVersionRow) =>
  sql`INSERT INTO rule_version (rule_id, version, kind, statement, source_id, quote, timestamp_s, source_link, said_at,
      speaker, relations, keywords, valid_from, valid_until, supersedes, superseded_by, status, reason, changed_by, changed_at)
    VALUES (${v.rule_id}, ${v.version}, ${v.kind}, ${v.statement}, ${v.source_id}, ${v.quote}, ${v.timestamp_s},
      ${v.source_link}, ${v.said_at}, ${v.speaker}, ${v.relations}, ${v.keywords}, ${v.valid_from}, ${v.valid_until},
      ${v.supersedes}, ${v.superseded_by}, ${v.status}, ${v.reason}, ${v.changed_by}, ${v.changed_at})`.raw

const applyChange = (v: RuleVersionRow, change: Change | undefined): RuleVersionRow => {
  if (change === undefined) return v
  return {
    ...v,
    ...(change.statement !== undefined ? { statement: change.statement } : {}),
    ...(change.kind !== undefined ? { kind: change.kind } : {}),
    ...(change.keywords !== undefined ? { keywords: JSON.stringify(change.keywords) } : {}),
    ...(change.relations !== undefined ? { relations: JSON.stringify(change.relations) } : {}),
    ...(change.valid_from !== undefined ? { valid_from: change.valid_from } : {}),
    ...(change.said_at !== undefined ? { said_at: change.said_at } : {}),
    ...(change.speaker !== undefined ? { speaker: change.speaker } : {}),
    ...(change.supersedes !== undefined ? { supersedes: change.supersedes } : {})
  }
}

const invalid = (path: string, message: string) =>
  new ValidationFailed({ message: `decision is invalid: ${path}: ${message}`, issues: [{ path, message }] })

/**
 * Applies a person's decision to rule `ruleId`. Checks in this order: source-immutable,
 * reason-missing, validation-failed, not-found, already-decided (rejected/superseded),
 * version-outdated, already-decided (confirm/reject on confirmed), validation-failed
 * (revoke/review on proposed). Every 409 carries current: rule/<id>@<n>.
 */
export const decide = (ruleId: string, raw: unknown, person: Person) =>
  Effect.flatMap(parseDecision(raw), (req) => applyDecision(ruleId, req, person))

/** decide() after parseDecision: from the not-found check on. */
export const applyDecision = Effect.fn("Decision.apply")(function*(ruleId: string, req: DecisionRequest, person: Person) {
  const notFound = new NotFound({ message: `no rule ${ruleId}` })
  if (!RULE_ID_RE.test(ruleId)) return yield* notFound
  const store = yield* ScopeStore
  const index = yield* RuleIndex
  const scope = scopeOfRuleId(ruleId)
  if (!store.configured.includes(scope)) return yield* notFound
  const now = yield* nowInstant
  return yield* store.write(scope, ({ sql }) => decideIn(sql, { scope, index, person, now }, ruleId, req))
})

/** One decision of a bulk request: the rule and its parsed decision. */
export interface DecisionItem {
  readonly rule_id: string
  readonly req: DecisionRequest
}

/** The answer of a bulk decision: how many were decided and each rule's current version afterwards, in the items' order. */
export interface BulkDecisionResult {
  readonly decided: number
  readonly current: ReadonlyArray<string>
}

/**
 * The body of POST /v1/decisions, `{items: [{rule_id, decision, version, reason?, valid_until?,
 * change?}]}`: 1 to MAX_BULK_ITEMS items, each checked as a single decision (parseDecision) in
 * order, a rule named once; a refusal names its item with the single decision's code.
 */
export const parseDecisions = (raw: unknown): Effect.Effect<ReadonlyArray<DecisionItem>, SourceImmutable | ReasonMissing | ValidationFailed> =>
  Effect.gen(function*() {
    const items = yield* bulkItems(raw, "decisions")
    const seen = new Map<string, number>()
    const out: Array<DecisionItem> = []
    for (const [i, item] of items.entries()) {
      const { rule_id: ruleId, ...decision } = item
      if (typeof ruleId !== "string" || !RULE_ID_RE.test(ruleId)) {
        return yield* invalid(`items[${i}].rule_id`, "must be a rule id like sales-0001")
      }
      const first = seen.get(ruleId)
      if (first !== undefined) return yield* namedTwice("decisions", i, first, "rule_id")
      seen.set(ruleId, i)
      out.push({ rule_id: ruleId, req: yield* forItem(i, `rule/${ruleId}`, parseDecision(decision)) })
    }
    return out
  })

/**
 * Applies a person's decisions on rules of one scope in one write transaction, each its own
 * version(s) and decision row as decide() writes them; the first refused item refuses them all
 * (nothing written) and is named in the refusal (itemRefusal).
 */
export const applyDecisions = Effect.fn("Decision.applyMany")(function*(items: ReadonlyArray<DecisionItem>, person: Person) {
  const store = yield* ScopeStore
  const index = yield* RuleIndex
  const scopes = [...new Set(items.map((i) => scopeOfRuleId(i.rule_id)))]
  const scope = scopes[0]
  if (scope === undefined) return yield* invalid("items", "is empty: name at least one item")
  if (scopes.length > 1) return yield* invalid("items", `name rules of one scope (${scopes.join(", ")}): one request per scope`)
  const now = yield* nowInstant
  const unknown = items.findIndex((i) => !store.configured.includes(scopeOfRuleId(i.rule_id)))
  if (unknown >= 0) return yield* itemRefusal(new NotFound({ message: `no rule ${items[unknown]?.rule_id ?? ""}` }), unknown, `rule/${items[unknown]?.rule_id ?? ""}`)
  return yield* store.write(scope, ({ sql }) =>
    Effect.gen(function*() {
      const current: Array<string> = []
      for (const [i, item] of items.entries()) {
        const done = yield* forItem(i, ruleRef(item.rule_id, item.req.version), decideIn(sql, { scope, index, person, now }, item.rule_id, item.req))
        current.push(done.current)
      }
      return { decided: current.length, current } satisfies BulkDecisionResult
    }))
})

interface Writing {
  readonly scope: string
  readonly index: typeof RuleIndex.Service
  readonly person: Person
  readonly now: string
}

/** One decision inside the caller's write transaction: the checks from not-found on, then the rows. */
const decideIn = (sql: SqlClient, w: Writing, ruleId: string, req: DecisionRequest) => {
  const { scope, index, person, now } = w
  const notFound = new NotFound({ message: `no rule ${ruleId}` })
  return Effect.gen(function*() {
      const cur = yield* currentVersion(sql, ruleId)
      if (cur === undefined) return yield* notFound
      const current = ruleRef(ruleId, cur.version)
      if (cur.status === "rejected" || cur.status === "superseded") {
        // a revoke stores "superseded" without a successor: the person reads what happened to the rule
        const what = cur.status === "rejected" ? "rejected"
          : cur.superseded_by === null ? `revoked (valid until ${cur.valid_until ?? "its end"})`
          : `superseded by ${cur.superseded_by}`
        return yield* new AlreadyDecided({ message: `rule ${ruleId} is ${what}`, current })
      }
      if (req.version !== cur.version) {
        return yield* new VersionOutdated({ message: `version ${req.version} is not the current version ${cur.version}`, current })
      }
      if (req.decision === "reject" && cur.status === "confirmed") {
        // agents may have read a confirmed rule (also an auto-adopted one): a reject would hide it from
        // as_of reads of those days; a revoke ends it from a day and keeps the history
        return yield* new AlreadyDecided({
          message: `rule ${ruleId} is confirmed already; a confirmed rule is revoked, not rejected`,
          current,
          remedy: `send decision revoke with version ${cur.version}, valid_until (the first day it no longer applies) and a reason`
        })
      }
      if (req.decision === "confirm" && cur.status === "confirmed") {
        // a rule the policy adopted: a person confirms it (ends retractability)
        const adopted = (yield* reviewFacts(sql, ruleId)).adoption.kind === "auto"
        if (!adopted) return yield* new AlreadyDecided({ message: `rule ${ruleId} is confirmed already`, current })
      }
      if ((req.decision === "revoke" || req.decision === "review") && cur.status === "proposed") {
        return yield* invalid("decision", `a ${req.decision} needs a confirmed rule; this one is proposed`)
      }

      const base = { ...cur, version: cur.version + 1, changed_by: person.grantId, changed_at: now }
      let newVersion: number | null = base.version
      switch (req.decision) {
        case "confirm": {
          const next: RuleVersionRow = { ...applyChange(base, req.change), status: "confirmed", reason: req.reason ?? "confirmed" }
          const pred = next.supersedes === null ? undefined : yield* predecessor(sql, scope, ruleId, next)
          yield* insertVersion(sql, next)
          if (pred !== undefined) {
            yield* insertVersion(sql, {
              ...pred, version: pred.version + 1, status: "superseded", valid_until: next.valid_from,
              superseded_by: ruleId, reason: `superseded by ${ruleId}`, changed_by: person.grantId, changed_at: now
            })
            yield* syncRuleFts(sql, pred.rule_id)
            yield* index.reindexRule(sql, pred.rule_id)
          }
          break
        }
        case "reject":
          yield* insertVersion(sql, { ...base, status: "rejected", reason: req.reason })
          break
        case "revoke":
          if (req.valid_until < cur.valid_from) {
            return yield* invalid("valid_until", `must not be before valid_from ${cur.valid_from}`)
          }
          yield* insertVersion(sql, { ...base, status: "superseded", valid_until: req.valid_until, superseded_by: null, reason: req.reason })
          break
        case "review": {
          const keywords = req.change === undefined ? cur.keywords : JSON.stringify(req.change.keywords)
          if (keywords === cur.keywords) newVersion = null
          else yield* insertVersion(sql, { ...base, keywords, reason: req.reason ?? "reviewed" })
          break
        }
      }
      const reason = req.reason ?? null
      yield* sql`INSERT INTO decision (rule_id, version, kind, origin, decided_by, decided_by_identity, decided_at, reason, new_version)
        VALUES (${ruleId}, ${cur.version}, ${req.decision}, 'grant', ${person.grantId}, ${person.identity}, ${now}, ${reason}, ${newVersion})`.raw
      yield* syncRuleFts(sql, ruleId)
      yield* index.reindexRule(sql, ruleId)
      if (req.decision === "reject") {
        const rows = yield* sql<{ seq: number }>`SELECT seq FROM rule WHERE id = ${ruleId}`
        const c = ftsColumns(cur)
        yield* sql`INSERT INTO rejected_fts (rowid, keywords, statement, relations, quote)
          VALUES (${rows[0]?.seq ?? 0}, ${c.keywords}, ${c.statement}, ${c.relations}, ${c.quote})`.raw
      }
      const result: DecisionResult = {
        decision: {
          kind: req.decision, version: cur.version, origin: "grant", mode: null, decided_by: person.grantId, decided_at: now, reason,
          new_version: newVersion
        },
        current: ruleRef(ruleId, newVersion ?? cur.version)
      }
      return result
    })
}

/** The rule a confirmed successor supersedes: a confirmed rule of the same scope, not itself. */
const predecessor = (sql: SqlClient, scope: string, ruleId: string, next: RuleVersionRow) =>
  Effect.gen(function*() {
    const id = next.supersedes as string
    const pred = id !== ruleId && scopeOfRuleId(id) === scope ? yield* currentVersion(sql, id) : undefined
    if (pred === undefined || pred.status !== "confirmed") {
      return yield* new ReferenceUnknown({ message: `supersedes: ${id} is not a confirmed rule of scope ${scope}` })
    }
    if (next.valid_from < pred.valid_from) {
      return yield* invalid("valid_from", `the successor's valid_from must not be before ${pred.valid_from}, the valid_from of ${id}`)
    }
    return pred
  })
