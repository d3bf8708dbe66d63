/** Failures of our own storage, and the mapping of trigger refusals (stack.md). */
import type { SqlError } from "@effect/sql/SqlError"
import { Schema } from "effect"

/** The message of a `RAISE(ABORT, '…')` inside a trigger, or null for any other SQL failure. */
export const triggerMessage = (error: SqlError): string | null => {
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined
  if (cause !== undefined && cause.code === "SQLITE_CONSTRAINT_TRIGGER" && typeof cause.message === "string") {
    return cause.message
  }
  return null
}

/** SQLite's own code of a failure (SQLITE_CONSTRAINT_CHECK, SQLITE_CORRUPT, …), or null. */
export const sqliteCode = (error: SqlError): string | null => {
  const cause = error.cause as { code?: unknown } | undefined
  return cause !== undefined && typeof cause.code === "string" ? cause.code : null
}

/** A file could not be opened as one of ours. The reason is for the log, never for a response. */
export class StoreOpenError extends Schema.TaggedError<StoreOpenError>()("StoreOpenError", {
  file: Schema.String,
  reason: Schema.String
}) {}

/** The file was written by a newer Groundnote: refuse to open it and change nothing. */
export class UnknownSchemaVersion extends Schema.TaggedError<UnknownSchemaVersion>()("UnknownSchemaVersion", {
  file: Schema.String,
  found: Schema.Number,
  known: Schema.Number
}) {}
