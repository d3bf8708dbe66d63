/**
 * Credential → identity per channel (architecture.md §5.1, gaps.md §2). A JWT header and a
 * bearer on one request → 401. Dev tokens are compared in constant time. An approval session
 * cookie counts only while logout has not ended its session (OpsStore.sessionEnded).
 */
import type { HttpServerRequest } from "@effect/platform"
import { Clock, Effect, Redacted } from "effect"
import type { AppConfigShape } from "../config/config.js"
import { BEARER_RE, hashBearer, OpsStore } from "../db/ops-store.js"
import { SessionEnded, Unauthorized } from "../contracts/errors.js"
import { type ChannelName, type Identity, type JwksUnavailable, UNAUTHORIZED_MESSAGE } from "./identity.js"
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

export const SESSION_ENDED_MESSAGE = "the session that issued this form has ended; sign in again"

/** The approval session cookie of a request (dev-token mode). */
export type SessionState =
  /** no cookie, or a forged, malformed or expired one */
  | { readonly state: "none" }
  /** a valid cookie whose session logout has ended */
  | { readonly state: "ended" }
  | { readonly state: "active"; readonly person: Identity; readonly sid: string; readonly exp: number }

export const approvalSession = (
  request: HttpServerRequest.HttpServerRequest,
  config: AppConfigShape
): Effect.Effect<SessionState, never, OpsStore> =>
  Effect.gen(function*() {
    const value = request.cookies[sessionCookieName(config.file.public_url)]
    if (value === undefined) return { state: "none" }
    const session = verifySession(Redacted.value(config.env.sessionSecret), value, yield* Clock.currentTimeMillis)
    if (session === null) return { state: "none" }
    const ops = yield* OpsStore
    if (yield* Effect.orDie(ops.sessionEnded(session.sid))) return { state: "ended" }
    const person: Identity = { kind: "person", auth: "email", identity: session.sub }
    return { state: "active", person, sid: session.sid, exp: session.exp }
  })

/** The person of a valid approval session cookie whose session has not ended (dev-token mode), else null. */
export const sessionPerson = (request: HttpServerRequest.HttpServerRequest, config: AppConfigShape) =>
  Effect.map(approvalSession(request, config), (s) => (s.state === "active" ? s.person : null))

const SAFE_METHODS: ReadonlySet<string> = new Set(["GET", "HEAD"])

export const authenticate = (
  request: HttpServerRequest.HttpServerRequest,
  channel: ChannelName,
  config: AppConfigShape
): Effect.Effect<Identity, Unauthorized | SessionEnded | JwksUnavailable, JwtVerifier | OpsStore> =>
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
      const session = yield* approvalSession(request, config)
      if (session.state === "active") return session.person
      if (session.state === "none") return yield* unauthorized("no valid session")
      // an ended session: a page read is not signed in; a state-changing request is refused
      if (SAFE_METHODS.has(request.method)) return yield* unauthorized("ended session")
      return yield* new SessionEnded({ message: SESSION_ENDED_MESSAGE, reason: "ended session" })
    }
    if (bearer === null) return yield* unauthorized("no credential")
    const devToken = channel === "mcp" ? config.env.devMcpToken : config.env.devApiToken
    if (devToken !== null && sameSecret(bearer, Redacted.value(devToken))) return devPerson(config)
    return yield* unauthorized("unknown bearer")
  })
