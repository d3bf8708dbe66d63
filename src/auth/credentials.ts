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

const unauthorized = (reason: string, message: string = UNAUTHORIZED_MESSAGE) => new Unauthorized({ message, reason })

/**
 * What a 401 of step 1 says (docs/decisions.md «Step 1: what a 401 says»). A token is named only
 * where the caller could learn as much by sending it to its own route, unlimited in both places:
 * the MCP token on /v1, the API token on /mcp. An unknown token, a disabled grant's token and the
 * approval login token (whose guesses the login limit counts) share UNKNOWN_TOKEN.
 */
export const CREDENTIAL_MESSAGES = {
  malformed: "the Authorization header must be \"Bearer <token>\" (the word Bearer, one space, the token)",
  both: "send one credential, not both: an Access token (cf-access-jwt-assertion) or Authorization: Bearer <token>",
  missingBearer: "a credential is required: send Authorization: Bearer <token>",
  missingAccess: "a credential is required: send the Access token in the cf-access-jwt-assertion header",
  unknownToken: "the bearer token is not known (never issued, or its grant is disabled); ask an operator for an active grant",
  mcpTokenOnApi: "this is the MCP token (GROUNDNOTE_DEV_MCP_TOKEN): it is valid on /mcp only; /v1 takes a service token (gn_…) or GROUNDNOTE_DEV_API_TOKEN",
  apiTokenOnMcp: "this is the API token (GROUNDNOTE_DEV_API_TOKEN): it is valid on /v1 only; /mcp takes GROUNDNOTE_DEV_MCP_TOKEN",
  serviceOnPerson: (channel: ChannelName) => `a service token (gn_…) is never valid on the ${channel} channel: it takes a person's credential`,
  approvalBearer: "the approval channel takes the session cookie in dev-token mode, not a header: sign in at /approval/login",
  noSession: "no valid session: sign in at /approval/login",
  endedSession: "the session has ended: sign in again at /approval/login",
  noGrant: "the credential is valid, but no active grant belongs to it; ask an operator for a grant"
} as const

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
    if (jwt !== undefined && bearer !== null) return yield* unauthorized("jwt and bearer together", CREDENTIAL_MESSAGES.both)
    const access = config.env.authMode === "cloudflare-access"
    if (bearer === "") return yield* unauthorized("malformed authorization header", CREDENTIAL_MESSAGES.malformed)

    if (bearer !== null && BEARER_RE.test(bearer)) {
      if (channel !== "api") return yield* unauthorized("service bearer on a person channel", CREDENTIAL_MESSAGES.serviceOnPerson(channel))
      return { kind: "service", auth: "bearer", identity: hashBearer(bearer) } satisfies Identity
    }
    if (access) {
      if (jwt === undefined) return yield* unauthorized("no credential", CREDENTIAL_MESSAGES.missingAccess)
      const verifier = yield* JwtVerifier
      return yield* verifier.verify(jwt, channel)
    }
    // dev-token mode
    if (channel === "approval") {
      if (bearer !== null || jwt !== undefined) return yield* unauthorized("approval takes the session cookie in dev-token mode", CREDENTIAL_MESSAGES.approvalBearer)
      const session = yield* approvalSession(request, config)
      if (session.state === "active") return session.person
      if (session.state === "none") return yield* unauthorized("no valid session", CREDENTIAL_MESSAGES.noSession)
      // an ended session: a page read is not signed in; a state-changing request is refused
      if (SAFE_METHODS.has(request.method)) return yield* unauthorized("ended session", CREDENTIAL_MESSAGES.endedSession)
      return yield* new SessionEnded({ message: SESSION_ENDED_MESSAGE, reason: "ended session" })
    }
    if (bearer === null) return yield* unauthorized("no credential", CREDENTIAL_MESSAGES.missingBearer)
    const devToken = channel === "mcp" ? config.env.devMcpToken : config.env.devApiToken
    if (devToken !== null && sameSecret(bearer, Redacted.value(devToken))) return devPerson(config)
    const otherToken = channel === "mcp" ? config.env.devApiToken : config.env.devMcpToken
    if (otherToken !== null && sameSecret(bearer, Redacted.value(otherToken))) {
      return yield* channel === "mcp"
        ? unauthorized("api token on mcp", CREDENTIAL_MESSAGES.apiTokenOnMcp)
        : unauthorized("mcp token on api", CREDENTIAL_MESSAGES.mcpTokenOnApi)
    }
    return yield* unauthorized("unknown bearer", CREDENTIAL_MESSAGES.unknownToken)
  })
