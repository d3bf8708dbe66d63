/**
 * Structure adoption over MCP with the official SDK client (gaps.md §13): in mode A entity_create
 * and link_propose answer the adoption (structured: adoption auto; text: the name framed as
 * auto-adopted), structure_retract takes an adoption back (the same operation as POST
 * /v1/structure/:id/retract) and is refused with already-decided once it is taken back; the tool
 * list has structure_retract and no tool that confirms.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { approvalOf } from "../support/approval.js"
import { tempDir, testConfig } from "../support/env.js"
import { startServer, type TestServer } from "../support/server.js"
import { scanRendered } from "../security/scan.js"
import { connect, type Mcp, structured, textOf } from "./support.js"

const AUTH = { authorization: `Bearer ${"m".repeat(40)}` }
const AUTO = { kind: "auto", ruleset: "gn-1" }

let server: TestServer
let cleanup: () => void
let mcp: Mcp

beforeAll(async () => {
  const t = tempDir()
  cleanup = t.cleanup
  server = await startServer(testConfig(t.dir, approvalOf("autonomous")))
  await server.run(Effect.gen(function*() {
    yield* (yield* ScopeStore).create("sales")
    yield* (yield* OpsStore).createGrant({ kind: "person", auth: "email", identity: "dev@example.com", scopes: ["sales"], rights: ["read", "propose"] })
  }))
  mcp = await connect(server.url, AUTH)
}, 60_000)
afterAll(async () => {
  await mcp.close()
  await server.close()
  cleanup()
})

const blocks = (text: string, label: string) => scanRendered(text).blocks.filter((b) => b.label === label).map((b) => b.text)

describe("structure adoption over MCP", () => {
  it("entity_create and link_propose are adopted in mode A and marked auto-adopted; structure_retract takes them back", async () => {
    const a = await mcp.call("entity_create", { scope: "sales", type: "department", name: "Vertrieb", parent_id: null })
    expect(a.isError).toBeFalsy()
    expect(structured(a)).toMatchObject({ status: "active", adoption: AUTO, policy: { outcome: "auto" } })
    expect(blocks(textOf(a), "name, auto-adopted")).toEqual(["Vertrieb"])
    const aId = String(structured(a).id)
    const b = await mcp.call("entity_create", { scope: "sales", type: "department", name: "Nord", parent_id: aId })
    const bId = String(structured(b).id)
    const link = await mcp.call("link_propose", { scope: "sales", from_ref: `entity/${bId}`, to_ref: `entity/${aId}`, type: "belongs_to", confidence: 0.9, reason: "Nord ist ein Vertriebsgebiet." })
    expect(structured(link)).toMatchObject({ status: "confirmed", adoption: AUTO, link: { adoption: AUTO } })
    expect(blocks(textOf(link), "reason, auto-adopted")).toEqual(["Nord ist ein Vertriebsgebiet."])
    const linkId = String((structured(link).link as { id: string }).id)

    const r = await mcp.call("structure_retract", { id: `link/${linkId}`, reason: "Der Kunde hat es anders gesagt." })
    expect(r.isError).toBeFalsy()
    expect(structured(r)).toMatchObject({ retracted: `link/${linkId}`, review: { verdict: "retract", origin: "grant" } })
    const e = await mcp.call("structure_retract", { id: bId, reason: "Nord gibt es nicht." })
    expect(structured(e)).toMatchObject({ retracted: `entity/${bId}@1`, status: "archived" })
    const again = await mcp.call("structure_retract", { id: bId, reason: "noch einmal" })
    expect(again.isError).toBe(true)
    expect(textOf(again)).toContain("already-decided")
  })

  it("lists structure_retract; no tool confirms, rejects or reviews", async () => {
    const names = (await mcp.client.listTools()).tools.map((t) => t.name)
    expect(names).toContain("structure_retract")
    expect(names.filter((n) => /confirm|reject|review|approve|decide/.test(n))).toEqual([])
  })
})
