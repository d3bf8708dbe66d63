/**
 * The dead-man ping of backup nightly (architecture.md §3, docs/backup.md): a GET to
 * backup.deadman_url, at most PING_ATTEMPTS attempts, each bounded by its own timer. A 2xx answer
 * counts and is all that is read: the connection is closed at the status line, so an endpoint
 * that answers half a body (or never answers) leaves no socket, agent or timer behind and the
 * CLI exits. Redirects are not followed (a 3xx is reported with its status).
 *
 * node:http(s) with our own timer and req.destroy(), not fetch: on Node 20 a fetch's abort can be
 * lost after a garbage collection (AbortSignal.timeout inside AbortSignal.any, and the Request's
 * weakly followed signal), and the attempt then waits for ever.
 */
import { type ClientRequest, request as httpRequest } from "node:http"
import { request as httpsRequest } from "node:https"
import { Effect, Either } from "effect"

export const PING_ATTEMPTS = 3
export const PING_TIMEOUT_MS = 10_000
export const PING_RETRY_DELAY_MS = 2_000

export interface PingResult {
  readonly sent: boolean
  readonly ok: boolean
  /** HTTP status of the last attempt */
  readonly status?: number
  readonly attempts: number
  readonly error?: string
  /** backup.deadman_url is null: no ping was meant to be sent */
  readonly skipped?: true
}

export const hostOf = (url: string): string => {
  try {
    return new URL(url).host
  } catch {
    return "?"
  }
}

const errorText = (e: unknown): string => {
  const code = typeof e === "object" && e !== null && "code" in e ? String((e as { code: unknown }).code) : ""
  const message = e instanceof Error ? e.message : String(e)
  return message === "" ? code || "error" : message
}

/** A body to send (the digest's POST), with its content type. */
export interface SendBody {
  readonly contentType: string
  readonly bytes: Uint8Array
}

/**
 * One GET: the status, or why there is none. The message never repeats the URL (it may carry a
 * key); node's connection errors name at most the address.
 */
export const getOnce = (url: string, timeoutMs: number): Effect.Effect<number, string> => sendOnce(url, timeoutMs, null)

/** One request: a GET, or a POST of `body`; otherwise as getOnce. */
export const sendOnce = (url: string, timeoutMs: number, body: SendBody | null): Effect.Effect<number, string> =>
  Effect.async<number, string>((resume) => {
    let target: URL
    try {
      target = new URL(url)
    } catch {
      resume(Effect.fail("not an absolute URL"))
      return
    }
    if (target.protocol !== "http:" && target.protocol !== "https:") {
      resume(Effect.fail(`${target.protocol} is neither http: nor https:`))
      return
    }
    let done = false
    const send = target.protocol === "https:" ? httpsRequest : httpRequest
    // agent: false: a connection of its own, closed after the answer (no pool keeps it open)
    const headers: Record<string, string> = { accept: "*/*", connection: "close" }
    if (body !== null) {
      headers["content-type"] = body.contentType
      headers["content-length"] = String(body.bytes.byteLength)
    }
    const req: ClientRequest = send(target, { method: body === null ? "GET" : "POST", agent: false, headers }, (res) => {
      finish(Effect.succeed(res.statusCode ?? 0))
    })
    const timer = setTimeout(() => finish(Effect.fail(`no answer within ${timeoutMs} ms`)), timeoutMs)
    // called only from the request's events and the timer, after both exist
    function finish(result: Effect.Effect<number, string>): void {
      if (done) return
      done = true
      clearTimeout(timer)
      req.destroy()
      resume(result)
    }
    req.on("error", (e) => finish(Effect.fail(errorText(e))))
    req.end(body === null ? undefined : body.bytes)
    return Effect.sync(() => {
      done = true
      clearTimeout(timer)
      req.destroy()
    })
  })

/** The dead-man ping: 2xx counts; up to PING_ATTEMPTS attempts, a pause between them. */
export const pingDeadman = (url: string, timeoutMs = PING_TIMEOUT_MS, retryDelayMs = PING_RETRY_DELAY_MS): Effect.Effect<PingResult> =>
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
