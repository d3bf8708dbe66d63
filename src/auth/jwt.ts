/**
 * Cloudflare Access JWT check (architecture.md §5.1, gaps.md §2). A token problem of any kind is
 * 401 Unauthorized; a key set that cannot be fetched is JwksUnavailable, answered 500 internal
 * (architecture.md §6.6). Times come from Effect's Clock, so TestClock drives exp, nbf and iat.
 */
import { Clock, Context, Effect, Layer } from "effect"
import { createRemoteJWKSet, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from "jose"
import { AppConfig } from "../config/config.js"
import { Unauthorized } from "../contracts/errors.js"
import { type ChannelName, type Identity, JwksUnavailable, UNAUTHORIZED_MESSAGE } from "./identity.js"

/** The request header that carries the Access JWT (gaps.md §2). */
export const ACCESS_JWT_HEADER = "cf-access-jwt-assertion"

/** Seconds of clock skew allowed for exp, nbf and iat. */
export const CLOCK_TOLERANCE_SECONDS = 30

/** Fetch limits of the remote key set (architecture.md §5.1). */
export const JWKS_COOLDOWN_MS = 60_000
export const JWKS_CACHE_MAX_AGE_MS = 600_000
export const JWKS_TIMEOUT_MS = 5_000

export interface JwtVerifierShape {
  readonly verify: (token: string, channel: ChannelName) => Effect.Effect<Identity, Unauthorized | JwksUnavailable>
}

export class JwtVerifier extends Context.Tag("Groundnote/JwtVerifier")<JwtVerifier, JwtVerifierShape>() {}

export interface JwtVerifierOptions {
  /** https://<team>.cloudflareaccess.com, the expected issuer */
  readonly teamDomain: string
  readonly audiences: Readonly<Record<ChannelName, string>>
  readonly keys: JWTVerifyGetKey
}

/** A trailing slash would break both the issuer comparison and the JWKS path. */
const trimTeamDomain = (teamDomain: string): string => teamDomain.replace(/\/+$/, "")

/** The production key set: <team_domain>/cdn-cgi/access/certs with the §5.1 fetch limits. */
export const remoteKeySet = (teamDomain: string): JWTVerifyGetKey =>
  createRemoteJWKSet(new URL(`${trimTeamDomain(teamDomain)}/cdn-cgi/access/certs`), {
    cooldownDuration: JWKS_COOLDOWN_MS,
    cacheMaxAge: JWKS_CACHE_MAX_AGE_MS,
    timeoutDuration: JWKS_TIMEOUT_MS
  })

const unauthorized = (reason: string): Unauthorized => new Unauthorized({ message: UNAUTHORIZED_MESSAGE, reason })

/**
 * Errors the key resolver raises because of the token (its kid or alg), not because the key set
 * could not be had. Everything else the resolver throws is a fetch / key set failure.
 */
const TOKEN_KEY_ERRORS: ReadonlySet<string> = new Set([
  "ERR_JWKS_NO_MATCHING_KEY",
  "ERR_JWKS_MULTIPLE_MATCHING_KEYS",
  "ERR_JOSE_ALG_NOT_ALLOWED",
  "ERR_JOSE_NOT_SUPPORTED"
])

/** Thrown by the guarded resolver so that a key set failure leaves jwtVerify recognisable. */
class KeySetFailure extends Error {
  constructor(readonly reason: string) {
    super(reason)
    this.name = "KeySetFailure"
  }
}

const errorCode = (error: unknown): string | undefined => {
  if (typeof error !== "object" || error === null) return undefined
  const code = (error as { code?: unknown }).code
  return typeof code === "string" ? code : undefined
}

const errorName = (error: unknown): string =>
  error instanceof Error ? error.name : typeof error

/** For the process log: code or name, message, and the code of the cause (e.g. ECONNREFUSED). */
const describeKeySetError = (error: unknown): string => {
  const head = errorCode(error) ?? errorName(error)
  const message = error instanceof Error ? error.message : ""
  const causeCode = error instanceof Error ? errorCode(error.cause) ?? (error.cause instanceof Error ? error.cause.name : undefined) : undefined
  return [head, message, causeCode === undefined ? "" : `(${causeCode})`].filter((s) => s !== "").join(" ")
}

const guardKeys = (keys: JWTVerifyGetKey): JWTVerifyGetKey => async (header, token) => {
  try {
    return await keys(header, token)
  } catch (error) {
    const code = errorCode(error)
    if (code !== undefined && TOKEN_KEY_ERRORS.has(code)) throw error
    throw new KeySetFailure(describeKeySetError(error))
  }
}

/** The reason of a token problem: jose's error code (claim failures name the claim), never the token. */
const tokenReason = (error: unknown): string => {
  const code = errorCode(error)
  if (code === undefined) return errorName(error)
  const claim = (error as { claim?: unknown }).claim
  return code === "ERR_JWT_CLAIM_VALIDATION_FAILED" && typeof claim === "string" ? `${code}:${claim}` : code
}

const PRINTABLE_ASCII = /^[\x21-\x7e]+$/

const identityOf = (payload: JWTPayload): Identity | Unauthorized => {
  const email = payload["email"]
  if (email !== undefined) {
    if (typeof email !== "string") return unauthorized("email-not-a-string")
    if (!PRINTABLE_ASCII.test(email)) return unauthorized("email-not-printable-ascii")
    return { kind: "person", auth: "email", identity: email.toLowerCase() }
  }
  const commonName = payload["common_name"]
  if (typeof commonName === "string" && commonName.length > 0) {
    return { kind: "service", auth: "access-service", identity: commonName }
  }
  return unauthorized("no-identity-claim")
}

/** The verifier over any key resolver (remote in production, a loopback or local set in tests). */
export const makeJwtVerifier = (options: JwtVerifierOptions): JwtVerifierShape => {
  const issuer = trimTeamDomain(options.teamDomain)
  const keys = guardKeys(options.keys)
  const verify = Effect.fn("JwtVerifier.verify")(function*(token: string, channel: ChannelName) {
    const nowMs = yield* Clock.currentTimeMillis
    const { payload } = yield* Effect.tryPromise({
      try: () =>
        jwtVerify(token, keys, {
          algorithms: ["RS256"],
          issuer,
          audience: options.audiences[channel],
          clockTolerance: CLOCK_TOLERANCE_SECONDS,
          requiredClaims: ["exp"],
          currentDate: new Date(nowMs)
        }),
      catch: (error): Unauthorized | JwksUnavailable =>
        error instanceof KeySetFailure ? new JwksUnavailable({ reason: error.reason }) : unauthorized(tokenReason(error))
    })
    // jose checks iat only with maxTokenAge; an iat beyond the tolerance in the future is refused here.
    const nowSeconds = Math.floor(nowMs / 1000)
    if (typeof payload.iat === "number" && payload.iat > nowSeconds + CLOCK_TOLERANCE_SECONDS) {
      return yield* unauthorized("ERR_JWT_CLAIM_VALIDATION_FAILED:iat")
    }
    const identity = identityOf(payload)
    if (identity instanceof Unauthorized) return yield* identity
    return identity
  })
  return { verify }
}

/** Dev-token mode (no `access` in groundnote.json): no Access JWT is ever valid. */
const noAccessVerifier: JwtVerifierShape = {
  verify: () => Effect.fail(unauthorized("no access configuration"))
}

/**
 * The verifier from config.file.access with the given key resolver (default: the remote key set of
 * the team domain). Tests and createApp pass a local resolver.
 */
export const jwtVerifierLayer = (keys?: JWTVerifyGetKey): Layer.Layer<JwtVerifier, never, AppConfig> =>
  Layer.effect(
    JwtVerifier,
    Effect.map(AppConfig, (config) => {
      const access = config.file.access
      if (access === undefined) return noAccessVerifier
      return makeJwtVerifier({
        teamDomain: access.team_domain,
        audiences: { mcp: access.aud_mcp, api: access.aud_api, approval: access.aud_approval },
        keys: keys ?? remoteKeySet(access.team_domain)
      })
    })
  )

export const JwtVerifierLive: Layer.Layer<JwtVerifier, never, AppConfig> = jwtVerifierLayer()
