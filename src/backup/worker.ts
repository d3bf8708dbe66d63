/**
 * The backup worker thread (architecture.md §11): runs jobs.ts one at a time on its own
 * read-only connections and answers each request with its result or its JobFailed. Started by
 * worker-client.ts, from dist/ as compiled JavaScript or under vitest from TypeScript source
 * (worker-loader.ts). It holds no connection between jobs and writes only the files a job names.
 */
import { parentPort } from "node:worker_threads"
import { Cause, Effect, Exit, Option } from "effect"
import { type Job, JobFailed, runJob } from "./jobs.js"

export interface WorkerRequest {
  readonly id: number
  readonly job: Job
}

export type WorkerReply =
  | { readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly id: number; readonly ok: false; readonly code: string; readonly message: string }

const port = parentPort
if (port !== null) {
  let queue: Promise<void> = Promise.resolve()
  port.on("message", (request: WorkerRequest) => {
    queue = queue.then(async () => {
      const exit = await Effect.runPromiseExit(runJob(request.job))
      let reply: WorkerReply
      if (Exit.isSuccess(exit)) {
        reply = { id: request.id, ok: true, value: exit.value }
      } else {
        const failure = Cause.failureOption(exit.cause)
        const e = Option.isSome(failure) ? failure.value : null
        reply = e instanceof JobFailed
          ? { id: request.id, ok: false, code: e.code, message: e.message }
          : { id: request.id, ok: false, code: "worker-failed", message: Cause.pretty(exit.cause).split("\n")[0] ?? "" }
      }
      port.postMessage(reply)
    })
  })
}
