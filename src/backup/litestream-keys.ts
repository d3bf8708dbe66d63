/**
 * The keys of Litestream replicas (gaps.md §12 R5), read where the Litestream code needs them:
 *
 *   readKeyRecipients(ops.sqlite)   the ops table key_recipient (ops migration 0006) on a
 *                                   read-only connection: the active recipients per scope (null =
 *                                   the instance, i.e. ops.sqlite) and which files are keyed (any
 *                                   recipient ever, retired ones too: older copies are encrypted)
 *   readIdentities(env, scope)      `$GROUNDNOTE_KEY_DIR/<scope>.age-identity` (the instance's:
 *                                   `_instance.age-identity`, a name no scope can have); without a
 *                                   readable identity IdentityMissing, never a plaintext fallback
 *
 * The table's one query lives here and nowhere else in the Litestream code.
 */
import { existsSync } from "node:fs"
import { join } from "node:path"
import { Data, Effect } from "effect"
import { openConnection } from "../db/connection.js"
import { identityFileName, keyDirOf, readIdentity } from "../keys/identity-file.js"

export { identityFileName, INSTANCE_IDENTITY_FILE, KEY_DIR_VARIABLE } from "../keys/identity-file.js"

export interface KeyRecipients {
  /** active (not retired) recipients per scope, oldest first; null is the instance */
  readonly active: ReadonlyMap<string | null, ReadonlyArray<string>>
  /** scopes (null: the instance) with any recipient row, retired or not */
  readonly keyed: ReadonlySet<string | null>
}

export class RecipientsUnreadable extends Data.TaggedError("RecipientsUnreadable")<{ readonly message: string }> {}

/** Nothing keyed. */
export const NO_RECIPIENTS: KeyRecipients = { active: new Map(), keyed: new Set() }

/** The recipients in ops.sqlite (read-only; the service may run). */
export const readKeyRecipients = (opsFile: string): Effect.Effect<KeyRecipients, RecipientsUnreadable> =>
  Effect.scoped(Effect.gen(function*() {
    const sql = yield* openConnection(opsFile, { readonly: true }).pipe(
      Effect.mapError((e) => new RecipientsUnreadable({ message: `${opsFile} cannot be opened: ${e.reason}` }))
    )
    const rows = yield* sql.unsafe<{ scope: string | null; recipient: string; retired: number }>(
      "SELECT scope, recipient, retired_at IS NOT NULL AS retired FROM key_recipient ORDER BY seq"
    ).pipe(Effect.mapError((e) => new RecipientsUnreadable({ message: `${opsFile}: key_recipient cannot be read: ${String(e.cause)}` })))
    const active = new Map<string | null, Array<string>>()
    const keyed = new Set<string | null>()
    for (const row of rows) {
      keyed.add(row.scope)
      if (row.retired === 0) active.set(row.scope, [...(active.get(row.scope) ?? []), row.recipient])
    }
    return { active, keyed }
  }))

/** The age identities of `scope` (null: the instance) from GROUNDNOTE_KEY_DIR (src/keys/identity-file.ts). */
export const readIdentities = readIdentity

/** Whether an identity file for `scope` exists in GROUNDNOTE_KEY_DIR (a lost data dir: nothing says what was keyed). */
export const hasIdentityFile = (env: Readonly<Record<string, string | undefined>>, scope: string | null): boolean => {
  const dir = keyDirOf(env)
  return dir !== null && existsSync(join(dir, identityFileName(scope)))
}
