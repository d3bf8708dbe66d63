/**
 * Graph refusals (graph.md §8): the ErrorBody of architecture.md §6.6 extended by `remedy`, `next`
 * and, per code, `candidates` (duplicate-candidate), `paths` (cycle) or `limit` (depth-limit).
 * One tagged error carries any graph code; HTTP maps `code` with ERROR_STATUS, MCP frames the
 * same body as an isError result.
 */
import { Schema } from "effect"
import type { ErrorCode } from "../domain/errors.js"

export const PathItem = Schema.Struct({ id: Schema.String, name: Schema.String, type: Schema.String })
export type PathItem = typeof PathItem.Type

/** A tool or prompt name the agent may call next, and why (≤ 3 per answer). */
export const Next = Schema.Struct({ tool: Schema.String, why: Schema.String })
export type Next = typeof Next.Type

export const CandidateMatch = Schema.Literal("exact", "alias", "tokens", "typo", "initials", "similar")
export type CandidateMatch = typeof CandidateMatch.Type

export const Candidate = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  type: Schema.String,
  status: Schema.Literal("active", "unconfirmed", "archived"),
  aliases: Schema.Array(Schema.String),
  path: Schema.Array(Schema.String),
  score: Schema.Number,
  match: CandidateMatch
})
export type Candidate = typeof Candidate.Type

export const GraphErrorBody = Schema.Struct({
  error: Schema.String,
  message: Schema.optional(Schema.String),
  current: Schema.optional(Schema.String),
  issues: Schema.optional(Schema.Array(Schema.Unknown)),
  remedy: Schema.String,
  next: Schema.Array(Next).pipe(Schema.maxItems(3)),
  candidates: Schema.optional(Schema.Array(Candidate).pipe(Schema.maxItems(5))),
  paths: Schema.optional(Schema.Struct({ entity: Schema.Array(PathItem), target: Schema.Array(PathItem) })),
  limit: Schema.optional(Schema.Number)
})
export type GraphErrorBody = typeof GraphErrorBody.Type

/** Any refusal of a graph operation, with the contract's code and the guidance envelope. */
export class GraphRefusal extends Schema.TaggedError<GraphRefusal>()("GraphRefusal", {
  errorCode: Schema.String,
  message: Schema.String,
  remedy: Schema.String,
  next: Schema.Array(Next),
  current: Schema.optional(Schema.String),
  issues: Schema.optional(Schema.Array(Schema.Struct({ path: Schema.String, message: Schema.String }))),
  candidates: Schema.optional(Schema.Array(Candidate)),
  paths: Schema.optional(Schema.Struct({ entity: Schema.Array(PathItem), target: Schema.Array(PathItem) })),
  limit: Schema.optional(Schema.Number)
}) {
  get code(): ErrorCode {
    return this.errorCode as ErrorCode
  }
}

export interface RefusalInit {
  readonly message: string
  readonly remedy: string
  readonly next?: ReadonlyArray<Next>
  readonly current?: string
  readonly issues?: ReadonlyArray<{ path: string; message: string }>
  readonly candidates?: ReadonlyArray<Candidate>
  readonly paths?: { entity: ReadonlyArray<PathItem>; target: ReadonlyArray<PathItem> }
  readonly limit?: number
}

export const refuse = (code: ErrorCode, init: RefusalInit): GraphRefusal =>
  new GraphRefusal({
    errorCode: code,
    message: init.message,
    remedy: init.remedy,
    next: (init.next ?? []).slice(0, 3),
    ...(init.current === undefined ? {} : { current: init.current }),
    ...(init.issues === undefined ? {} : { issues: init.issues }),
    ...(init.candidates === undefined ? {} : { candidates: init.candidates.slice(0, 5) }),
    ...(init.paths === undefined ? {} : { paths: init.paths }),
    ...(init.limit === undefined ? {} : { limit: init.limit })
  })

/** The GraphErrorBody of a refusal (graph.md §8). */
export const graphErrorBody = (e: GraphRefusal): GraphErrorBody => ({
  error: e.errorCode,
  message: e.message,
  ...(e.current === undefined ? {} : { current: e.current }),
  ...(e.issues === undefined ? {} : { issues: e.issues }),
  remedy: e.remedy,
  next: e.next,
  ...(e.candidates === undefined ? {} : { candidates: e.candidates }),
  ...(e.paths === undefined ? {} : { paths: e.paths }),
  ...(e.limit === undefined ? {} : { limit: e.limit })
})
