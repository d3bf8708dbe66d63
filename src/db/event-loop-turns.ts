/**
 * Turns of the event loop during a long run of SQLite statements. better-sqlite3 runs each
 * statement synchronously, and a fiber goes on from one to the next without letting Node poll its
 * sockets (Effect yields to microtasks, and only after 2,048 operations): a redaction's thousands
 * of statements (seconds) would hold every request, /healthz included, until they end. A run asks
 * for a turn between two statements; once `everyMs` of work passed since the last one, the fiber
 * waits for setImmediate turns until no request step waits for its run (transport/interleave.ts),
 * for at most YIELD_MAX_MS: requests go first, each through its steps without a stretch of the run
 * between two of them, and the run goes on while they wait for a worker or for the network. A
 * search reads in a worker, on its own connection; a write waits for the connection as always.
 */
import { Effect } from "effect"
import { requestStepsWaiting } from "../transport/interleave.js"

/** The longest stretch of statements between two turns. */
export const TURN_EVERY_MS = 1

/** The longest a turn lets requests go first before the run goes on. */
export const YIELD_MAX_MS = 50

const nextTurn = Effect.async<void>((resume) => {
  const turn = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(turn))
})

/** A fresh turn-taker for one run: an effect to yield between statements. */
export const eventLoopTurns = (everyMs: number = TURN_EVERY_MS): Effect.Effect<void> => {
  let last = performance.now()
  return Effect.suspend(() => {
    const started = performance.now()
    if (started - last < everyMs) return Effect.void
    return Effect.gen(function*() {
      yield* nextTurn
      while (requestStepsWaiting() && performance.now() - started < YIELD_MAX_MS) yield* nextTurn
      last = performance.now()
    })
  })
}
