/**
 * The answers of backup run (§11.1 RunAnswer), restore probe (§11.2 ProbeAnswer), backup verify
 * and restore (architecture.md §11). Paths, counts, hashes and rule ids only: never content.
 */
import { Schema } from "effect"
import { ScopeName } from "../contracts/ids.js"
import { Instant } from "../contracts/schemas.js"
import { CheckSchema } from "./errors.js"

export const Check = CheckSchema
export type Check = typeof Check.Type

export const BackupKind = Schema.Literal("copy", "litestream")
export type BackupKind = typeof BackupKind.Type

const Bytes = Schema.NullOr(Schema.Number.pipe(Schema.int()))

export const RunItem = Schema.Struct({
  ok: Schema.Boolean,
  /** absolute path of the copy */
  file: Schema.String,
  /** size of the new copy; null when none was written */
  bytes: Bytes,
  detail: Schema.optionalWith(Schema.String, { exact: true }),
  /** true: the copy is age-encrypted to the file's recipients (a keyed scope, or ops.sqlite for the instance) */
  encrypted: Schema.optionalWith(Schema.Boolean, { exact: true }),
  /** older copies of the file the run removed (the plaintext copy of a file now keyed) */
  removed: Schema.optionalWith(Schema.Array(Schema.String), { exact: true })
})
export type RunItem = typeof RunItem.Type

export const RunScopeItem = Schema.Struct({ scope: ScopeName, ...RunItem.fields })
export type RunScopeItem = typeof RunScopeItem.Type

export const RunAnswer = Schema.Struct({
  ok: Schema.Boolean,
  kind: BackupKind,
  ran: Schema.Boolean,
  started_at: Instant,
  finished_at: Instant,
  message: Schema.optionalWith(Schema.String, { exact: true }),
  ops: Schema.NullOr(RunItem),
  scopes: Schema.Array(RunScopeItem)
})
export type RunAnswer = typeof RunAnswer.Type

export const ExportOut = Schema.Struct({
  /** absolute path of the archive */
  file: Schema.String,
  bytes: Schema.Number.pipe(Schema.int()),
  sha256: Schema.String
})
export type ExportOut = typeof ExportOut.Type

export const ProbeScope = Schema.Struct({
  scope: ScopeName,
  ok: Schema.Boolean,
  checks: Schema.Array(Check),
  /** rule ids that differ from live only because they changed after the backup */
  exceptions: Schema.Array(Schema.String),
  export: Schema.NullOr(ExportOut)
})
export type ProbeScope = typeof ProbeScope.Type

export const ProbeAnswer = Schema.Struct({
  ok: Schema.Boolean,
  kind: BackupKind,
  checked_at: Instant,
  ops: Schema.Struct({ ok: Schema.Boolean, checks: Schema.Array(Check) }),
  scopes: Schema.Array(ProbeScope)
})
export type ProbeAnswer = typeof ProbeAnswer.Type

export const Counts = Schema.Record({ key: Schema.String, value: Schema.Number })
export type Counts = typeof Counts.Type

export const VerifyScope = Schema.Struct({
  scope: ScopeName,
  ok: Schema.Boolean,
  checks: Schema.Array(Check),
  exceptions: Schema.Array(Schema.String),
  /** append-only row counts of the live snapshot and of the backup (null when unreadable) */
  counts: Schema.Struct({ live: Schema.NullOr(Counts), backup: Schema.NullOr(Counts) })
})
export type VerifyScope = typeof VerifyScope.Type

/** POST /ops/backup/verify (architecture.md §11 "Backup verify"; the shape is ours: docs/decisions.md, §11 Ops, CLI, backup). */
export const VerifyAnswer = Schema.Struct({
  ok: Schema.Boolean,
  kind: BackupKind,
  checked_at: Instant,
  scopes: Schema.Array(VerifyScope)
})
export type VerifyAnswer = typeof VerifyAnswer.Type

/** groundnote restore (architecture.md §11 "Restore"). */
export const RestoreAnswer = Schema.Struct({
  ok: Schema.Literal(true),
  scope: Schema.String,
  from: BackupKind,
  /** absolute path of the restored file */
  target: Schema.String,
  bytes: Schema.Number.pipe(Schema.int()),
  checks: Schema.Array(Check),
  /** no backup_state row (restore ops.sqlite first), fewer rule versions than ops.sqlite remembers */
  warnings: Schema.Array(Schema.String)
})
export type RestoreAnswer = typeof RestoreAnswer.Type
