/**
 * /mcp over real HTTP with the official SDK Client (architecture.md §9, gaps.md §5): the door
 * (401, 403, 405, Origin), the lists, every core tool with its success and each expected error,
 * the same pipeline as /v1 with channel mcp (search_log rows), and refused writes that store
 * nothing.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { decide } from "../../src/decision/decide.js"
import { propose } from "../../src/domain/proposals.js"
import { storeSource } from "../../src/domain/sources.js"
import { INSTRUCTIONS } from "../../src/mcp/instructions.js"
import { tempDir, testConfig } from "../support/env.js"
import { mailProposal, mailSource, manualProposal } from "../support/fixtures.js"
import { counts, sqlOf } from "../support/run.js"
import { startServer, type TestServer } from "../support/server.js"
import { scanRendered } from "../security/scan.js"
import { connect, type Mcp, structured, textOf } from "./support.js"

const MCP_TOKEN = "m".repeat(40)
const AUTH = { authorization: `Bearer ${MCP_TOKEN}` }
const SEARCH_ID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

let server: TestServer
let cleanup: () => void
let mcp: Mcp
const tokens = { feeder: "" }

const rawPost = (body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${server.url}/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify(body)
  })
const INIT = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "1" } } }

const errorOf = (r: CallToolResult) => {
  expect(r.isError).toBe(true)
  return JSON.parse(textOf(r)) as { error: string; current?: string; request_id?: string }
}
const logRows = (scope: string) =>
  server.run(Effect.flatMap(sqlOf(scope), (sql) => sql<{ id: string; channel: string; operation: string; outcome: number; grant_id: string; refs: string }>`SELECT * FROM search_log ORDER BY at, rowid`))

beforeAll(async () => {
  const t = tempDir()
  cleanup = t.cleanup
  const config = testConfig(t.dir, { scopes: ["sales", "ops", "hr"].map((name) => ({ name, providers_allowed: [] })) })
  server = await startServer(config)
  await server.run(Effect.gen(function*() {
    const ops = yield* OpsStore
    const store = yield* ScopeStore
    yield* store.create("sales")
    yield* store.create("ops")
    // hr is configured without a file: scope-locked
    yield* ops.createGrant({ kind: "person", auth: "email", identity: "dev@example.com", scopes: ["sales", "ops", "hr"], rights: ["read", "propose"] })
    const feeder = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: ["sales", "ops", "hr"], rights: ["read", "propose"], label: "feeder" })
    tokens.feeder = "token" in feeder ? feeder.token : ""
    yield* storeSource(mailSource(), feeder.id)
    const by = { grantId: feeder.id, channel: "api" as const }
    const person = { grantId: "person:9", identity: "p@example.com" }
    yield* propose(mailProposal(), by) // sales-0001 → confirmed @2
    yield* decide("sales-0001", { decision: "confirm", version: 1 }, person)
    yield* propose(manualProposal("Never ship black hook rails without the delivery time"), by) // sales-0002 rejected
    yield* decide("sales-0002", { decision: "reject", version: 1, reason: "wrong" }, person)
    yield* propose(manualProposal("Hook rails are ordered only on Mondays from now on", { keywords: ["Hakenleiste", "Montag"] }), by) // sales-0003 proposed
    yield* propose(manualProposal("Ops asks the carrier for the delivery time of pallets", { scope: "ops", keywords: ["Lieferzeit"], relations: [] }), by)
    yield* decide("ops-0001", { decision: "confirm", version: 1 }, person)
  }))
  mcp = await connect(server.url, AUTH)
})
afterAll(async () => {
  await mcp.close()
  await server.close()
  cleanup()
})

describe("the door", () => {
  it("401 without a credential and with an unknown bearer, with WWW-Authenticate naming the protected-resource document", async () => {
    for (const headers of [{}, { authorization: `Bearer ${"x".repeat(40)}` }, { authorization: `Bearer gn_${"x".repeat(43)}` }]) {
      const r = await rawPost(INIT, headers)
      expect(r.status).toBe(401)
      expect(await r.json()).toMatchObject({ error: "unauthorized" })
      expect(r.headers.get("www-authenticate")).toBe(`Bearer resource_metadata="http://127.0.0.1:8787/.well-known/oauth-protected-resource"`)
    }
  })
  it("a service credential → 403 channel-not-allowed (person identities only)", async () => {
    const r = await rawPost(INIT, { authorization: `Bearer ${tokens.feeder}` })
    expect(r.status).toBe(403)
    expect(await r.json()).toMatchObject({ error: "channel-not-allowed" })
  })
  it("a foreign Origin → 403 csrf-failed; the public origin is fine", async () => {
    const r = await rawPost(INIT, { ...AUTH, origin: "https://evil.example" })
    expect(r.status).toBe(403)
    expect(await r.json()).toMatchObject({ error: "csrf-failed" })
    expect((await rawPost(INIT, { ...AUTH, origin: "http://127.0.0.1:8787" })).status).toBe(200)
  })
  it("GET and DELETE → 405; a body that is not JSON → 400 parse error", async () => {
    const get = await fetch(`${server.url}/mcp`, { headers: { ...AUTH, accept: "text/event-stream" } })
    expect(get.status).toBe(405)
    expect(get.headers.get("allow")).toBe("POST")
    expect((await fetch(`${server.url}/mcp`, { method: "DELETE", headers: AUTH })).status).toBe(405)
    const bad = await fetch(`${server.url}/mcp`, { method: "POST", headers: { ...AUTH, "content-type": "application/json" }, body: "{not json" })
    expect(bad.status).toBe(400)
    expect(await bad.json()).toMatchObject({ error: { code: -32700 } })
  })
  it("a body over 256 KiB → 413; without a credential it is 401 with WWW-Authenticate (step 1 comes first)", async () => {
    const r = await rawPost({ ...INIT, pad: "x".repeat(300 * 1024) }, AUTH)
    expect(r.status).toBe(413)
    const anonymous = await rawPost({ ...INIT, pad: "x".repeat(300 * 1024) }, {})
    expect(anonymous.status).toBe(401)
    expect(anonymous.headers.get("www-authenticate")).toMatch(/^Bearer resource_metadata="/)
  })
})

describe("lists and instructions", () => {
  it("tools/list and prompts/list name exactly the tools and prompts of this build; the instructions are verbatim", async () => {
    const tools = (await mcp.client.listTools()).tools
    expect(tools.map((t) => t.name).sort()).toEqual([
      "entity_create", "entity_move", "entity_path", "entity_resolve", "entity_tree", "entity_update", "link_list", "link_propose",
      "list_scopes", "propose_rule", "read_rule", "rule_provenance", "rule_retract", "search_feedback", "search_rules", "structure_retract"
    ])
    expect(tools.find((t) => t.name === "search_rules")?.description).toBe(
      "Cite every bundle with its date and source. If a head carries recheck, ask the person \"still valid?\" before applying it and read provenance first. If a stage did not run and nothing was found, say which stages ran. Prefer rules that state a restriction for the action you are planning. Groups list refs, each entry once in related; for a full bundle call read_rule or pass detail: \"full\", and if truncated is set, search narrower for the omitted bundles."
    )
    const prompts = (await mcp.client.listPrompts()).prompts
    expect(prompts.map((p) => p.name).sort()).toEqual(["assign_document", "create_level", "file_incoming_mail", "restructure", "where_does_this_belong"])
    expect(mcp.client.getInstructions()).toBe(INSTRUCTIONS)
    expect(mcp.client.getServerVersion()).toMatchObject({ name: "groundnote" })
  })
})

describe("search_rules", () => {
  it("answers the compact form by default and the full SearchResponse with detail: full; logged with channel mcp", async () => {
    const r = await mcp.call("search_rules", { scopes: ["sales"], text: "Lieferzeit Hakenleiste" })
    expect(r.isError).toBeFalsy()
    const c = structured<{ search_id: string; bundles: Array<{ head: Record<string, unknown>; line: string }>; related: Array<unknown>; truncated: unknown; query: Record<string, unknown> }>(r)
    expect(c.search_id).toMatch(SEARCH_ID_RE)
    expect(c.bundles.map((b) => b.head.ref)).toEqual(["rule/sales-0001@2"])
    expect(Object.keys(c.bundles[0]?.head ?? {}).sort()).toEqual(
      ["adoption", "coverage", "date", "kind", "quote", "recheck", "ref", "scope", "signals", "source", "status", "title", "untrusted", "valid_from", "valid_until"])
    expect(c.truncated).toBeNull()
    expect(c.query).not.toHaveProperty("variants")
    const text = textOf(r)
    expect(text).toContain("ref: rule/sales-0001@2")
    expect(text).toContain("title (human-confirmed): Ask the supplier for the delivery time before ordering black hook rails")
    scanRendered(text)
    const rows = (await logRows("sales")).filter((x) => x.id === c.search_id)
    expect(rows).toMatchObject([{ channel: "mcp", operation: "search", outcome: 200, grant_id: "person:1" }])

    const full = await mcp.call("search_rules", { scopes: ["sales"], text: "Hakenleiste", include_proposals: true, detail: "full" })
    const f = structured<{ bundles: Array<{ head: { ref: string; found_via: Array<string> } }>; query: { variants: unknown } }>(full)
    expect(f.bundles.map((b) => b.head.ref).sort()).toEqual(["rule/sales-0001@2", "rule/sales-0003@1"])
    expect(f.query.variants).toBeDefined()
  })
  it("cross-scope with the flag; the scope errors are isError results with their code", async () => {
    const both = structured<{ scopes: Array<string> }>(await mcp.call("search_rules", { scopes: ["sales", "ops"], cross_scope: true, text: "Lieferzeit" }))
    expect(both.scopes).toEqual(["sales", "ops"])
    expect(errorOf(await mcp.call("search_rules", { scopes: ["sales", "ops"], text: "Lieferzeit" }))).toEqual({ error: "multiple-scopes-without-flag" })
    expect(errorOf(await mcp.call("search_rules", { scopes: ["finance"], text: "x" }))).toEqual({ error: "scope-not-allowed" })
    expect(errorOf(await mcp.call("search_rules", { scopes: ["hr"], text: "x" }))).toEqual({ error: "scope-locked" })
    // the entity of another scope: the tool's schema is the contract's, so the SDK refuses it naming the rule
    const other = await mcp.call("search_rules", { scopes: ["sales"], text: "x", entity: "ops-e0001" })
    expect(other.isError).toBe(true)
    expect(textOf(other)).toContain("entity needs exactly one scope, the entity's own")
  })
  it("input the schema refuses stays the SDK's Input validation error", async () => {
    for (const args of [{ scopes: ["sales"] }, { scopes: ["sales"], text: "x", limit: 51 }, { scopes: ["sales"], text: "x", extra: 1 }, { scopes: ["Sales!"], text: "x" }]) {
      const r = await mcp.call("search_rules", args)
      expect(r.isError).toBe(true)
      expect(textOf(r)).toContain("Input validation error")
    }
  })
  it("a refusal names each problem in the contract's words: the member of a union the input chose, no echo of an optional key", async () => {
    const typed = textOf(await mcp.call("search_rules", { scopes: ["sales"], text: 5 }))
    expect(typed).toContain("Expected string at text")
    expect(typed).not.toContain("Expected undefined")
    expect(textOf(await mcp.call("search_rules", { scopes: ["sales"], text: "x", extra: 1 }))).toContain("unknown key (remove it) at extra")
    // a key is foreign text: at most 100 characters of it are named
    const long = textOf(await mcp.call("list_scopes", { ["k".repeat(300)]: 1 }))
    expect(long).toContain(`unknown key (remove it) at ${"k".repeat(100)}…`)
    expect(long).not.toContain("k".repeat(101))
    // a meeting's quote without its timestamp: zod alone said "Invalid input at source"
    const source = { kind: "jamie", id: "jamie:weekly-1", quote: "Black hook rails are ordered only with a delivery time" }
    const union = await mcp.call("propose_rule", { ...mailProposal(), source })
    expect(union.isError).toBe(true)
    expect(textOf(union)).toContain("Input validation error")
    expect(textOf(union)).toContain("is missing at source.timestamp_s")
    expect(textOf(union)).not.toContain("Invalid input at source")
  })
  it("tools/list shows each contract schema with its references inlined and one-value enums as const", async () => {
    const propose = (await mcp.client.listTools()).tools.find((t) => t.name === "propose_rule")
    const listed = JSON.stringify(propose?.inputSchema)
    expect(listed).not.toContain("$ref")
    expect(listed).not.toContain("$defs")
    const members = (propose?.inputSchema.properties?.source as { anyOf: Array<{ properties: { kind: unknown }; required: Array<string> }> }).anyOf
    expect(members.map((m) => m.properties.kind)).toEqual([{ type: "string", const: "jamie" }, { type: "string", const: "mail" }, { type: "string", const: "manual" }])
    expect(members[0]?.required).toEqual(["kind", "id", "quote", "timestamp_s"])
  })
})

describe("read_rule", () => {
  it("answers the full bundle", async () => {
    const r = await mcp.call("read_rule", { ref: "rule/sales-0001" })
    const b = structured<{ head: { ref: string; status: string; coverage: unknown }; line: string }>(r)
    expect(b.head).toMatchObject({ ref: "rule/sales-0001@2", status: "confirmed", coverage: null })
    expect(textOf(r)).toContain(`line: ${b.line}`)
    const rows = await logRows("sales")
    expect(rows[rows.length - 1]).toMatchObject({ channel: "mcp", operation: "read_rule", outcome: 200 })
  })
  it("a proposal only with include_proposals; a rejected rule is not-found, also with include_proposals and as_of", async () => {
    // a proposal read without include_proposals: not-found that says how to read it
    const proposal = await mcp.call("read_rule", { ref: "rule/sales-0003" })
    expect(proposal.isError).toBe(true)
    expect(proposal.structuredContent).toMatchObject({ error: "not-found", message: "sales-0003 is a proposal a person has not confirmed yet" })
    expect(textOf(proposal)).toContain("include_proposals: true")
    // the code, the server's own message and its remedy reach the model as is, not in an untrusted block
    expect(textOf(proposal)).toContain("\nmessage: sales-0003 is a proposal a person has not confirmed yet\n")
    expect(textOf(proposal)).not.toContain("untrusted")
    expect(structured<{ head: { ref: string } }>(await mcp.call("read_rule", { ref: "rule/sales-0003", include_proposals: true })).head.ref).toBe("rule/sales-0003@1")
    const plain = errorOf(await mcp.call("read_rule", { ref: "rule/sales-0002" }))
    const withProposals = errorOf(await mcp.call("read_rule", { ref: "rule/sales-0002@2", include_proposals: true }))
    const asOf = errorOf(await mcp.call("read_rule", { ref: "rule/sales-0002", include_proposals: true, as_of: "2026-03-20" }))
    const unknown = errorOf(await mcp.call("read_rule", { ref: "rule/sales-0999" }))
    for (const e of [plain, withProposals, asOf, unknown]) expect(e.error).toBe("not-found")
    expect(Object.keys(plain)).toEqual(["error", "request_id"])
    expect(JSON.stringify(await logRows("sales"))).not.toContain("never ship")
  })
  it("a rule of a scope outside the grant, a locked scope, a malformed ref", async () => {
    expect(errorOf(await mcp.call("read_rule", { ref: "rule/finance-0001" }))).toEqual({ error: "scope-not-allowed" })
    expect(errorOf(await mcp.call("read_rule", { ref: "rule/hr-0001" }))).toEqual({ error: "scope-locked" })
    for (const ref of ["sales", "rule/sales", "sales-1", "rule/sales-0001@0"]) {
      expect(textOf(await mcp.call("read_rule", { ref }))).toContain("must be a rule ref rule/<id>[@<n>] or a rule id <scope>-<nnnn>")
    }
  })
  it("takes the bare rule id as well as the ref: the same bundle, the same refusals", async () => {
    const byId = await mcp.call("read_rule", { ref: "sales-0001" })
    expect(byId.isError).toBeFalsy()
    expect(structured(byId)).toEqual(structured(await mcp.call("read_rule", { ref: "rule/sales-0001" })))
    expect(structured<{ head: { ref: string } }>(await mcp.call("read_rule", { ref: "sales-0003", include_proposals: true })).head.ref).toBe("rule/sales-0003@1")
    expect(errorOf(await mcp.call("read_rule", { ref: "sales-0002" })).error).toBe("not-found")
    expect(errorOf(await mcp.call("read_rule", { ref: "finance-0001" }))).toEqual({ error: "scope-not-allowed" })
  })
})

describe("rule_provenance", () => {
  it("answers the source, quote, excerpt and attachments; rejected and unknown rules are not-found", async () => {
    const r = await mcp.call("rule_provenance", { ref: "rule/sales-0001@2" })
    const p = structured<{ ref: string; source: { id: string; title: string }; attachments: Array<{ filename: string }> }>(r)
    expect(p.ref).toBe("rule/sales-0001@2")
    expect(p.source.title).toBe("Bestellungen Hakenleisten")
    expect(p.attachments.map((a) => a.filename)).toEqual(["preisliste.pdf", "foto.jpg"])
    const s = scanRendered(textOf(r))
    expect(s.outside).not.toContain("Bestellungen Hakenleisten")
    expect(s.outside).not.toContain("preisliste.pdf")
    expect(errorOf(await mcp.call("rule_provenance", { ref: "rule/sales-0002" })).error).toBe("not-found")
    expect(errorOf(await mcp.call("rule_provenance", { ref: "rule/sales-0404" })).error).toBe("not-found")
    expect(errorOf(await mcp.call("rule_provenance", { ref: "rule/finance-0001" })).error).toBe("scope-not-allowed")
  })
})

describe("propose_rule", () => {
  it("stores a proposal via mcp and answers ProposalCreated with the approval_url", async () => {
    const r = await mcp.call("propose_rule", { ...mailProposal({ statement: "Black hook rails are ordered only after the supplier named a delivery time" }) })
    const created = structured<{ ref: string; status: string; approval_url: string; quote_check: { checked: boolean } }>(r)
    expect(created).toMatchObject({ ref: "rule/sales-0004@1", status: "proposed", approval_url: "http://127.0.0.1:8787/approval/rules/sales-0004", quote_check: { checked: true } })
    expect(textOf(r)).toContain("approval_url: http://127.0.0.1:8787/approval/rules/sales-0004")
    const v = await server.run(Effect.flatMap(sqlOf("sales"), (sql) => sql<{ reason: string; changed_by: string; status: string }>`SELECT reason, changed_by, status FROM rule_version WHERE rule_id = 'sales-0004'`))
    expect(v).toEqual([{ reason: "proposed via mcp", changed_by: "person:1", status: "proposed" }])
    const rows = await logRows("sales")
    expect(rows[rows.length - 1]).toMatchObject({ channel: "mcp", operation: "propose", outcome: 201 })
  })
  it("quote-not-found, source-unknown, reference-unknown and multiple scopes are refused and store nothing", async () => {
    const before = await server.run(Effect.flatMap(sqlOf("sales"), counts))
    const quote = { kind: "mail", id: "mail:<order-rule@example.com>", quote: "This sentence is nowhere in the stored mail text at all", link: null }
    // quote-not-found carries the closest passage: framed like a result (structured content holds the code)
    const notFound = await mcp.call("propose_rule", { ...mailProposal(), source: quote })
    expect(notFound.isError).toBe(true)
    expect(structured(notFound)).toMatchObject({ error: "quote-not-found" })
    expect(errorOf(await mcp.call("propose_rule", { ...mailProposal(), source: { ...mailProposal().source, id: "mail:<unknown@example.com>" } }))).toMatchObject({ error: "source-unknown" })
    expect(errorOf(await mcp.call("propose_rule", { ...mailProposal(), supersedes: "sales-0404" }))).toMatchObject({ error: "reference-unknown" })
    expect(errorOf(await mcp.call("propose_rule", { ...mailProposal(), supersedes: "ops-0001" }))).toEqual({ error: "multiple-scopes-without-flag" })
    expect(errorOf(await mcp.call("propose_rule", { ...mailProposal(), scope: "finance" }))).toEqual({ error: "scope-not-allowed" })
    expect(textOf(await mcp.call("propose_rule", { ...mailProposal(), statement: "short" }))).toContain("Input validation error")
    expect(await server.run(Effect.flatMap(sqlOf("sales"), counts))).toEqual(before)
    const failed = (await logRows("sales")).filter((x) => x.operation === "propose" && x.outcome === 422)
    expect(failed.length).toBe(3)
  })
})

describe("search_feedback", () => {
  it("records feedback for the caller's own search; an unknown id is not-found", async () => {
    const s = structured<{ search_id: string }>(await mcp.call("search_rules", { scopes: ["sales"], text: "Lieferzeit" }))
    const ok = await mcp.call("search_feedback", { search_id: s.search_id, bundles: [{ ref: "rule/sales-0001@2", verdict: "relevant" }], missing: ["rule/sales-0003@1"] })
    expect(structured(ok)).toEqual({ recorded: 2 })
    const rows = await server.run(Effect.flatMap(sqlOf("sales"), (sql) => sql<{ ref: string; verdict: string; given_by: string }>`SELECT ref, verdict, given_by FROM feedback WHERE search_id = ${s.search_id} ORDER BY id`))
    expect(rows).toEqual([{ ref: "rule/sales-0001@2", verdict: "relevant", given_by: "person:1" }, { ref: "rule/sales-0003", verdict: "missing", given_by: "person:1" }])
    const unknown = errorOf(await mcp.call("search_feedback", { search_id: "00000000-0000-4000-8000-000000000000", bundles: [{ ref: "rule/sales-0001@2", verdict: "irrelevant" }], missing: [] }))
    expect(unknown.error).toBe("not-found")
    expect(errorOf(await mcp.call("search_feedback", { search_id: "not-a-uuid", bundles: [], missing: ["rule/sales-0001"] })).error).toBe("not-found")
    expect(errorOf(await mcp.call("search_feedback", { search_id: s.search_id, bundles: [], missing: ["rule/finance-0001"] }))).toEqual({ error: "scope-not-allowed" })
    expect(textOf(await mcp.call("search_feedback", { search_id: s.search_id, bundles: [], missing: [] }))).toContain("Input validation error")
  })
})

describe("list_scopes", () => {
  it("lists the grant's scopes with their counts, a locked one unavailable, the channel's rights and the entity types", async () => {
    const r = structured<{ scopes: Array<Record<string, unknown>>; rights: Array<string>; entity_types: Array<string> }>(await mcp.call("list_scopes", {}))
    expect(r.scopes.map((s) => [s.scope, s.available])).toEqual([["hr", false], ["ops", true], ["sales", true]])
    expect(r.scopes[2]?.rules).toMatchObject({ confirmed: 1 })
    expect(r.rights).toEqual(["read", "propose"])
    expect(r.entity_types).toContain("customer")
    expect(textOf(await mcp.call("list_scopes", { scope: "sales" }))).toContain("Input validation error")
    const rows = await logRows("ops")
    expect(rows[rows.length - 1]).toMatchObject({ channel: "mcp", operation: "list_scopes", outcome: 200 })
  })
})
