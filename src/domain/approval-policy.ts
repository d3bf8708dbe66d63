/**
 * ApprovalPolicy: what intake() needs of the approval policy, as a port the domain owns and the
 * policy provides (src/decision/policy/live.ts), as RuleIndex is for the search. intake() calls
 * it inside the proposal's transaction, after the proposal's rows are written: the policy
 * classifies the proposal, records the classification and, when the outcome is auto, adopts it
 * (gaps.md §10, invariant 2). The domain therefore never imports src/decision, which reads the
 * domain's rules (no folder cycle; AT2c bounds who imports the policy).
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Context, type Effect } from "effect"
import type { ApprovalMode } from "../config/schema.js"
import type { ExceptionCode } from "../contracts/schemas.js"
import type { ProposalRequest } from "./proposal-schemas.js"

export interface PolicyProposal {
  readonly scope: string
  /** the new rule (its version 1 is the proposal) */
  readonly ruleId: string
  readonly request: ProposalRequest
  /** possible_duplicates of the proposal (rule/<id>@<n>) */
  readonly duplicates: ReadonlyArray<string>
  /** the instant of the proposal's transaction */
  readonly now: string
}

export interface PolicyVerdict {
  readonly ruleset: string
  readonly class: string
  /** the mandatory exceptions that apply, by name */
  readonly exceptions: ReadonlyArray<ExceptionCode>
  readonly mode: ApprovalMode
  readonly outcome: "auto" | "person"
  /** the class reason, then why it was adopted or why it waits for a person */
  readonly reasons: ReadonlyArray<string>
  /** the version the policy confirmed (2), or null when it waits for a person */
  readonly adoptedVersion: number | null
}

export interface ApprovalPolicyShape {
  readonly apply: (sql: SqlClient, proposal: PolicyProposal) => Effect.Effect<PolicyVerdict, SqlError>
}

export class ApprovalPolicy extends Context.Tag("Groundnote/ApprovalPolicy")<ApprovalPolicy, ApprovalPolicyShape>() {}
