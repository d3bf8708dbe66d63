/**
 * The CLI's client of the public listener (architecture.md §11 "CLI groundnote"): one request of
 * the route table (cli-routes.ts) to the endpoint of cli-credentials.ts. The answer is the JSON
 * body on 2xx; an error answer is the service's ErrorBody as a CliError with its code. Redirects
 * are not followed (a credential never travels to another address): behind Cloudflare Access a
 * redirect means the Access token is missing or expired.
 *
 * apiDownload streams a file answer (the export) into a private temporary file next to the target
 * and hard-links it there: an existing file is never overwritten.
 */
import { createHash, randomBytes } from "node:crypto"
import { closeSync, fsyncSync, linkSync, openSync, unlinkSync, writeSync } from "node:fs"
import { basename, dirname, join } from "node:path"
import { Effect } from "effect"
import { CliError, cliError } from "./cli-output.js"
import type { Endpoint } from "./cli-credentials.js"
import { buildPath, CLI_ROUTES, type CliRouteName } from "./cli-routes.js"

/** How long an api command waits for its answer. */
export const API_TIMEOUT_MS = 60_000
/** How long export waits for the whole archive. */
export const EXPORT_TIMEOUT_MS = 30 * 60_000

export interface ApiOptions {
  readonly params?: Readonly<Record<string, string>>
  readonly query?: Readonly<Record<string, string | undefined>>
  readonly body?: unknown
  readonly timeoutMs?: number
}

const causeText = (e: unknown): string => {
  if (e instanceof Error) {
    const cause = e.cause
    if (cause instanceof Error) return (cause as Error & { code?: string }).code ?? cause.message
    return e.message
  }
  return String(e)
}

const originOf = (base: string): string => {
  try {
    return new URL(base).origin
  } catch {
    return base
  }
}

/** The URL of `route`: an empty path parameter is refused like the service refuses it. */
const urlOf = (endpoint: Endpoint, route: CliRouteName, options: ApiOptions): Effect.Effect<string, CliError> =>
  Effect.suspend(() => {
    const r = CLI_ROUTES[route]
    if (r.channel === "ops") return Effect.die(new Error(`${route} is an ops route`))
    for (const [name, value] of Object.entries(options.params ?? {})) {
      if (value === "") {
        const message = `request is invalid: ${name}: must not be empty`
        return Effect.fail(new CliError({ code: "validation-failed", message, body: { error: "validation-failed", message, issues: [{ path: name, message: "must not be empty" }] } }))
      }
    }
    return Effect.succeed(`${endpoint.base}${buildPath(r, options.params ?? {}, options.query ?? {})}`)
  })

/** The request of `route` with its headers; the response, or why there is none. */
const send = (endpoint: Endpoint, route: CliRouteName, options: ApiOptions, accept: string) =>
  Effect.flatMap(urlOf(endpoint, route, options), (url) =>
    Effect.tryPromise({
      try: (signal) => {
        const headers: Record<string, string> = { ...endpoint.headers, accept }
        let body: string | undefined
        if (options.body !== undefined) {
          headers["content-type"] = "application/json"
          body = JSON.stringify(options.body)
        }
        return fetch(url, { method: CLI_ROUTES[route].method, headers, redirect: "manual", signal, ...(body === undefined ? {} : { body }) })
      },
      catch: (e): CliError =>
        cliError("api-unreachable", `cannot reach ${originOf(endpoint.base)} (${causeText(e)}): is GROUNDNOTE_URL the service's address, and is it running?`)
    }))

/**
 * The whole request, answer read to its end, within `ms`. The timer is Effect's own (held by the
 * fiber), not an AbortSignal.timeout inside AbortSignal.any, which Node 20 can lose after a garbage
 * collection, so a service that accepts and never answers, or stops half-way through a body, still
 * ends the command; the interruption aborts the fetch.
 */
const within = (endpoint: Endpoint, ms: number) => <A>(self: Effect.Effect<A, CliError>): Effect.Effect<A, CliError> =>
  Effect.timeoutFail(self, {
    duration: ms,
    onTimeout: () => cliError("api-unreachable", `no answer from ${originOf(endpoint.base)} within ${Math.round(ms / 1000)} s`)
  })

/** An answer that is not 2xx as a CliError: the service's ErrorBody, a redirect, or something else. */
const refusalOf = (endpoint: Endpoint, response: Response): Effect.Effect<never, CliError> =>
  Effect.gen(function*() {
    const status = response.status
    if (status >= 300 && status < 400) {
      yield* Effect.promise(() => response.body?.cancel() ?? Promise.resolve())
      const to = response.headers.get("location")
      return yield* cliError("api-bad-answer", `${originOf(endpoint.base)} answered ${status} (a redirect${to === null ? "" : ` to ${originOf(new URL(to, endpoint.base).href)}`}), not the service: behind Cloudflare Access the Access token is missing, expired or for another application`)
    }
    const text = yield* Effect.promise(() => response.text().catch(() => ""))
    try {
      const body = JSON.parse(text) as unknown
      if (typeof body === "object" && body !== null && typeof (body as { error?: unknown }).error === "string") {
        const e = body as { error: string; message?: unknown }
        return yield* new CliError({ code: e.error, message: typeof e.message === "string" ? e.message : `the service answered ${status}`, status, body })
      }
    } catch {
      // not JSON
    }
    return yield* new CliError({ code: "api-bad-answer", message: `${originOf(endpoint.base)} answered ${status} without an error body`, status })
  })

/** One api request: the JSON answer on 2xx, else a CliError with the service's code. */
export const apiRequest = (endpoint: Endpoint, route: CliRouteName, options: ApiOptions = {}): Effect.Effect<unknown, CliError> =>
  Effect.gen(function*() {
    const response = yield* send(endpoint, route, options, "application/json")
    if (response.status < 200 || response.status >= 300) return yield* refusalOf(endpoint, response)
    const text = yield* Effect.tryPromise({ try: () => response.text(), catch: (e) => cliError("api-unreachable", `the answer broke off (${causeText(e)})`) })
    try {
      return text === "" ? null : (JSON.parse(text) as unknown)
    } catch {
      return yield* cliError("api-bad-answer", `${originOf(endpoint.base)} answered ${response.status} with a body that is not JSON: is GROUNDNOTE_URL the service's address?`)
    }
  }).pipe(within(endpoint, options.timeoutMs ?? API_TIMEOUT_MS))

const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$/

/** The file name of a content-disposition header, when it is a plain safe name. */
export const dispositionName = (header: string | null): string | null => {
  const m = header === null ? null : /filename="([^"]+)"/.exec(header)
  const name = m?.[1] === undefined ? null : basename(m[1])
  return name !== null && SAFE_NAME.test(name) ? name : null
}

export interface Downloaded {
  readonly file: string
  readonly bytes: number
  readonly sha256: string
}

/**
 * Streams a file answer to `target` (or, with target null, to the name the service gives in the
 * working directory): a private temporary file next to it (0600, O_EXCL), fsync, then a hard link
 * to the target (target-exists: nothing is overwritten, also not in a race).
 */
export const apiDownload = (
  endpoint: Endpoint,
  route: CliRouteName,
  options: ApiOptions & { readonly target: string | null; readonly fallbackName: string; readonly cwd: string; readonly onBytes?: (bytes: number) => void }
): Effect.Effect<Downloaded, CliError> =>
  Effect.gen(function*() {
    const response = yield* send(endpoint, route, options, "application/gzip, application/json")
    if (response.status < 200 || response.status >= 300) return yield* refusalOf(endpoint, response)
    const target = options.target ?? join(options.cwd, dispositionName(response.headers.get("content-disposition")) ?? options.fallbackName)
    const tmp = join(dirname(target), `.${basename(target)}.part-${randomBytes(4).toString("hex")}`)
    const fd = yield* Effect.try({
      try: () => openSync(tmp, "wx", 0o600),
      catch: (e) => cliError("target-directory-missing", `cannot write into ${dirname(target)} (${(e as { code?: string }).code ?? "error"}): the directory must exist and be yours`)
    })
    const written = yield* Effect.tryPromise({
      try: async () => {
        const hash = createHash("sha256")
        let bytes = 0
        try {
          if (response.body !== null) {
            for await (const chunk of response.body) {
              const buf = Buffer.from(chunk)
              let offset = 0
              while (offset < buf.length) offset += writeSync(fd, buf, offset, buf.length - offset)
              hash.update(buf)
              bytes += buf.length
              options.onBytes?.(bytes)
            }
          }
          fsyncSync(fd)
        } finally {
          closeSync(fd)
        }
        return { bytes, sha256: hash.digest("hex") }
      },
      catch: (e) => cliError("api-unreachable", `the export broke off (${causeText(e)}): nothing was written`)
    }).pipe(Effect.onError(() => Effect.sync(() => unlinkSync(tmp))))
    yield* Effect.try({
      try: () => linkSync(tmp, target),
      catch: (e) =>
        (e as { code?: string }).code === "EEXIST"
          ? cliError("target-exists", `${target} exists: export never overwrites a file; choose another --out`)
          : cliError("target-directory-missing", `cannot write ${target} (${(e as { code?: string }).code ?? "error"})`)
    }).pipe(Effect.ensuring(Effect.sync(() => unlinkSync(tmp))))
    return { file: target, ...written }
  }).pipe(within(endpoint, options.timeoutMs ?? EXPORT_TIMEOUT_MS))
