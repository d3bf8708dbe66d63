/**
 * The main thread's side of the backup worker (architecture.md §11): one worker thread per
 * backup run, probe, verify or restore, started when the operation starts and terminated when
 * its Scope closes (also on interruption). Jobs are sent one at a time in order; each answers
 * with its result or fails with JobFailed (SQLite's code). A worker that dies fails every open
 * job with code worker-exited.
 */
import { Worker } from "node:worker_threads"
import { Effect, type Scope } from "effect"
import { type Job, JobFailed, type JobResult } from "./jobs.js"
import type { WorkerReply, WorkerRequest } from "./worker.js"
import { workerEntry } from "./worker-loader.js"

export interface BackupWorker {
  /** Runs `job` in the worker thread. */
  readonly run: <J extends Job>(job: J) => Effect.Effect<JobResult<J>, JobFailed>
  /** "dist" (compiled JavaScript) or "source" (TypeScript under vitest) */
  readonly mode: "dist" | "source"
  /** the worker's thread id (tests: the work really runs off the main thread) */
  readonly threadId: number
}

interface Pending {
  readonly resolve: (value: unknown) => void
  readonly reject: (e: JobFailed) => void
}

/** Starts a backup worker for the lifetime of the surrounding Scope. */
export const makeBackupWorker: Effect.Effect<BackupWorker, never, Scope.Scope> = Effect.acquireRelease(
  Effect.sync(() => {
    const entry = workerEntry(import.meta.url)
    const worker = new Worker(entry.url, { execArgv: [...entry.execArgv], stdout: false, stderr: false })
    worker.unref()
    const pending = new Map<number, Pending>()
    let next = 1
    let dead: JobFailed | null = null
    const failAll = (e: JobFailed) => {
      dead = e
      for (const p of pending.values()) p.reject(e)
      pending.clear()
    }
    worker.on("message", (reply: WorkerReply) => {
      const p = pending.get(reply.id)
      if (p === undefined) return
      pending.delete(reply.id)
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
        worker.ref()
        const request: WorkerRequest = { id, job }
        worker.postMessage(request)
        return Effect.sync(() => {
          pending.delete(id)
        })
      }).pipe(Effect.ensuring(Effect.sync(() => {
        if (pending.size === 0) worker.unref()
      })))
    return { worker, api: { run, mode: entry.mode, threadId: worker.threadId } satisfies BackupWorker }
  }),
  ({ worker }) => Effect.promise(() => worker.terminate().then(() => undefined, () => undefined))
).pipe(Effect.map(({ api }) => api))
