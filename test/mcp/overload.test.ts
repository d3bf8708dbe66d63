/**
 * A tool call past the listener's capacity, with the official SDK client against a real server
 * whose admission gate serves one request and queues none: the call is answered in the protocol,
 * as an isError result with the code overloaded and the retry hint, not as a failed HTTP call;
 * nothing of it ran. The one slot is held by a search waiting in the read pool behind a latch (as
 * in test/http/admission.test.ts), so the gate's state is exact.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { ReadPool, ReadPoolInThread } from "../../src/read-pool/pool.js"
import { admissionLayer, type Gate } from "../../src/transport/admission.js"
import { tempDir, testConfig } from "../support/env.js"
import { sqlOf } from "../support/run.js"
import { startServer, type TestServer } from "../support/server.js"
import { connect, type Mcp, structured, textOf } from "./support.js"

const MCP = "m".repeat(40)
let server: TestServer
let cleanup: () => void
let gate: Gate | undefined
let mcp: Mcp
let feeder = ""
const latch = Effect.runSync(Effect.makeLatch(false))
let entered = 0

const HeldPool = Layer.effect(ReadPool, Effect.map(ReadPool, (inner) => ({
  ...inner,
  search: (req: Parameters<typeof inner.search>[0], id: string) =>
    Effect.zipRight(Effect.zipRight(Effect.sync(() => entered++), latch.await), inner.search(req, id))
}))).pipe(Layer.provide(ReadPoolInThread))

const until = async (what: string, ok: () => boolean) => {
  for (let i = 0; i < 500 && !ok(); i++) await new Promise((r) => setTimeout(r, 10))
  if (!ok()) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(gate?.stats())}`)
}

/** A search over /v1 that holds the one slot until the latch opens. */
const holdTheSlot = async () => {
  entered = 0
  const held = fetch(`${server.url}/v1/search`, {
    method: "POST", headers: { authorization: `Bearer ${feeder}`, "content-type": "application/json" },
    body: JSON.stringify({ scopes: ["sales"], text: "Lieferzeit" })
  }).then((r) => r.status)
  await until("the search to hold the slot", () => entered === 1)
  return { held }
}

const logRows = () => server.run(Effect.flatMap(sqlOf("sales"), (sql) => sql<{ n: number }>`SELECT count(*) AS n FROM search_log WHERE channel = 'mcp'`))

beforeAll(async () => {
  const t = tempDir("gn-mcp-overload-")
  cleanup = t.cleanup
  server = await startServer(testConfig(t.dir, { limits: { requests_per_minute: 10_000 } }), {
    services: { readPool: HeldPool, admission: admissionLayer({ maxActive: 1, maxQueued: 0, retryAfterSeconds: 4 }, (g) => (gate = g)) }
  })
  await server.run(Effect.gen(function*() {
    const ops = yield* OpsStore
    yield* (yield* ScopeStore).create("sales")
    yield* ops.createGrant({ kind: "person", auth: "email", identity: "dev@example.com", scopes: ["sales"], rights: ["read", "propose"] })
    const f = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: ["sales"], rights: ["read"] })
    feeder = "token" in f ? f.token : ""
  }))
  mcp = await connect(server.url, { authorization: `Bearer ${MCP}` })
})
afterAll(async () => {
  Effect.runSync(latch.open)
  await mcp.close()
  await server.close()
  cleanup()
})

describe("a tool call past capacity", () => {
  it("is an isError result with the code overloaded and retry_after, not a failed transport call; it succeeds once there is room", async () => {
    const rowsBefore = (await logRows())[0]?.n ?? 0
    const { held } = await holdTheSlot()
    // a client that got an HTTP 503 here would throw (or wait): the SDK's own timeout bounds it
    const refused = (await mcp.client.callTool({ name: "search_rules", arguments: { scopes: ["sales"], text: "Lieferzeit" } }, undefined, { timeout: 5000 })) as CallToolResult
    expect(refused.isError).toBe(true)
    expect(structured(refused)).toEqual({
      error: "overloaded", retry_after: 4,
      message: "the service is serving as many requests as it can; try again in 4 s"
    })
    // the model text is the same plain object: the server's own words, no untrusted block
    expect(JSON.parse(textOf(refused))).toEqual(structured(refused))
    expect(gate?.stats().rejected).toBeGreaterThanOrEqual(1)
    // any other request of the protocol gets a JSON-RPC error with the same code, not an HTTP failure
    await expect(mcp.client.listTools()).rejects.toThrow(/try again in 4 s/)
    Effect.runSync(latch.open)
    expect(await held).toBe(200)
    // nothing of the refused call ran: no search_log row of the mcp channel
    expect((await logRows())[0]?.n ?? 0).toBe(rowsBefore)
    const ok = await mcp.call("search_rules", { scopes: ["sales"], text: "Lieferzeit" })
    expect(ok.isError).toBeFalsy()
    expect((await logRows())[0]?.n ?? 0).toBe(rowsBefore + 1)
  })

  it("a raw batch past capacity: one answer per request, tool calls as isError results, HTTP 200 with Retry-After", async () => {
    Effect.runSync(latch.close)
    const { held } = await holdTheSlot()
    const r = await fetch(`${server.url}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${MCP}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify([
        { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "list_scopes", arguments: {} } },
        { jsonrpc: "2.0", method: "notifications/initialized" },
        { jsonrpc: "2.0", id: "b", method: "tools/list" }
      ])
    })
    expect(r.status).toBe(200)
    expect(r.headers.get("retry-after")).toBe("4")
    const answers = (await r.json()) as Array<Record<string, unknown>>
    expect(answers).toHaveLength(2)
    expect(answers[0]).toMatchObject({ id: 1, result: { isError: true, structuredContent: { error: "overloaded", retry_after: 4 } } })
    expect(answers[1]).toMatchObject({ id: "b", error: { code: -32000, data: { error: "overloaded", retry_after: 4 } } })
    // a body that is not JSON-RPC keeps the plain 503
    const junk = await fetch(`${server.url}/mcp`, { method: "POST", headers: { "content-type": "application/json" }, body: "{\"hello\":1}" })
    expect(junk.status).toBe(503)
    expect(await junk.json()).toMatchObject({ error: "overloaded" })
    Effect.runSync(latch.open)
    expect(await held).toBe(200)
  })
})
