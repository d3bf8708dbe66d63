/**
 * Backup verify (architecture.md §11 "Backup verify", POST /ops/backup/verify with an optional
 * scope), per scope, with temporary files in <data dir>/.verify-<random> (0700, removed after):
 *
 *   1. live-snapshot: VACUUM INTO from a read-only connection (the live file is not vacuumed),
 *      then live-integrity, live-meta-scope, live-sample-query and versions-remembered (the
 *      snapshot's rule versions ≥ backup_state.version_count).
 *   2. The newest backup is fetched (fetch-copy / fetch-litestream) and checked: integrity,
 *      meta-scope, schema-version, sample-query, not-older-than-last-verified (≥ verified_counts),
 *      not-ahead-of-live and export-hashes with exceptions.
 *   3. The report goes to backup_state (verified_at, verify_ok, verify_result); the floor
 *      verified_counts moves only on success.
 * Holds the backup lock. backup_run has no kind for verify (§4.2): no row.
 */
import { join } from "node:path"
import { Effect, Option } from "effect"
import { AppConfig } from "../config/config.js"
import { OpsStore } from "../db/ops-store.js"
import { scopeFile } from "../db/scope-store.js"
import { nowInstant } from "../contracts/time.js"
import * as C from "./checks.js"
import { requireIdentities } from "./fetch.js"
import { privateTempDir, removeStaleTempDirs } from "./fsutil.js"
import { BackupLock } from "./lock.js"
import { compareWithLive, type ScopeOptions, selectScopes, snapshotLive } from "./probe.js"
import { litestreamTargetOf } from "./litestream-config.js"
import { fetchAndCheckScope } from "./restore.js"
import type { Check, VerifyAnswer, VerifyScope } from "./schemas.js"
import { makeBackupWorker } from "./worker-client.js"

/** POST /ops/backup/verify. */
export const verifyBackup = (options: ScopeOptions = {}) =>
  Effect.gen(function*() {
    const lock = yield* BackupLock
    return yield* lock.withLock("verify")(verifyUnlocked(options))
  })

const verifyUnlocked = (options: ScopeOptions) =>
  Effect.scoped(Effect.gen(function*() {
    const config = yield* AppConfig
    const ops = yield* OpsStore
    const progress = options.progress ?? (() => undefined)
    const dataDir = config.env.dataDir
    const backup = config.file.backup
    const directory = backup.kind === "copy" ? backup.directory : null
    const scopes = yield* selectScopes(config.file.scopes.map((s) => s.name), dataDir, options.scope)
    const checkedAt = yield* nowInstant
    // an encrypted copy is read only with its identity (gaps.md §12 R5): all of them before anything runs
    yield* requireIdentities(directory, scopes.map((scope) => ({ kind: "scope" as const, scope })), process.env)
    const worker = yield* makeBackupWorker
    for (const stale of removeStaleTempDirs(dataDir)) {
      yield* Effect.logWarning("removed the throw-away directory of an interrupted probe or verify").pipe(Effect.annotateLogs({ dir: stale }))
    }
    const tmp = yield* privateTempDir(dataDir, ".verify-")

    const items: Array<VerifyScope> = []
    for (const scope of scopes) {
      progress(`verifying scope ${scope}`)
      const state = yield* ops.getBackupStateFull(scope).pipe(Effect.orDie)
      const remembered = Option.match(state, { onNone: () => null, onSome: (s) => s.version_count })
      const floor = Option.match(state, { onNone: () => null, onSome: (s) => C.parseCounts(s.verified_counts) })
      const snapshotPath = join(tmp, `${scope}.live.sqlite`)
      const live = yield* snapshotLive({ worker, scope, liveFile: scopeFile(dataDir, scope), snapshotPath, own: { remembered } })
      const backupPath = join(tmp, `${scope}.backup.sqlite`)
      const fetched = yield* fetchAndCheckScope({ worker, kind: backup.kind, dataDir, directory, replica: litestreamTargetOf(backup), target: backupPath, scope, floor })
      const checks: Array<Check> = [...live.checks, ...fetched.checks]
      let exceptions: ReadonlyArray<string> = []
      if (fetched.facts !== null && live.facts !== null) {
        const compared = yield* compareWithLive({
          worker, backupFile: backupPath, backup: fetched.facts, snapshotPath, live: live.facts, zone: config.file.zone
        })
        checks.push(...compared.checks)
        exceptions = compared.exceptions
      }
      const ok = C.allOk(checks)
      const item: VerifyScope = {
        scope, ok, checks, exceptions: [...exceptions], counts: { live: live.facts?.counts ?? null, backup: fetched.facts?.counts ?? null }
      }
      items.push(item)
      if (Option.isSome(state)) {
        const at = yield* nowInstant
        const result = { checked_at: checkedAt, ...item }
        yield* ops.recordVerify(scope, ok && fetched.facts !== null
          ? { ok: true, at, result, verified_counts: fetched.facts.counts }
          : { ok: false, at, result }).pipe(Effect.orDie)
      }
    }
    const answer: VerifyAnswer = { ok: items.every((i) => i.ok), kind: backup.kind, checked_at: checkedAt, scopes: items }
    yield* Effect.logInfo("backup verify").pipe(Effect.annotateLogs({
      ok: answer.ok,
      failed: items.filter((i) => !i.ok).map((i) => i.scope).join(",")
    }))
    return answer
  }))
