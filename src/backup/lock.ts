/**
 * The one in-process lock of backup run, probe and verify (architecture.md §11): while one
 * runs, another call fails at once with backup-running (409); `running` is what GET /ops/status
 * reports. Restore runs in the CLI without the service and takes no lock.
 */
import { Effect } from "effect"
import { BackupRunning } from "./errors.js"

export type BackupOperation = "run" | "probe" | "verify"

export class BackupLock extends Effect.Service<BackupLock>()("Groundnote/BackupLock", {
  sync: () => {
    let running: BackupOperation | null = null
    const acquire = (op: BackupOperation) =>
      Effect.suspend(() => {
        if (running !== null) {
          return Effect.fail(new BackupRunning({
            reason: running,
            message: `a backup ${running} is running; try again when it has finished`
          }))
        }
        running = op
        return Effect.void
      })
    const release = Effect.sync(() => {
      running = null
    })
    /** Runs `effect` holding the lock; fails with backup-running while another operation holds it. */
    const withLock = (op: BackupOperation) => <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | BackupRunning, R> =>
      Effect.acquireUseRelease(acquire(op), () => effect, () => release)
    /** What holds the lock now, or null. */
    const current = Effect.sync((): BackupOperation | null => running)
    return { withLock, current } as const
  }
}) {}
