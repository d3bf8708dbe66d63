/** cloudflare-access mode over real HTTP: Access JWTs per channel, services on person channels, JWKS down. */
import { Effect } from "effect"
import { createLocalJWKSet, createRemoteJWKSet, exportJWK, generateKeyPair, type JWK, SignJWT } from "jose"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { tempDir, testConfig } from "../support/env.js"
import { startServer, type TestServer } from "../support/server.js"

const TEAM = "https://acme.cloudflareaccess.com"
const ACCESS = { team_domain: TEAM, aud_mcp: "aud-mcp", aud_approval: "aud-approval", aud_api: "aud-api" }

let server: TestServer
let down: TestServer
let cleanup: () => void
let sign: (claims: Record<string, unknown>, aud: string) => Promise<string>

const accessConfig = (dir: string) => {
  const c = testConfig(dir, { public_url: "https://groundnote.acme.example", access: ACCESS })
  return { ...c, env: { ...c.env, authMode: "cloudflare-access" as const, devMcpToken: null, devApprovalToken: null, devEmail: null } }
}

beforeAll(async () => {
  const t = tempDir()
  const t2 = tempDir()
  cleanup = () => { t.cleanup(); t2.cleanup() }
  const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true })
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid: "k1", alg: "RS256" }
  sign = (claims, aud) => new SignJWT(claims).setProtectedHeader({ alg: "RS256", kid: "k1" })
    .setIssuer(TEAM).setAudience(aud).setIssuedAt().setExpirationTime("5m").sign(privateKey)
  server = await startServer(accessConfig(t.dir), { keys: createLocalJWKSet({ keys: [jwk] }) })
  await server.run(Effect.gen(function*() {
    const ops = yield* OpsStore
    yield* Effect.flatMap(ScopeStore, (s) => s.create("sales"))
    yield* ops.createGrant({ kind: "person", auth: "email", identity: "anna@acme.example", scopes: ["sales"], rights: ["read", "propose", "decide"] })
    yield* ops.createGrant({ kind: "service", auth: "access-service", identity: "feeder.acme", scopes: ["sales"], rights: ["read", "propose"] })
  }))
  down = await startServer(accessConfig(t2.dir), { keys: createRemoteJWKSet(new URL("http://127.0.0.1:1/cdn-cgi/access/certs"), { timeoutDuration: 500 }) })
  await down.run(Effect.gen(function*() {
    yield* Effect.flatMap(ScopeStore, (s) => s.create("sales"))
    yield* Effect.flatMap(OpsStore, (o) => o.createGrant({ kind: "person", auth: "email", identity: "anna@acme.example", scopes: ["sales"], rights: ["read"] }))
  }))
})
afterAll(async () => {
  await server.close()
  await down.close()
  cleanup()
})

const get = (s: TestServer, path: string, jwt: string) => fetch(`${s.url}${path}`, { headers: { "cf-access-jwt-assertion": jwt } })

describe("cloudflare-access mode", () => {
  it("a person's API token is that person; an mcp-audience token is refused on /v1", async () => {
    const ok = await get(server, "/v1/status", await sign({ email: "Anna@Acme.example" }, "aud-api"))
    expect(ok.status).toBe(200)
    expect(await ok.json()).toMatchObject({ grant: { id: "person:1" } })
    expect((await get(server, "/v1/status", await sign({ email: "anna@acme.example" }, "aud-mcp"))).status).toBe(401)
  })
  it("a service (common_name) works on the api channel and gets 403 channel-not-allowed on the approval channel", async () => {
    expect((await get(server, "/v1/status", await sign({ common_name: "feeder.acme" }, "aud-api"))).status).toBe(200)
    const r = await fetch(`${server.url}/v1/rules/sales-0001/decision`, {
      method: "POST",
      headers: { "cf-access-jwt-assertion": await sign({ common_name: "feeder.acme" }, "aud-approval"), "content-type": "application/json", origin: "https://groundnote.acme.example" },
      body: JSON.stringify({ decision: "confirm", version: 1 })
    })
    expect(r.status).toBe(403)
    expect(await r.json()).toMatchObject({ error: "channel-not-allowed" })
    const exp = await get(server, "/v1/export/sales", await sign({ common_name: "feeder.acme" }, "aud-approval"))
    expect(exp.status).toBe(403)
  })
  it("a JWKS that cannot be fetched is 500 internal with nothing else, not 401", async () => {
    const r = await get(down, "/v1/status", await sign({ email: "anna@acme.example" }, "aud-api"))
    expect(r.status).toBe(500)
    expect(await r.text()).toBe("{\"error\":\"internal\"}")
  })
  it("the dev login routes do not exist", async () => {
    expect((await fetch(`${server.url}/approval/login`)).status).toBe(404)
  })
  it("the protected-resource document names the team domain", async () => {
    expect(await (await fetch(`${server.url}/.well-known/oauth-protected-resource`)).json()).toEqual({
      resource: "https://groundnote.acme.example/mcp", authorization_servers: [TEAM]
    })
  })
})
