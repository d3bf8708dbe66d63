/** A reason to refuse start (architecture.md §3): its code and a message that names the fix, never a secret's value. */
import { Effect, Schema } from "effect"

export class StartRefusal extends Schema.TaggedError<StartRefusal>()("StartRefusal", {
  code: Schema.String,
  message: Schema.String,
  /** config-invalid only: every problem of groundnote.json with its path */
  issues: Schema.optional(Schema.Array(Schema.Struct({ path: Schema.String, message: Schema.String })))
}) {}

export const refuse = (code: string, message: string): Effect.Effect<never, StartRefusal> =>
  Effect.fail(new StartRefusal({ code, message }))
