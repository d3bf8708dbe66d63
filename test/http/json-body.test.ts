/**
 * The JSON body of a /v1 route over real HTTP: an unknown key names the nearest known key of its
 * object ("did you mean …?", like groundnote.json), and a body of any other content type (a form,
 * text) is refused whole with 415 unsupported-media-type before it is read; nothing is stored.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { tempDir, testConfig } from "../support/env.js"
import { mailSource } from "../support/fixtures.js"
import { counts, sqlOf } from "../support/run.js"
import { startServer, type TestServer } from "../support/server.js"

let server: TestServer
let cleanup: () => void
let token = ""

beforeAll(async () => {
  const t = tempDir("gn-json-body-")
  cleanup = t.cleanup
  server = await startServer(testConfig(t.dir))
  await server.run(Effect.gen(function*() {
    yield* (yield* ScopeStore).create("sales")
    const g = yield* (yield* OpsStore).createGrant({ kind: "service", auth: "bearer", scopes: ["sales"], rights: ["read", "propose"] })
    token = "token" in g ? g.token : ""
  }))
})
afterAll(async () => {
  await server.close()
  cleanup()
})

const post = async (path: string, body: string, contentType: string | null) => {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` }
  if (contentType !== null) headers["content-type"] = contentType
  const r = await fetch(`${server.url}${path}`, { method: "POST", headers, body })
  return { status: r.status, json: (await r.json()) as { error: string; message: string; issues?: Array<{ path: string; message: string }> } }
}
const stored = () => server.run(Effect.flatMap(sqlOf("sales"), counts))

describe("an unknown key of a JSON body", () => {
  it("names the nearest known key of its object, at the top and nested", async () => {
    const r = await post("/v1/search", JSON.stringify({ scopes: ["sales"], txt: "Lieferzeit", limt: 3 }), "application/json")
    expect(r.status).toBe(400)
    expect(r.json.error).toBe("validation-failed")
    expect(r.json.issues).toEqual(expect.arrayContaining([
      { path: "txt", message: "unknown key — did you mean text?" },
      { path: "limt", message: "unknown key — did you mean limit?" }
    ]))
    expect(r.json.message).toMatch(/did you mean (text|limit)\?/)
    const source = mailSource()
    const nested = await post("/v1/sources", JSON.stringify({ ...source, source: { ...source.source, titel: "x" } }), "application/json")
    expect(nested.status).toBe(400)
    expect(nested.json.issues).toContainEqual({ path: "source.titel", message: "unknown key — did you mean title?" })
  })

  it("a key near nothing known keeps the plain message", async () => {
    const r = await post("/v1/search", JSON.stringify({ scopes: ["sales"], text: "x", zzzzzzzz: 1 }), "application/json")
    expect(r.json.issues).toContainEqual({ path: "zzzzzzzz", message: "unknown key (remove it)" })
  })
})

describe("a body that is not JSON on a /v1 JSON route", () => {
  it("a form is 415 unsupported-media-type, never half read; nothing is stored", async () => {
    const before = await stored()
    const form = new URLSearchParams({ scope: "sales", kind: "rule", statement: "Hook rails are ordered on Mondays" }).toString()
    for (const path of ["/v1/proposals", "/v1/sources", "/v1/search", "/v1/entities", "/v1/links"]) {
      const r = await post(path, form, "application/x-www-form-urlencoded")
      expect(r.status, path).toBe(415)
      expect(r.json).toMatchObject({ error: "unsupported-media-type", message: expect.stringContaining("Content-Type: application/json") })
    }
    expect(await stored()).toEqual(before)
  })

  it("text and multipart are 415 too; application/json with a charset is read as JSON", async () => {
    expect((await post("/v1/search", "{}", "text/plain")).status).toBe(415)
    expect((await post("/v1/search", "--x--", "multipart/form-data; boundary=x")).status).toBe(415)
    const body = JSON.stringify({ scopes: ["sales"], text: "Lieferzeit" })
    expect((await post("/v1/search", body, "application/json; charset=utf-8")).status).toBe(200)
  })
})
