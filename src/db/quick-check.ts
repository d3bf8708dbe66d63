/**
 * `PRAGMA quick_check` of a scope file on a thread of its own (the open check of architecture.md
 * §4.3, on first use). The check reads every page of the file: 0.3 s for a 50 MB file, seconds
 * for a large scope. On the main thread nothing else was read meanwhile — no request, no
 * /healthz probe, no ops call. The thread opens the file read-only with better-sqlite3, answers
 * the check's rows (["ok"] when the file is sound) or the error's message, and ends. Starting it
 * costs ~60 ms, once per scope and process. The thread's connection runs the storage hygiene
 * pragmas of every connection (connection.ts HYGIENE_PRAGMAS) before it reads.
 */
import { createRequire } from "node:module"
import { Worker } from "node:worker_threads"
import { Effect } from "effect"
import { HYGIENE_PRAGMAS } from "./connection.js"

/** The entry of better-sqlite3 as this module resolves it (the thread's code is a script: it is given the path). */
const BETTER_SQLITE3 = createRequire(import.meta.url).resolve("better-sqlite3")

const CODE = `
const { parentPort, workerData } = require("node:worker_threads")
let reply
try {
  const Database = require(workerData.module)
  const db = new Database(workerData.file, { readonly: true, fileMustExist: true })
  try {
    for (const pragma of workerData.pragmas) db.exec(pragma)
    reply = { ok: true, rows: db.pragma(workerData.read).map((r) => String(Object.values(r)[0])) }
  } finally {
    db.close()
  }
} catch (e) {
  reply = { ok: false, message: String((e && e.message) || e) }
}
parentPort.postMessage(reply)
`

type Reply = { readonly ok: true; readonly rows: ReadonlyArray<string> } | { readonly ok: false; readonly message: string }

/** The rows of `PRAGMA quick_check` on `file`, run on another thread; a failure carries SQLite's message. */
export const quickCheck = (file: string): Effect.Effect<ReadonlyArray<string>, Error> => pragmaOnThread(file, "quick_check")

/** The first column of each row of `PRAGMA <read>` on `file`, on a thread's read-only connection. */
export const pragmaOnThread = (file: string, read: string): Effect.Effect<ReadonlyArray<string>, Error> =>
  Effect.async<ReadonlyArray<string>, Error>((resume) => {
    const workerData = { module: BETTER_SQLITE3, file, pragmas: [...HYGIENE_PRAGMAS], read }
    const worker = new Worker(CODE, { eval: true, workerData, stdout: false, stderr: false })
    let settled = false
    const settle = (outcome: Effect.Effect<ReadonlyArray<string>, Error>) => {
      if (settled) return
      settled = true
      resume(outcome)
    }
    worker.once("message", (reply: Reply) => {
      settle(reply.ok ? Effect.succeed(reply.rows) : Effect.fail(new Error(reply.message)))
      void worker.terminate()
    })
    worker.once("error", (e) => settle(Effect.fail(e)))
    worker.once("exit", (code) => settle(Effect.fail(new Error(`the check's thread exited with code ${code}`))))
    return Effect.sync(() => {
      settled = true
      void worker.terminate()
    })
  })
