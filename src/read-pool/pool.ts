/**
 * ReadPool: where the CPU-heavy reads run (docs/reliability.md, Overload). better-sqlite3
 * is synchronous, so a search or an export on the main thread blocks every other request,
 * /healthz and the ops socket included. The live pool runs them in worker threads, each with its
 * own read-only connections (jobs.ts), so two cores serve searches while the one writer (the
 * ScopeStore's connection) stays on the main thread; the search_log write stays there too (the
 * pipeline writes it after the search).
 *
 *   ReadPool.search(req, searchId)        search() of src/search, unchanged, in a worker when neither
 *                                         stage b nor c runs for any of its scopes (a stage's model
 *                                         or provider lives on the main thread) and the search is not
 *                                         alone (below); else on the main thread; its answer rendered
 *                                         as JSON text where it ran (rendered.ts)
 *   ReadPool.exportArchive(scope, opts)   the scope's export as .tar.gz bytes
 *   ReadPool.stats / warm                 jobs run where (tests, bench), start every worker and wait
 *
 * A lone search (nothing else in the pool or waiting for it, no other search and no other request
 * in flight (in-flight.ts), and none overlapping another for LONE_QUIET_MS) runs on the main
 * thread: with nothing to share the thread with, the hop to a worker and back (two thread
 * wake-ups) is the larger part of what the worker adds (sequential searches over HTTP: 7–11 ms on
 * the main thread against 14–16 ms through a worker). Under load searches overlap, and every one
 * goes to a worker.
 *
 * While a write holds a scope's connection (a redaction's apply: seconds), a search waits for a
 * worker that is starting; when none is up or starting (none may start yet), it reads on this
 * thread from read-only connections of the pool's own (jobs.ts's runner), as a worker would,
 * instead of waiting for the write. (Reading here while a worker boots was measured: a fresh
 * connection's first searches at 10k rules held this thread 100–490 ms each.)
 *
 * A worker's answer is held on the main thread (held.ts) under the stamps of each scope's file it
 * was read under: the same request again, while the main thread's connection shows the same
 * stamps, is answered from it without a worker (stats.held counts them).
 *
 * Read-your-writes: a job is posted after every write the client was answered about has
 * committed; its read transaction starts later, and WAL gives it every committed write.
 *
 * Layers: ReadPoolLive (workers: readPoolLayer({ size })), ReadPoolInThread (everything on the
 * calling thread: what the service did before the pool; a test or a bench swaps it in). The first
 * search starts every worker in the background, each searching that search's scopes once (its
 * connection opened, its caches read), so that the searches that need one later (under load,
 * during a redaction's apply) find it up; one more starts whenever a job has to wait and the pool is
 * not full; until the first worker is up, jobs run on the calling thread (nothing waits for a
 * worker to boot). A worker looks words up in this thread's lexicon (shared memory, lexicon.ts)
 * instead of reading and building a copy of its own. Run from
 * TypeScript source (vitest), where each worker transpiles the search code first (seconds of CPU),
 * they start only once `warm` asked for them: the other test files search on the main thread. A job
 * that fails in a worker is a SqlError (500 internal, like any failure of our own storage); a worker
 * that dies fails its job the same way and is replaced on the next job.
 */
import { availableParallelism } from "node:os"
import { Worker } from "node:worker_threads"
import type { SqlClient } from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { Clock, Context, Effect, Layer, Option } from "effect"
import { AppConfig } from "../config/config.js"
import { typeScriptExecArgv } from "../backup/worker-loader.js"
import { isWriting, writeTransaction } from "../db/connection.js"
import { ScopeStore } from "../db/scope-store.js"
import type { SearchRequest, StageState } from "../domain/search-schemas.js"
import { exportArchive as archiveOf } from "../export/archive.js"
import { buildExport } from "../export/build.js"
import { LexicalIndex } from "../search/lexical/index.js"
import { shippedLexiconImage } from "../search/lexical/lexicon.js"
import { lexicalOptions } from "../search/lexical/options.js"
import { search } from "../search/search.js"
import { availabilityOf, SearchStages, stageNamed } from "../search/stage.js"
import { dayIn } from "../contracts/time.js"
import { readStamp } from "../search/lexical/stamp-cache.js"
import { answerFrom, heldKey, heldAnswers } from "./held.js"
import { InFlight } from "./in-flight.js"
import { type JobValue, makeJobRunner, plainEnv, type PoolJob, type PoolReply, type WorkerInit } from "./jobs.js"
import { type RenderedSearch, renderSearch } from "./rendered.js"
import type { PoolRequest } from "./worker.js"

type SearchRun = ReturnType<typeof search>
export type SearchFailure = Effect.Effect.Error<SearchRun> | SqlError
export type SearchNeeds = Effect.Effect.Context<SearchRun>

export interface ExportOptions {
  readonly zone: string
  /** export time, epoch ms */
  readonly now: number
}

export interface ReadPoolStats {
  readonly kind: "in-thread" | "workers"
  /** the most workers the pool starts */
  readonly size: number
  /** workers started and answering */
  readonly ready: number
  /** jobs run in a worker */
  readonly inWorker: number
  /** jobs run on the calling thread (in-thread pool; a stage b/c search; before the first worker is up) */
  readonly inThread: number
  /** searches answered from a worker's answer held on this thread (held.ts), in no worker */
  readonly held: number
  /** jobs waiting for a worker now */
  readonly waiting: number
  /** workers that look words up in this thread's lexicon (shared memory) instead of a copy of their own */
  readonly lexiconShared: number
}

export interface ReadPoolShape {
  /** the search rendered where it ran (rendered.ts) */
  readonly search: (req: SearchRequest, searchId: string) => Effect.Effect<RenderedSearch, SearchFailure, SearchNeeds>
  readonly exportArchive: (scope: string, opts: ExportOptions) => Effect.Effect<Uint8Array, SqlError | Effect.Effect.Error<ReturnType<ScopeStore["use"]>>, ScopeStore>
  readonly stats: Effect.Effect<ReadPoolStats>
  /** starts every worker and waits until each answers (tests, benches); nothing for the in-thread pool */
  readonly warm: Effect.Effect<void>
  /**
   * Starts the workers that start on use and has each new one search the scopes once, without waiting for
   * them: before a long write (a redaction's apply), so the searches sent meanwhile find a worker up,
   * its connection open and its caches read (a worker's first search of a 10k-rule scope: ~200 ms)
   */
  readonly startWorkers: (scopes: ReadonlyArray<string>, text?: string) => Effect.Effect<void, never, SearchNeeds>
}

export class ReadPool extends Context.Tag("Groundnote/ReadPool")<ReadPool, ReadPoolShape>() {}

const exportInThread = (scope: string, opts: ExportOptions) =>
  Effect.gen(function*() {
    const store = yield* ScopeStore
    const { sql } = yield* store.use(scope)
    const files = yield* buildExport(sql, opts)
    return new Uint8Array(archiveOf(files, { mtime: Math.floor(opts.now / 1000) }))
  })

/** search() on the calling thread, rendered (rendered.ts). */
const renderedHere = (req: SearchRequest, searchId: string) => Effect.map(search(req, searchId), renderSearch)

/** Everything on the calling thread (the service before the pool; tests and benches that compare). */
export const ReadPoolInThread: Layer.Layer<ReadPool> = Layer.sync(ReadPool, () => {
  let inThread = 0
  return {
    search: (req, searchId) => Effect.zipRight(Effect.sync(() => inThread++), renderedHere(req, searchId)),
    exportArchive: (scope, opts) => Effect.zipRight(Effect.sync(() => inThread++), exportInThread(scope, opts)),
    stats: Effect.sync((): ReadPoolStats => ({ kind: "in-thread", size: 0, ready: 0, inWorker: 0, inThread, held: 0, waiting: 0, lexiconShared: 0 })),
    warm: Effect.void,
    startWorkers: () => Effect.void
  }
})

/** The text of the search a starting worker runs first (startWorkers) when none is given. */
const PRIMING_TEXT = "regel rule"

/**
 * One worker more than the machine's cores, never more than four: while a worker's answer goes to
 * the main thread and its next job comes back, another keeps the core busy, and a long search holds
 * up fewer behind it (docs/decisions.md «Read pool: one worker more than the cores»). The workers
 * run at nice 10, so the main thread is still served first.
 */
export const DEFAULT_POOL_SIZE = Math.max(1, Math.min(4, availableParallelism() + 1))

/** The workers' nice value: under a full CPU the main thread (listeners, ops socket, writer) is served first. */
export const DEFAULT_WORKER_NICE = 10

export interface ReadPoolOptions {
  /** the most worker threads (default DEFAULT_POOL_SIZE) */
  readonly size?: number
  /** the workers' nice value (default DEFAULT_WORKER_NICE; 0: the process's) */
  readonly nice?: number
  /**
   * A search alone on the service (nothing else in the pool, no other search or request in flight,
   * none overlapping another for LONE_QUIET_MS) runs on the calling thread: it saves the hop and two
   * thread wake-ups (default true; false: every search that may goes to a worker)
   */
  readonly loneInThread?: boolean
  /** how long after two searches overlapped a lone search still goes to a worker (default LONE_QUIET_MS) */
  readonly loneQuietMs?: number
  /**
   * Workers start on use: the first search starts them all (default: built, yes; from TypeScript
   * source, only once `warm` asked for them: each worker transpiles the search code first)
   */
  readonly startOnUse?: boolean
}

/**
 * How long after two searches last overlapped a lone search still goes to a worker: under load
 * the gaps between searches are short, and a search on the main thread there would hold up
 * /healthz and the ops socket.
 */
export const LONE_QUIET_MS = 1_000

interface Task {
  readonly job: PoolJob
  readonly resolve: (value: unknown) => void
  readonly reject: (message: string) => void
  cancelled: boolean
}

interface Slot {
  readonly worker: Worker
  ready: boolean
  /** where its lexicon came from (its first answer says) */
  lexicon: string
  dead: boolean
  busy: { readonly id: number; readonly task: Task } | null
}

/** true when this module runs as TypeScript source (vitest), false when compiled (dist/) */
const FROM_SOURCE = new URL(import.meta.url).pathname.endsWith(".ts")

const entryOf = () =>
  FROM_SOURCE
    ? { url: new URL("./worker.ts", import.meta.url), execArgv: [...typeScriptExecArgv()] }
    : { url: new URL("./worker.js", import.meta.url), execArgv: [] as Array<string> }

const failure = (message: string) => new SqlError({ message: `read pool: ${message}`, cause: message })

/** The worker pool; its workers end with the layer's scope. */
export const readPoolLayer = (options: ReadPoolOptions = {}): Layer.Layer<ReadPool, never, AppConfig | InFlight> =>
  Layer.scoped(ReadPool, Effect.gen(function*() {
    const config = yield* AppConfig
    const inFlight = yield* InFlight
    const size = Math.max(1, options.size ?? DEFAULT_POOL_SIZE)
    const init: WorkerInit = {
      file: config.file,
      env: plainEnv(config.env),
      nice: options.nice ?? DEFAULT_WORKER_NICE,
      // read (once per process) only when the search uses it: the workers share this thread's
      lexicon: lexicalOptions(config.file.search).features.synonyms ? shippedLexiconImage() : null
    }
    const slots: Array<Slot> = []
    const queue: Array<Task> = []
    const readyWaiters: Array<() => void> = []
    let nextId = 1
    let inWorker = 0
    let inThread = 0
    let closed = false
    /** workers start on first use; from source (vitest) only once warm asked for them: each worker transpiles the search code first */
    let startOnUse = options.startOnUse ?? !FROM_SOURCE
    const loneInThread = options.loneInThread ?? true
    const loneQuietMs = options.loneQuietMs ?? LONE_QUIET_MS
    /** searches in flight (in a worker, queued, or on this thread) */
    let searching = 0
    /** when a search last started while another was in flight (performance.now(): a scheduling matter, not the Clock's) */
    let overlappedAt = Number.NEGATIVE_INFINITY
    /** scope files whose lexical build the writer has checked (a worker's connection cannot rebuild it) */
    const built = new Set<string>()
    /** the workers' answers held on this thread (held.ts) */
    const held = heldAnswers()
    let answeredHeld = 0

    const dispatch = () => {
      for (const slot of slots) {
        if (!slot.ready || slot.dead || slot.busy !== null) continue
        let task = queue.shift()
        while (task !== undefined && task.cancelled) task = queue.shift()
        if (task === undefined) return
        const id = nextId++
        slot.busy = { id, task }
        slot.worker.ref()
        inWorker++
        const request: PoolRequest = { id, job: task.job }
        slot.worker.postMessage(request)
      }
    }

    const start = (): Slot => {
      const entry = entryOf()
      const worker = new Worker(entry.url, { execArgv: entry.execArgv, workerData: init, stdout: false, stderr: false })
      worker.unref()
      const slot: Slot = { worker, ready: false, lexicon: "unread", dead: false, busy: null }
      slots.push(slot)
      worker.on("message", (reply: PoolReply & { readonly id: number }) => {
        if (reply.id === 0) {
          slot.ready = true
          if (reply.ok) slot.lexicon = (reply.value as JobValue<{ readonly kind: "ping" }>).lexicon
          for (const w of readyWaiters.splice(0)) w()
          dispatch()
          return
        }
        const busy = slot.busy
        if (busy === null || busy.id !== reply.id) return
        slot.busy = null
        worker.unref()
        if (reply.ok) busy.task.resolve(reply.value)
        else busy.task.reject(reply.message)
        dispatch()
      })
      const die = (why: string) => {
        if (slot.dead) return
        slot.dead = true
        const at = slots.indexOf(slot)
        if (at >= 0) slots.splice(at, 1)
        slot.busy?.task.reject(why)
        slot.busy = null
        for (const w of readyWaiters.splice(0)) w()
        // jobs still queued go to the other workers, or to a new one
        if (!closed && queue.length > 0) startOne()
        dispatch()
      }
      worker.on("error", (e) => die(`a worker failed: ${e.message.slice(0, 200)}`))
      worker.on("exit", (code) => die(`a worker exited with code ${code}`))
      // the first answer (id 0) says the worker has loaded its modules
      worker.postMessage({ id: 0, job: { kind: "ping" } } satisfies PoolRequest)
      return slot
    }
    const startOne = () => {
      if (startOnUse && !closed && slots.length < size) start()
    }

    /** jobs.ts's runner on this thread, with read-only connections of its own (made on first use) */
    let here: ReturnType<typeof makeJobRunner> | null = null
    yield* Effect.addFinalizer(() =>
      Effect.promise(async () => {
        if (here !== null) await Effect.runPromise(here.close)
        closed = true
        for (const t of queue.splice(0)) t.reject("the pool closed")
        await Promise.all(slots.splice(0).map((s) => s.worker.terminate().catch(() => 0)))
      })
    )

    /**
     * Runs `job` in a worker; null when no worker is up yet (the caller runs it itself), unless
     * `waitForStart` and one is starting (the caller's thread cannot run it without waiting longer).
     */
    const inWorkerOr = <J extends PoolJob>(job: J, waitForStart = false): Effect.Effect<JobValue<J>, SqlError> | null => {
      if (slots.length === 0) startOne()
      const idle = slots.some((s) => s.ready && s.busy === null)
      if (!idle) startOne()
      if (!slots.some((s) => s.ready) && !(waitForStart && slots.length > 0)) return null
      return Effect.async<JobValue<J>, SqlError>((resume) => {
        const task: Task = {
          job,
          cancelled: false,
          resolve: (value) => resume(Effect.succeed(value as JobValue<J>)),
          reject: (message) => resume(Effect.fail(failure(message)))
        }
        queue.push(task)
        dispatch()
        return Effect.sync(() => {
          task.cancelled = true
        })
      })
    }

    const onThisThread = (req: SearchRequest, searchId: string) =>
      Effect.zipRight(Effect.sync(() => inThread++), renderedHere(req, searchId))

    /** nothing else runs in the pool or waits for it, no other request is in flight, and none overlapped lately */
    const alone = (): boolean => {
      const now = performance.now()
      // the request of this search is one of those in flight (none when it came another way)
      if (searching > 0 || inFlight.count() > 1) overlappedAt = now
      return searching === 0 && queue.length === 0 && slots.every((s) => s.busy === null) && now - overlappedAt >= loneQuietMs
    }

    /** What a worker needs for `req`: the stages' states and the files (null: a stage runs, the search stays here). */
    const placed = (req: SearchRequest) =>
      Effect.gen(function*() {
        const { stages } = yield* SearchStages
        const scopes = [...new Set(req.scopes)]
        const b = stageNamed(stages, "b")
        const c = stageNamed(stages, "c")
        const states = { b: {} as Record<string, StageState>, c: {} as Record<string, StageState> }
        for (const s of scopes) {
          const ab = availabilityOf(b, s)
          const ac = availabilityOf(c, s)
          // a stage that runs needs its model or its provider, which live on this thread
          if (ab === null || ac === null) return null
          states.b[s] = ab
          states.c[s] = ac
        }
        const store = yield* ScopeStore
        const lexical = yield* LexicalIndex
        const files: Record<string, string> = {}
        const handles: Array<readonly [string, SqlClient]> = []
        for (const s of scopes) {
          const h = yield* store.use(s)
          files[s] = h.file
          handles.push([s, h.sql])
          // a search on this thread or a write found the build current already: nothing waits for the writer
          if (!built.has(h.file) && !lexical.foundBuilt(h.sql)) {
            yield* writeTransaction(h.sql)(lexical.ensureBuild(h.sql))
            built.add(h.file)
          }
        }
        return { states, files, handles }
      })

    const pooledSearch = (req: SearchRequest, searchId: string): Effect.Effect<RenderedSearch, SearchFailure, SearchNeeds> =>
      Effect.gen(function*() {
        const place = yield* placed(req)
        if (place === null) return null
        const { states, files, handles } = place
        const nowMs = yield* Clock.currentTimeMillis
        const key = heldKey(req, states, dayIn(config.file.zone, nowMs))
        const kept = held.get(key)
        // a held answer is checked against stamps read on the writer's connection: not while a write holds it
        if (kept !== undefined && !handles.some(([, sql]) => isWriting(sql))) {
          let same = true
          for (const [s, sql] of handles) {
            if ((yield* readStamp(sql)) !== kept.stamps[s]) {
              same = false
              break
            }
          }
          if (same) {
            answeredHeld++
            return answerFrom(kept, searchId)
          }
          held.delete(key)
        }
        const searchJob: PoolJob = { kind: "search", req, searchId, nowMs, files, stages: states }
        const busy = handles.some(([, sql]) => isWriting(sql))
        if (busy && slots.length === 0) startOne()
        if (busy && slots.length === 0) {
          // a write holds a scope's connection (a redaction's apply: seconds) and no worker is up or
          // starting: read here, on read-only connections of our own, not after the write
          inThread++
          here ??= makeJobRunner(init)
          const out = (yield* Effect.mapError(here.run(searchJob), (e) => failure(String(e).split("\n")[0] ?? ""))) as RenderedSearch
          held.offer(key, out)
          return out
        }
        // while a write holds a scope's connection, a worker that is still starting answers sooner
        const job = inWorkerOr(searchJob, busy)
        if (job === null) return null
        const out = yield* job
        held.offer(key, out)
        return out
      }).pipe(Effect.flatMap((out) =>
        out !== null ? Effect.succeed(out) : onThisThread(req, searchId)))

    /** starts the workers not yet started, each searching `scopes` once; `onlyForWorkers`: not when a stage keeps these searches here */
    const startPrimed = (scopes: ReadonlyArray<string>, text: string, onlyForWorkers: boolean): Effect.Effect<void, never, SearchNeeds> =>
      Effect.gen(function*() {
        if (!startOnUse || closed || slots.length >= size) return
        const req: SearchRequest = { scopes: [...scopes], cross_scope: scopes.length > 1, text, as_of: null, include_proposals: false, limit: 10 }
        const place = scopes.length === 0 ? null : yield* placed(req)
        if (place === null && onlyForWorkers) return
        const before = slots.length
        while (slots.length < size) start()
        // workers up already have read what searches read
        const started = slots.length - before
        if (started === 0 || place === null) return
        const nowMs = yield* Clock.currentTimeMillis
        // one job per new worker: a starting worker takes the next one when it is up
        for (let i = 0; i < started; i++) {
          const job = inWorkerOr({ kind: "search", req, searchId: "priming", nowMs, files: place.files, stages: place.states }, true)
          if (job !== null) yield* Effect.forkDaemon(Effect.ignore(job))
        }
      }).pipe(Effect.ignore)

    const startWorkers = (scopes: ReadonlyArray<string>, text: string = PRIMING_TEXT) => startPrimed(scopes, text, false)

    /**
     * The first search starts the workers in the background (nothing waits for them): a worker
     * takes 1.5–3 s to load its modules and the lexicon, and the searches that need one (under
     * load, or while a write holds the connection) should find it up and its caches read.
     */
    let started = false
    const startOnFirstSearch = (req: SearchRequest): Effect.Effect<void, never, SearchNeeds> =>
      started || !startOnUse ? Effect.void : Effect.zipRight(
        Effect.sync(() => {
          started = true
        }),
        Effect.asVoid(Effect.forkDaemon(startPrimed([...new Set(req.scopes)], PRIMING_TEXT, true)))
      )

    /** whether a write transaction holds (or waits for) the connection of one of the scopes */
    const writerBusy = (scopes: ReadonlyArray<string>) =>
      Effect.flatMap(ScopeStore, (store) =>
        Effect.map(Effect.forEach(scopes, (s) => Effect.option(store.use(s))), (hs) => hs.some((h) => Option.isSome(h) && isWriting(h.value.sql))))

    /**
     * A lone search runs on this thread, on the writer's connection, unless a write holds it: a
     * redaction's apply takes seconds, and searches keep being answered meanwhile (gaps.md §12).
     */
    const searchIn = (req: SearchRequest, searchId: string): Effect.Effect<RenderedSearch, SearchFailure, SearchNeeds> =>
      Effect.flatMap(Effect.zipRight(startOnFirstSearch(req), writerBusy(req.scopes)), (busy) =>
        Effect.suspend(() => {
          const lone = alone() && loneInThread && !busy
          searching++
          return (lone ? onThisThread(req, searchId) : pooledSearch(req, searchId)).pipe(Effect.ensuring(Effect.sync(() => searching--)))
        }))

    const exportIn = (scope: string, opts: ExportOptions) =>
      Effect.gen(function*() {
        const store = yield* ScopeStore
        const h = yield* store.use(scope)
        const job = inWorkerOr({ kind: "export", scope, file: h.file, zone: opts.zone, nowMs: opts.now })
        if (job !== null) return yield* job
        inThread++
        return yield* exportInThread(scope, opts)
      })

    const warm = Effect.async<void>((resume) => {
      startOnUse = true
      while (slots.length < size) start()
      const check = () => {
        if (slots.length >= size && slots.every((s) => s.ready)) resume(Effect.void)
        else if (slots.some((s) => s.dead) || slots.length < size) {
          while (slots.length < size) start()
          readyWaiters.push(check)
        } else readyWaiters.push(check)
      }
      check()
    })

    return {
      search: searchIn,
      exportArchive: exportIn,
      startWorkers,
      stats: Effect.sync((): ReadPoolStats => ({ kind: "workers", size, ready: slots.filter((s) => s.ready).length, inWorker, inThread, held: answeredHeld, waiting: queue.length, lexiconShared: slots.filter((s) => s.lexicon === "shared").length })),
      warm
    } satisfies ReadPoolShape
  }))

export const ReadPoolLive = readPoolLayer()
