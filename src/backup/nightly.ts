/**
 * groundnote backup nightly (architecture.md §3 and §11): backup run, then restore probe, then
 * the dead-man ping (deadman.ts) — a GET to backup.deadman_url, only when both passed; skipped,
 * and said so, when backup.deadman_url is null. Exit 0 when all passed, 3 otherwise (D98). Then,
 * when approval.digest_url is set, the digest since yesterday is POSTed there once
 * (digest-post.ts), whatever the backup's outcome: its failure is reported and leaves the exit
 * code alone (the digest is about approvals, not about the backup). The CLI passes the ops calls
 * in; nothing here reaches a store, so the CLI's import closure stays thin (AT6).
 */
import { Effect, Either } from "effect"
import { PING_RETRY_DELAY_MS, PING_TIMEOUT_MS, pingDeadman, type PingResult } from "./deadman.js"
import { type DigestPostResult, postDigest } from "./digest-post.js"
import type { ProbeAnswer, RunAnswer } from "./schemas.js"

export interface NightlyReport {
  readonly ok: boolean
  /** the run's answer, or the error of the call ({error, message}) */
  readonly run: RunAnswer | { readonly error: string; readonly message: string }
  readonly probe: ProbeAnswer | { readonly error: string; readonly message: string } | null
  readonly ping: PingResult
  /** the digest's post to approval.digest_url; null when it is not set */
  readonly digest: DigestPostResult | null
}

export interface NightlyOptions<E1, E2, R> {
  readonly run: Effect.Effect<RunAnswer, E1, R>
  readonly probe: Effect.Effect<ProbeAnswer, E2, R>
  /** null: the instance has no dead-man service; the ping is skipped and says so */
  readonly deadmanUrl: string | null
  /** per attempt (default PING_TIMEOUT_MS) */
  readonly timeoutMs?: number
  /** pause between attempts (default 2 s) */
  readonly retryDelayMs?: number
  readonly progress?: (line: string) => void
  /** approval.digest_url and the digest since `since` (GET /ops/digest); null or left out: no post */
  readonly digest?: { readonly url: string; readonly since: string; readonly read: Effect.Effect<unknown, unknown, R> } | null
}

const errorOf = (e: unknown): { readonly error: string; readonly message: string } => {
  const code = typeof e === "object" && e !== null && "code" in e && typeof (e as { code: unknown }).code === "string" ? (e as { code: string }).code : "error"
  const message = typeof e === "object" && e !== null && "message" in e ? String((e as { message: unknown }).message) : String(e)
  return { error: code, message }
}

/** run → probe → ping (only when both passed) → the digest's post (when approval.digest_url is set). */
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
    if (runOk && probeOk && options.deadmanUrl === null) {
      ping = { sent: false, ok: false, attempts: 0, skipped: true }
    } else if (runOk && probeOk && options.deadmanUrl !== null) {
      progress("dead-man ping")
      ping = yield* pingDeadman(options.deadmanUrl, options.timeoutMs ?? PING_TIMEOUT_MS, options.retryDelayMs ?? PING_RETRY_DELAY_MS)
    }
    let digest: DigestPostResult | null = null
    const d = options.digest ?? null
    if (d !== null) {
      progress("digest post")
      const read = yield* Effect.either(d.read)
      digest = Either.isRight(read)
        ? yield* postDigest(d.url, d.since, read.right, options.timeoutMs ?? PING_TIMEOUT_MS, options.retryDelayMs ?? PING_RETRY_DELAY_MS)
        : { sent: false, ok: false, since: d.since, attempts: 0, error: `the digest could not be read: ${errorOf(read.left).error}: ${errorOf(read.left).message}` }
    }
    return { ok: runOk && probeOk && (ping.ok || ping.skipped === true), run: runOut, probe: probeOut, ping, digest }
  })

/** 0 when run, probe and ping passed, else 3 (D98). */
export const nightlyExitCode = (report: NightlyReport): 0 | 3 => (report.ok ? 0 : 3)
