/**
 * Step 1 of the scope-check pipeline (architecture.md §5.2), once for every channel: the
 * credential → identity → active grant (401), the identity kind the channel admits (403
 * channel-not-allowed), and the grant's limit (429). Its result travels as the CurrentCaller
 * tag: the public listener's routes, /mcp and the approval pages provide it to everything the
 * request runs, instead of passing the grant by hand.
 */
import type { HttpServerRequest } from "@effect/platform"
import { Context, Effect, Option } from "effect"
import { AppConfig } from "../config/config.js"
import { ChannelNotAllowed, RateLimited, type SessionEnded, Unauthorized } from "../contracts/errors.js"
import type { Grant } from "../contracts/grants.js"
import { BEARER_RE, hashBearer, OpsStore } from "../db/ops-store.js"
import { type LimitKind, RateLimiter } from "../transport/rate-limit.js"
import { authenticate, CREDENTIAL_MESSAGES } from "./credentials.js"
import type { ChannelName, Identity, JwksUnavailable } from "./identity.js"
import type { JwtVerifier } from "./jwt.js"

/** Who calls, on which channel: step 1 has run (authenticated, active grant, identity kind, limit). */
export interface Caller {
  readonly identity: Identity
  readonly grant: Grant
  readonly channel: ChannelName
}

export class CurrentCaller extends Context.Tag("Groundnote/CurrentCaller")<CurrentCaller, Caller>() {}

/** Who may use each channel (gaps.md §2). */
export const CHANNEL_KINDS: Readonly<Record<ChannelName, ReadonlyArray<Identity["kind"]>>> = {
  mcp: ["person"], api: ["person", "service"], approval: ["person"]
}

/** A refusal of step 1; the grant id (when known) and the reason go to the process log. */
export type CallerRefusal = Unauthorized | ChannelNotAllowed | SessionEnded | RateLimited

export interface CallerCheck {
  readonly channel: ChannelName
  /** the bucket this request takes a token from, or null (the approval pages) */
  readonly limit: LimitKind | null
}

/**
 * Step 1 for one request. A JWKS that cannot be fetched is JwksUnavailable (500 internal, never
 * 401). On mcp and approval a service bearer that names an active grant is a service on a person
 * channel (403 channel-not-allowed, as §4.4 says of the export), like an Access service token.
 */
export const checkCaller = (
  request: HttpServerRequest.HttpServerRequest,
  check: CallerCheck
): Effect.Effect<Caller, CallerRefusal | JwksUnavailable, AppConfig | OpsStore | RateLimiter | JwtVerifier> =>
  Effect.gen(function*() {
    const config = yield* AppConfig
    const ops = yield* OpsStore
    const { channel } = check
    const identity = yield* Effect.either(authenticate(request, channel, config))
    if (identity._tag === "Left") {
      const e = identity.left
      if (e._tag === "Unauthorized" && !CHANNEL_KINDS[channel].includes("service")) {
        const bearer = /^Bearer (\S+)$/.exec(request.headers.authorization ?? "")?.[1]
        if (bearer !== undefined && BEARER_RE.test(bearer) && request.headers["cf-access-jwt-assertion"] === undefined) {
          const service = yield* ops.findActiveGrant("bearer", hashBearer(bearer)).pipe(Effect.orDie)
          if (Option.isSome(service)) {
            return yield* new ChannelNotAllowed({ message: `a service cannot use the ${channel} channel`, reason: `service on ${channel}`, grantId: service.value.id })
          }
        }
      }
      return yield* e
    }
    const found = yield* ops.findActiveGrant(identity.right.auth, identity.right.identity).pipe(Effect.orDie)
    if (Option.isNone(found)) {
      // a bearer proves nothing by its form: without a grant it is an unknown token; a verified
      // JWT or a dev token did prove itself, and only the grant is missing
      const message = identity.right.auth === "bearer" ? CREDENTIAL_MESSAGES.unknownToken : CREDENTIAL_MESSAGES.noGrant
      return yield* new Unauthorized({ message, reason: "no active grant" })
    }
    const grant = found.value
    const kind = identity.right.kind
    if (!CHANNEL_KINDS[channel].includes(kind)) {
      return yield* new ChannelNotAllowed({ message: `a ${kind} cannot use the ${channel} channel`, reason: `${kind} on ${channel}`, grantId: grant.id })
    }
    if (check.limit !== null) yield* takeLimit(check.limit, grant.id)
    return { identity: identity.right, grant, channel }
  })

/**
 * Takes `count` tokens of the grant's `kind` bucket (all or none): a request is one, a JSON-RPC
 * batch on /mcp one per message. The refusal carries the kind and the grant for the process log.
 */
export const takeLimit = (kind: LimitKind, grantId: string, count = 1): Effect.Effect<void, RateLimited, RateLimiter> =>
  Effect.flatMap(RateLimiter, (limiter) =>
    limiter.take(kind, grantId, count).pipe(
      Effect.mapError((e) => new RateLimited({ message: e.message, retryAfter: e.retryAfter ?? 1, reason: kind, grantId }))
    ))
