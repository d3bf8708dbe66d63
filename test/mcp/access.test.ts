/**
 * /mcp in cloudflare-access mode (gaps.md §2): Access JWTs with the mcp audience; person
 * identities only (a service token → 403); a grant without propose cannot call propose_rule and
 * nothing is stored; a token of another audience is 401.
 */
import { Effect } from "effect"
import { createLocalJWKSet, exportJWK, generateKeyPair, type JWK, SignJWT } from "jose"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { storeSource } from "../../src/domain/sources.js"
import { tempDir, testConfig } from "../support/env.js"
import { mailProposal, mailSource } from "../support/fixtures.js"
import { counts, sqlOf } from "../support/run.js"
import { startServer, type TestServer } from "../support/server.js"
import { connect, textOf } from "./support.js"

const TEAM = "https://acme.cloudflareaccess.com"
const PUBLIC = "https://groundnote.acme.example"
const ACCESS = { team_domain: TEAM, aud_mcp: "aud-mcp", aud_approval: "aud-approval", aud_api: "aud-api" }

let server: TestServer
let cleanup: () => void
let sign: (claims: Record<string, unknown>, aud: string) => Promise<string>

beforeAll(async () => {
  const t = tempDir()
  cleanup = t.cleanup
  const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true })
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid: "k1", alg: "RS256" }
  sign = (claims, aud) => new SignJWT(claims).setProtectedHeader({ alg: "RS256", kid: "k1" })
    .setIssuer(TEAM).setAudience(aud).setIssuedAt().setExpirationTime("5m").sign(privateKey)
  const c = testConfig(t.dir, { public_url: PUBLIC, access: ACCESS })
  const config = { ...c, env: { ...c.env, authMode: "cloudflare-access" as const, devMcpToken: null, devApprovalToken: null, devEmail: null } }
  server = await startServer(config, { keys: createLocalJWKSet({ keys: [jwk] }) })
  await server.run(Effect.gen(function*() {
    const ops = yield* OpsStore
    yield* Effect.flatMap(ScopeStore, (s) => s.create("sales"))
    yield* ops.createGrant({ kind: "person", auth: "email", identity: "anna@acme.example", scopes: ["sales"], rights: ["read", "propose"] })
    yield* ops.createGrant({ kind: "person", auth: "email", identity: "rita@acme.example", scopes: ["sales"], rights: ["read"] })
    const feeder = yield* ops.createGrant({ kind: "service", auth: "access-service", identity: "feeder.acme", scopes: ["sales"], rights: ["read", "propose"] })
    yield* storeSource(mailSource(), feeder.id)
  }))
})
afterAll(async () => {
  await server.close()
  cleanup()
})

const init = (jwt: string) => fetch(`${server.url}/mcp`, {
  method: "POST",
  headers: { "cf-access-jwt-assertion": jwt, "content-type": "application/json", accept: "application/json, text/event-stream" },
  body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } })
})

describe("/mcp with Access", () => {
  it("a person's mcp token works; an api-audience token is 401 with WWW-Authenticate", async () => {
    expect((await init(await sign({ email: "Anna@Acme.example" }, "aud-mcp"))).status).toBe(200)
    const r = await init(await sign({ email: "anna@acme.example" }, "aud-api"))
    expect(r.status).toBe(401)
    expect(r.headers.get("www-authenticate")).toBe(`Bearer resource_metadata="${PUBLIC}/.well-known/oauth-protected-resource"`)
  })
  it("a service token (common_name) → 403 channel-not-allowed", async () => {
    const r = await init(await sign({ common_name: "feeder.acme" }, "aud-mcp"))
    expect(r.status).toBe(403)
    expect(await r.json()).toMatchObject({ error: "channel-not-allowed" })
  })
  it("a grant without propose cannot call propose_rule; nothing is stored; it can still search", async () => {
    const mcp = await connect(server.url, { "cf-access-jwt-assertion": await sign({ email: "rita@acme.example" }, "aud-mcp") })
    const before = await server.run(Effect.flatMap(sqlOf("sales"), counts))
    const r = await mcp.call("propose_rule", { ...mailProposal() })
    expect(r.isError).toBe(true)
    expect(JSON.parse(textOf(r))).toEqual({ error: "channel-not-allowed" })
    expect(await server.run(Effect.flatMap(sqlOf("sales"), counts))).toEqual(before)
    expect((await mcp.call("search_rules", { scopes: ["sales"], text: "Lieferzeit" })).isError).toBeFalsy()
    // a graph write without propose: the same refusal in the guidance envelope, nothing stored
    const g = await mcp.call("entity_create", { scope: "sales", type: "customer", name: "Müller GmbH", parent_id: null })
    expect(g.isError).toBe(true)
    expect(g.structuredContent).toMatchObject({ error: "channel-not-allowed", next: [] })
    expect(typeof (g.structuredContent as { remedy?: unknown }).remedy).toBe("string")
    expect(await server.run(Effect.flatMap(sqlOf("sales"), (sql) => sql<{ n: number }>`SELECT count(*) AS n FROM entity`))).toEqual([{ n: 0 }])
    await mcp.close()
    const anna = await connect(server.url, { "cf-access-jwt-assertion": await sign({ email: "anna@acme.example" }, "aud-mcp") })
    const ok = await anna.call("propose_rule", { ...mailProposal() })
    expect(ok.structuredContent).toMatchObject({ ref: "rule/sales-0001@1", approval_url: `${PUBLIC}/approval/rules/sales-0001` })
    await anna.close()
  })
})
