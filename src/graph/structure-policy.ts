/**
 * StructurePolicy: what the structure writers (entities.ts, links.ts) need of the approval policy,
 * as a port the graph owns and the policy provides (src/decision/policy/structure-live.ts), as
 * ApprovalPolicy is for intake(). Each writer calls it inside its own transaction, after the
 * agent's row is written: in an autonomous or classified scope the policy adopts the change (a
 * review row of origin auto, decided_by policy@<ruleset>) unless a mandatory exception or the
 * daily limit shared with rules holds it for a person (gaps.md §13). Without the port (a writer
 * run outside the composed services) nothing is adopted, as in manual mode.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, Option } from "effect"
import type { Adoption } from "../contracts/schemas.js"

export interface StructureProposal {
  readonly scope: string
  readonly kind: "create" | "move" | "update" | "link"
  /** entity/<id>@<n> (the agent's version) or link/<id> */
  readonly target: string
  /** the agent's channel: the policy's confirm of a create is written on it */
  readonly channel: "mcp" | "api"
  /** the texts an agent wrote (name, aliases, reason, evidence), by field */
  readonly texts: ReadonlyArray<{ readonly field: string; readonly text: string }>
  /** force: true overrode duplicate candidates */
  readonly forcedDuplicate: boolean
  /** nodes a move carries along (the entity and its descendants); 0 otherwise */
  readonly subtree: number
  /** the instant of the writer's transaction */
  readonly now: string
}

/** What the policy did with a structure change; `reasons` say why it was adopted or waits. */
export interface StructureVerdict {
  readonly ruleset: string
  readonly mode: "autonomous" | "classified" | "manual"
  readonly outcome: "auto" | "person"
  readonly exceptions: ReadonlyArray<string>
  readonly reasons: ReadonlyArray<string>
  /** the entity version the policy's confirm wrote (a create), else null */
  readonly adoptedVersion: number | null
}

export interface StructurePolicyShape {
  readonly apply: (sql: SqlClient, proposal: StructureProposal) => Effect.Effect<StructureVerdict, SqlError>
}

export class StructurePolicy extends Context.Tag("Groundnote/StructurePolicy")<StructurePolicy, StructurePolicyShape>() {}

/** The policy's part of a write answer: who adopted it and, when it waits, why. */
export interface PolicyPart {
  readonly adoption: Adoption
  readonly policy: { readonly outcome: "auto" | "person"; readonly mode: string; readonly exceptions: ReadonlyArray<string>; readonly reasons: ReadonlyArray<string> }
}

const MANUAL: PolicyPart = {
  adoption: { kind: "person" },
  policy: { outcome: "person", mode: "manual", exceptions: [], reasons: ["Manual mode: a person reviews every structure change in this scope."] }
}

/** Runs the policy when it is composed (else the answer of manual mode). */
export const applyStructurePolicy = (sql: SqlClient, proposal: StructureProposal): Effect.Effect<PolicyPart, SqlError> =>
  Effect.flatMap(Effect.serviceOption(StructurePolicy), (port) =>
    Option.isNone(port)
      ? Effect.succeed(MANUAL)
      : Effect.map(port.value.apply(sql, proposal), (v): PolicyPart => ({
        adoption: v.outcome === "auto" ? { kind: "auto", ruleset: v.ruleset } : { kind: "person" },
        policy: { outcome: v.outcome, mode: v.mode, exceptions: v.exceptions, reasons: v.reasons }
      })))
