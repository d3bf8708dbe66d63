/**
 * How `litestream restore` reads the replica of one file (gaps.md §12 R5):
 *
 *   not keyed   Litestream's own config finds the replica (LITESTREAM_CONFIG or /etc/litestream.yml)
 *   keyed       a temporary config with the file's entry as `groundnote backup litestream-config`
 *               prints it (backup.target, backup.prefix) plus `age: {identities: [...]}` from
 *               GROUNDNOTE_KEY_DIR, written 0600 into the caller's private directory and removed
 *               after the restore. No identity: IdentityMissing, never a restore without it.
 *
 * Keyed means: ops.sqlite of the data dir has a recipient row for the file (retired ones count:
 * older generations are encrypted to them). Without ops.sqlite (a lost data dir) an identity
 * file in GROUNDNOTE_KEY_DIR is what says so.
 */
import { randomUUID } from "node:crypto"
import { closeSync, existsSync, openSync, rmSync, writeSync } from "node:fs"
import { join, resolve } from "node:path"
import { Data, Effect } from "effect"
import type { IdentityMissing } from "../contracts/errors.js"
import { type BackupFile, filePathIn, OPS_FILE_NAME } from "./fetch.js"
import { keyOf, type LitestreamDb, type LitestreamTarget, replicaUrl, restoreConfigText } from "./litestream-config.js"
import { hasIdentityFile, readIdentities, readKeyRecipients } from "./litestream-keys.js"

export type Keying =
  | { readonly keyed: false }
  | { readonly keyed: true; readonly db: LitestreamDb; readonly identities: ReadonlyArray<string> }

export class KeyingFailed extends Data.TaggedError("KeyingFailed")<{ readonly code: string; readonly message: string }> {}

export interface KeyingInput {
  readonly dataDir: string
  readonly file: BackupFile
  readonly env: Readonly<Record<string, string | undefined>>
  /** backup.target and backup.prefix; null with kind copy */
  readonly replica: LitestreamTarget | null
}

/** Whether the file's replica is encrypted, and with a keyed one its entry and identities. */
export const keyingFor = (input: KeyingInput): Effect.Effect<Keying, IdentityMissing | KeyingFailed> =>
  Effect.gen(function*() {
    const key = keyOf(input.file)
    const opsFile = join(resolve(input.dataDir), OPS_FILE_NAME)
    let keyed: boolean
    let active: ReadonlyArray<string> = []
    if (existsSync(opsFile)) {
      const recipients = yield* readKeyRecipients(opsFile).pipe(
        Effect.mapError((e) => new KeyingFailed({ code: "recipients-unreadable", message: e.message }))
      )
      keyed = recipients.keyed.has(key)
      active = recipients.active.get(key) ?? []
    } else {
      keyed = hasIdentityFile(input.env, key)
    }
    if (!keyed) return { keyed: false } as const
    const identities = yield* readIdentities(input.env, key)
    if (input.replica === null) {
      return yield* new KeyingFailed({
        code: "replica-unknown",
        message: "the replica is encrypted: its restore needs backup.target and backup.prefix of backup kind litestream in groundnote.json"
      })
    }
    const db: LitestreamDb = {
      file: input.file,
      path: filePathIn(resolve(input.dataDir), input.file),
      url: replicaUrl(input.replica, input.file),
      recipients: active
    }
    return { keyed: true, db, identities } as const
  })

/**
 * Writes the temporary restore config of a keyed file into `dir` (a private directory of the
 * caller), mode 0600, never over an existing file; the scope removes it.
 */
export const temporaryRestoreConfig = (dir: string, db: LitestreamDb, identities: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const path = join(dir, `.litestream-restore-${randomUUID()}.yml`)
      const fd = openSync(path, "wx", 0o600)
      try {
        writeSync(fd, restoreConfigText(db, identities))
      } finally {
        closeSync(fd)
      }
      return path
    }),
    (path) => Effect.sync(() => rmSync(path, { force: true }))
  )
