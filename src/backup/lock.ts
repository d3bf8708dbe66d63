/**
 * The one in-process lock of backup run, probe and verify (architecture.md §11): while one
 * runs, another call fails at once with backup-running (409); `running` is what GET /ops/status
 * reports. Restore runs in the CLI without the service and takes no lock.
 *
 * A redaction takes the same lock around its transaction, its ledger write and its checkpoint
 * (withRedactionLock, gaps.md §12): a copy or a probe is never made of a file half way through a
 * redaction (nor of ops.sqlite without a ledger row its scope copy already shows), and a
 * redaction asked for while a backup operation runs answers backup-running at once.
 */
import { Effect } from "effect"
import { BackupRunning } from "./errors.js"

export type BackupOperation = "run" | "probe" | "verify" | "redaction"

const busyMessage = (running: BackupOperation): string =>
  running === "redaction"
    ? "a redaction is being applied; try again when it has finished"
    : `a backup ${running} is running; try again when it has finished`

export class BackupLock extends Effect.Service<BackupLock>()("Groundnote/BackupLock", {
  sync: () => {
    let running: BackupOperation | null = null
    const acquire = (op: BackupOperation) =>
      Effect.suspend(() => {
        if (running !== null) return Effect.fail(new BackupRunning({ reason: running, message: busyMessage(running) }))
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

/**
 * Runs a redaction (`effect`: its scope transaction, ledger write and checkpoint) holding the
 * backup lock: backup-running (409) at once while a backup run, probe or verify holds it, and no
 * backup operation starts until the redaction is done.
 */
export const withRedactionLock = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | BackupRunning, R | BackupLock> =>
  Effect.flatMap(BackupLock, (lock) => lock.withLock("redaction")(effect))
