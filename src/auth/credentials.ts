/**
 * Credential → identity per channel (architecture.md §5.1, gaps.md §2). A JWT header and a
 * bearer on one request → 401. Dev tokens are compared in constant time.
 */
import type { HttpServerRequest } from "@effect/platform"
import { Clock, Effect, Redacted } from "effect"
import type { AppConfigShape } from "../config/config.js"
import { BEARER_RE, hashBearer } from "../db/ops-store.js"
import { type ChannelName, type Identity, type JwksUnavailable, Unauthorized, UNAUTHORIZED_MESSAGE } from "./identity.js"
import { JwtVerifier } from "./jwt.js"
import { sessionCookieName, verifySession } from "./session.js"
import { sameSecret } from "./tokens.js"

export const JWT_HEADER = "cf-access-jwt-assertion"

const unauthorized = (reason: string) => new Unauthorized({ message: UNAUTHORIZED_MESSAGE, reason })

const bearerOf = (request: HttpServerRequest.HttpServerRequest): string | null => {
  const h = request.headers.authorization
  if (h === undefined) return null
  const m = /^Bearer ([^\s]+)$/.exec(h)
  return m?.[1] ?? ""
}

const devPerson = (config: AppConfigShape): Identity => ({
  kind: "person", auth: "email", identity: (config.env.devEmail ?? "").toLowerCase()
})

/** The person of a valid approval session cookie (dev-token mode), else null. */
export const sessionPerson = (request: HttpServerRequest.HttpServerRequest, config: AppConfigShape) =>
  Effect.map(Clock.currentTimeMillis, (now) => {
    const value = request.cookies[sessionCookieName(config.file.public_url)]
    if (value === undefined) return null
    const sub = verifySession(Redacted.value(config.env.sessionSecret), value, now)
    return sub === null ? null : ({ kind: "person", auth: "email", identity: sub } satisfies Identity)
  })

export const authenticate = (
  request: HttpServerRequest.HttpServerRequest,
  channel: ChannelName,
  config: AppConfigShape
): Effect.Effect<Identity, Unauthorized | JwksUnavailable, JwtVerifier> =>
  Effect.gen(function*() {
    const jwt = request.headers[JWT_HEADER]
    const bearer = bearerOf(request)
    if (jwt !== undefined && bearer !== null) return yield* unauthorized("jwt and bearer together")
    const access = config.env.authMode === "cloudflare-access"
    if (bearer === "") return yield* unauthorized("malformed authorization header")

    if (bearer !== null && BEARER_RE.test(bearer)) {
      if (channel !== "api") return yield* unauthorized("service bearer on a person channel")
      return { kind: "service", auth: "bearer", identity: hashBearer(bearer) } satisfies Identity
    }
    if (access) {
      if (jwt === undefined) return yield* unauthorized("no credential")
      const verifier = yield* JwtVerifier
      return yield* verifier.verify(jwt, channel)
    }
    // dev-token mode
    if (channel === "approval") {
      if (bearer !== null || jwt !== undefined) return yield* unauthorized("approval takes the session cookie in dev-token mode")
      const person = yield* sessionPerson(request, config)
      return person ?? (yield* unauthorized("no valid session"))
    }
    if (bearer === null) return yield* unauthorized("no credential")
    const devToken = channel === "mcp" ? config.env.devMcpToken : config.env.devApiToken
    if (devToken !== null && sameSecret(bearer, Redacted.value(devToken))) return devPerson(config)
    return yield* unauthorized("unknown bearer")
  })
