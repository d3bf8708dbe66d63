/**
 * GET/POST /approval/login and POST /approval/logout (architecture.md §5.3): dev-token mode
 * only (404 in cloudflare-access mode). Login is state-changing and needs the same origin like
 * every other (a foreign Origin, or neither Origin nor Sec-Fetch-Site: same-origin → 403
 * csrf-failed, before the token is looked at); its attempts are limited per client address.
 * Logout needs same origin and the csrf token. Both read a form of at most 256 KiB (413). Logout ends the session: its sid
 * is recorded in ops.sqlite until the cookie's expiry, so a copy of the cookie no longer counts
 * (a state-changing request with it: 403 csrf-failed; a page: not signed in).
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Clock, Effect, Option, Redacted } from "effect"
import { csrfPage } from "../../approval/error-page.js"
import { pageResponse } from "../../approval/layout.js"
import { loginPage as loginDocument } from "../../approval/login-page.js"
import { approvalPathOf, returnPathOf } from "../../approval/return-path.js"
import { approvalSession, SESSION_ENDED_MESSAGE, sessionPerson } from "../../auth/credentials.js"
import { csrfOk, sameOrigin } from "../../auth/csrf.js"
import { sessionCookie, signSession } from "../../auth/session.js"
import { sameSecret } from "../../auth/tokens.js"
import { AppConfig } from "../../config/config.js"
import { OpsStore } from "../../db/ops-store.js"
import { DEFAULT_BODY_LIMIT, readBody } from "../../transport/body.js"
import { errorResponse } from "../../transport/responses.js"
import { clientAddress, RateLimiter } from "../../transport/rate-limit.js"

/** The login page of src/approval (layout, stylesheet, the headers of §5.3), coming back to `next`. */
const loginForm = (message: string | null, next: string | null) =>
  pageResponse(loginDocument({ devToken: true, message, next }), message === null ? 200 : 401)

/** The `next` of the login page's address (an approval path, else null). */
const nextOfUrl = (url: string): string | null => {
  const at = url.indexOf("?")
  return at === -1 ? null : approvalPathOf(new URLSearchParams(url.slice(at + 1)).get("next"))
}

const notFound = errorResponse("not-found", { message: "no such route" })

/** The fields of a form post (at most DEFAULT_BODY_LIMIT bytes), or the refusal to answer. */
const formOf = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.map(Effect.either(readBody(request, DEFAULT_BODY_LIMIT)), (body) => {
    if (body._tag === "Left") {
      const e = body.left
      return { refusal: e._tag === "PayloadTooLarge" ? errorResponse("payload-too-large", { message: e.message }) : errorResponse("validation-failed", { message: e.message, issues: [...(e.issues ?? [])] }) } as const
    }
    const value = body.right.value
    const fields: Record<string, string> = {}
    if (body.right.form && typeof value === "object" && value !== null) for (const [k, v] of Object.entries(value)) if (typeof v === "string") fields[k] = v
    return { fields } as const
  })

export const loginPage = Effect.gen(function*() {
  const config = yield* AppConfig
  if (config.env.authMode !== "dev-token") return notFound
  // already signed in: straight to the page asked for, else the proposals
  const request = yield* HttpServerRequest.HttpServerRequest
  const next = nextOfUrl(request.url)
  if ((yield* sessionPerson(request, config)) !== null) return HttpServerResponse.redirect(returnPathOf(next), { status: 303 })
  return loginForm(null, next)
})

export const login = Effect.gen(function*() {
  const config = yield* AppConfig
  if (config.env.authMode !== "dev-token") return notFound
  const request = yield* HttpServerRequest.HttpServerRequest
  // same origin, like every state-changing approval request (a foreign page must not sign a browser in)
  if (!sameOrigin(config.file.public_url, request.headers.origin, request.headers["sec-fetch-site"])) {
    yield* Effect.logWarning("denied").pipe(Effect.annotateLogs({ channel: "approval", operation: "login", code: "csrf-failed", reason: "not same origin" }))
    // a person at another host or port than public_url: a page that names it and what to do
    return pageResponse(csrfPage({ publicUrl: config.file.public_url, message: "same-origin request required", viewer: null, login: true }), 403)
  }
  const limiter = yield* RateLimiter
  const address = clientAddress(Option.getOrUndefined(request.remoteAddress), request.headers["x-forwarded-for"], config.file.limits.trusted_proxy)
  const limited = yield* Effect.either(limiter.take("logins", address))
  if (limited._tag === "Left") {
    return errorResponse("rate-limited", { message: limited.left.message }, { "retry-after": String(limited.left.retryAfter) })
  }
  const form = yield* formOf(request)
  if (form.refusal !== undefined) return form.refusal
  const token = form.fields.token ?? ""
  const next = approvalPathOf(form.fields.next)
  const expected = config.env.devApprovalToken
  if (expected === null || !sameSecret(token, Redacted.value(expected)) || config.env.devEmail === null) {
    yield* Effect.logWarning("denied").pipe(Effect.annotateLogs({ channel: "approval", operation: "login", code: "unauthorized" }))
    return loginForm("That token is not valid.", next)
  }
  const now = yield* Clock.currentTimeMillis
  const value = signSession(Redacted.value(config.env.sessionSecret), config.env.devEmail.toLowerCase(), now)
  // the page the person asked for (an approval path of this service only), else the proposals
  return HttpServerResponse.redirect(returnPathOf(next), { status: 303, headers: { "set-cookie": sessionCookie(config.file.public_url, value) } })
})

export const logout = Effect.gen(function*() {
  const config = yield* AppConfig
  if (config.env.authMode !== "dev-token") return notFound
  const request = yield* HttpServerRequest.HttpServerRequest
  const session = yield* approvalSession(request, config)
  if (session.state === "none") return errorResponse("unauthorized", { message: "a valid credential is required" })
  if (session.state === "ended") return errorResponse("csrf-failed", { message: SESSION_ENDED_MESSAGE })
  const form = yield* formOf(request)
  if (form.refusal !== undefined) return form.refusal
  const ok = csrfOk({
    secret: Redacted.value(config.env.sessionSecret), identity: session.person.identity, publicUrl: config.file.public_url,
    origin: request.headers.origin, secFetchSite: request.headers["sec-fetch-site"],
    token: request.headers.csrf ?? form.fields.csrf
  })
  if (!ok) return errorResponse("csrf-failed", { message: "same-origin request with a valid csrf token required" })
  const ops = yield* OpsStore
  yield* Effect.orDie(ops.endSession(session.sid, session.exp))
  yield* Effect.logInfo("session ended").pipe(Effect.annotateLogs({ channel: "approval", operation: "logout" }))
  return HttpServerResponse.redirect("/approval/login", { status: 303, headers: { "set-cookie": sessionCookie(config.file.public_url, "", 0) } })
})
