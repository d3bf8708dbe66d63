/**
 * Backup run (architecture.md §11.1, POST /ops/backup/run), inside the service.
 *
 * litestream: nothing is copied; after a redaction of a scope its replica is reseeded (reseed.ts:
 *   a new Litestream generation, verified, then the older generations of a file:// replica
 *   deleted), one item per reseeded scope; one backup_run row records the answer.
 * copy:
 *   1. backup.directory: an existing directory of the service user, mode 0700, not inside the
 *      data dir (real paths), else backup-directory-invalid (409) naming the reason;
 *      <directory>/scopes/ a real 0700 directory of the user, created when missing. Temporary
 *      copies a crashed run left there are removed.
 *   2. ops.sqlite first, then every created scope in config order (every scope copy is then at
 *      least as new as the version count the ops.sqlite copy remembers: invariant 7).
 *   3. Per file, in the worker thread on read-only connections: the previous copy's counts are
 *      read (unreadable → the item fails, the copy stays); VACUUM INTO <dir>/.<file>.tmp-<uuid>;
 *      inspect (integrity, meta-scope; ops: integrity, known schema_version); no regression:
 *      every append-only count ≥ the previous copy's and, for a scope, backup_state.verified_counts;
 *      then fsync, rename over the copy, fsync of the directory, mode 0600. A locked scope or one
 *      without a backup_state row is not copied. Any failure removes the temporary file and
 *      keeps the previous copy.
 *   4. backup_state.last_backup_at per copied scope; one backup_run row with the answer.
 * Holds the backup lock (backup-running while another run, probe or verify holds it).
 */
import { randomUUID } from "node:crypto"
import { existsSync, statSync } from "node:fs"
import { basename, dirname, join } from "node:path"
import { Effect, Either, Option } from "effect"
import { AppConfig } from "../config/config.js"
import { latestVersion } from "../db/migrate.js"
import { OPS_MIGRATIONS } from "../db/migrations/ops/index.js"
import { SCOPE_MIGRATIONS } from "../db/migrations/scope/index.js"
import { OpsStore } from "../db/ops-store.js"
import { ScopeStore, scopeFile } from "../db/scope-store.js"
import { nowInstant } from "../contracts/time.js"
import * as C from "./checks.js"
import { BackupDirectoryInvalid } from "./errors.js"
import { type BackupFile, filePathIn } from "./fetch.js"
import { checkConfiguredDirectory, durableReplace, ensurePrivateSubdir, privateTempDir, removeInBackground, removeStaleTempCopies } from "./fsutil.js"
import { BackupLock } from "./lock.js"
import { reseedScope } from "./reseed.js"
import type { Counts, RunAnswer, RunItem, RunScopeItem } from "./schemas.js"
import { type BackupWorker, makeBackupWorker } from "./worker-client.js"

export interface ProgressOptions {
  /** one line per step, for a progress display (the CLI shows it on a TTY) */
  readonly progress?: (line: string) => void
}

export interface RunOptions extends ProgressOptions {
  /** kind litestream: how long a reseed waits for Litestream's new generation (default 2 minutes) */
  readonly reseedWaitMs?: number
}

const RESEED_WAIT_MS = 2 * 60 * 1000

export const LITESTREAM_RUN_MESSAGE = "Litestream replicates continuously; nothing to copy"

interface CopyItem {
  readonly worker: BackupWorker
  readonly file: BackupFile
  readonly live: string
  readonly target: string
  /** verified_counts of the scope (null for ops.sqlite or when never verified) */
  readonly floor: Counts | null
}

const failed = (target: string, detail: string): RunItem => ({ ok: false, file: target, bytes: null, detail })

/** One file of a backup run: snapshot, inspect, no regression, durable rename (§11.1 step 3). */
export const copyOne = (item: CopyItem): Effect.Effect<RunItem> => {
  const tmp = join(dirname(item.target), `.${basename(item.target)}.tmp-${randomUUID()}`)
  const body = Effect.gen(function*() {
    let previous: Counts | null = null
    if (existsSync(item.target)) {
      const prev = yield* Effect.either(item.worker.run({ op: "inspect", file: item.target, kind: item.file.kind, integrity: false, sample: false }))
      if (Either.isLeft(prev)) return failed(item.target, `no-regression: previous copy unreadable: ${prev.left.code}`)
      previous = prev.right.counts
    }
    const snap = yield* Effect.either(item.worker.run({ op: "snapshot", source: item.live, target: tmp }))
    if (Either.isLeft(snap)) return failed(item.target, `snapshot: ${snap.left.code}: ${snap.left.message}`)
    const floor = C.maxCounts(previous, item.floor)
    const inspected = yield* Effect.either(item.worker.run({
      op: "inspect", file: tmp, kind: item.file.kind, integrity: true, sample: false, tables: Object.keys(floor)
    }))
    if (Either.isLeft(inspected)) return failed(item.target, `integrity: copy unreadable: ${inspected.left.code}`)
    const facts = inspected.right
    const checks = item.file.kind === "ops"
      ? [C.integrity(facts), C.schemaVersion(facts, latestVersion(OPS_MIGRATIONS))]
      : [C.integrity(facts), C.metaScope(facts, item.file.scope), C.schemaVersion(facts, latestVersion(SCOPE_MIGRATIONS))]
    const bad = checks.find((c) => !c.ok)
    if (bad !== undefined) return failed(item.target, `${bad.check}: ${bad.detail ?? "failed"}`)
    const below = C.belowFloor(facts.counts, floor)
    if (below.length > 0) return failed(item.target, `no-regression: ${C.nameList(below)}`)
    const replaced = yield* Effect.either(durableReplace(tmp, item.target))
    if (Either.isLeft(replaced)) return failed(item.target, `rename: ${replaced.left}`)
    return { ok: true, file: item.target, bytes: statSync(item.target).size } satisfies RunItem
  })
  return body.pipe(Effect.ensuring(removeInBackground(tmp)))
}

const litestreamAnswer = (started: string, finished: string, reseeded: ReadonlyArray<RunScopeItem>): RunAnswer => ({
  ok: reseeded.every((i) => i.ok),
  kind: "litestream",
  ran: reseeded.length > 0,
  started_at: started,
  finished_at: finished,
  message: LITESTREAM_RUN_MESSAGE,
  ops: null,
  scopes: reseeded
})

/** POST /ops/backup/run (§11.1). */
export const runBackup = (options: RunOptions = {}) =>
  Effect.gen(function*() {
    const lock = yield* BackupLock
    return yield* lock.withLock("run")(runUnlocked(options))
  })

const runUnlocked = (options: RunOptions) =>
  Effect.scoped(Effect.gen(function*() {
    const config = yield* AppConfig
    const ops = yield* OpsStore
    const scopes = yield* ScopeStore
    const progress = options.progress ?? (() => undefined)
    const started = yield* nowInstant
    const backup = config.file.backup
    const dataDir = config.env.dataDir

    if (backup.kind === "litestream") {
      const reseeded: Array<RunScopeItem> = []
      const worker = yield* makeBackupWorker
      const tmpDir = yield* privateTempDir(dataDir, ".verify-")
      for (const scope of scopes.configured) {
        progress(`reseed check of scope ${scope}`)
        const item = yield* reseedScope({
          worker, dataDir, scope, live: scopeFile(dataDir, scope), replica: { target: backup.target, prefix: backup.prefix },
          env: process.env, tmpDir, waitMs: options.reseedWaitMs ?? RESEED_WAIT_MS
        })
        if (item !== null) reseeded.push(item)
      }
      const answer = litestreamAnswer(started, yield* nowInstant, reseeded)
      yield* ops.recordBackupRun({ kind: "run", backup_kind: "litestream", started_at: answer.started_at, finished_at: answer.finished_at, ok: answer.ok, result: answer }).pipe(Effect.orDie)
      return answer
    }

    const dir = checkConfiguredDirectory(backup.directory, dataDir, { mode: "exactly-0700" })
    if (!dir.ok) {
      return yield* new BackupDirectoryInvalid({ reason: dir.reason, message: `backup.directory is unfit: ${dir.reason}` })
    }
    const sub = ensurePrivateSubdir(dir.real, "scopes")
    if (!sub.ok) {
      return yield* new BackupDirectoryInvalid({ reason: sub.reason, message: `<backup.directory>/scopes is unfit: ${sub.reason}` })
    }
    for (const stale of [...removeStaleTempCopies(dir.real), ...removeStaleTempCopies(sub.path)]) {
      yield* Effect.logWarning("backup run: removed a temporary copy of an interrupted run").pipe(Effect.annotateLogs({ file: stale }))
    }

    const worker = yield* makeBackupWorker
    progress("copying ops.sqlite")
    const opsItem = yield* copyOne({
      worker,
      file: { kind: "ops" },
      live: join(dataDir, "ops.sqlite"),
      target: filePathIn(dir.real, { kind: "ops" }),
      floor: null
    })

    const items: Array<RunAnswer["scopes"][number]> = []
    for (const scope of scopes.configured) {
      // a scope never created has nothing to copy; a lost one (locked: no file, but ops.sqlite
      // remembers rule versions of it) fails its item below like every locked scope (§11.1 step 4)
      if (!existsSync(scopeFile(dataDir, scope)) && (yield* scopes.states).find((s) => s.scope === scope)?.locked !== true) continue
      const target = filePathIn(dir.real, { kind: "scope", scope })
      progress(`copying scope ${scope}`)
      const open = yield* Effect.either(scopes.use(scope))
      if (Either.isLeft(open)) {
        const state = (yield* scopes.states).find((s) => s.scope === scope)
        items.push({ scope, ...failed(target, `scope-locked: ${state?.lock_reason ?? open.left.message}`) })
        continue
      }
      const state = yield* ops.getBackupStateFull(scope).pipe(Effect.orDie)
      if (Option.isNone(state)) {
        items.push({ scope, ...failed(target, "backup-state-missing: ops.sqlite has no backup_state row for this scope") })
        continue
      }
      const item = yield* copyOne({
        worker,
        file: { kind: "scope", scope },
        live: scopeFile(dataDir, scope),
        target,
        floor: C.parseCounts(state.value.verified_counts)
      })
      if (item.ok) yield* ops.setLastBackupAt(scope, yield* nowInstant).pipe(Effect.orDie)
      items.push({ scope, ...item })
    }

    const answer: RunAnswer = {
      ok: opsItem.ok && items.every((i) => i.ok),
      kind: "copy",
      ran: true,
      started_at: started,
      finished_at: yield* nowInstant,
      ops: opsItem,
      scopes: items
    }
    yield* ops.recordBackupRun({ kind: "run", backup_kind: "copy", started_at: answer.started_at, finished_at: answer.finished_at, ok: answer.ok, result: answer }).pipe(Effect.orDie)
    yield* Effect.logInfo("backup run").pipe(Effect.annotateLogs({
      ok: answer.ok,
      failed: [...(opsItem.ok ? [] : ["ops.sqlite"]), ...items.filter((i) => !i.ok).map((i) => i.scope)].join(",")
    }))
    return answer
  }))
