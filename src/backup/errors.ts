/**
 * Refusals of backup run, probe, verify and restore (architecture.md §11, gaps.md §4). Each is a
 * tagged error with the contract's code (the `code` getter, as in src/domain/errors.ts). The
 * ops routes answer the first four with 409; restore refusals end the CLI with exit 1 and their
 * own code, a failed restore check with exit 3.
 *
 * Messages name paths: ops answers and CLI output go to the data dir's owner only (§11).
 */
import { Schema } from "effect"

/** A second run, probe or verify while one is running (the in-process lock, lock.ts). */
export class BackupRunning extends Schema.TaggedError<BackupRunning>()("BackupRunning", {
  message: Schema.String,
  /** what holds the lock */
  running: Schema.Literal("run", "probe", "verify")
}) {
  get code(): "backup-running" {
    return "backup-running"
  }
}

/** backup.directory or <directory>/scopes/ is unfit (§11.1 step 1); `reason` says why. */
export class BackupDirectoryInvalid extends Schema.TaggedError<BackupDirectoryInvalid>()("BackupDirectoryInvalid", {
  message: Schema.String,
  reason: Schema.String
}) {
  get code(): "backup-directory-invalid" {
    return "backup-directory-invalid"
  }
}

/** backup.export_directory or <export_directory>/<scope>/ is unfit (§11.2 step 4). */
export class ExportDirectoryInvalid extends Schema.TaggedError<ExportDirectoryInvalid>()("ExportDirectoryInvalid", {
  message: Schema.String,
  reason: Schema.String
}) {
  get code(): "export-directory-invalid" {
    return "export-directory-invalid"
  }
}

/** A created scope has no backup_state row (§11.1 step 3): it is not copied. */
export class BackupStateMissing extends Schema.TaggedError<BackupStateMissing>()("BackupStateMissing", {
  message: Schema.String,
  scope: Schema.String
}) {
  get code(): "backup-state-missing" {
    return "backup-state-missing"
  }
}

// ---------------------------------------------------------------------------------------------
// Restore (§11 "Restore"): refusals before anything is fetched, and failed checks.

/** The target is a live file of the data dir (a scope file or ops.sqlite). */
export class TargetIsLive extends Schema.TaggedError<TargetIsLive>()("TargetIsLive", {
  message: Schema.String,
  target: Schema.String
}) {
  get code(): "target-is-live" {
    return "target-is-live"
  }
}

/** The target lies in <data dir>/scopes/ (also when reached through a symlink). */
export class TargetInScopesDir extends Schema.TaggedError<TargetInScopesDir>()("TargetInScopesDir", {
  message: Schema.String,
  target: Schema.String
}) {
  get code(): "target-in-scopes-dir" {
    return "target-in-scopes-dir"
  }
}

/** The target, or its -wal, -shm or -journal, exists already (also when it appeared during the restore). */
export class TargetExists extends Schema.TaggedError<TargetExists>()("TargetExists", {
  message: Schema.String,
  target: Schema.String
}) {
  get code(): "target-exists" {
    return "target-exists"
  }
}

/** The directory of the target does not exist (restore never creates it). */
export class TargetDirectoryMissing extends Schema.TaggedError<TargetDirectoryMissing>()("TargetDirectoryMissing", {
  message: Schema.String,
  target: Schema.String
}) {
  get code(): "target-directory-missing" {
    return "target-directory-missing"
  }
}

export const CheckSchema = Schema.Struct({
  check: Schema.String,
  ok: Schema.Boolean,
  detail: Schema.optionalWith(Schema.String, { exact: true })
})

/** A check of the fetched backup failed: nothing was written (exit 3). */
export class RestoreCheckFailed extends Schema.TaggedError<RestoreCheckFailed>()("RestoreCheckFailed", {
  message: Schema.String,
  checks: Schema.Array(CheckSchema)
}) {
  get code(): "restore-check-failed" {
    return "restore-check-failed"
  }
}

export type RestoreRefusal = TargetIsLive | TargetInScopesDir | TargetExists | TargetDirectoryMissing

/** The CLI exit code of a restore failure: 3 for a failed check, 1 for a refusal (D98). */
export const restoreExitCode = (e: RestoreRefusal | RestoreCheckFailed): 1 | 3 => (e._tag === "RestoreCheckFailed" ? 3 : 1)
