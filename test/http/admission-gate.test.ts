/**
 * The admission gate's rules (src/transport/admission.ts), run as Effects: round robin between
 * keys, the longest queue gives way to another key, within a key the connection served most gives
 * way, a waiter that goes away leaves no trace, and a slot is always given back.
 */
import { Deferred, Effect, Exit, Fiber } from "effect"
import { describe, expect, it } from "vitest"
import { admissionKey, makeGate } from "../../src/transport/admission.js"

const REFUSED = "refused" as const

/** A request that records when it runs and holds its slot until `done` is completed. */
const request = (gate: ReturnType<typeof makeGate>, key: string, flow: object, log: Array<string>, name: string, done: Deferred.Deferred<void>) =>
  gate.admit(key, flow, Effect.zipRight(Effect.sync(() => log.push(name)), Effect.as(Deferred.await(done), name)), Effect.succeed(REFUSED))

const settle = Effect.yieldNow().pipe(Effect.repeatN(20))

describe("the admission gate", () => {
  it("gives a free slot to the keys in turn: one request of b waits behind at most one of a's", () =>
    Effect.runPromise(Effect.gen(function*() {
      const gate = makeGate({ maxActive: 1, maxQueued: 10, retryAfterSeconds: 1 })
      const log: Array<string> = []
      const done = yield* Deferred.make<void>()
      const flows = Array.from({ length: 6 }, () => ({}))
      const blocker = yield* Effect.fork(request(gate, "a", flows[0] ?? {}, log, "a0", done))
      yield* settle
      const fibers = []
      for (const [i, name] of ["a1", "a2", "a3"].entries()) fibers.push(yield* Effect.fork(request(gate, "a", flows[i + 1] ?? {}, log, name, done)))
      fibers.push(yield* Effect.fork(request(gate, "b", flows[5] ?? {}, log, "b1", done)))
      yield* settle
      expect(gate.stats()).toMatchObject({ active: 1, queued: 4 })
      yield* Deferred.succeed(done, undefined)
      yield* Fiber.join(blocker)
      yield* Effect.forEach(fibers, Fiber.join)
      expect(log).toEqual(["a0", "a1", "b1", "a2", "a3"])
      expect(gate.stats()).toMatchObject({ active: 0, queued: 0 })
    })))

  it("a full queue held by one key gives way to another key (its newest waiter is refused); equal shares refuse the newcomer", () =>
    Effect.runPromise(Effect.gen(function*() {
      const gate = makeGate({ maxActive: 1, maxQueued: 2, retryAfterSeconds: 1 })
      const log: Array<string> = []
      const done = yield* Deferred.make<void>()
      const blocker = yield* Effect.fork(request(gate, "a", {}, log, "a0", done))
      yield* settle
      const a1 = yield* Effect.fork(request(gate, "a", {}, log, "a1", done))
      const a2 = yield* Effect.fork(request(gate, "a", {}, log, "a2", done))
      yield* settle
      const b1 = yield* Effect.fork(request(gate, "b", {}, log, "b1", done))
      yield* settle
      // a has 1 waiting, b 1: a newcomer of c finds equal shares (1 < 0 + 2) and is refused
      const c1 = yield* request(gate, "c", {}, log, "c1", done)
      expect(c1).toBe(REFUSED)
      expect(yield* Fiber.join(a2)).toBe(REFUSED)
      yield* Deferred.succeed(done, undefined)
      expect(yield* Fiber.join(blocker)).toBe("a0")
      expect(yield* Fiber.join(a1)).toBe("a1")
      expect(yield* Fiber.join(b1)).toBe("b1")
      expect(gate.stats()).toMatchObject({ rejected: 1, displaced: 1, active: 0, queued: 0 })
    })))

  it("within one key the connection served most gives way to one served less (the clients of a grant take turns)", () =>
    Effect.runPromise(Effect.gen(function*() {
      const gate = makeGate({ maxActive: 1, maxQueued: 1, retryAfterSeconds: 1 })
      const log: Array<string> = []
      const busy = { name: "busy" }
      const waiting = { name: "waiting" }
      const open = yield* Deferred.make<void>()
      yield* Deferred.succeed(open, undefined)
      // the busy connection has been served three times
      for (let i = 0; i < 3; i++) yield* request(gate, "a", busy, log, `busy${i}`, open)
      const done = yield* Deferred.make<void>()
      const blocker = yield* Effect.fork(request(gate, "a", waiting, log, "w0", done))
      yield* settle
      const again = yield* Effect.fork(request(gate, "a", busy, log, "busy3", done))
      yield* settle
      // the queue is full with the busy connection's request; the waiting one (served once) takes its place
      const next = yield* Effect.fork(request(gate, "a", waiting, log, "w1", done))
      yield* settle
      expect(yield* Fiber.join(again)).toBe(REFUSED)
      yield* Deferred.succeed(done, undefined)
      expect(yield* Fiber.join(blocker)).toBe("w0")
      expect(yield* Fiber.join(next)).toBe("w1")
      // a connection served as often as the waiter's does not displace it
      const done2 = yield* Deferred.make<void>()
      const hold = yield* Effect.fork(request(gate, "a", {}, log, "x", done2))
      yield* settle
      const queued = yield* Effect.fork(request(gate, "a", waiting, log, "w2", done2))
      yield* settle
      expect(yield* request(gate, "a", busy, log, "busy4", done2)).toBe(REFUSED)
      yield* Deferred.succeed(done2, undefined)
      yield* Fiber.join(hold)
      expect(yield* Fiber.join(queued)).toBe("w2")
    })))

  it("a waiter that goes away (its client closed) leaves the queue; a slot is given back when the request fails or dies", () =>
    Effect.runPromise(Effect.gen(function*() {
      const gate = makeGate({ maxActive: 1, maxQueued: 1, retryAfterSeconds: 1 })
      const log: Array<string> = []
      const done = yield* Deferred.make<void>()
      const blocker = yield* Effect.fork(request(gate, "a", {}, log, "a0", done))
      yield* settle
      const waiter = yield* Effect.fork(request(gate, "a", {}, log, "a1", done))
      yield* settle
      expect(gate.stats().queued).toBe(1)
      yield* Fiber.interrupt(waiter)
      expect(gate.stats().queued).toBe(0)
      yield* Deferred.succeed(done, undefined)
      yield* Fiber.join(blocker)
      expect(log).toEqual(["a0"])
      const failed = yield* Effect.exit(gate.admit("a", {}, Effect.fail("boom"), Effect.fail("refused")))
      const died = yield* Effect.exit(gate.admit("a", {}, Effect.die("boom"), Effect.fail("refused")))
      expect(Exit.isFailure(failed) && Exit.isFailure(died)).toBe(true)
      expect(gate.stats()).toMatchObject({ active: 0, queued: 0 })
      expect(yield* gate.admit("a", {}, Effect.succeed("ran"), Effect.succeed(REFUSED))).toBe("ran")
    })))

  it("the key is the credential's digest (never the credential), else the peer address", () => {
    const bearer = admissionKey({ authorization: "Bearer secret-token-1" }, "127.0.0.1")
    expect(bearer).toMatch(/^c:[A-Za-z0-9_-]{22}$/)
    expect(bearer).not.toContain("secret")
    expect(admissionKey({ authorization: "Bearer secret-token-2" }, "127.0.0.1")).not.toBe(bearer)
    expect(admissionKey({ cookie: "gn_session=abc" }, "127.0.0.1")).toMatch(/^c:/)
    expect(admissionKey({}, "127.0.0.1")).toBe("p:127.0.0.1")
  })
})
