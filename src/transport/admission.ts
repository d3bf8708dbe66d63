/**
 * Admission control of the public listener (docs/reliability.md, Overload): a bounded number of requests
 * served at once, a bounded queue behind them, fairness per grant, and beyond that 503
 * `overloaded` with Retry-After at once instead of unbounded latency. /healthz (and the
 * protected-resource document) never wait here; the ops socket is another listener and has no
 * gate at all.
 *
 *   active   at most `maxActive` requests run at once (their reads go to the read pool, their
 *            writes to the one writer): enough to keep every worker and the main thread busy
 *   queue    at most `maxQueued` wait behind them; a free slot goes to the keys in turn (round
 *            robin), so a key with one request waiting is served after at most one request of
 *            every other waiting key, however many the others queued
 *   full     a request that finds the queue full takes the place of a waiting one, who is answered
 *            503, when that is fairer: first the newest waiter of the key with the longest queue,
 *            when that key holds at least two more than the newcomer's (so one greedy grant fills
 *            the queue only while nobody else wants in, and cannot keep anyone out); else, within
 *            the newcomer's own key, the waiter whose connection has been served most, when it has
 *            been served more often than the newcomer's connection (so the clients of one grant
 *            take turns: a client answered 503 is not kept out by those whose next request comes
 *            back the moment they are answered). Otherwise the newcomer is answered 503
 *
 * The key is the request's credential before step 1 has run (a digest of Authorization, else of
 * Cf-Access-Jwt-Assertion, else of the Cookie header), else its peer address: one key per grant
 * for every credential Groundnote issues, known without the JWT check or a read of ops.sqlite, so
 * a flood is turned away before it costs any of that.
 *
 * The bounds are the Admission layer's (services.ts); AdmissionOff lets everything through (the
 * service before this gate: the bench's "before").
 */
import { createHash } from "node:crypto"
import { Context, Effect, Layer } from "effect"

export interface AdmissionOptions {
  /** requests served at once */
  readonly maxActive: number
  /** requests waiting behind them */
  readonly maxQueued: number
  /** the Retry-After of a 503 overloaded, whole seconds */
  readonly retryAfterSeconds: number
}

export const DEFAULT_ADMISSION: AdmissionOptions = { maxActive: 8, maxQueued: 32, retryAfterSeconds: 1 }

export interface AdmissionShape {
  /** null: no admission control (everything is served at once) */
  readonly options: AdmissionOptions | null
  /** called with each listener's gate when the listener starts (its stats: tests, the soak) */
  readonly observe?: (gate: Gate) => void
}

export class Admission extends Context.Tag("Groundnote/Admission")<Admission, AdmissionShape>() {}

export const admissionLayer = (options: Partial<AdmissionOptions> = {}, observe?: (gate: Gate) => void): Layer.Layer<Admission> =>
  Layer.succeed(Admission, { options: { ...DEFAULT_ADMISSION, ...options }, ...(observe === undefined ? {} : { observe }) })

export const AdmissionLive = admissionLayer()

/** No gate: every request is served at once (the service before admission control). */
export const AdmissionOff: Layer.Layer<Admission> = Layer.succeed(Admission, { options: null })

/** The admission key of a request: its credential's digest, else its peer address. */
export const admissionKey = (headers: Readonly<Record<string, string | undefined>>, peer: string | undefined): string => {
  const credential = headers.authorization ?? headers["cf-access-jwt-assertion"] ?? headers.cookie
  if (credential !== undefined && credential.length > 0) {
    return `c:${createHash("sha256").update(credential, "utf8").digest("base64url").slice(0, 22)}`
  }
  return `p:${peer ?? "unknown"}`
}

export interface GateStats {
  readonly active: number
  readonly queued: number
  /** answered 503 at arrival */
  readonly rejected: number
  /** waited, then displaced by another key's request (answered 503) */
  readonly displaced: number
  readonly admitted: number
  /** the most requests that waited at once */
  readonly peakQueued: number
}

interface Waiter {
  readonly key: string
  /** the connection it came on (its served count) */
  readonly flow: object
  /** true: it runs now (the slot is its); false: displaced */
  readonly wake: (admitted: boolean) => void
  gone: boolean
}

export interface Gate {
  /**
   * `run` once admitted (at once or after waiting), else `refused`. `flow` is the request's
   * connection (any object that stays the same for a client's requests: the served counts are
   * kept per flow, weakly).
   */
  readonly admit: <A, E, R>(key: string, flow: object, run: Effect.Effect<A, E, R>, refused: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  readonly stats: () => GateStats
  readonly options: AdmissionOptions
}

/** One listener's gate. */
export const makeGate = (options: AdmissionOptions): Gate => {
  let active = 0
  let queued = 0
  let rejected = 0
  let displaced = 0
  let admitted = 0
  let peakQueued = 0
  /** waiting requests per key, oldest first; the Map's order is the round-robin turn */
  const waiting = new Map<string, Array<Waiter>>()
  /** requests admitted per connection */
  const served = new WeakMap<object, number>()
  const serve = (flow: object) => {
    served.set(flow, (served.get(flow) ?? 0) + 1)
    active++
    admitted++
  }

  const removeWaiter = (w: Waiter) => {
    const list = waiting.get(w.key)
    if (list === undefined) return
    const i = list.indexOf(w)
    if (i < 0) return
    list.splice(i, 1)
    queued--
    if (list.length === 0) waiting.delete(w.key)
  }

  /** the next waiter in turn: the first key's oldest; that key goes to the back of the turn */
  const nextInTurn = (): Waiter | undefined => {
    for (const [key, list] of waiting) {
      waiting.delete(key)
      const w = list.shift()
      if (list.length > 0) waiting.set(key, list)
      if (w !== undefined) {
        queued--
        return w
      }
    }
    return undefined
  }

  const release = () => {
    active--
    while (active < options.maxActive) {
      const w = nextInTurn()
      if (w === undefined) return
      serve(w.flow)
      w.wake(true)
    }
  }

  /** the waiter that leaves a full queue for a request of `key` on `flow`, if one is to */
  const displaceable = (key: string, flow: object): Waiter | undefined => {
    const ownList = waiting.get(key)
    const own = ownList?.length ?? 0
    let longest: Array<Waiter> | undefined
    for (const [k, list] of waiting) if (k !== key && list.length > (longest?.length ?? 0)) longest = list
    if (longest !== undefined && longest.length >= own + 2) return longest[longest.length - 1]
    // within the key: the waiter served most, the newest of equals, if served more than the newcomer
    const mine = served.get(flow) ?? 0
    let most: Waiter | undefined
    let mostServed = mine
    for (const w of ownList ?? []) {
      const n = served.get(w.flow) ?? 0
      if (n > mostServed || (n === mostServed && most !== undefined)) {
        most = w
        mostServed = n
      }
    }
    return most
  }

  /** Room for a request in a full queue: a fairer choice leaves (answered 503). */
  const makeRoomFor = (key: string, flow: object): boolean => {
    const w = displaceable(key, flow)
    if (w === undefined) return false
    removeWaiter(w)
    displaced++
    w.wake(false)
    return true
  }

  const admit = <A, E, R>(key: string, flow: object, run: Effect.Effect<A, E, R>, refused: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    // uninterruptible but for the wait and the run: a slot taken is always given back
    Effect.uninterruptibleMask((restore) => Effect.suspend(() => {
      const running = Effect.ensuring(restore(run), Effect.sync(release))
      if (active < options.maxActive && queued === 0) {
        serve(flow)
        return running
      }
      if (queued >= options.maxQueued && !makeRoomFor(key, flow)) {
        rejected++
        return restore(refused)
      }
      return Effect.flatMap(
        restore(Effect.async<boolean>((resume) => {
          const w: Waiter = {
            key,
            flow,
            gone: false,
            wake: (ok) => {
              if (w.gone) {
                // interrupted after it was given the slot: hand the slot on
                if (ok) release()
                return
              }
              w.gone = true
              resume(Effect.succeed(ok))
            }
          }
          const list = waiting.get(key)
          if (list === undefined) waiting.set(key, [w])
          else list.push(w)
          queued++
          peakQueued = Math.max(peakQueued, queued)
          return Effect.sync(() => {
            if (w.gone) return
            w.gone = true
            removeWaiter(w)
          })
        })),
        (ok) => (ok ? running : restore(refused))
      )
    }))

  return {
    admit,
    options,
    stats: () => ({ active, queued, rejected, displaced, admitted, peakQueued })
  }
}
