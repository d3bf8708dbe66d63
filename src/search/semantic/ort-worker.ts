/**
 * onnxruntime-node in a worker thread. Its Node binding loads a model and runs a session
 * synchronously on the calling thread (run() only defers by one setImmediate), so a model run on
 * the main thread would stop every request for its whole duration. The worker holds one CPU
 * session; the main thread tokenizes, pools and normalises (tokenize.ts, pooling.ts) and sends it
 * finished feeds. The worker is a short CommonJS script evaluated in place (no second file to
 * build or locate); it requires onnxruntime-node from the path this module resolves.
 *
 * A run cannot be interrupted (the binding has no terminate); a caller that stops waiting gets
 * its answer dropped when it arrives (embedder.ts). close() lets the call in flight end first
 * (at most CLOSE_WAIT_MS): terminating the thread inside a native run aborts the whole process
 * (a C++ exception escapes the binding during the worker's teardown), then terminates it.
 */
import { createRequire } from "node:module"
import { Worker } from "node:worker_threads"
import type { Feed, IoMeta } from "./feeds.js"

const WORKER_SOURCE = `
"use strict";
const { parentPort, workerData } = require("node:worker_threads");
const ort = require(workerData.ort);
let session = null;
parentPort.on("message", async (m) => {
  try {
    if (m.type === "load") {
      session = await ort.InferenceSession.create(m.path, m.options);
      parentPort.postMessage({ id: m.id, ok: true, inputs: session.inputMetadata, outputs: session.outputMetadata });
    } else if (m.type === "run") {
      if (session === null) throw new Error("no model loaded");
      const feeds = {};
      for (const f of m.feeds) feeds[f.name] = new ort.Tensor(f.type, f.data, f.dims);
      const out = await session.run(feeds, [m.output]);
      const t = out[m.output];
      let data = t.data;
      if (data.byteOffset !== 0 || data.byteLength !== data.buffer.byteLength) data = data.slice();
      parentPort.postMessage({ id: m.id, ok: true, data, dims: Array.from(t.dims, Number), type: t.type }, [data.buffer]);
    }
  } catch (e) {
    parentPort.postMessage({ id: m.id, ok: false, error: e && e.message ? String(e.message) : String(e) });
  }
});
`

export interface OrtOutput {
  readonly data: Float32Array | Uint16Array
  readonly dims: ReadonlyArray<number>
  readonly type: string
}

export interface OrtSessionOptions {
  /** threads of one operator (0: onnxruntime's default, one per core) */
  readonly intraOpNumThreads: number
}

export interface OrtWorker {
  readonly load: (path: string, options: OrtSessionOptions) => Promise<{ inputs: Array<IoMeta>; outputs: Array<IoMeta> }>
  readonly run: (feeds: ReadonlyArray<Feed>, output: string) => Promise<OrtOutput>
  /** why the thread is gone (an uncaught error, or close()), or null while it runs */
  readonly gone: () => string | null
  readonly close: () => Promise<void>
}

type Reply =
  | { id: number; ok: true; inputs?: Array<IoMeta>; outputs?: Array<IoMeta>; data?: Float32Array | Uint16Array; dims?: Array<number>; type?: string }
  | { id: number; ok: false; error: string }

/** close() waits this long for a run in flight before it terminates the thread anyway */
export const CLOSE_WAIT_MS = 120_000

export const spawnOrtWorker = (): OrtWorker => {
  const ortPath = createRequire(import.meta.url).resolve("onnxruntime-node")
  // not unref'd: a pending embedding keeps the process alive (a CLI's doctor check would end
  // mid-load otherwise); close() — the embedder's Scope — ends the thread.
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { ort: ortPath } })
  const pending = new Map<number, { resolve: (r: Reply & { ok: true }) => void; reject: (e: Error) => void }>()
  /** the calls the worker has not answered yet (close() lets them end) */
  const inFlight = new Set<Promise<unknown>>()
  let next = 1
  let goneReason: string | null = null
  const failAll = (reason: string) => {
    goneReason ??= reason
    for (const p of pending.values()) p.reject(new Error(reason))
    pending.clear()
  }
  worker.on("message", (r: Reply) => {
    const p = pending.get(r.id)
    if (p === undefined) return
    pending.delete(r.id)
    if (r.ok) p.resolve(r)
    else p.reject(new Error(r.error))
  })
  worker.on("error", (e) => failAll(`embedding worker failed: ${e.message}`))
  worker.on("exit", (code) => failAll(`embedding worker exited (${code})`))

  const call = (message: Record<string, unknown>): Promise<Reply & { ok: true }> => {
    const p = new Promise<Reply & { ok: true }>((resolve, reject) => {
      if (goneReason !== null) return reject(new Error(goneReason))
      const id = next++
      pending.set(id, { resolve, reject })
      worker.postMessage({ ...message, id })
    })
    const settled = p.then(() => undefined, () => undefined)
    inFlight.add(settled)
    void settled.then(() => inFlight.delete(settled))
    return p
  }

  return {
    load: async (path, options) => {
      const r = await call({
        type: "load", path,
        options: { executionProviders: ["cpu"], graphOptimizationLevel: "all", intraOpNumThreads: options.intraOpNumThreads, logSeverityLevel: 3 }
      })
      return { inputs: r.inputs ?? [], outputs: r.outputs ?? [] }
    },
    run: async (feeds, output) => {
      const r = await call({ type: "run", feeds, output })
      if (r.data === undefined || r.dims === undefined) throw new Error("the worker answered without an output")
      return { data: r.data, dims: r.dims, type: r.type ?? "float32" }
    },
    gone: () => goneReason,
    close: async () => {
      goneReason ??= "embedding worker closed"
      if (inFlight.size > 0) {
        let timer: NodeJS.Timeout | undefined
        await Promise.race([
          Promise.all([...inFlight]),
          new Promise((resolve) => { timer = setTimeout(resolve, CLOSE_WAIT_MS) })
        ])
        clearTimeout(timer)
      }
      await worker.terminate()
      failAll("embedding worker closed")
    }
  }
}
