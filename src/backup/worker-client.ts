/**
 * The main thread's side of the backup worker (architecture.md §11).
 *
 * One worker thread per process, started on first use and kept for the next operation (starting
 * one loads Effect and the export code again: about a second on a quiet machine). It holds no
 * connection between jobs and does not keep the process alive while idle (unref). Operations take
 * it for their Scope with makeBackupWorker; jobs run one at a time in order, each answering with
 * its result or failing with JobFailed (SQLite's code). An operation that is interrupted or whose
 * worker died terminates it; the next operation starts a fresh one. A worker that dies fails its
 * open jobs with code worker-exited.
 */
import { Worker } from "node:worker_threads"
import { Effect, Exit, type Scope } from "effect"
import { type Job, JobFailed, type JobResult } from "./jobs.js"
import type { WorkerReply, WorkerRequest } from "./worker.js"
import { workerEntry } from "./worker-loader.js"

export interface BackupWorker {
  /** Runs `job` in the worker thread. */
  readonly run: <J extends Job>(job: J) => Effect.Effect<JobResult<J>, JobFailed>
  /** "dist" (compiled JavaScript) or "source" (TypeScript under vitest) */
  readonly mode: "dist" | "source"
  /** the worker's thread id */
  readonly threadId: number
}

interface Pending {
  readonly resolve: (value: unknown) => void
  readonly reject: (e: JobFailed) => void
}

interface Started {
  readonly worker: Worker
  readonly api: BackupWorker
  readonly isDead: () => boolean
}

const start = (): Started => {
  const entry = workerEntry(import.meta.url)
  const worker = new Worker(entry.url, { execArgv: [...entry.execArgv], stdout: false, stderr: false })
  worker.unref()
  const pending = new Map<number, Pending>()
  let next = 1
  let dead: JobFailed | null = null
  const failAll = (e: JobFailed) => {
    dead ??= e
    for (const p of pending.values()) p.reject(e)
    pending.clear()
  }
  worker.on("message", (reply: WorkerReply) => {
    const p = pending.get(reply.id)
    if (p === undefined) return
    pending.delete(reply.id)
    if (pending.size === 0) worker.unref()
    if (reply.ok) p.resolve(reply.value)
    else p.reject(new JobFailed({ code: reply.code, message: reply.message }))
  })
  worker.on("error", (e) => failAll(new JobFailed({ code: "worker-failed", message: e.message.slice(0, 300) })))
  worker.on("exit", (code) => failAll(new JobFailed({ code: "worker-exited", message: `the backup worker exited with code ${code}` })))
  const run = <J extends Job>(job: J): Effect.Effect<JobResult<J>, JobFailed> =>
    Effect.async<JobResult<J>, JobFailed>((resume) => {
      if (dead !== null) {
        resume(Effect.fail(dead))
        return
      }
      const id = next++
      pending.set(id, {
        resolve: (value) => resume(Effect.succeed(value as JobResult<J>)),
        reject: (e) => resume(Effect.fail(e))
      })
      worker.ref() // an open job keeps the process alive
      const request: WorkerRequest = { id, job }
      worker.postMessage(request)
      return Effect.sync(() => {
        pending.delete(id)
        if (pending.size === 0) worker.unref()
      })
    })
  return { worker, api: { run, mode: entry.mode, threadId: worker.threadId }, isDead: () => dead !== null }
}

let shared: Started | null = null

const terminate = (s: Started): Effect.Effect<void> =>
  Effect.promise(() => s.worker.terminate().then(() => undefined, () => undefined))

/**
 * The backup worker for the lifetime of the surrounding Scope. Interruption (or a dead worker)
 * terminates it, so a job still running in it stops; the next call starts a new one.
 */
export const makeBackupWorker: Effect.Effect<BackupWorker, never, Scope.Scope> = Effect.acquireRelease(
  Effect.sync(() => {
    if (shared === null || shared.isDead()) shared = start()
    return shared
  }),
  (s, exit) =>
    Exit.isInterrupted(exit) || s.isDead()
      ? Effect.suspend(() => {
        if (shared === s) shared = null
        return terminate(s)
      })
      : Effect.void
).pipe(Effect.map((s) => s.api))

/** Terminates the shared worker, if any (tests; a process that wants its memory back). */
export const stopBackupWorker: Effect.Effect<void> = Effect.suspend(() => {
  const s = shared
  shared = null
  return s === null ? Effect.void : terminate(s)
})
