/**
 * The five prompts (graph.md §9.4, gaps.md §5) over real HTTP: one user message each that names
 * the tools in order (resolve before create, show paths, give the approval_url, never confirm);
 * arguments checked before any text is built; every foreign argument in its own untrusted block
 * with one boundary, followed by the preamble; optional arguments left out leave no block.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { UNTRUSTED_PREAMBLE } from "../../src/security/model-output.js"
import { tempDir, testConfig } from "../support/env.js"
import { startServer, type TestServer } from "../support/server.js"
import { scanRendered } from "../security/scan.js"
import { connect, type Mcp } from "./support.js"

let server: TestServer
let cleanup: () => void
let mcp: Mcp

beforeAll(async () => {
  const t = tempDir()
  cleanup = t.cleanup
  server = await startServer(testConfig(t.dir, { graph: { entity_types: ["customer", "project"] } }))
  await server.run(Effect.gen(function*() {
    yield* Effect.flatMap(ScopeStore, (s) => s.create("sales"))
    yield* Effect.flatMap(OpsStore, (o) => o.createGrant({ kind: "person", auth: "email", identity: "dev@example.com", scopes: ["sales"], rights: ["read", "propose"] }))
  }))
  mcp = await connect(server.url, { authorization: `Bearer ${"m".repeat(40)}` })
})
afterAll(async () => {
  await mcp.close()
  await server.close()
  cleanup()
})

const text = async (name: string, args: Record<string, string>) => {
  const r = await mcp.client.getPrompt({ name, arguments: args })
  expect(r.messages.length).toBe(1)
  expect(r.messages[0]?.role).toBe("user")
  const c = r.messages[0]?.content
  return c?.type === "text" ? c.text : ""
}
const order = (t: string, ...words: Array<string>) => {
  const at = words.map((w) => t.indexOf(w))
  expect(at.every((i) => i >= 0), words.join(", ")).toBe(true)
  expect([...at].sort((a, b) => a - b)).toEqual(at)
}

describe("prompts", () => {
  it("create_level: resolve before create, the path, the approval_url, never confirm; name, parent and evidence each in a block", async () => {
    const t = await text("create_level", { scope: "sales", name: "Müller GmbH", type: "customer", parent: "Kunden Nord", evidence: "mail of 12 March" })
    order(t, "entity_resolve", "entity_create", "approval_url")
    expect(t).toContain("Never confirm")
    expect(t).toContain("type customer in scope sales")
    const s = scanRendered(t, "last")
    expect(s.blocks.map((b) => [b.label, b.text])).toEqual([["name", "Müller GmbH"], ["parent", "Kunden Nord"], ["evidence", "mail of 12 March"]])
    expect(s.outside).not.toMatch(/Müller|Kunden Nord|12 March/)
    expect(t.trimEnd().endsWith(UNTRUSTED_PREAMBLE)).toBe(true)
    const bare = scanRendered(await text("create_level", { scope: "sales", name: "Müller GmbH", type: "customer" }), "last")
    expect(bare.blocks.map((b) => b.label)).toEqual(["name"])
  })
  it("file_incoming_mail, assign_document, restructure, where_does_this_belong", async () => {
    const mail = await text("file_incoming_mail", { scope: "sales", source: "mail:<a@example.com>", subject: "Bestellung Müller", sender: "maria@example.com" })
    order(mail, "entity_resolve", "link_propose", "approval_url")
    expect(scanRendered(mail, "last").blocks.map((b) => b.label)).toEqual(["source id", "subject", "sender"])
    const doc = await text("assign_document", { scope: "sales", ref: "attachment/mail:<a@example.com>#1", description: "Preisliste 2026 der Firma Müller", hint: "Kunde" })
    order(doc, "entity_resolve", "link_propose")
    expect(scanRendered(doc, "last").blocks.map((b) => b.label)).toEqual(["document ref", "description", "hint"])
    const move = await text("restructure", { scope: "sales", entity: "Ladenbau Nord", new_parent: "Schmidt AG", reason: "the project changed hands" })
    order(move, "entity_resolve", "entity_path", "entity_move", "approval_url")
    expect(move).toContain("Never confirm, reject, archive or revert")
    expect(scanRendered(move, "last").blocks.map((b) => b.label)).toEqual(["entity", "new parent", "reason"])
    const where = await text("where_does_this_belong", { scope: "sales", description: "a mail about hook rails for Müller" })
    order(where, "entity_resolve", "entity_tree", "entity_path")
    expect(where).toContain("Do not create, move or link anything")
    expect(scanRendered(where, "last").blocks.map((b) => b.label)).toEqual(["description"])
  })
  it("checks the arguments first: scope, type from config, source id, ref, and the length bounds", async () => {
    const bad: Array<[string, Record<string, string>]> = [
      ["create_level", { scope: "Sales!", name: "x", type: "customer" }],
      ["create_level", { scope: "sales", name: "x", type: "planet" }],
      ["create_level", { scope: "sales", name: "x".repeat(201), type: "customer" }],
      ["create_level", { scope: "sales", name: "x", type: "customer", evidence: "e".repeat(1001) }],
      ["file_incoming_mail", { scope: "sales", source: "mail:no-brackets", subject: "s" }],
      ["file_incoming_mail", { scope: "sales", source: "mail:<a@b>", subject: "s".repeat(1001) }],
      ["assign_document", { scope: "sales", ref: "rule/sales-0001@2", description: "d" }],
      ["assign_document", { scope: "sales", ref: "attachment/mail:<a@b>#1", description: "d".repeat(2001) }],
      ["restructure", { scope: "sales", entity: "a", new_parent: "b" }],
      ["where_does_this_belong", { scope: "sales", description: "d", hint: "h".repeat(1001) }]
    ]
    for (const [name, args] of bad) {
      await expect(mcp.client.getPrompt({ name, arguments: args }), `${name} ${JSON.stringify(args).slice(0, 80)}`).rejects.toThrow(/Invalid arguments/)
    }
  })

  it("a refusal names its code once (the client adds the prefix; the server no longer sends it too)", async () => {
    const e = await mcp.client.getPrompt({ name: "restructure", arguments: { scope: "sales", entity: "a", new_parent: "b" } }).then(() => null, (x: unknown) => x)
    const message = e instanceof Error ? e.message : ""
    expect(message).toMatch(/^MCP error -32602: Invalid arguments for prompt restructure/)
    expect(message.match(/MCP error/g)).toHaveLength(1)
  })

  it("file_incoming_mail with only a subject says 'Its subject is quoted below'", async () => {
    const t = await text("file_incoming_mail", { scope: "sales", source: "mail:<a@b>", subject: "Lieferzeit" })
    expect(t).toContain("Its subject is quoted below.")
    expect(t).not.toContain("are quoted below")
    const withSender = await text("file_incoming_mail", { scope: "sales", source: "mail:<a@b>", subject: "Lieferzeit", sender: "x@example.com" })
    expect(withSender).toContain("Its subject and its sender are quoted below.")
    const all = await text("file_incoming_mail", { scope: "sales", source: "mail:<a@b>", subject: "Lieferzeit", sender: "x@example.com", hint: "h" })
    expect(all).toContain("Its subject, its sender and a hint are quoted below.")
  })
})
