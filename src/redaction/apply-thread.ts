/**
 * A redaction's apply on a thread of its own (gaps.md §12 "searches keep being answered
 * meanwhile"). better-sqlite3 runs every statement on the thread that calls it: the apply's
 * seconds of statements and its COMMIT (~40 ms at 1,000 places) on the main thread held every
 * request, /healthz included, for as long as each ran. Here the main thread holds the scope's
 * connection (holdingConnection: no write of this process interleaves; searches meanwhile read in
 * the read pool's workers, their search_log rows wait) while the apply thread (apply-worker.ts)
 * runs applyRedaction on a read-write connection of its own to the same file: the places found
 * again, written, every derived row rebuilt, one COMMIT. Then, while the thread checkpoints
 * (TRUNCATE, on its connection), `afterCommit` runs here (the ledger of ops.sqlite).
 *
 * Nothing partial is stored: a failure in the thread rolls its transaction back and comes here as
 * the same typed error the apply fails with on any connection (preview-stale, validation-failed,
 * a SqlError). The caches of the main connection (stamp-cache.ts, the redacted marks, the
 * search_log hashes) see the new text on their next read: content_stamp and index_stamp move in
 * the thread's transaction by their triggers, like in any writer's.
 *
 * One thread per process, started by the preview (warmApplyThread: it loads its modules while the
 * person reads the preview) or by the first confirmation, and kept for the next one (unref: it
 * keeps no process alive; it holds no connection between redactions). Once started, an apply runs
 * to its end (uninterruptible): the person confirmed, and a stopped apply would leave the commit
 * and the ledger to chance. A thread that cannot start or dies before it committed: the apply runs
 * on the main thread's connection as before (a warning in the log); one that dies after: the main
 * connection checkpoints.
 */
import { Worker } from "node:worker_threads"
import type { SqlClient } from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { Deferred, Effect, Either, Exit } from "effect"
import { PreviewStale, ValidationFailed } from "../contracts/errors.js"
import { holdingConnection } from "../db/connection.js"
import type { RuleIndex } from "../domain/rule-index.js"
import type { LexicalOptions } from "../search/lexical/options.js"
import { type Applied, type ApplyRequest, applyRedaction, checkpointAfterRedaction } from "./apply.js"

export interface ApplyThreadInit {
  /** the thread's nice value (Linux: per thread) */
  readonly nice: number
}

export type ThreadJob =
  | { readonly kind: "ping" }
  | { readonly kind: "apply"; readonly file: string; readonly lexical: LexicalOptions; readonly request: ApplyRequest }

export interface ThreadRequest {
  readonly id: number
  readonly job: ThreadJob
}

export type ThreadFailure =
  | { readonly kind: "coded"; readonly tag: string; readonly fields: { readonly message: string; readonly issues?: unknown; readonly scope?: string } }
  | { readonly kind: "sql"; readonly message: string; readonly cause: string }
  | { readonly kind: "defect"; readonly message: string }
  /** the thread could not start or died: nothing of this job's ran to its end there */
  | { readonly kind: "thread"; readonly message: string }

export type ThreadReply =
  | { readonly id: number; readonly kind: "ready" }
  | { readonly id: number; readonly kind: "committed"; readonly applied: Applied }
  | { readonly id: number; readonly kind: "checkpointed"; readonly clean: boolean }
  | { readonly id: number; readonly kind: "failed"; readonly failure: ThreadFailure }

/**
 * The apply thread's nice value: under a full CPU the main thread (requests, /healthz) and the
 * read pool's workers (nice 10, the searches meanwhile) are served before the apply (at the
 * workers' own value it shared their core with them: the searches' p99 missed 3× idle more often).
 */
export const APPLY_THREAD_NICE = 19

export interface ThreadEntry {
  /** Node options of the thread when it runs from TypeScript source (vitest): the transpiling hooks */
  readonly sourceExecArgv: ReadonlyArray<string>
}

interface Thread {
  readonly worker: Worker
  dead: boolean
  readonly listeners: Map<number, (reply: ThreadReply) => void>
}

/** true when this module runs as TypeScript source (vitest), false when compiled (dist/) */
const FROM_SOURCE = new URL(import.meta.url).pathname.endsWith(".ts")

let shared: Thread | null = null
let nextId = 1

const start = (entry: ThreadEntry): Thread => {
  const url = new URL(FROM_SOURCE ? "./apply-worker.ts" : "./apply-worker.js", import.meta.url)
  const init: ApplyThreadInit = { nice: APPLY_THREAD_NICE }
  const worker = new Worker(url, { execArgv: FROM_SOURCE ? [...entry.sourceExecArgv] : [], workerData: init, stdout: false, stderr: false })
  worker.unref()
  const thread: Thread = { worker, dead: false, listeners: new Map() }
  worker.on("message", (reply: ThreadReply) => thread.listeners.get(reply.id)?.(reply))
  const die = (message: string) => {
    if (thread.dead) return
    thread.dead = true
    if (shared === thread) shared = null
    for (const [id, listener] of [...thread.listeners]) listener({ id, kind: "failed", failure: { kind: "thread", message } })
  }
  worker.on("error", (e) => die(`the apply thread failed: ${e.message.slice(0, 200)}`))
  worker.on("exit", (code) => die(`the apply thread exited with code ${code}`))
  worker.postMessage({ id: 0, job: { kind: "ping" } } satisfies ThreadRequest)
  return thread
}

const threadOf = (entry: ThreadEntry): Thread => {
  if (shared === null || shared.dead) shared = start(entry)
  return shared
}

/** Starts the apply thread unless it is up (the preview: a confirmation may follow). */
export const warmApplyThread = (entry: ThreadEntry): Effect.Effect<void> =>
  Effect.sync(() => {
    try {
      threadOf(entry)
    } catch {
      // no thread here: the apply runs on the main thread
    }
  })

type ApplyFailure = PreviewStale | ValidationFailed | SqlError

/** The thread's failure as the apply fails on the main thread: the same typed errors. */
const asFailure = (f: Exclude<ThreadFailure, { kind: "thread" }>): Effect.Effect<never, ApplyFailure> => {
  switch (f.kind) {
    case "coded":
      if (f.tag === "PreviewStale") return Effect.fail(new PreviewStale(f.fields as ConstructorParameters<typeof PreviewStale>[0]))
      if (f.tag === "ValidationFailed") return Effect.fail(new ValidationFailed(f.fields as ConstructorParameters<typeof ValidationFailed>[0]))
      return Effect.dieMessage(`the apply thread failed with ${f.tag}: ${f.fields.message}`)
    case "sql":
      return Effect.fail(new SqlError({ message: f.message, cause: f.cause }))
    case "defect":
      return Effect.dieMessage(f.message)
  }
}

export interface ApplyOnThreadOptions<E, R> {
  readonly entry: ThreadEntry
  /** the lexical index's options of the service (the thread rebuilds lex_* with the same) */
  readonly lexical: LexicalOptions
  /** runs once the redaction committed, while the thread checkpoints (the ledger) */
  readonly afterCommit: (applied: Applied) => Effect.Effect<void, E, R>
}

export interface AppliedOnThread {
  readonly applied: Applied
  /** whether the TRUNCATE checkpoint after the commit completed */
  readonly clean: boolean
}

/**
 * applyRedaction of `req` on the apply thread, on its own connection to `file`, while this thread
 * holds `sql` (the scope's connection of this process); then `afterCommit`, and the checkpoint.
 */
export const applyOnThread = <E, R>(sql: SqlClient, file: string, req: ApplyRequest, options: ApplyOnThreadOptions<E, R>) =>
  Effect.uninterruptible(Effect.gen(function*() {
    const committed = yield* Deferred.make<Applied, ThreadFailure>()
    const checkpointed = yield* Deferred.make<boolean, ThreadFailure>()
    const onReply = (reply: ThreadReply) => {
      switch (reply.kind) {
        case "committed":
          Deferred.unsafeDone(committed, Exit.succeed(reply.applied))
          return
        case "checkpointed":
          Deferred.unsafeDone(checkpointed, Exit.succeed(reply.clean))
          return
        case "failed":
          // before the commit this fails the apply; after it only the checkpoint
          Deferred.unsafeDone(committed, Exit.fail(reply.failure))
          Deferred.unsafeDone(checkpointed, Exit.fail(reply.failure))
          return
        case "ready":
          return
      }
    }
    const outcome = yield* holdingConnection(sql, Effect.gen(function*() {
      const id = nextId++
      let thread: Thread | null = null
      try {
        thread = threadOf(options.entry)
      } catch (e) {
        onReply({ id, kind: "failed", failure: { kind: "thread", message: `the apply thread cannot start: ${String(e).slice(0, 200)}` } })
      }
      if (thread !== null) {
        const t = thread
        t.listeners.set(id, onReply)
        t.worker.ref() // a running apply keeps the process alive
        t.worker.postMessage({ id, job: { kind: "apply", file, lexical: options.lexical, request: req } } satisfies ThreadRequest)
      }
      const release = Effect.sync(() => {
        if (thread === null) return
        thread.listeners.delete(id)
        if (thread.listeners.size === 0) thread.worker.unref()
      })
      return yield* Effect.ensuring(Effect.gen(function*() {
        const applied = yield* Effect.either(Deferred.await(committed))
        if (Either.isLeft(applied)) return { failed: applied.left } as const
        yield* options.afterCommit(applied.right)
        const clean = yield* Effect.either(Deferred.await(checkpointed))
        return { applied: applied.right, clean: Either.isRight(clean) ? clean.right : null } as const
      }), release)
    }))
    if ("failed" in outcome) {
      const f = outcome.failed
      if (f.kind !== "thread") return yield* asFailure(f)
      // nothing ran to its end on the thread: the apply runs here, on the scope's connection
      yield* Effect.logWarning("redaction apply thread unavailable; applying on the main thread").pipe(Effect.annotateLogs({ scope: req.scope, cause: f.message }))
      const applied = yield* applyRedaction(sql, req)
      yield* options.afterCommit(applied)
      return { applied, clean: yield* checkpointAfterRedaction(sql) } satisfies AppliedOnThread
    }
    // the thread committed but could not checkpoint: this connection does it
    const clean = outcome.clean ?? (yield* checkpointAfterRedaction(sql))
    return { applied: outcome.applied, clean } satisfies AppliedOnThread
  })) as Effect.Effect<AppliedOnThread, ApplyFailure | E, R | RuleIndex>
