/**
 * The digest's post of backup nightly (gaps.md §13 "Digest"): the JSON of GET /ops/digest POSTed
 * to approval.digest_url, with the dead-man ping's bounds (deadman.ts: PING_ATTEMPTS attempts,
 * each bounded by its own timer, a pause between them; the connection closed at the status
 * line). A 2xx answer counts. A failure is reported, never retried beyond the attempts, and never
 * names the URL (it may carry a key): at most its host.
 */
import { Effect, Either } from "effect"
import { hostOf, PING_ATTEMPTS, PING_RETRY_DELAY_MS, PING_TIMEOUT_MS, sendOnce } from "./deadman.js"

export interface DigestPostResult {
  readonly sent: boolean
  readonly ok: boolean
  /** the day the digest starts (yesterday in config.zone) */
  readonly since: string
  /** HTTP status of the last attempt */
  readonly status?: number
  readonly attempts: number
  readonly error?: string
}

/** POSTs `digest` as JSON to `url`: 2xx counts; up to PING_ATTEMPTS attempts, a pause between them. */
export const postDigest = (
  url: string,
  since: string,
  digest: unknown,
  timeoutMs = PING_TIMEOUT_MS,
  retryDelayMs = PING_RETRY_DELAY_MS
): Effect.Effect<DigestPostResult> =>
  Effect.gen(function*() {
    const body = { contentType: "application/json", bytes: new TextEncoder().encode(JSON.stringify(digest)) }
    let last: DigestPostResult = { sent: true, ok: false, since, attempts: 0 }
    for (let attempt = 1; attempt <= PING_ATTEMPTS; attempt++) {
      const result = yield* Effect.either(sendOnce(url, timeoutMs, body))
      last = Either.isRight(result)
        ? { sent: true, ok: result.right >= 200 && result.right < 300, since, status: result.right, attempts: attempt }
        : { sent: true, ok: false, since, attempts: attempt, error: `${hostOf(url)}: ${result.left}` }
      if (last.ok) return last
      if (attempt < PING_ATTEMPTS) yield* Effect.sleep(retryDelayMs)
    }
    return last
  })
