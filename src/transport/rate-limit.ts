/**
 * In-process abuse limits (architecture.md §3 "limits", F1): token buckets in process memory.
 *
 * Each (kind, key) bucket holds n tokens, n being the configured limit, and refills n per minute
 * (exports: n per hour) continuously; a fresh key starts full, a restart starts every key fresh.
 * Requests, decisions and exports are keyed per grant (after authentication), login attempts per
 * client address (clientAddress below). Over the limit → RateLimited, which the HTTP layer maps
 * to 429 rate-limited with Retry-After in whole seconds (§6.6).
 *
 * Time comes from Effect's Clock (TestClock in tests), never Date.now. Token amounts are kept as
 * integers in "token-milliseconds" (one token = periodMs units, refill = n units per ms), so the
 * refill and Retry-After arithmetic is exact.
 */
import { Clock, Context, Effect, Layer } from "effect"
import { RateLimited } from "../contracts/errors.js"
import { AppConfig } from "../config/config.js"
import type { ConfigFile } from "../config/schema.js"

export type LimitKind = "requests" | "decisions" | "logins" | "exports"

export interface RateLimiterService {
  /**
   * Takes `count` tokens (default one) from the (kind, key) bucket, all or none, or fails with
   * RateLimited when fewer are left. A count above the limit itself can never pass and says so.
   */
  readonly take: (kind: LimitKind, key: string, count?: number) => Effect.Effect<void, RateLimited>
}

export class RateLimiter extends Context.Tag("Groundnote/RateLimiter")<RateLimiter, RateLimiterService>() {}

export type LimitsConfig = Pick<
  ConfigFile["limits"],
  "requests_per_minute" | "decisions_per_minute" | "login_attempts_per_minute" | "exports_per_hour"
>

/** The service plus a bucket count for tests of the memory bound. */
export interface RateLimiterImpl extends RateLimiterService {
  readonly bucketCount: () => number
}

const MINUTE_MS = 60_000
const HOUR_MS = 3_600_000
/** A kind's bucket map is swept of full buckets once it reaches this size (and then at twice the survivors). */
export const SWEEP_THRESHOLD = 4096

const KIND_LABEL: Readonly<Record<LimitKind, string>> = {
  requests: "requests",
  decisions: "decisions",
  logins: "login attempts",
  exports: "exports"
}

interface Bucket {
  /** tokens × periodMs */
  units: number
  /** Clock millis at which `units` was last brought up to date */
  at: number
}

interface KindState {
  readonly kind: LimitKind
  /** tokens per period (the configured limit) */
  readonly n: number
  readonly periodMs: number
  /** n × periodMs: a full bucket */
  readonly capacity: number
  readonly buckets: Map<string, Bucket>
  sweepAt: number
}

const kindState = (kind: LimitKind, n: number, periodMs: number): KindState => ({
  kind,
  n,
  periodMs,
  capacity: n * periodMs,
  buckets: new Map(),
  sweepAt: SWEEP_THRESHOLD
})

/** The bucket's units at `now`: refilled n units per elapsed ms, capped at capacity. */
const unitsAt = (state: KindState, bucket: Bucket, now: number): number => {
  const elapsed = now - bucket.at
  if (elapsed <= 0) return bucket.units
  if (elapsed >= state.periodMs) return state.capacity
  return Math.min(state.capacity, bucket.units + elapsed * state.n)
}

/** Drops every bucket that is full again (a missing bucket is a full one). */
const sweep = (state: KindState, now: number): void => {
  for (const [key, bucket] of state.buckets) {
    if (unitsAt(state, bucket, now) >= state.capacity) state.buckets.delete(key)
  }
  // amortised O(1) per new key even when every bucket is still in use
  state.sweepAt = Math.max(SWEEP_THRESHOLD, 2 * state.buckets.size)
}

/**
 * Takes `count` tokens at `now`; returns null when taken, else the whole seconds (≥ 1) until
 * `count` tokens (at most a full bucket) will be available.
 */
const takeAt = (state: KindState, key: string, now: number, count: number): number | null => {
  let bucket = state.buckets.get(key)
  if (bucket === undefined) {
    if (state.buckets.size >= state.sweepAt) sweep(state, now)
    bucket = { units: state.capacity, at: now }
    state.buckets.set(key, bucket)
  } else {
    bucket.units = unitsAt(state, bucket, now)
    bucket.at = Math.max(bucket.at, now) // a clock that steps back refills nothing
  }
  const need = Math.min(count, state.n) * state.periodMs
  if (count <= state.n && bucket.units >= need) {
    bucket.units -= need
    return null
  }
  const missing = need - bucket.units
  // ms until `count` tokens = ceil(missing / n); in whole seconds: ceil(missing / (n × 1000))
  return Math.max(1, Math.ceil(missing / (state.n * 1000)))
}

export const makeRateLimiter = (limits: LimitsConfig): RateLimiterImpl => {
  const states: Readonly<Record<LimitKind, KindState>> = {
    requests: kindState("requests", limits.requests_per_minute, MINUTE_MS),
    decisions: kindState("decisions", limits.decisions_per_minute, MINUTE_MS),
    logins: kindState("logins", limits.login_attempts_per_minute, MINUTE_MS),
    exports: kindState("exports", limits.exports_per_hour, HOUR_MS)
  }
  const take = (kind: LimitKind, key: string, count = 1): Effect.Effect<void, RateLimited> =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const state = states[kind]
      const n = Math.max(1, Math.floor(count))
      const retryAfter = takeAt(state, key, now, n)
      if (retryAfter === null) return Effect.void
      const per = state.periodMs === HOUR_MS ? "hour" : "minute"
      const message = n > state.n
        ? `a batch of ${n} ${KIND_LABEL[kind]} is more than the limit of ${state.n} per ${per} and is never served; send at most ${state.n} at once`
        : n > 1
        ? `too many ${KIND_LABEL[kind]} (limit ${state.n} per ${per}; this batch counts ${n}); retry in ${retryAfter} s`
        : `too many ${KIND_LABEL[kind]} (limit ${state.n} per ${per}); retry in ${retryAfter} s`
      return Effect.fail(new RateLimited({ message, retryAfter }))
    })
  const bucketCount = (): number =>
    Object.values(states).reduce((sum, state) => sum + state.buckets.size, 0)
  return { take, bucketCount }
}

export const RateLimiterLive: Layer.Layer<RateLimiter, never, AppConfig> = Layer.effect(
  RateLimiter,
  Effect.map(AppConfig, (config): RateLimiterService => {
    const { take } = makeRateLimiter(config.file.limits)
    return { take }
  })
)

/**
 * The key for login attempts: the socket peer address; with trusted_proxy the last
 * X-Forwarded-For entry (the one the proxy appended), never an earlier, client-supplied one.
 * An absent or empty last entry falls back to the peer address; no address at all is "unknown".
 */
export const clientAddress = (
  remoteAddress: string | undefined,
  forwardedFor: string | undefined,
  trustedProxy: boolean
): string => {
  const peer = remoteAddress !== undefined && remoteAddress.trim() !== "" ? remoteAddress.trim() : "unknown"
  if (!trustedProxy || forwardedFor === undefined) return peer
  const last = forwardedFor.split(",").at(-1)?.trim() ?? ""
  return last === "" ? peer : last
}
