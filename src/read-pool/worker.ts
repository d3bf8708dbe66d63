/**
 * A read pool worker thread: runs jobs.ts one at a time on its own read-only connections and
 * answers each request with its value or its failure's first line. Started by pool.ts, from
 * dist/ as compiled JavaScript or under vitest from TypeScript source (the backup worker's loader
 * hooks). It never writes a file.
 */
import { setPriority } from "node:os"
import { parentPort, threadId, workerData } from "node:worker_threads"
import { Cause, Exit, Layer, Logger, ManagedRuntime } from "effect"
import { adoptShippedLexicon, shippedLexiconFrom } from "../search/lexical/lexicon.js"
import { makeJobRunner, type PoolJob, type PoolReply, type WorkerInit } from "./jobs.js"

export interface PoolRequest {
  readonly id: number
  readonly job: PoolJob
}

/** The body of a rendered search (rendered.ts), if `value` is one. */
const bodyOf = (value: unknown): Uint8Array | undefined => {
  const body = typeof value === "object" && value !== null ? (value as { readonly body?: unknown }).body : undefined
  return body instanceof Uint8Array ? body : undefined
}

const port = parentPort
if (port !== null) {
  const init = workerData as WorkerInit
  try {
    // this thread only (Linux); the main thread, with /healthz, the ops socket and the writer, keeps its priority
    if (init.nice > 0) setPriority(init.nice)
  } catch {
    // not permitted here: the worker runs at the process's priority
  }
  // the main thread's lexicon, shared: not read and built again here (~0.6 s and ~90 MB a worker)
  if (init.lexicon !== null) adoptShippedLexicon(init.lexicon)
  const runner = makeJobRunner(init)
  // the worker's log lines (a stage that failed) are JSON lines like the service's: one runtime with
  // that logger for every job (a layer provided per job was built again each time, ~2 ms a search).
  // No tracer: a worker's spans reach no tracer (the main thread's cannot see this thread's
  // fibers), and making them cost a new input's search ~15 % of its CPU and ~1.7× what its
  // objects promoted to the old generation (docs/performance.md)
  const runtime = ManagedRuntime.make(Layer.merge(Logger.json, Layer.setTracerEnabled(false)))
  let queue: Promise<void> = Promise.resolve()
  port.on("message", (request: PoolRequest) => {
    queue = queue.then(async () => {
      const exit = request.job.kind === "ping" ? Exit.succeed({ threadId, lexicon: shippedLexiconFrom() }) : await runtime.runPromiseExit(runner.run(request.job))
      let reply: PoolReply
      const transfer: Array<ArrayBuffer> = []
      if (Exit.isSuccess(exit)) {
        // an export's archive, a search's body: their buffers move to the main thread, uncopied
        const bytes = exit.value instanceof Uint8Array ? exit.value : bodyOf(exit.value)
        if (bytes !== undefined && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength) transfer.push(bytes.buffer as ArrayBuffer)
        reply = { id: request.id, ok: true, value: exit.value }
      } else {
        reply = { id: request.id, ok: false, message: (Cause.pretty(exit.cause).split("\n")[0] ?? "").slice(0, 300) }
      }
      port.postMessage(reply, transfer)
    })
  })
}
