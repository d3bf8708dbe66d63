/**
 * Refusals of backup run, probe, verify and restore (architecture.md §11, gaps.md §4). Each is a
 * tagged error with its code. The first four are coded errors of the contract's vocabulary
 * (src/contracts/errors.ts), which the ops routes answer with 409; restore refusals run in the
 * CLI only and end it with exit 1 and their own code, a failed restore check with exit 3.
 *
 * Messages name paths: ops answers and CLI output go to the data dir's owner only (§11).
 */
import { Schema } from "effect"
import { CodedError } from "../contracts/errors.js"

/** A second run, probe or verify while one is running (the in-process lock, lock.ts); `reason` names what runs. */
export class BackupRunning extends CodedError("BackupRunning", "backup-running") {}

/** backup.directory or <directory>/scopes/ is unfit (§11.1 step 1); `reason` says why. */
export class BackupDirectoryInvalid extends CodedError("BackupDirectoryInvalid", "backup-directory-invalid") {}

/** backup.export_directory or <export_directory>/<scope>/ is unfit (§11.2 step 4); `reason` says why. */
export class ExportDirectoryInvalid extends CodedError("ExportDirectoryInvalid", "export-directory-invalid") {}

/** A created scope has no backup_state row (§11.1 step 3): it is not copied. */
export class BackupStateMissing extends CodedError("BackupStateMissing", "backup-state-missing") {}

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
