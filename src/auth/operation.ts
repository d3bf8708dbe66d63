/**
 * What the scope-check pipeline runs (architecture.md §5.2 steps 2–6), written once per
 * operation and shared by every door: the HTTP routes of /v1, the MCP tools and (through the
 * request schemas) the CLI. An Operation is transport-neutral: a typed input schema (the
 * decoded request, never re-encoded strings), the scopes it touches, its right and its run. The
 * caller comes from the CurrentCaller tag, never from an argument.
 */
import type { HttpServerResponse } from "@effect/platform"
import type { SqlError } from "@effect/sql/SqlError"
import type { Effect, Schema } from "effect"
import type { DomainError } from "../contracts/errors.js"
import type { Right } from "../contracts/grants.js"
import type { LogOperation } from "../db/search-log.js"
import type { Caller, CurrentCaller } from "./caller.js"

/**
 * The operations of a redaction (gaps.md §12): their search_log row is left out (step 6). The
 * request holds the term, which search_log must never collect (not even as an unsalted hash of the
 * request), and the scope's `redaction` table is their record: who, when, why, how many places.
 */
export const UNLOGGED_OPERATIONS = ["preview_redaction", "redact", "list_redactions"] as const
export type UnloggedOperation = (typeof UNLOGGED_OPERATIONS)[number]

/** The search_log operations (read_source among them since scope migration 0004), and the redaction's. */
export type OperationName = LogOperation | UnloggedOperation

/** Whether step 6 writes a search_log row for the operation. */
export const isLogged = (name: OperationName): name is LogOperation => !(UNLOGGED_OPERATIONS as ReadonlyArray<string>).includes(name)

/** The fields of a search's search_log row. */
export interface SearchLogFields {
  readonly terms: unknown
  readonly variants: unknown
  readonly stages: unknown
}

/** A file answer (the export archive): bytes with its type and file name. */
export interface FileBody {
  readonly _tag: "File"
  readonly bytes: Uint8Array
  readonly contentType: string
  readonly filename: string
}

/** A JSON answer already rendered as UTF-8 bytes (a search, rendered where it ran): sent as it is. */
export interface JsonBytes {
  readonly _tag: "JsonBytes"
  readonly bytes: Uint8Array
}

export const jsonBytes = (bytes: Uint8Array): JsonBytes => ({ _tag: "JsonBytes", bytes })

export const isJsonBytes = (body: unknown): body is JsonBytes =>
  typeof body === "object" && body !== null && (body as { _tag?: unknown })._tag === "JsonBytes"

const decoder = new TextDecoder()

/** The value of a body: JsonBytes parsed (a door that needs the object, like an MCP result), else the body itself. */
export const bodyValue = (body: unknown): unknown => (isJsonBytes(body) ? JSON.parse(decoder.decode(body.bytes)) as unknown : body)

export interface Outcome {
  /** HTTP-equivalent status (search_log.outcome) */
  readonly status: number
  readonly body?: unknown
  /** a page of the approval channel (HTML, a redirect): only the page calls of src/approval answer one */
  readonly response?: HttpServerResponse.HttpServerResponse
  readonly refs: ReadonlyArray<string>
  /** search only */
  readonly log?: SearchLogFields
  /** rows that differ per scope (search: each scope's head refs and terms) */
  readonly perScope?: ReadonlyArray<{ readonly scope: string; readonly refs: ReadonlyArray<string>; readonly log?: SearchLogFields }>
}

/** What the pipeline hands to run besides the input: the touched scopes (opened) and the request id. */
export interface CallContext {
  readonly scopes: ReadonlyArray<string>
  /** the id of the search_log rows of this request (search_id of a search) */
  readonly requestId: string
}

/** The pipeline's view of one call: its name and right, the scopes of its input, and run. */
export interface Call<I, R> {
  readonly name: OperationName
  readonly right: Right
  /** the requested scopes, from parameters and from the id of every ref; "grant" = grant-wide */
  readonly scopes: (input: I, caller: Caller) => ReadonlyArray<string> | "grant"
  readonly crossScope?: (input: I) => boolean
  /** refs named by the request, logged with a failed outcome */
  readonly refs?: (input: I) => ReadonlyArray<string>
  /** a failure of our own storage (SqlError) is 500 internal */
  readonly run: (input: I, call: CallContext) => Effect.Effect<Outcome, DomainError | SqlError, R | CurrentCaller>
}

/** An operation: a Call with its input schema (decoded strictly in step 2) and the label of its validation messages. */
export interface Operation<I, R> extends Call<I, R> {
  /** the decoded input of the operation: the server's request schema (its encoded side is what a client sends) */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a schema's encoded side is invariant
  readonly input: Schema.Schema<I, any, never>
  /** names the input in a validation message ("proposal is invalid: …") */
  readonly label: string
  /** checks of step 2 beyond the schema (a malformed id is the 404 of an unknown one) */
  readonly check?: (input: I) => Effect.Effect<void, DomainError>
}

/** Types an operation (I from its schema). */
export const operation = <I, R>(op: Operation<I, R>): Operation<I, R> => op
