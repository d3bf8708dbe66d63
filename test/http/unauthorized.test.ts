/**
 * The 401 of step 1 (architecture.md §5.2 step 1) says which credential problem it is, over real
 * HTTP in dev-token mode: always status 401, code unauthorized and WWW-Authenticate on /v1 and
 * /mcp; the message names a header that is not "Bearer <token>", a missing credential, two
 * credentials, the MCP token on /v1 and the API token on /mcp. A token that is unknown, a
 * disabled grant's token and the approval login token sent as a bearer get one byte-identical
 * body, so no answer tells whether a token belongs to a grant.
 */
import { Effect, Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { tempDir, testConfig } from "../support/env.js"
import { startServer, type TestServer } from "../support/server.js"

const MCP = "m".repeat(40)
const API = "p".repeat(40)
const APPROVAL = "a".repeat(40)
const RESOURCE = `Bearer resource_metadata="http://127.0.0.1:8787/.well-known/oauth-protected-resource"`

let server: TestServer
let cleanup: () => void
const tokens = { live: "", disabled: "" }

beforeAll(async () => {
  const t = tempDir("gn-unauthorized-")
  cleanup = t.cleanup
  const base = testConfig(t.dir)
  server = await startServer({ ...base, env: { ...base.env, devApiToken: Redacted.make(API) } })
  await server.run(Effect.gen(function*() {
    const ops = yield* OpsStore
    yield* (yield* ScopeStore).create("sales")
    yield* ops.createGrant({ kind: "person", auth: "email", identity: "dev@example.com", scopes: ["sales"], rights: ["read", "propose"] })
    const live = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: ["sales"], rights: ["read"] })
    const gone = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: ["sales"], rights: ["read"] })
    yield* ops.disableGrant(gone.id)
    tokens.live = "token" in live ? live.token : ""
    tokens.disabled = "token" in gone ? gone.token : ""
  }))
})
afterAll(async () => {
  await server.close()
  cleanup()
})

const v1 = async (headers: Record<string, string>) => {
  const r = await fetch(`${server.url}/v1/status`, { headers })
  return { status: r.status, auth: r.headers.get("www-authenticate"), text: await r.text() }
}
const mcp = async (headers: Record<string, string>) => {
  const r = await fetch(`${server.url}/mcp`, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json", accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })
  })
  return { status: r.status, auth: r.headers.get("www-authenticate"), text: await r.text() }
}
const bodyOf = (r: { status: number; auth: string | null; text: string }) => {
  expect(r.status).toBe(401)
  expect(r.auth).toBe(RESOURCE)
  const body = JSON.parse(r.text) as { error: string; message: string }
  expect(body.error).toBe("unauthorized")
  return body
}

describe("401 unauthorized on /v1 says which credential problem it is", () => {
  it("an Authorization header that is not \"Bearer <token>\"", async () => {
    for (const authorization of ["Basic abc", "Token xyz", "Bearer", "bearer abc", "Bearer two words"]) {
      expect(bodyOf(await v1({ authorization })).message).toMatch(/Authorization header must be "Bearer <token>"/)
    }
  })

  it("no credential at all", async () => {
    expect(bodyOf(await v1({})).message).toMatch(/a credential is required: send Authorization: Bearer <token>/)
  })

  it("an Access token and a bearer together", async () => {
    expect(bodyOf(await v1({ authorization: `Bearer ${tokens.live}`, "cf-access-jwt-assertion": "a.b.c" })).message).toMatch(/not both/)
  })

  it("the MCP token on /v1 is named, and where it is valid", async () => {
    const body = bodyOf(await v1({ authorization: `Bearer ${MCP}` }))
    expect(body.message).toMatch(/MCP token/)
    expect(body.message).toMatch(/\/mcp/)
  })

  it("an unknown token, a disabled grant's token and the approval login token get one identical answer", async () => {
    const unknown = await v1({ authorization: `Bearer gn_${"x".repeat(43)}` })
    expect(bodyOf(unknown).message).toMatch(/not known/)
    const disabled = await v1({ authorization: `Bearer ${tokens.disabled}` })
    const approval = await v1({ authorization: `Bearer ${APPROVAL}` })
    const other = await v1({ authorization: `Bearer ${"q".repeat(40)}` })
    expect(disabled.text).toBe(unknown.text)
    expect(approval.text).toBe(unknown.text)
    expect(other.text).toBe(unknown.text)
    // and the live token passes
    expect((await v1({ authorization: `Bearer ${tokens.live}` })).status).toBe(200)
  })
})

describe("401 unauthorized on /mcp", () => {
  it("names a malformed header and the API token on /mcp; an unknown token is the same as the approval token", async () => {
    expect(bodyOf(await mcp({ authorization: "Basic abc" })).message).toMatch(/Authorization header must be "Bearer <token>"/)
    const api = bodyOf(await mcp({ authorization: `Bearer ${API}` }))
    expect(api.message).toMatch(/API token/)
    expect(api.message).toMatch(/\/v1/)
    const unknown = await mcp({ authorization: `Bearer ${"q".repeat(40)}` })
    expect(bodyOf(unknown).message).toMatch(/not known/)
    expect((await mcp({ authorization: `Bearer ${APPROVAL}` })).text).toBe(unknown.text)
  })

  it("a service token (gn_…) without an active grant is told that /mcp takes a person", async () => {
    expect(bodyOf(await mcp({ authorization: `Bearer ${tokens.disabled}` })).message).toMatch(/service token .* person/)
  })
})
