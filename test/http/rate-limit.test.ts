/**
 * Token-bucket limits (architecture.md §3 "limits"): counts, continuous refill, independence of
 * keys and kinds, Retry-After in whole seconds, the memory bound, and the login key.
 * it.effect runs on the TestClock, which starts at 0 and moves only with TestClock.adjust.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Schema, TestClock } from "effect"
import { AppConfig } from "../../src/config/config.js"
import { Limits } from "../../src/config/schema.js"
import {
  clientAddress,
  makeRateLimiter,
  RateLimiter,
  RateLimiterLive,
  SWEEP_THRESHOLD
} from "../../src/transport/rate-limit.js"
import { RateLimited } from "../../src/contracts/errors.js"
import type { LimitKind, RateLimiterService } from "../../src/transport/rate-limit.js"
import { testConfig } from "../support/env.js"

const limiter = (overrides: Record<string, unknown> = {}) =>
  makeRateLimiter(Schema.decodeUnknownSync(Limits)(overrides, { onExcessProperty: "error" }))

/** Takes until the first refusal (at most `cap` tries); the number allowed and the refusal. */
const drain = (rl: RateLimiterService, kind: LimitKind, key: string, cap = 10_000) =>
  Effect.gen(function* () {
    let allowed = 0
    while (allowed < cap) {
      const result = yield* Effect.either(rl.take(kind, key))
      if (Either.isLeft(result)) return { allowed, error: result.left }
      allowed++
    }
    return { allowed, error: null }
  })

/** The refusal of one more take; fails the test when the take is allowed. */
const refused = (rl: RateLimiterService, kind: LimitKind, key: string) =>
  Effect.flip(rl.take(kind, key))

describe("RateLimiter: requests", () => {
  it.effect("the 61st request within a minute is refused with a whole Retry-After ≥ 1", () =>
    Effect.gen(function* () {
      const rl = limiter({ requests_per_minute: 60 })
      const { allowed, error } = yield* drain(rl, "requests", "grant-a")
      expect(allowed).toBe(60)
      expect(error).toBeInstanceOf(RateLimited)
      expect(error?._tag).toBe("RateLimited")
      expect(error?.code).toBe("rate-limited")
      expect(Number.isInteger(error?.retryAfter)).toBe(true)
      expect(error?.retryAfter).toBe(1) // one token per second
      expect(error?.message).toContain("60 per minute")
    }))

  it.effect("refills continuously: one more after 1 second, 60 again after a minute", () =>
    Effect.gen(function* () {
      const rl = limiter({ requests_per_minute: 60 })
      expect((yield* drain(rl, "requests", "grant-a")).allowed).toBe(60)
      yield* TestClock.adjust("999 millis")
      expect((yield* drain(rl, "requests", "grant-a")).allowed).toBe(0)
      yield* TestClock.adjust("1 millis")
      expect((yield* drain(rl, "requests", "grant-a")).allowed).toBe(1)
      yield* TestClock.adjust("1 second")
      expect((yield* drain(rl, "requests", "grant-a")).allowed).toBe(1)
      yield* TestClock.adjust("30 seconds")
      expect((yield* drain(rl, "requests", "grant-a")).allowed).toBe(30)
      yield* TestClock.adjust("1 minute")
      expect((yield* drain(rl, "requests", "grant-a")).allowed).toBe(60)
    }))

  it.effect("the bucket is capped at n: a long idle time gives 60, not more", () =>
    Effect.gen(function* () {
      const rl = limiter({ requests_per_minute: 60 })
      expect((yield* drain(rl, "requests", "grant-a")).allowed).toBe(60)
      yield* TestClock.adjust("3 hours")
      expect((yield* drain(rl, "requests", "grant-a")).allowed).toBe(60)
    }))

  it.effect("a fractional remainder carries over between refills", () =>
    Effect.gen(function* () {
      const rl = limiter({ requests_per_minute: 60 })
      yield* drain(rl, "requests", "grant-a")
      yield* TestClock.adjust("1500 millis")
      expect((yield* drain(rl, "requests", "grant-a")).allowed).toBe(1)
      yield* TestClock.adjust("500 millis") // the half token left plus half a token
      expect((yield* drain(rl, "requests", "grant-a")).allowed).toBe(1)
    }))

  it.effect("per grant: grant A exhausted, grant B still has its full budget", () =>
    Effect.gen(function* () {
      const rl = limiter({ requests_per_minute: 60 })
      expect((yield* drain(rl, "requests", "grant-a")).allowed).toBe(60)
      expect((yield* drain(rl, "requests", "grant-b")).allowed).toBe(60)
      yield* refused(rl, "requests", "grant-a")
    }))

  it.effect("per kind: exhausted requests leave decisions, logins and exports of the same key untouched", () =>
    Effect.gen(function* () {
      const rl = limiter({ requests_per_minute: 60 })
      expect((yield* drain(rl, "requests", "k")).allowed).toBe(60)
      expect((yield* drain(rl, "decisions", "k")).allowed).toBe(60)
      expect((yield* drain(rl, "logins", "k")).allowed).toBe(5)
      expect((yield* drain(rl, "exports", "k")).allowed).toBe(6)
      // and the other way round: the kinds drained above did not touch a fresh key's requests
      expect((yield* drain(rl, "requests", "k2")).allowed).toBe(60)
    }))

  it.effect("two limiters (two processes) share nothing", () =>
    Effect.gen(function* () {
      const one = limiter({ requests_per_minute: 3 })
      const two = limiter({ requests_per_minute: 3 })
      expect((yield* drain(one, "requests", "g")).allowed).toBe(3)
      expect((yield* drain(two, "requests", "g")).allowed).toBe(3)
    }))
})

describe("RateLimiter: several tokens at once", () => {
  it.effect("a take of n tokens is all or none; the refusal names the batch and waits for n tokens", () =>
    Effect.gen(function* () {
      const rl = limiter({ requests_per_minute: 60 })
      yield* rl.take("requests", "g", 58)
      const refusal = yield* Effect.flip(rl.take("requests", "g", 3))
      expect(refusal.message).toContain("this batch counts 3")
      expect(refusal.retryAfter).toBe(1) // one token short, one a second
      // nothing was taken: the two left are still there
      expect((yield* drain(rl, "requests", "g")).allowed).toBe(2)
      yield* TestClock.adjust("3 seconds")
      yield* rl.take("requests", "g", 3)
      expect((yield* drain(rl, "requests", "g")).allowed).toBe(0)
    }))

  it.effect("more tokens than the limit can never pass and the message says so", () =>
    Effect.gen(function* () {
      const rl = limiter({ requests_per_minute: 60 })
      const refusal = yield* Effect.flip(rl.take("requests", "g", 100))
      expect(refusal.message).toContain("a batch of 100 requests is more than the limit of 60 per minute")
      expect(refusal.retryAfter).toBe(1)
      expect((yield* drain(rl, "requests", "g")).allowed).toBe(60)
    }))
})

describe("RateLimiter: decisions, logins, exports", () => {
  it.effect("decisions: decisions_per_minute 10 allows exactly 10, Retry-After 6 s", () =>
    Effect.gen(function* () {
      const rl = limiter({ decisions_per_minute: 10 })
      const { allowed, error } = yield* drain(rl, "decisions", "grant-a")
      expect(allowed).toBe(10)
      expect(error?.retryAfter).toBe(6)
      expect(error?.message).toContain("decisions")
      // requests keep their own default of 60
      expect((yield* drain(rl, "requests", "grant-a")).allowed).toBe(60)
      yield* TestClock.adjust("6 seconds")
      expect((yield* drain(rl, "decisions", "grant-a")).allowed).toBe(1)
    }))

  it.effect("decisions default to 60 a minute", () =>
    Effect.gen(function* () {
      expect((yield* drain(limiter(), "decisions", "g")).allowed).toBe(60)
    }))

  it.effect("logins: 5 attempts per client address, then Retry-After 12 s; another address is separate", () =>
    Effect.gen(function* () {
      const rl = limiter()
      const { allowed, error } = yield* drain(rl, "logins", "203.0.113.7")
      expect(allowed).toBe(5)
      expect(error?.retryAfter).toBe(12)
      expect(error?.message).toContain("login attempts")
      expect((yield* drain(rl, "logins", "203.0.113.8")).allowed).toBe(5)
      yield* TestClock.adjust("11 seconds")
      expect((yield* refused(rl, "logins", "203.0.113.7")).retryAfter).toBe(1)
      yield* TestClock.adjust("1 second")
      expect((yield* drain(rl, "logins", "203.0.113.7")).allowed).toBe(1)
    }))

  it.effect("logins: a configured limit of 3 is used", () =>
    Effect.gen(function* () {
      expect((yield* drain(limiter({ login_attempts_per_minute: 3 }), "logins", "::1")).allowed).toBe(3)
    }))

  it.effect("exports: 6 per hour, the 7th is refused with Retry-After 600 s (3600/6)", () =>
    Effect.gen(function* () {
      const rl = limiter({ exports_per_hour: 6 })
      const { allowed, error } = yield* drain(rl, "exports", "grant-a")
      expect(allowed).toBe(6)
      expect(error?.retryAfter).toBe(600)
      expect(error?.message).toContain("6 per hour")
      yield* TestClock.adjust("1 minute")
      expect((yield* refused(rl, "exports", "grant-a")).retryAfter).toBe(540)
      yield* TestClock.adjust("539 seconds")
      expect((yield* refused(rl, "exports", "grant-a")).retryAfter).toBe(1)
      yield* TestClock.adjust("1 second")
      expect((yield* drain(rl, "exports", "grant-a")).allowed).toBe(1)
      yield* TestClock.adjust("1 hour")
      expect((yield* drain(rl, "exports", "grant-a")).allowed).toBe(6)
    }))
})

describe("RateLimiter: Retry-After", () => {
  it.effect("rounds up to whole seconds and is never below 1", () =>
    Effect.gen(function* () {
      // 7 a minute: one token every 60/7 ≈ 8.571 s
      const rl = limiter({ requests_per_minute: 7 })
      const first = yield* drain(rl, "requests", "g")
      expect(first.allowed).toBe(7)
      expect(first.error?.retryAfter).toBe(9)
      yield* TestClock.adjust("500 millis") // 8.071 s left
      expect((yield* refused(rl, "requests", "g")).retryAfter).toBe(9)
      yield* TestClock.adjust("600 millis") // 7.471 s left
      expect((yield* refused(rl, "requests", "g")).retryAfter).toBe(8)
      yield* TestClock.adjust("7400 millis") // 0.071 s left
      expect((yield* refused(rl, "requests", "g")).retryAfter).toBe(1)
      yield* TestClock.adjust("71 millis") // 60000/7 = 8571.43 ms: still a fraction of a ms short
      expect((yield* refused(rl, "requests", "g")).retryAfter).toBe(1)
      yield* TestClock.adjust("1 millis")
      expect((yield* drain(rl, "requests", "g")).allowed).toBe(1)
    }))

  it.effect("a refused take does not consume a token", () =>
    Effect.gen(function* () {
      const rl = limiter({ requests_per_minute: 60 })
      yield* drain(rl, "requests", "g")
      for (let i = 0; i < 10; i++) yield* refused(rl, "requests", "g")
      yield* TestClock.adjust("1 second")
      expect((yield* drain(rl, "requests", "g")).allowed).toBe(1)
    }))
})

describe("RateLimiter: memory", () => {
  it.effect("full buckets are dropped once the map grows past the threshold; partial ones are kept", () =>
    Effect.gen(function* () {
      const rl = limiter({ requests_per_minute: 60 })
      // one grant exhausted at t=0
      expect((yield* drain(rl, "requests", "busy")).allowed).toBe(60)
      for (let i = 0; i < SWEEP_THRESHOLD - 1; i++) yield* rl.take("requests", `g${i}`)
      expect(rl.bucketCount()).toBe(SWEEP_THRESHOLD)
      // 30 s later every one-token-used bucket is full again, "busy" holds 30 tokens
      yield* TestClock.adjust("30 seconds")
      yield* rl.take("requests", "new")
      expect(rl.bucketCount()).toBe(2)
      expect((yield* drain(rl, "requests", "busy")).allowed).toBe(30)
    }))

  it.effect("buckets still in use are not dropped, and the map does not sweep on every new key", () =>
    Effect.gen(function* () {
      const rl = limiter({ requests_per_minute: 60 })
      for (let i = 0; i < SWEEP_THRESHOLD + 10; i++) yield* rl.take("requests", `g${i}`)
      // nothing is full again at t=0, so all are kept
      expect(rl.bucketCount()).toBe(SWEEP_THRESHOLD + 10)
      // each used one token: 59 left, so the second take is allowed and the 60th refused
      expect((yield* drain(rl, "requests", "g0")).allowed).toBe(59)
      yield* TestClock.adjust("1 minute")
      // the next sweep waits for twice the survivors
      yield* rl.take("requests", "late")
      expect(rl.bucketCount()).toBe(SWEEP_THRESHOLD + 11)
    }))
})

describe("RateLimiterLive", () => {
  it.effect("reads config.file.limits", () =>
    Effect.gen(function* () {
      const rl = yield* RateLimiter
      expect((yield* drain(rl, "requests", "g")).allowed).toBe(2)
      expect((yield* drain(rl, "decisions", "g")).allowed).toBe(3)
      expect((yield* drain(rl, "logins", "10.0.0.1")).allowed).toBe(4)
      const exports = yield* drain(rl, "exports", "g")
      expect(exports.allowed).toBe(1)
      expect(exports.error?.retryAfter).toBe(3600)
    }).pipe(
      Effect.provide(
        RateLimiterLive.pipe(
          Layer.provide(
            Layer.succeed(
              AppConfig,
              testConfig("/tmp/groundnote-rate-limit-unused", {
                limits: { requests_per_minute: 2, decisions_per_minute: 3, login_attempts_per_minute: 4, exports_per_hour: 1 }
              })
            )
          )
        )
      )
    ))
})

describe("clientAddress", () => {
  it("without trusted_proxy: the socket peer, X-Forwarded-For ignored", () => {
    expect(clientAddress("198.51.100.4", undefined, false)).toBe("198.51.100.4")
    expect(clientAddress("198.51.100.4", "203.0.113.9", false)).toBe("198.51.100.4")
    expect(clientAddress("198.51.100.4", "1.1.1.1, 203.0.113.9", false)).toBe("198.51.100.4")
    expect(clientAddress("::1", "203.0.113.9", false)).toBe("::1")
  })

  it("with trusted_proxy: the last X-Forwarded-For entry, trimmed, never the first", () => {
    expect(clientAddress("10.0.0.2", "203.0.113.9", true)).toBe("203.0.113.9")
    expect(clientAddress("10.0.0.2", "1.1.1.1, 203.0.113.9", true)).toBe("203.0.113.9")
    expect(clientAddress("10.0.0.2", "1.1.1.1,2.2.2.2,203.0.113.9", true)).toBe("203.0.113.9")
    expect(clientAddress("10.0.0.2", "  1.1.1.1 ,   203.0.113.9   ", true)).toBe("203.0.113.9")
    expect(clientAddress("10.0.0.2", " 2001:db8::1 ", true)).toBe("2001:db8::1")
  })

  it("with trusted_proxy and no usable header: the socket peer", () => {
    expect(clientAddress("10.0.0.2", undefined, true)).toBe("10.0.0.2")
    expect(clientAddress("10.0.0.2", "", true)).toBe("10.0.0.2")
    expect(clientAddress("10.0.0.2", "   ", true)).toBe("10.0.0.2")
    expect(clientAddress("10.0.0.2", "1.1.1.1, ", true)).toBe("10.0.0.2")
  })

  it("no peer address: one shared key", () => {
    expect(clientAddress(undefined, undefined, false)).toBe("unknown")
    expect(clientAddress(undefined, "203.0.113.9", false)).toBe("unknown")
    expect(clientAddress(undefined, undefined, true)).toBe("unknown")
    expect(clientAddress(undefined, "203.0.113.9", true)).toBe("203.0.113.9")
  })
})
