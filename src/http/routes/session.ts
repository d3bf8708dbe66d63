/**
 * GET/POST /approval/login and POST /approval/logout (architecture.md §5.3): dev-token mode
 * only (404 in cloudflare-access mode). Login attempts are limited per client address; logout
 * is state-changing and needs same origin and the csrf token.
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Clock, Effect, Option, Redacted } from "effect"
import { html, PAGE_HEADERS } from "../../approval/html.js"
import { sessionPerson } from "../../auth/credentials.js"
import { csrfOk } from "../../auth/csrf.js"
import { sessionCookie, signSession } from "../../auth/session.js"
import { sameSecret } from "../../auth/tokens.js"
import { AppConfig } from "../../config/config.js"
import { errorResponse } from "../errors.js"
import { clientAddress, RateLimiter } from "../rate-limit.js"

const page = (body: ReturnType<typeof html>, status = 200) =>
  HttpServerResponse.text(
    html`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Groundnote — sign in</title></head><body>${body}</body></html>`.value,
    { status, headers: PAGE_HEADERS, contentType: "text/html; charset=utf-8" }
  )

const loginForm = (message: string | null) => html`
<main>
  <h1>Groundnote approval</h1>
  ${message === null ? "" : html`<p role="alert">${message}</p>`}
  <form method="post" action="/approval/login">
    <label>Dev approval token <input type="password" name="token" autocomplete="current-password" required></label>
    <button type="submit">Sign in</button>
  </form>
</main>`

const notFound = errorResponse("not-found", { message: "no such route" })

export const loginPage = Effect.gen(function*() {
  const config = yield* AppConfig
  if (config.env.authMode !== "dev-token") return notFound
  return page(loginForm(null))
})

export const login = Effect.gen(function*() {
  const config = yield* AppConfig
  if (config.env.authMode !== "dev-token") return notFound
  const request = yield* HttpServerRequest.HttpServerRequest
  const limiter = yield* RateLimiter
  const address = clientAddress(Option.getOrUndefined(request.remoteAddress), request.headers["x-forwarded-for"], config.file.limits.trusted_proxy)
  const limited = yield* Effect.either(limiter.take("logins", address))
  if (limited._tag === "Left") {
    return errorResponse("rate-limited", { message: limited.left.message }, { "retry-after": String(limited.left.retryAfter) })
  }
  const form = yield* Effect.orElseSucceed(request.urlParamsBody, () => [] as ReadonlyArray<readonly [string, string]>)
  const token = form.find(([k]) => k === "token")?.[1] ?? ""
  const expected = config.env.devApprovalToken
  if (expected === null || !sameSecret(token, Redacted.value(expected)) || config.env.devEmail === null) {
    yield* Effect.logWarning("denied").pipe(Effect.annotateLogs({ channel: "approval", operation: "login", code: "unauthorized" }))
    return page(loginForm("That token is not valid."), 401)
  }
  const now = yield* Clock.currentTimeMillis
  const value = signSession(Redacted.value(config.env.sessionSecret), config.env.devEmail.toLowerCase(), now)
  return HttpServerResponse.redirect("/approval", { status: 303, headers: { "set-cookie": sessionCookie(config.file.public_url, value) } })
})

export const logout = Effect.gen(function*() {
  const config = yield* AppConfig
  if (config.env.authMode !== "dev-token") return notFound
  const request = yield* HttpServerRequest.HttpServerRequest
  const person = yield* sessionPerson(request, config)
  if (person === null) return errorResponse("unauthorized", { message: "a valid credential is required" })
  const form = yield* Effect.orElseSucceed(request.urlParamsBody, () => [] as ReadonlyArray<readonly [string, string]>)
  const ok = csrfOk({
    secret: Redacted.value(config.env.sessionSecret), identity: person.identity, publicUrl: config.file.public_url,
    origin: request.headers.origin, secFetchSite: request.headers["sec-fetch-site"],
    token: request.headers.csrf ?? form.find(([k]) => k === "csrf")?.[1]
  })
  if (!ok) return errorResponse("csrf-failed", { message: "same-origin request with a valid csrf token required" })
  return HttpServerResponse.redirect("/approval/login", { status: 303, headers: { "set-cookie": sessionCookie(config.file.public_url, "", 0) } })
})
