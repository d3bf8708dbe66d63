/**
 * ServicesLive: one composition of the design card's layers, and a test replaces any one of them
 * by passing its own layer (no module mocks): a stage b that throws or reports failed, a rate
 * limiter that refuses, a model output that marks its renders. Over real HTTP and the MCP SDK.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Layer } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { AppConfig } from "../src/config/config.js"
import { RateLimited } from "../src/contracts/errors.js"
import { OpsStore } from "../src/db/ops-store.js"
import { ScopeStore } from "../src/db/scope-store.js"
import { decide } from "../src/decision/decide.js"
import { propose } from "../src/domain/proposals.js"
import { storeSource } from "../src/domain/sources.js"
import { type SearchStage, SearchStages } from "../src/search/stage.js"
import { ModelOutput, ModelOutputLive } from "../src/security/model-output.js"
import { type ServiceOverrides, ScopeStoreLive } from "../src/services.js"
import { RateLimiter } from "../src/transport/rate-limit.js"
import { tempDir, testConfig } from "./support/env.js"
import { mailProposal, mailSource } from "./support/fixtures.js"
import { startServer, type TestServer } from "./support/server.js"

let server: TestServer | undefined
let cleanup = () => {}
afterEach(async () => {
  await server?.close()
  server = undefined
  cleanup()
})

/** A server with one confirmed rule in sales and a feeder token; `overrides` replace layers of ServicesLive. */
const start = async (overrides: ServiceOverrides) => {
  const t = tempDir()
  cleanup = t.cleanup
  server = await startServer(testConfig(t.dir), { services: overrides })
  const token = await server.run(Effect.gen(function*() {
    const ops = yield* OpsStore
    yield* (yield* ScopeStore).create("sales")
    const feeder = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: ["sales"], rights: ["read", "propose"] })
    yield* ops.createGrant({ kind: "person", auth: "email", identity: "dev@example.com", scopes: ["sales"], rights: ["read", "propose"] })
    yield* storeSource(mailSource(), feeder.id)
    yield* propose(mailProposal(), { grantId: feeder.id, channel: "api" })
    yield* decide("sales-0001", { decision: "confirm", version: 1 }, { grantId: "person:9", identity: "p@example.com" })
    return "token" in feeder ? feeder.token : ""
  }))
  return { url: server.url, token }
}

const search = (url: string, token: string) =>
  fetch(`${url}/v1/search`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ scopes: ["sales"], text: "Lieferzeit Hakenleiste" })
  })

const stagesLayer = (b: SearchStage["availability"]) => Layer.succeed(SearchStages, { stages: [{ name: "b", availability: b }] })

describe("SearchStages swapped", () => {
  it("a stage b that throws is failed (internal error) and the answer is stage a's", async () => {
    const { url, token } = await start({
      searchStages: stagesLayer(() => {
        throw new Error("the model file is gone")
      })
    })
    const r = await search(url, token)
    expect(r.status).toBe(200)
    const body = await r.json() as { stages: Record<string, { state: string; reason: string | null }>; bundles: Array<{ head: { ref: string } }> }
    expect(body.stages.b).toEqual({ state: "failed", duration_ms: null, reason: "internal error" })
    expect(body.stages.c?.state).toBe("off")
    expect(body.bundles.map((b) => b.head.ref)).toEqual(["rule/sales-0001@2"])
  })

  it("a stage b that reports failed with its reason is answered as such, never an error", async () => {
    const { url, token } = await start({ searchStages: stagesLayer(() => ({ state: "failed", duration_ms: null, reason: "model not loaded" })) })
    const body = await (await search(url, token)).json() as { stages: { b: { reason: string } }; bundles: Array<unknown> }
    expect(body.stages.b.reason).toBe("model not loaded")
    expect(body.bundles).toHaveLength(1)
  })
})

describe("RateLimiter swapped", () => {
  it("a limiter that refuses answers 429 rate-limited with Retry-After, before anything is read", async () => {
    const taken: Array<string> = []
    const { url, token } = await start({
      rateLimiter: Layer.succeed(RateLimiter, {
        take: (kind, key) => {
          taken.push(`${kind} ${key}`)
          return Effect.fail(new RateLimited({ message: "too many requests (test)", retryAfter: 7 }))
        }
      })
    })
    const r = await search(url, token)
    expect(r.status).toBe(429)
    expect(r.headers.get("retry-after")).toBe("7")
    expect(await r.json()).toEqual({ error: "rate-limited", message: "too many requests (test)" })
    expect(taken).toEqual(["requests service:1"])
  })
})

describe("ModelOutput swapped", () => {
  it("the MCP door renders every result through the provided ModelOutput", async () => {
    const marked = Layer.effect(ModelOutput, Effect.map(ModelOutput, (live) => ({ ...live, render: (v, o) => `MARKED\n${live.render(v, o)}` }))).pipe(
      Layer.provide(ModelOutputLive)
    )
    const { url } = await start({ modelOutput: marked })
    const client = new Client({ name: "test", version: "1" })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${"m".repeat(40)}` } } }))
    const r = await client.callTool({ name: "list_scopes", arguments: {} }) as CallToolResult
    await client.close()
    const first = r.content[0]
    expect(first?.type === "text" ? first.text.split("\n")[0] : "").toBe("MARKED")
  })
})

describe("ServicesLive", () => {
  it("ScopeStore declares its dependency on OpsStore and its open check: ScopeStoreLive builds with the configuration alone", async () => {
    const t = tempDir()
    cleanup = t.cleanup
    const created = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const store = yield* ScopeStore
      yield* store.create("sales")
      return (yield* store.states).map((s) => `${s.scope} ${s.created}`)
    }).pipe(Effect.provide(ScopeStoreLive().pipe(Layer.provide(Layer.succeed(AppConfig, testConfig(t.dir))))))))
    expect(created).toEqual(["sales true", "ops false"])
  })
})
