/**
 * GET /ops/status (architecture.md §11 OpsStatus): the service, the backup state (what holds the
 * backup lock now), every configured scope (opened, so the open check runs and a lock shows) in
 * config order, and this month's reranker spending in the instance zone (read by doctor).
 */
import { realpathSync } from "node:fs"
import { resolve } from "node:path"
import { Effect } from "effect"
import { BackupLock } from "../backup/lock.js"
import { AppConfig } from "../config/config.js"
import { nowInstant } from "../contracts/time.js"
import { type BackupStateFullRow, OpsStore } from "../db/ops-store.js"
import { spentThisMonthUsd } from "../db/reranker-usage.js"
import { ScopeStore } from "../db/scope-store.js"
import { SearchStages } from "../search/stage.js"
import { VERSION } from "../version.js"

/** Real path when it exists, else the absolute path as given (resolved against the service's cwd). */
const realOrAbsolute = (path: string): string => {
  const abs = resolve(process.cwd(), path)
  try {
    return realpathSync(abs)
  } catch {
    return abs
  }
}

const boolOrNull = (n: number | null | undefined): boolean | null => (n === null || n === undefined ? null : n === 1)

export const opsStatus = Effect.fn("Ops.status")(function*(startedAt: string) {
  const config = yield* AppConfig
  const ops = yield* OpsStore
  const scopes = yield* ScopeStore
  const lock = yield* BackupLock
  const now = yield* nowInstant
  const states = yield* scopes.states
  // Open every created scope so the open check runs and a lock shows here.
  for (const s of states) if (s.created) yield* Effect.ignore(scopes.use(s.scope))
  const after = yield* scopes.states
  const rows = yield* ops.listBackupStates()
  const byScope = new Map<string, BackupStateFullRow>(rows.map((r) => [r.scope, r]))
  const runs = yield* ops.backupRunStatus()
  const running = yield* lock.current
  const spent = yield* spentThisMonthUsd(ops.sql, config.file.zone)
  const backup = config.file.backup
  // stage b: the model and each scope's vectors (total, embedded, pending); null when stage b is off
  const stages = yield* Effect.serviceOption(SearchStages)
  const semantic = stages._tag === "Some" && stages.value.vectors !== undefined ? yield* stages.value.vectors.status : null
  return {
    service: "groundnote" as const,
    instance: config.file.instance,
    version: VERSION,
    started_at: startedAt,
    now,
    data_dir: realOrAbsolute(config.env.dataDir),
    backup: {
      kind: backup.kind,
      directory: backup.kind === "copy" ? realOrAbsolute(backup.directory) : null,
      export_directory: backup.export_directory === undefined ? null : realOrAbsolute(backup.export_directory),
      running,
      ops_backup_at: runs.ops_backup_at,
      last_run: runs.last_run,
      last_probe: runs.last_probe
    },
    semantic,
    scopes: after.map((s) => {
      const row = byScope.get(s.scope)
      return {
        scope: s.scope,
        created: s.created,
        locked: s.locked,
        lock_reason: s.lock_reason,
        version_count: row?.version_count ?? null,
        last_backup_at: row?.last_backup_at ?? null,
        verified_at: row?.verified_at ?? null,
        verify_ok: boolOrNull(row?.verify_ok),
        probed_at: row?.probed_at ?? null,
        probe_ok: boolOrNull(row?.probe_ok),
        exported_at: row?.exported_at ?? null,
        export_sha256: row?.export_sha256 ?? null
      }
    }),
    // estimated USD, rounded to a millionth so float sums print cleanly
    usage: { reranker_month_usd: Math.round(spent * 1e6) / 1e6 }
  }
})
