/** Strict decoding into the contract's schemas: 400 validation-failed naming every path. */
import { Effect, type ParseResult, Schema } from "effect"
import { type ValidationFailed, validationFailed } from "./errors.js"
import { STRICT } from "./schemas.js"

export const decodeStrict = <A, I>(schema: Schema.Schema<A, I>, value: unknown, what: string): Effect.Effect<A, ValidationFailed> =>
  Schema.decodeUnknown(schema, STRICT)(value).pipe(Effect.mapError((e: ParseResult.ParseError) => validationFailed(e, what)))
