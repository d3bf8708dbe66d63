/**
 * Restore probe (architecture.md §11.2, POST /ops/backup/probe with an optional scope): the daily
 * restore drill, through the real restore path, inside the service.
 *
 *   0. Kind copy: every encrypted copy to read has its identity in GROUNDNOTE_KEY_DIR, else
 *      identity-missing (409) before anything runs (gaps.md §12 R5).
 *   1. A throw-away directory <data dir>/.probe-<random> (0700), removed in every case.
 *   2. ops.sqlite: the newest backup is fetched (copy or litestream) and checked: integrity,
 *      schema_version.
 *   3. Per created scope (or the named one): fetchAndCheckScope (restore.ts: the checks of
 *      Restore with the count floor), the copy brought level with the redaction ledger as restore
 *      does (redaction-ledger, level-copy.ts), then pair-consistent (at least the version_count the
 *      restored ops.sqlite remembers) and, against a VACUUM INTO snapshot of live,
 *      not-ahead-of-live and export-hashes with exceptions (as in verify).
 *   4. Every check of the scope passed and backup.export_directory is set: the nightly export of
 *      the restored file (nightly-export.ts), encrypted for a keyed scope; plaintext archives of a
 *      keyed scope and archives older than the restored file's newest redaction are removed. The export directory is checked before anything
 *      runs (export-directory-invalid).
 *   5. backup_state: probed_at, probe_ok, probe_result; on success verified_counts (the floor)
 *      and exported_at, export_sha256; one backup_run row with the answer.
 * Holds the backup lock. Long reads run in the worker thread on read-only connections.
 */
import { existsSync, mkdirSync } from "node:fs"
import { join } from "node:path"
import { Effect, Either, Option } from "effect"
import { AppConfig } from "../config/config.js"
import { OpsStore } from "../db/ops-store.js"
import { scopeFile } from "../db/scope-store.js"
import { ValidationFailed } from "../contracts/errors.js"
import { nowInstant } from "../contracts/time.js"
import * as C from "./checks.js"
import { ExportDirectoryInvalid } from "./errors.js"
import { levelCopy } from "./level-copy.js"
import { requireIdentities } from "./fetch.js"
import { checkConfiguredDirectory, ensurePrivateSubdir, privateTempDir, removeStaleTempDirs } from "./fsutil.js"
import type { FileFacts } from "./jobs.js"
import { BackupLock } from "./lock.js"
import { litestreamTargetOf } from "./litestream-config.js"
import { writeNightlyExport } from "./nightly-export.js"
import { fetchAndCheckOps, fetchAndCheckScope } from "./restore.js"
import type { ProgressOptions } from "./run.js"
import type { BackupKind, Check, Counts, ExportOut, ProbeAnswer, ProbeScope } from "./schemas.js"
import { type BackupWorker, makeBackupWorker } from "./worker-client.js"

export interface ScopeOptions extends ProgressOptions {
  /** only this scope (it must be configured) */
  readonly scope?: string
}

/** The scopes an operation covers: the named one (configured, else 400), or every created one in config order. */
export const selectScopes = (configured: ReadonlyArray<string>, dataDir: string, named: string | undefined) =>
  Effect.gen(function*() {
    if (named !== undefined) {
      if (!configured.includes(named)) {
        return yield* new ValidationFailed({ message: `"${named}" is not a configured scope`, issues: [{ path: "scope", message: "not a configured scope" }] })
      }
      return [named]
    }
    // every scope with a file, and every lost one (no file, but ops.sqlite remembers rule
    // versions of it): its item fails instead of being left out of the answer
    const ops = yield* OpsStore
    const chosen: Array<string> = []
    for (const s of configured) {
      if (existsSync(scopeFile(dataDir, s)) || (yield* rememberedVersions(ops, s)) > 0) chosen.push(s)
    }
    return chosen
  })

/** The rule versions ops.sqlite remembers of a scope (0 without a backup_state row). */
const rememberedVersions = (ops: OpsStore, scope: string): Effect.Effect<number> =>
  Effect.map(Effect.orDie(ops.getBackupState(scope)), Option.match({ onNone: () => 0, onSome: (s) => s.version_count }))

export interface LiveSnapshot {
  readonly checks: ReadonlyArray<Check>
  /** facts of the snapshot; null when it could not be made or read */
  readonly facts: FileFacts | null
}

/**
 * A VACUUM INTO snapshot of the live scope file (read-only connection, the live file is not
 * vacuumed) at `snapshotPath`, inspected: live-snapshot, and with `own` (verify step 1)
 * live-integrity, live-meta-scope, live-sample-query and versions-remembered.
 */
export const snapshotLive = (input: {
  readonly worker: BackupWorker
  readonly scope: string
  readonly liveFile: string
  readonly snapshotPath: string
  /** count these tables too (the backup's) */
  readonly tables?: ReadonlyArray<string>
  readonly own?: { readonly remembered: number | null }
}): Effect.Effect<LiveSnapshot> =>
  Effect.gen(function*() {
    const own = input.own !== undefined
    const snap = yield* Effect.either(input.worker.run({ op: "snapshot", source: input.liveFile, target: input.snapshotPath }))
    if (Either.isLeft(snap)) return { checks: [{ check: "live-snapshot", ok: false, detail: `${snap.left.code}: ${snap.left.message}` }], facts: null }
    const inspected = yield* Effect.either(input.worker.run({
      op: "inspect", file: input.snapshotPath, kind: "scope", integrity: own, sample: own, tables: input.tables ?? []
    }))
    if (Either.isLeft(inspected)) {
      return { checks: [{ check: "live-snapshot", ok: true }, C.unreadable("live-integrity", "the live snapshot", inspected.left.code)], facts: null }
    }
    const facts = inspected.right
    const checks: Array<Check> = [{ check: "live-snapshot", ok: true }]
    if (input.own !== undefined) {
      const live = (c: Check): Check => ({ ...c, check: `live-${c.check}` })
      checks.push(live(C.integrity(facts)), live(C.metaScope(facts, input.scope)), live(C.sampleQuery(facts)))
      checks.push(C.versionsRemembered(facts, input.own.remembered))
    }
    return { checks, facts }
  })

/**
 * A backup file against the live snapshot (§11 "Backup verify" step 2): not-ahead-of-live and
 * export-hashes, naming the rules that changed after the backup in exceptions.
 */
export const compareWithLive = (input: {
  readonly worker: BackupWorker
  readonly backupFile: string
  readonly backup: FileFacts
  readonly snapshotPath: string
  readonly live: FileFacts
  readonly zone: string
}): Effect.Effect<{ readonly checks: ReadonlyArray<Check>; readonly exceptions: ReadonlyArray<string> }> =>
  Effect.gen(function*() {
    const ahead = C.notAheadOfLive(input.backup.counts, input.live.counts)
    const compared = yield* Effect.either(input.worker.run({ op: "export-hashes", backup: input.backupFile, live: input.snapshotPath, zone: input.zone }))
    if (Either.isLeft(compared)) {
      return { checks: [ahead, { check: "export-hashes", ok: false, detail: `the exports could not be built: ${compared.left.code}` }], exceptions: [] }
    }
    return { checks: [ahead, compared.right.check], exceptions: compared.right.exceptions }
  })

/** POST /ops/backup/probe (§11.2). */
export const probeBackup = (options: ScopeOptions = {}) =>
  Effect.gen(function*() {
    const lock = yield* BackupLock
    return yield* lock.withLock("probe")(probeUnlocked(options))
  })

const probeUnlocked = (options: ScopeOptions) =>
  Effect.scoped(Effect.gen(function*() {
    const config = yield* AppConfig
    const ops = yield* OpsStore
    const progress = options.progress ?? (() => undefined)
    const dataDir = config.env.dataDir
    const backup = config.file.backup
    const kind: BackupKind = backup.kind
    const directory = backup.kind === "copy" ? backup.directory : null
    const replica = litestreamTargetOf(backup)
    const configured = config.file.scopes.map((s) => s.name)
    const scopes = yield* selectScopes(configured, dataDir, options.scope)
    const checkedAt = yield* nowInstant
    const started = checkedAt

    // the export directory and <scope>/ in it, before anything runs
    const exportDirs = new Map<string, string>()
    if (backup.export_directory !== undefined) {
      const dir = checkConfiguredDirectory(backup.export_directory, dataDir, { mode: "not-shared-writable" })
      if (!dir.ok) return yield* new ExportDirectoryInvalid({ reason: dir.reason, message: `backup.export_directory is unfit: ${dir.reason}` })
      for (const scope of scopes) {
        const sub = ensurePrivateSubdir(dir.real, scope)
        if (!sub.ok) return yield* new ExportDirectoryInvalid({ reason: sub.reason, message: `<export_directory>/${scope} is unfit: ${sub.reason}` })
        exportDirs.set(scope, sub.path)
      }
    }

    // an encrypted copy is read only with its identity: all of them before anything runs
    yield* requireIdentities(directory, [{ kind: "ops" }, ...scopes.map((scope) => ({ kind: "scope" as const, scope }))], process.env)
    const worker = yield* makeBackupWorker
    for (const stale of removeStaleTempDirs(dataDir)) {
      yield* Effect.logWarning("removed the throw-away directory of an interrupted probe or verify").pipe(Effect.annotateLogs({ dir: stale }))
    }
    const tmp = yield* privateTempDir(dataDir, ".probe-")
    // ops.sqlite at the top, scope files below (a scope may be called "ops")
    mkdirSync(join(tmp, "scopes"), { mode: 0o700 })
    mkdirSync(join(tmp, "live"), { mode: 0o700 })
    const env = process.env

    progress("probing ops.sqlite")
    const opsFetched = yield* fetchAndCheckOps({ worker, kind, dataDir, directory, replica, target: join(tmp, "ops.sqlite"), env })
    const opsPart = { ok: C.allOk(opsFetched.checks), checks: [...opsFetched.checks] }

    const items: Array<ProbeScope> = []
    for (const scope of scopes) {
      progress(`probing scope ${scope}`)
      const liveFile = scopeFile(dataDir, scope)
      if (!existsSync(liveFile)) {
        const remembered = yield* rememberedVersions(ops, scope)
        const detail = remembered > 0
          ? `the scope's file is missing while ops.sqlite remembers ${remembered} rule versions: restore it (docs/backup.md)`
          : "the scope has no file"
        const item: ProbeScope = { scope, ok: false, checks: [{ check: "scope-created", ok: false, detail }], exceptions: [], export: null }
        items.push(item)
        continue
      }
      const state = yield* ops.getBackupStateFull(scope).pipe(Effect.orDie)
      const floor: Counts | null = Option.match(state, { onNone: () => null, onSome: (s) => C.parseCounts(s.verified_counts) })
      const restoredPath = join(tmp, "scopes", `${scope}.sqlite`)
      const fetched = yield* fetchAndCheckScope({ worker, kind, dataDir, directory, replica, target: restoredPath, env, scope, floor })
      const checks: Array<Check> = [...fetched.checks]
      let exceptions: ReadonlyArray<string> = []
      if (fetched.facts !== null) {
        // the copy as a restore would leave it: level with the redaction ledger, before it is compared or exported
        const ledger = yield* ops.listLedger(scope).pipe(Effect.orDie)
        checks.push(yield* levelCopy({ file: restoredPath, scope, ledger, search: config.file.search }))
        checks.push(C.pairConsistent(fetched.facts, opsFetched.facts, scope))
        const snapshotPath = join(tmp, "live", `${scope}.sqlite`)
        const live = yield* snapshotLive({ worker, scope, liveFile, snapshotPath, tables: Object.keys(fetched.facts.counts) })
        checks.push(...live.checks)
        if (live.facts !== null) {
          const compared = yield* compareWithLive({
            worker, backupFile: restoredPath, backup: fetched.facts, snapshotPath, live: live.facts, zone: config.file.zone
          })
          checks.push(...compared.checks)
          exceptions = compared.exceptions
        }
      }
      let exported: ExportOut | null = null
      const exportDir = exportDirs.get(scope)
      if (C.allOk(checks) && exportDir !== undefined) {
        progress(`writing the nightly export of ${scope}`)
        const recipients = yield* ops.activeRecipients(scope).pipe(Effect.orDie)
        const written = yield* writeNightlyExport({
          worker, scope, file: restoredPath, directory: exportDir, zone: config.file.zone, now: Date.parse(yield* nowInstant),
          recipients, work: tmp, redactedAt: fetched.facts?.redactedAt ?? null
        })
        checks.push(written.check)
        exported = written.export
      }
      const ok = C.allOk(checks)
      const item: ProbeScope = { scope, ok, checks, exceptions: [...exceptions], export: exported }
      items.push(item)
      if (Option.isSome(state)) {
        const at = yield* nowInstant
        const result = { checked_at: checkedAt, ok, checks, exceptions, counts: fetched.facts?.counts ?? null, export: exported }
        yield* ops.recordProbe(scope, ok && fetched.facts !== null
          ? { ok: true, at, result, verified_counts: fetched.facts.counts, export: exported === null ? null : { at, sha256: exported.sha256 } }
          : { ok: false, at, result }).pipe(Effect.orDie)
      }
    }

    const answer: ProbeAnswer = {
      ok: opsPart.ok && items.every((i) => i.ok),
      kind,
      checked_at: checkedAt,
      ops: opsPart,
      scopes: items
    }
    const finished = yield* nowInstant
    yield* ops.recordBackupRun({ kind: "probe", backup_kind: kind, started_at: started, finished_at: finished, ok: answer.ok, result: answer }).pipe(Effect.orDie)
    yield* Effect.logInfo("backup probe").pipe(Effect.annotateLogs({
      ok: answer.ok,
      failed: [...(opsPart.ok ? [] : ["ops.sqlite"]), ...items.filter((i) => !i.ok).map((i) => i.scope)].join(",")
    }))
    return answer
  }))
