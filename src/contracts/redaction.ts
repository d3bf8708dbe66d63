/**
 * Redaction (gaps.md §12, architecture.md §15.2 R3/R4): the marker, a place, the request and
 * answer bodies of POST /v1/redactions/preview and POST /v1/redactions. The term is never stored,
 * logged or answered back; a redaction keeps only a salted hash of it.
 */
import { Schema } from "effect"
import { ScopeName } from "./ids.js"

/** What replaces every occurrence of a redacted term, in place. */
export const REDACTED_MARKER = "[redacted]"

/** A term shorter than this (after trimming) is refused with validation-failed. */
export const MIN_TERM_CHARS = 3

/**
 * One column of one row where a redaction replaces text: the row's key is the JSON array of its
 * primary-key values in the table's key order (rule_version `["sales-0001", 2]`, source
 * `["mail:…"]`, decision `[12]`); `ranges` are the [start, end) UTF-16 offsets of the text as it
 * was before, ascending and not overlapping.
 */
export interface RedactionPlace {
  readonly table: string
  readonly column: string
  readonly key: ReadonlyArray<string | number>
  readonly ranges: ReadonlyArray<readonly [number, number]>
}

const Term = Schema.String.pipe(Schema.filter((s) => s.trim().length >= MIN_TERM_CHARS, {
  message: () => `a term has at least ${MIN_TERM_CHARS} characters`
}), Schema.maxLength(200))

export const RedactionPreviewRequest = Schema.Struct({ scope: ScopeName, term: Term })
export type RedactionPreviewRequest = typeof RedactionPreviewRequest.Type

export const RedactionPlaceOut = Schema.Struct({
  table: Schema.String,
  column: Schema.String,
  /** the row's key as text: its primary-key values joined by "/" */
  key: Schema.String,
  count: Schema.Number
})
export type RedactionPlaceOut = typeof RedactionPlaceOut.Type

export const RedactionPreviewOut = Schema.Struct({
  scope: ScopeName,
  /** how many occurrences, over every place */
  total: Schema.Number,
  places: Schema.Array(RedactionPlaceOut),
  /** refs (`rule/<id>@<version>`) of the rules whose evidence or text a place touches */
  rules: Schema.Array(Schema.String),
  /** a digest of the places; the confirmation sends it back and is refused when it no longer matches */
  preview: Schema.String,
  /** identifier columns (ids, message ids, refs, dates) that hold the term: they stay as they are */
  kept: Schema.Array(Schema.Struct({ table: Schema.String, column: Schema.String, count: Schema.Number }))
})
export type RedactionPreviewOut = typeof RedactionPreviewOut.Type

export const RedactionCreate = Schema.Struct({
  scope: ScopeName,
  term: Term,
  reason: Schema.String.pipe(Schema.filter((s) => s.trim().length >= 1, { message: () => "a reason is required" }),
    Schema.maxLength(500)),
  preview: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(128))
})
export type RedactionCreate = typeof RedactionCreate.Type

export const RedactionCreated = Schema.Struct({
  id: Schema.String,
  scope: ScopeName,
  total: Schema.Number,
  /** only when the WAL checkpoint after the redaction did not complete (another process reads the file) */
  checkpointed: Schema.optional(Schema.Literal(false))
})
export type RedactionCreated = typeof RedactionCreated.Type
