/**
 * The redaction's apply thread (apply-thread.ts starts it): runs applyRedaction, unchanged, on a
 * read-write connection of its own to the scope file, commits, reports the commit, then runs
 * `PRAGMA wal_checkpoint(TRUNCATE)` on the same connection and reports whether it completed. The
 * main thread holds the scope's own connection meanwhile, so no write of the service interleaves.
 * One job at a time; the connection is closed after each job (none is kept between redactions).
 * Started by the preview, so its modules are loaded while the person reads it. It never logs (the
 * term and the reason stay out of every log line).
 */
import { setPriority } from "node:os"
import { parentPort, workerData } from "node:worker_threads"
import { SqlError } from "@effect/sql/SqlError"
import { Cause, Effect, Exit, Option } from "effect"
import { isDomainError } from "../contracts/errors.js"
import { openConnection } from "../db/connection.js"
import { RuleIndex, type RuleIndexShape } from "../domain/rule-index.js"
import { makeLexicalIndex } from "../search/lexical/index.js"
import type { LexicalOptions } from "../search/lexical/options.js"
import { ruleIndexOf } from "../search/rule-index.js"
import { applyRedaction, checkpointAfterRedaction } from "./apply.js"
import type { ApplyThreadInit, ThreadFailure, ThreadReply, ThreadRequest } from "./apply-thread.js"

/** The first line of a cause's failure or defect, without a stack (no text of the scope is in it). */
const failureOf = (cause: Cause.Cause<unknown>): ThreadFailure => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) {
    const e = failure.value
    if (isDomainError(e)) {
      const { _tag, message, issues, scope } = e as unknown as { _tag: string; message: string; issues?: unknown; scope?: string }
      return { kind: "coded", tag: _tag, fields: { message, ...(issues === undefined ? {} : { issues }), ...(scope === undefined ? {} : { scope }) } }
    }
    if (e instanceof SqlError) return { kind: "sql", message: e.message, cause: String(e.cause).slice(0, 300) }
  }
  return { kind: "defect", message: (Cause.pretty(cause).split("\n")[0] ?? "").slice(0, 300) }
}

const port = parentPort
if (port !== null) {
  const init = workerData as ApplyThreadInit
  try {
    // this thread only (Linux): the main thread and the read pool's searches come first
    if (init.nice > 0) setPriority(init.nice)
  } catch {
    // not permitted here: the thread runs at the process's priority
  }
  /** the RuleIndex of each lexical configuration seen (one in a service) */
  const indexes = new Map<string, RuleIndexShape>()
  const indexOf = (options: LexicalOptions): RuleIndexShape => {
    const key = JSON.stringify(options)
    const known = indexes.get(key)
    if (known !== undefined) return known
    const made = ruleIndexOf(makeLexicalIndex(options))
    indexes.set(key, made)
    return made
  }
  const reply = (r: ThreadReply) => port.postMessage(r)

  let queue: Promise<void> = Promise.resolve()
  port.on("message", (request: ThreadRequest) => {
    queue = queue.then(async () => {
      if (request.job.kind === "ping") {
        reply({ id: request.id, kind: "ready" })
        return
      }
      const job = request.job
      const program = Effect.scoped(Effect.gen(function*() {
        const sql = yield* Effect.mapError(openConnection(job.file), (e) => new SqlError({ message: `cannot open the scope file: ${e.reason}`, cause: e.reason }))
        // the COMMIT copies no page into the file (the TRUNCATE checkpoint after it does)
        yield* sql`PRAGMA wal_autocheckpoint = 0`.raw
        const applied = yield* applyRedaction(sql, job.request, { turns: false }).pipe(Effect.provideService(RuleIndex, indexOf(job.lexical)))
        reply({ id: request.id, kind: "committed", applied })
        const clean = yield* Effect.either(checkpointAfterRedaction(sql))
        reply(clean._tag === "Right"
          ? { id: request.id, kind: "checkpointed", clean: clean.right }
          : { id: request.id, kind: "failed", failure: failureOf(Cause.fail(clean.left)) })
      }))
      const exit = await Effect.runPromiseExit(program)
      if (Exit.isFailure(exit)) reply({ id: request.id, kind: "failed", failure: failureOf(exit.cause) })
    })
  })
}
