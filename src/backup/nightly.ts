/**
 * groundnote backup nightly (architecture.md §3 and §11): backup run, then restore probe, then
 * the dead-man ping — a GET to backup.deadman_url, only when both passed, each attempt with a
 * timeout, at most PING_ATTEMPTS attempts (a failed ping is reported, never retried forever).
 * Exit 0 when all passed, 3 otherwise (D98). The CLI passes the two ops calls in; nothing here
 * reaches a store, so the CLI's import closure stays thin (AT6).
 */
import { Effect, Either } from "effect"
import type { ProbeAnswer, RunAnswer } from "./schemas.js"

export const PING_ATTEMPTS = 3
export const PING_TIMEOUT_MS = 10_000

export interface PingResult {
  readonly sent: boolean
  readonly ok: boolean
  /** HTTP status of the last attempt */
  readonly status?: number
  readonly attempts: number
  readonly error?: string
}

export interface NightlyReport {
  readonly ok: boolean
  /** the run's answer, or the error of the call ({error, message}) */
  readonly run: RunAnswer | { readonly error: string; readonly message: string }
  readonly probe: ProbeAnswer | { readonly error: string; readonly message: string } | null
  readonly ping: PingResult
}

export interface NightlyOptions<E1, E2, R> {
  readonly run: Effect.Effect<RunAnswer, E1, R>
  readonly probe: Effect.Effect<ProbeAnswer, E2, R>
  readonly deadmanUrl: string
  /** per attempt (default PING_TIMEOUT_MS) */
  readonly timeoutMs?: number
  /** pause between attempts (default 2 s) */
  readonly retryDelayMs?: number
  readonly progress?: (line: string) => void
}

const errorOf = (e: unknown): { readonly error: string; readonly message: string } => {
  const code = typeof e === "object" && e !== null && "code" in e && typeof (e as { code: unknown }).code === "string" ? (e as { code: string }).code : "error"
  const message = typeof e === "object" && e !== null && "message" in e ? String((e as { message: unknown }).message) : String(e)
  return { error: code, message }
}

const hostOf = (url: string): string => {
  try {
    return new URL(url).host
  } catch {
    return "?"
  }
}

/** One GET with a timeout: the status, or why it failed (the URL is not repeated: it may carry a key). */
const getOnce = (url: string, timeoutMs: number): Effect.Effect<number, string> =>
  Effect.tryPromise({
    try: async (signal) => {
      const response = await fetch(url, { method: "GET", redirect: "follow", signal: AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]) })
      await response.body?.cancel()
      return response.status
    },
    catch: (e) => (e instanceof Error && (e.name === "TimeoutError" || e.name === "AbortError") ? `no answer within ${timeoutMs} ms` : e instanceof Error ? (e.cause instanceof Error ? e.cause.message : e.message) : String(e))
  })

/** The dead-man ping: 2xx counts; up to PING_ATTEMPTS attempts. */
export const pingDeadman = (url: string, timeoutMs = PING_TIMEOUT_MS, retryDelayMs = 2_000): Effect.Effect<PingResult> =>
  Effect.gen(function*() {
    let last: PingResult = { sent: true, ok: false, attempts: 0 }
    for (let attempt = 1; attempt <= PING_ATTEMPTS; attempt++) {
      const result = yield* Effect.either(getOnce(url, timeoutMs))
      last = Either.isRight(result)
        ? { sent: true, ok: result.right >= 200 && result.right < 300, status: result.right, attempts: attempt }
        : { sent: true, ok: false, attempts: attempt, error: `${hostOf(url)}: ${result.left}` }
      if (last.ok) return last
      if (attempt < PING_ATTEMPTS) yield* Effect.sleep(retryDelayMs)
    }
    return last
  })

/** run → probe → ping (only when both passed). */
export const nightly = <E1, E2, R>(options: NightlyOptions<E1, E2, R>): Effect.Effect<NightlyReport, never, R> =>
  Effect.gen(function*() {
    const progress = options.progress ?? (() => undefined)
    progress("backup run")
    const run = yield* Effect.either(options.run)
    const runOut = Either.isRight(run) ? run.right : errorOf(run.left)
    const runOk = Either.isRight(run) && run.right.ok
    // the probe runs also after a failed run: it proves what the last good copies are worth
    progress("restore probe")
    const probe = yield* Effect.either(options.probe)
    const probeOut = Either.isRight(probe) ? probe.right : errorOf(probe.left)
    const probeOk = Either.isRight(probe) && probe.right.ok
    let ping: PingResult = { sent: false, ok: false, attempts: 0 }
    if (runOk && probeOk) {
      progress("dead-man ping")
      ping = yield* pingDeadman(options.deadmanUrl, options.timeoutMs ?? PING_TIMEOUT_MS, options.retryDelayMs ?? 2_000)
    }
    return { ok: runOk && probeOk && ping.ok, run: runOut, probe: probeOut, ping }
  })

/** 0 when run, probe and ping passed, else 3 (D98). */
export const nightlyExitCode = (report: NightlyReport): 0 | 3 => (report.ok ? 0 : 3)
