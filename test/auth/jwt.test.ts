/**
 * The Access JWT check (architecture.md §5.1) against a JWKS served on loopback over real HTTP:
 * every token problem is Unauthorized, every key set fetch failure is JwksUnavailable (§6.6).
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest"
import { Effect, Either, Layer, TestClock, TestContext } from "effect"
import {
  createRemoteJWKSet,
  exportJWK,
  exportSPKI,
  generateKeyPair,
  SignJWT,
  type CryptoKey,
  type JWK,
  type JWTPayload,
  type JWTVerifyGetKey
} from "jose"
import { AppConfig } from "../../src/config/config.js"
import {
  type ChannelName,
  type Identity,
  JwksUnavailable,
  UNAUTHORIZED_MESSAGE
} from "../../src/auth/identity.js"
import { Unauthorized } from "../../src/contracts/errors.js"
import {
  JwtVerifier,
  JwtVerifierLive,
  type JwtVerifierShape,
  makeJwtVerifier,
  remoteKeySet
} from "../../src/auth/jwt.js"
import { testConfig } from "../support/env.js"

const CHANNELS: ReadonlyArray<ChannelName> = ["mcp", "api", "approval"]
const AUDIENCES: Record<ChannelName, string> = {
  mcp: "aud-mcp-0123456789abcdef",
  api: "aud-api-0123456789abcdef",
  approval: "aud-approval-0123456789abcdef"
}
/** A whole second, so the seconds of the claims and of the clock line up exactly. */
const NOW_MS = Date.UTC(2026, 2, 12, 10, 0, 0)
const NOW_S = NOW_MS / 1000

// ---------------------------------------------------------------------------------------------
// Keys and a JWKS server on loopback

interface KeyPair {
  readonly kid: string
  readonly privateKey: CryptoKey
  readonly publicKey: CryptoKey
  readonly jwk: JWK
}

const makeKeyPair = async (kid: string): Promise<KeyPair> => {
  const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true })
  const jwk = { ...(await exportJWK(publicKey)), kid, alg: "RS256", use: "sig" }
  return { kid, privateKey, publicKey, jwk }
}

type Mode = "ok" | "status-500" | "bad-json" | "not-a-jwks" | "slow"

interface JwksServer {
  readonly teamDomain: string
  /** requests seen by the server (any path) */
  readonly requests: () => number
  readonly setKeys: (keys: ReadonlyArray<JWK>) => void
  readonly close: () => Promise<void>
}

const servers: Array<JwksServer> = []

const startJwksServer = async (mode: Mode, initial: ReadonlyArray<JWK> = []): Promise<JwksServer> => {
  let count = 0
  let keys = initial
  const timers = new Set<NodeJS.Timeout>()
  const server: Server = createServer((req, res) => {
    count += 1
    if (req.method !== "GET" || req.url !== "/cdn-cgi/access/certs") {
      res.writeHead(404).end()
      return
    }
    const body = JSON.stringify({ keys })
    switch (mode) {
      case "ok":
        res.writeHead(200, { "content-type": "application/json" }).end(body)
        return
      case "status-500":
        res.writeHead(500, { "content-type": "application/json" }).end(body)
        return
      case "bad-json":
        res.writeHead(200, { "content-type": "application/json" }).end("{\"keys\": [")
        return
      case "not-a-jwks":
        res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys: "none" }))
        return
      case "slow": {
        const timer = setTimeout(() => {
          timers.delete(timer)
          res.writeHead(200, { "content-type": "application/json" }).end(body)
        }, 3_000)
        timers.add(timer)
        return
      }
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  const handle: JwksServer = {
    teamDomain: `http://127.0.0.1:${port}`,
    requests: () => count,
    setKeys: (next) => {
      keys = next
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t)
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
  servers.push(handle)
  return handle
}

/** A loopback address nobody listens on (a server that was started and closed again). */
const closedTeamDomain = async (): Promise<string> => {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return `http://127.0.0.1:${port}`
}

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()))
})

// ---------------------------------------------------------------------------------------------
// Tokens

const b64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString("base64url")

interface SignOptions {
  readonly key?: KeyPair
  readonly kid?: string
  readonly issuer?: string
  readonly channel?: ChannelName
  readonly omit?: ReadonlyArray<string>
}

let main: JwksServer
let k1: KeyPair
let verifier: JwtVerifierShape

/** Claims as Cloudflare Access sends them (aud is an array), at NOW unless overridden. */
const claims = (over: JWTPayload = {}, options: SignOptions = {}): JWTPayload => {
  const base: JWTPayload = {
    iss: options.issuer ?? main.teamDomain,
    aud: [AUDIENCES[options.channel ?? "mcp"]],
    sub: "7335d417-61da-459d-899c-0a01c76a2f94",
    iat: NOW_S,
    nbf: NOW_S,
    exp: NOW_S + 600,
    type: "app",
    ...over
  }
  for (const name of options.omit ?? []) delete base[name]
  return base
}

const sign = (payload: JWTPayload, options: SignOptions = {}): Promise<string> => {
  const key = options.key ?? k1
  return new SignJWT(payload).setProtectedHeader({ alg: "RS256", kid: options.kid ?? key.kid, typ: "JWT" }).sign(key.privateKey)
}

const personToken = (over: JWTPayload = {}, options: SignOptions = {}): Promise<string> =>
  sign(claims({ email: "alice@example.com", ...over }, options), options)

// ---------------------------------------------------------------------------------------------
// Running and judging

type Result = Either.Either<Identity, Unauthorized | JwksUnavailable>

/** Verify with Effect's clock fixed at `at` (TestClock). */
const verifyAt = (v: JwtVerifierShape, token: string, channel: ChannelName = "mcp", at: number = NOW_MS): Promise<Result> =>
  Effect.runPromise(
    Effect.gen(function*() {
      yield* TestClock.setTime(at)
      return yield* Effect.either(v.verify(token, channel))
    }).pipe(Effect.provide(TestContext.TestContext))
  )

/** Verify on the real clock. */
const verifyNow = (v: JwtVerifierShape, token: string, channel: ChannelName = "mcp"): Promise<Result> =>
  Effect.runPromise(Effect.either(v.verify(token, channel)))

const expectNoToken = (text: string, token: string): void => {
  for (const part of [token, ...token.split(".")]) {
    if (part.length >= 8) expect(text).not.toContain(part)
  }
}

const expectIdentity = (result: Result): Identity => {
  if (Either.isLeft(result)) throw new Error(`expected an identity, got ${result.left._tag} ${result.left.reason}`)
  return result.right
}

const expectUnauthorized = (result: Result, token: string, reason: string): void => {
  if (Either.isRight(result)) throw new Error(`expected Unauthorized, got ${JSON.stringify(result.right)}`)
  const error = result.left
  expect(error).toBeInstanceOf(Unauthorized)
  if (!(error instanceof Unauthorized)) return
  expect(error.message).toBe(UNAUTHORIZED_MESSAGE)
  expect(error.code).toBe("unauthorized")
  expect(error.reason).toBe(reason)
  expectNoToken(error.reason ?? "", token)
  expectNoToken(error.message, token)
  expectNoToken(JSON.stringify(error), token)
  expectNoToken(String(error), token)
}

const expectJwksUnavailable = (result: Result, token: string, reason: RegExp): void => {
  if (Either.isRight(result)) throw new Error(`expected JwksUnavailable, got ${JSON.stringify(result.right)}`)
  const error = result.left
  expect(error).toBeInstanceOf(JwksUnavailable)
  expect(error.reason).toMatch(reason)
  expectNoToken(error.reason ?? "", token)
  expectNoToken(JSON.stringify(error), token)
}

beforeAll(async () => {
  k1 = await makeKeyPair("k1")
  main = await startJwksServer("ok", [k1.jwk])
  verifier = makeJwtVerifier({ teamDomain: main.teamDomain, audiences: AUDIENCES, keys: remoteKeySet(main.teamDomain) })
})

// ---------------------------------------------------------------------------------------------

describe("valid tokens", () => {
  it("a person token gives the lowercased email, auth email", async () => {
    const token = await personToken({ email: "Alice.Example@Example.COM" })
    expect(expectIdentity(await verifyAt(verifier, token))).toEqual({
      kind: "person",
      auth: "email",
      identity: "alice.example@example.com"
    })
  })

  it("a service token gives its common_name, auth access-service", async () => {
    const token = await sign(claims({ common_name: "0a1b2c3d4e5f.access", sub: "" }, { channel: "api" }))
    expect(expectIdentity(await verifyAt(verifier, token, "api"))).toEqual({
      kind: "service",
      auth: "access-service",
      identity: "0a1b2c3d4e5f.access"
    })
  })

  it("email wins over common_name", async () => {
    const token = await personToken({ common_name: "svc.access" })
    expect(expectIdentity(await verifyAt(verifier, token)).kind).toBe("person")
  })
})

describe("audience per channel", () => {
  for (const own of CHANNELS) {
    it(`an ${own} token is accepted on ${own} only`, async () => {
      const token = await personToken({}, { channel: own })
      expect(expectIdentity(await verifyAt(verifier, token, own)).identity).toBe("alice@example.com")
      for (const other of CHANNELS.filter((c) => c !== own)) {
        expectUnauthorized(await verifyAt(verifier, token, other), token, "ERR_JWT_CLAIM_VALIDATION_FAILED:aud")
      }
    })
  }

  it("a token without aud is refused", async () => {
    const token = await personToken({}, { omit: ["aud"] })
    expectUnauthorized(await verifyAt(verifier, token), token, "ERR_JWT_CLAIM_VALIDATION_FAILED:aud")
  })
})

describe("signature and algorithm", () => {
  it("alg none (unsigned) is refused", async () => {
    const token = `${b64url({ alg: "none", typ: "JWT", kid: "k1" })}.${b64url(claims({ email: "alice@example.com" }))}.`
    expectUnauthorized(await verifyAt(verifier, token), token, "ERR_JOSE_ALG_NOT_ALLOWED")
  })

  it("HS256 signed with the public key's bytes as secret is refused", async () => {
    const pem = await exportSPKI(k1.publicKey)
    for (const secret of [new TextEncoder().encode(pem), Buffer.from(k1.jwk.n ?? "", "base64url")]) {
      const token = await new SignJWT(claims({ email: "alice@example.com" }))
        .setProtectedHeader({ alg: "HS256", kid: "k1", typ: "JWT" })
        .sign(new Uint8Array(secret))
      expectUnauthorized(await verifyAt(verifier, token), token, "ERR_JOSE_ALG_NOT_ALLOWED")
    }
  })

  it("a token signed by another key under a known kid is refused", async () => {
    const other = await makeKeyPair("k1")
    const token = await personToken({}, { key: other })
    expectUnauthorized(await verifyAt(verifier, token), token, "ERR_JWS_SIGNATURE_VERIFICATION_FAILED")
  })

  it("a tampered payload is refused", async () => {
    const token = await personToken()
    const [header, , signature] = token.split(".")
    const forged = `${header ?? ""}.${b64url(claims({ email: "mallory@example.com" }))}.${signature ?? ""}`
    expectUnauthorized(await verifyAt(verifier, forged), forged, "ERR_JWS_SIGNATURE_VERIFICATION_FAILED")
  })

  it("garbage is refused", async () => {
    for (const token of ["not-a-jwt-at-all", "aaaaaaaa.bbbbbbbb.cccccccc", "", "....", `${b64url({ alg: "RS256", kid: "k1" })}.${b64url({ email: "a@b.c" })}.!!!!%%%%`]) {
      const result = await verifyAt(verifier, token)
      if (Either.isRight(result)) throw new Error("garbage accepted")
      expect(result.left).toBeInstanceOf(Unauthorized)
      expect(result.left.reason).toMatch(/^ERR_J(WS|WT)_INVALID$/)
      if (token.length > 0) expectUnauthorized(result, token, result.left.reason ?? "")
    }
  })
})

describe("claims", () => {
  it("a wrong issuer is refused", async () => {
    const token = await personToken({}, { issuer: "https://evil.cloudflareaccess.com" })
    expectUnauthorized(await verifyAt(verifier, token), token, "ERR_JWT_CLAIM_VALIDATION_FAILED:iss")
  })

  it("an expired token is refused beyond the 30 s tolerance, accepted within it", async () => {
    const expired = await personToken({ iat: NOW_S - 700, nbf: NOW_S - 700, exp: NOW_S - 31 })
    expectUnauthorized(await verifyAt(verifier, expired), expired, "ERR_JWT_EXPIRED")
    const justExpired = await personToken({ iat: NOW_S - 700, nbf: NOW_S - 700, exp: NOW_S - 29 })
    expectIdentity(await verifyAt(verifier, justExpired))
  })

  it("exp is required", async () => {
    const token = await personToken({}, { omit: ["exp"] })
    expectUnauthorized(await verifyAt(verifier, token), token, "ERR_JWT_CLAIM_VALIDATION_FAILED:exp")
  })

  it("a non-numeric exp is refused", async () => {
    const token = await personToken({ exp: "tomorrow" as unknown as number })
    expectUnauthorized(await verifyAt(verifier, token), token, "ERR_JWT_CLAIM_VALIDATION_FAILED:exp")
  })

  it("nbf ahead beyond the tolerance is refused, within it accepted", async () => {
    const ahead = await personToken({ nbf: NOW_S + 31 })
    expectUnauthorized(await verifyAt(verifier, ahead), ahead, "ERR_JWT_CLAIM_VALIDATION_FAILED:nbf")
    const within = await personToken({ nbf: NOW_S + 29 })
    expectIdentity(await verifyAt(verifier, within))
  })

  it("iat 31 s ahead is refused, 30 s and 29 s ahead accepted", async () => {
    const ahead = await personToken({ iat: NOW_S + 31 })
    expectUnauthorized(await verifyAt(verifier, ahead), ahead, "ERR_JWT_CLAIM_VALIDATION_FAILED:iat")
    for (const skew of [30, 29]) {
      expectIdentity(await verifyAt(verifier, await personToken({ iat: NOW_S + skew })))
    }
  })

  it("the clock that judges is Effect's (TestClock moves the token in and out of validity)", async () => {
    const token = await personToken()
    expectIdentity(await verifyAt(verifier, token, "mcp", NOW_MS + 600_000))
    expectUnauthorized(await verifyAt(verifier, token, "mcp", NOW_MS + 631_000), token, "ERR_JWT_EXPIRED")
    expectUnauthorized(await verifyAt(verifier, token, "mcp", NOW_MS - 31_000), token, "ERR_JWT_CLAIM_VALIDATION_FAILED:nbf")
  })
})

describe("identity claims", () => {
  it("an email with non-ASCII characters is refused", async () => {
    for (const email of ["jürgen@example.com", "аlice@example.com", "alice@exämple.com"]) {
      const token = await personToken({ email })
      expectUnauthorized(await verifyAt(verifier, token), token, "email-not-printable-ascii")
    }
  })

  it("an email with spaces or control characters, or an empty email, is refused", async () => {
    for (const email of ["alice @example.com", "alice@example.com\n", "alice\u0000@example.com", ""]) {
      const token = await personToken({ email })
      expectUnauthorized(await verifyAt(verifier, token), token, "email-not-printable-ascii")
    }
  })

  it("a non-string email is refused, even with a common_name", async () => {
    const token = await sign(claims({ email: ["alice@example.com"], common_name: "svc.access" }))
    expectUnauthorized(await verifyAt(verifier, token), token, "email-not-a-string")
  })

  it("neither email nor common_name is refused", async () => {
    for (const extra of [{}, { common_name: "" }, { common_name: 42 }]) {
      const token = await sign(claims(extra))
      expectUnauthorized(await verifyAt(verifier, token), token, "no-identity-claim")
    }
  })
})

describe("key set fetch", () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it("an unknown kid is refused; no refetch within the 60 s cooldown, one after it", async () => {
    const k2 = await makeKeyPair("k2")
    const server = await startJwksServer("ok", [k1.jwk])
    const v = makeJwtVerifier({ teamDomain: server.teamDomain, audiences: AUDIENCES, keys: remoteKeySet(server.teamDomain) })
    // jose times its cache and cooldown with Date.now(); only Date is faked, timers stay real.
    vi.useFakeTimers({ toFake: ["Date"] })
    vi.setSystemTime(NOW_MS)
    const iss = { issuer: server.teamDomain }

    expectIdentity(await verifyAt(v, await personToken({}, iss)))
    expect(server.requests()).toBe(1)

    const unknown = await personToken({}, { ...iss, key: k2 })
    expectUnauthorized(await verifyAt(v, unknown), unknown, "ERR_JWKS_NO_MATCHING_KEY")
    const unknown2 = await personToken({}, { ...iss, key: k2, kid: "k3" })
    expectUnauthorized(await verifyAt(v, unknown2), unknown2, "ERR_JWKS_NO_MATCHING_KEY")
    expect(server.requests()).toBe(1)

    // Past the cooldown an unknown kid refetches once; still unknown → Unauthorized.
    vi.setSystemTime(NOW_MS + 61_000)
    expectUnauthorized(await verifyAt(v, unknown), unknown, "ERR_JWKS_NO_MATCHING_KEY")
    expect(server.requests()).toBe(2)
    expectUnauthorized(await verifyAt(v, unknown2), unknown2, "ERR_JWKS_NO_MATCHING_KEY")
    expect(server.requests()).toBe(2)

    // A rotated-in key is found by the first refetch after the cooldown.
    server.setKeys([k1.jwk, k2.jwk])
    vi.setSystemTime(NOW_MS + 90_000)
    expectUnauthorized(await verifyAt(v, unknown), unknown, "ERR_JWKS_NO_MATCHING_KEY")
    expect(server.requests()).toBe(2)
    vi.setSystemTime(NOW_MS + 122_000)
    expectIdentity(await verifyAt(v, unknown))
    expect(server.requests()).toBe(3)
    expectIdentity(await verifyAt(v, await personToken({}, iss)))
    expect(server.requests()).toBe(3)
  })

  it("the key set is cached: many verifications, one fetch", async () => {
    const server = await startJwksServer("ok", [k1.jwk])
    const v = makeJwtVerifier({ teamDomain: server.teamDomain, audiences: AUDIENCES, keys: remoteKeySet(server.teamDomain) })
    const token = await personToken({}, { issuer: server.teamDomain })
    const results = await Promise.all(Array.from({ length: 10 }, () => verifyAt(v, token)))
    for (const r of results) expectIdentity(r)
    expect(server.requests()).toBe(1)
  })

  it("JWKS server down (closed port) → JwksUnavailable", async () => {
    const teamDomain = await closedTeamDomain()
    const v = makeJwtVerifier({ teamDomain, audiences: AUDIENCES, keys: remoteKeySet(teamDomain) })
    const token = await personToken({}, { issuer: teamDomain })
    expectJwksUnavailable(await verifyAt(v, token), token, /TypeError.*ECONNREFUSED/)
  })

  it("JWKS server answering 500 → JwksUnavailable", async () => {
    const server = await startJwksServer("status-500", [k1.jwk])
    const v = makeJwtVerifier({ teamDomain: server.teamDomain, audiences: AUDIENCES, keys: remoteKeySet(server.teamDomain) })
    const token = await personToken({}, { issuer: server.teamDomain })
    expectJwksUnavailable(await verifyAt(v, token), token, /^ERR_JOSE_GENERIC Expected 200 OK/)
    expect(server.requests()).toBe(1)
  })

  it("JWKS answer that is not JSON, or not a key set → JwksUnavailable", async () => {
    for (const [mode, reason] of [["bad-json", /^ERR_JOSE_GENERIC Failed to parse/], ["not-a-jwks", /^ERR_JWKS_INVALID/]] as const) {
      const server = await startJwksServer(mode, [k1.jwk])
      const v = makeJwtVerifier({ teamDomain: server.teamDomain, audiences: AUDIENCES, keys: remoteKeySet(server.teamDomain) })
      const token = await personToken({}, { issuer: server.teamDomain })
      expectJwksUnavailable(await verifyAt(v, token), token, reason)
    }
  })

  it("a slow JWKS server → JwksUnavailable after the timeout", async () => {
    const server = await startJwksServer("slow", [k1.jwk])
    // The production set waits 5 s; this one uses the same URL and limits with a 200 ms timeout.
    const keys: JWTVerifyGetKey = createRemoteJWKSet(new URL(`${server.teamDomain}/cdn-cgi/access/certs`), {
      cooldownDuration: 60_000,
      cacheMaxAge: 600_000,
      timeoutDuration: 200
    })
    const v = makeJwtVerifier({ teamDomain: server.teamDomain, audiences: AUDIENCES, keys })
    const token = await personToken({}, { issuer: server.teamDomain })
    const started = Date.now()
    expectJwksUnavailable(await verifyNow(v, token), token, /^ERR_JWKS_TIMEOUT/)
    expect(Date.now() - started).toBeLessThan(2_500)
  })

  it("a fetch failure is not cached as a verdict: the next request fetches again", async () => {
    const server = await startJwksServer("status-500", [k1.jwk])
    const v = makeJwtVerifier({ teamDomain: server.teamDomain, audiences: AUDIENCES, keys: remoteKeySet(server.teamDomain) })
    const token = await personToken({}, { issuer: server.teamDomain })
    expectJwksUnavailable(await verifyAt(v, token), token, /ERR_JOSE_GENERIC/)
    expectJwksUnavailable(await verifyAt(v, token), token, /ERR_JOSE_GENERIC/)
    expect(server.requests()).toBe(2)
  })
})

describe("JwtVerifierLive", () => {
  const live = (access: Record<string, string> | undefined) => {
    const config = testConfig("/tmp/gn-jwt-unused", access === undefined ? {} : { access })
    return JwtVerifierLive.pipe(Layer.provide(Layer.succeed(AppConfig, config)))
  }
  const verifyLive = (layer: Layer.Layer<JwtVerifier>, token: string, channel: ChannelName): Promise<Result> =>
    Effect.runPromise(Effect.either(Effect.flatMap(JwtVerifier, (v) => v.verify(token, channel))).pipe(Effect.provide(layer)))

  it("builds the remote verifier from config.file.access (real time)", async () => {
    const layer = live({
      team_domain: main.teamDomain,
      aud_mcp: AUDIENCES.mcp,
      aud_api: AUDIENCES.api,
      aud_approval: AUDIENCES.approval
    })
    const nowS = Math.floor(Date.now() / 1000)
    const payload = (channel: ChannelName) =>
      claims({ email: "Bob@Example.com", iat: nowS, nbf: nowS, exp: nowS + 300 }, { channel })
    for (const channel of CHANNELS) {
      const token = await sign(payload(channel))
      expect(expectIdentity(await verifyLive(layer, token, channel))).toEqual({
        kind: "person",
        auth: "email",
        identity: "bob@example.com"
      })
    }
    const apiToken = await sign(payload("api"))
    expectUnauthorized(await verifyLive(layer, apiToken, "approval"), apiToken, "ERR_JWT_CLAIM_VALIDATION_FAILED:aud")
  })

  it("without access (dev-token mode) the layer builds and every token is Unauthorized", async () => {
    const layer = live(undefined)
    const token = await personToken()
    for (const channel of CHANNELS) {
      expectUnauthorized(await verifyLive(layer, token, channel), token, "no access configuration")
    }
  })
})
