/**
 * propose_rule with the official SDK client: the same request shape as POST /v1/proposals
 * (optional fields absent or null take the server's defaults), the mandatory exceptions as codes
 * in the structured content and as server words in the model text, and a repeat with a changed
 * supersedes refused like any proposal.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { storeSource } from "../../src/domain/sources.js"
import { addedRows, allRows, approvalOf, internalMail, outsideMail, PLAIN } from "../support/approval.js"
import { tempDir, testConfig } from "../support/env.js"
import { jamieSource } from "../support/fixtures.js"
import { sqlOf } from "../support/run.js"
import { startServer, type TestServer } from "../support/server.js"
import { scanRendered } from "../security/scan.js"
import { connect, type Mcp, structured, textOf } from "./support.js"

const AUTH = { authorization: `Bearer ${"m".repeat(40)}` }
const JAMIE = jamieSource()

let server: TestServer
let cleanup: () => void
let mcp: Mcp

beforeAll(async () => {
  const t = tempDir()
  cleanup = t.cleanup
  server = await startServer(testConfig(t.dir, approvalOf("classified")))
  await server.run(Effect.gen(function*() {
    const ops = yield* OpsStore
    yield* (yield* ScopeStore).create("sales")
    yield* ops.createGrant({ kind: "person", auth: "email", identity: "dev@example.com", scopes: ["sales"], rights: ["read", "propose"] })
    for (const source of [internalMail(), outsideMail(), JAMIE]) yield* storeSource(source, "service:9")
  }))
  mcp = await connect(server.url, AUTH)
})
afterAll(async () => {
  await mcp.close()
  await server.close()
  cleanup()
})

describe("propose_rule takes the request of POST /v1/proposals", () => {
  it("a jamie proposal with link, said_at and valid_from null: the meeting's link, date and day", async () => {
    const r = await mcp.call("propose_rule", {
      scope: "sales", kind: "rule", statement: "Ask the supplier for the delivery time before ordering hook rails",
      source: { kind: "jamie", id: JAMIE.source.id, quote: "From now on we always ask the supplier for the delivery time", timestamp_s: 100, link: null },
      said_at: null, valid_from: null, speaker: null, supersedes: null
    })
    expect(r.isError, textOf(r)).toBeFalsy()
    const id = String(structured(r).ref).replace(/^rule\/|@\d+$/g, "")
    const v = await server.run(Effect.flatMap(sqlOf("sales"), (sql) =>
      sql`SELECT said_at, valid_from, source_link FROM rule_version WHERE rule_id = ${id} AND version = 1`))
    expect(v).toEqual([{ said_at: "2026-03-12T10:00:00Z", valid_from: "2026-03-12", source_link: "https://jamie.example.com/m/7" }])
  })

  it("the tool's input schema and the OpenAPI request body of POST /v1/proposals name the same fields and require the same", async () => {
    const tool = (await mcp.client.listTools()).tools.find((t) => t.name === "propose_rule")
    const doc = await (await fetch(`${server.url}/openapi.json`)).json() as {
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Record<string, unknown> }> } }>>
      components?: { schemas?: Record<string, Record<string, unknown>> }
    }
    let body = doc.paths["/v1/proposals"]?.post?.requestBody?.content["application/json"]?.schema ?? {}
    if (typeof body.$ref === "string") body = doc.components?.schemas?.[body.$ref.split("/").pop() ?? ""] ?? {}
    expect(Object.keys(tool?.inputSchema.properties ?? {}).sort()).toEqual(Object.keys(body.properties as object).sort())
    expect([...(tool?.inputSchema.required ?? [])].sort()).toEqual([...(body.required as Array<string>)].sort())
  })
})

describe("the mandatory exceptions over MCP", () => {
  it("structuredContent carries exceptions; the model text writes the codes as server words, outside any untrusted block", async () => {
    const line = "Kartons werden ab Montag nur noch gefaltet angeliefert."
    const r = await mcp.call("propose_rule", { scope: "sales", kind: "rule", statement: line, source: { kind: "mail", id: outsideMail().source.id, quote: line } })
    expect(r.isError, textOf(r)).toBeFalsy()
    expect(structured(r)).toMatchObject({ status: "proposed", exceptions: ["external-sensitive"] })
    const text = textOf(r)
    expect(text).toContain("exceptions: external-sensitive")
    expect(scanRendered(text).outside).toContain("exceptions: external-sensitive")
    const plain = await mcp.call("propose_rule", { scope: "sales", kind: "rule", statement: PLAIN[0], source: { kind: "mail", id: internalMail().source.id, quote: PLAIN[0] } })
    expect(structured(plain)).toMatchObject({ status: "confirmed", exceptions: [] })
    expect(textOf(plain)).toContain("exceptions: []")
  })
})

describe("a repeat with another supersedes", () => {
  it("is checked like any proposal: reference-unknown, nothing but its search_log row stored", async () => {
    const args = { scope: "sales", kind: "rule", statement: PLAIN[1], source: { kind: "mail", id: internalMail().source.id, quote: PLAIN[1] } }
    expect((await mcp.call("propose_rule", args)).isError).toBeFalsy()
    const before = await server.run(Effect.flatMap(sqlOf("sales"), allRows))
    const r = await mcp.call("propose_rule", { ...args, supersedes: "sales-9999" })
    expect(r.isError).toBe(true)
    expect(JSON.parse(textOf(r))).toMatchObject({ error: "reference-unknown" })
    expect(Object.keys(addedRows(before, await server.run(Effect.flatMap(sqlOf("sales"), allRows))))).toEqual(["search_log"])
  })
})
