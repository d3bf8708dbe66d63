/** Request schemas of the ops socket (gaps.md §3) that the CLI validates with too. */
import { Schema } from "effect"
import { ScopeName } from "./ids.js"

/** Largest request body the ops listener reads (256 KiB); more → 413 payload-too-large. */
export const OPS_BODY_LIMIT = 256 * 1024

/** POST /ops/grants/:id/rename */
export const GrantRename = Schema.Struct({
  label: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200))
})

/** POST /ops/scopes */
export const ScopeCreate = Schema.Struct({ name: ScopeName })

/** POST /ops/backup/run: no body, or an empty object (every key is refused). */
export const BackupRunRequest = Schema.Record({
  key: Schema.String,
  value: Schema.Never.annotations({ message: () => "unknown key (remove it): backup run takes no options" })
})

/** POST /ops/backup/probe and /ops/backup/verify: every created scope, or the named one. */
export const BackupScopeRequest = Schema.Struct({ scope: Schema.optional(ScopeName) })
export type BackupScopeRequest = typeof BackupScopeRequest.Type
