/**
 * The eight graph tools over real HTTP (graph.md §8, §9.2): each calls the same graph functions
 * and pipeline as /v1 with channel mcp; each answer carries the path and next; each refusal is an
 * isError result with the GraphErrorBody (remedy, next, candidates, paths, limit), framed; refused
 * writes store nothing.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { decide } from "../../src/decision/decide.js"
import { propose } from "../../src/domain/proposals.js"
import { storeSource } from "../../src/domain/sources.js"
import { archiveEntity } from "../../src/structure/archive.js"
import { tempDir, testConfig } from "../support/env.js"
import { mailProposal, mailSource, manualProposal } from "../support/fixtures.js"
import { sqlOf } from "../support/run.js"
import { startServer, type TestServer } from "../support/server.js"
import { scanRendered } from "../security/scan.js"
import { connect, type Mcp, structured, textOf } from "./support.js"

let server: TestServer
let cleanup: () => void
let mcp: Mcp

interface Refusal {
  error: string
  remedy: string
  next: Array<{ tool: string; why: string }>
  candidates?: Array<{ id: string; match: string }>
  paths?: { entity: Array<{ id: string }>; target: Array<{ id: string }> }
  limit?: number
  request_id?: string
}
/** A graph refusal: isError, the GraphErrorBody in the structured content, the text framed. */
const refusal = (r: CallToolResult): Refusal => {
  expect(r.isError).toBe(true)
  const body = structured<Refusal>(r)
  expect(typeof body.remedy).toBe("string")
  expect(Array.isArray(body.next)).toBe(true)
  expect(textOf(r)).toContain(`error: ${body.error}`)
  expect(textOf(r)).toContain(`remedy: ${body.remedy}`)
  return body
}
const ok = <T = Record<string, unknown>>(r: CallToolResult): T => {
  expect(r.isError, textOf(r)).toBeFalsy()
  scanRendered(textOf(r))
  return structured<T>(r)
}
const entityRows = (scope: string) =>
  server.run(Effect.flatMap(sqlOf(scope), (sql) => sql<{ n: number }>`SELECT (SELECT count(*) FROM entity) + (SELECT count(*) FROM entity_version) + (SELECT count(*) FROM link) AS n`))
const lastLog = async (scope: string) => {
  const rows = await server.run(Effect.flatMap(sqlOf(scope), (sql) => sql<{ channel: string; operation: string; outcome: number }>`SELECT channel, operation, outcome FROM search_log ORDER BY at DESC, rowid DESC LIMIT 1`))
  return rows[0]
}
const create = async (args: Record<string, unknown>) => ok<{ id: string; ref: string }>(await mcp.call("entity_create", { scope: "sales", parent_id: null, ...args }))

const ids: Record<string, string> = {}

beforeAll(async () => {
  const t = tempDir()
  cleanup = t.cleanup
  const config = testConfig(t.dir, {
    scopes: ["sales", "ops", "hr"].map((name) => ({ name, providers_allowed: [] })),
    graph: { max_depth: 3, entity_types: ["customer", "project", "department", "object", "topic"] },
    limits: { requests_per_minute: 100_000 }
  })
  server = await startServer(config)
  await server.run(Effect.gen(function*() {
    const ops = yield* OpsStore
    const store = yield* ScopeStore
    yield* store.create("sales")
    yield* store.create("ops")
    yield* ops.createGrant({ kind: "person", auth: "email", identity: "dev@example.com", scopes: ["sales", "ops", "hr"], rights: ["read", "propose"] })
    const feeder = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: ["sales"], rights: ["read", "propose"] })
    yield* storeSource(mailSource(), feeder.id)
    const by = { grantId: feeder.id, channel: "api" as const }
    const person = { grantId: "person:9", identity: "p@example.com" }
    yield* propose(mailProposal(), by)
    yield* decide("sales-0001", { decision: "confirm", version: 1 }, person)
    yield* propose(manualProposal("A proposal that a person rejected later on"), by)
    yield* decide("sales-0002", { decision: "reject", version: 1, reason: "wrong" }, person)
  }))
  mcp = await connect(server.url, { authorization: `Bearer ${"m".repeat(40)}` })
  ids.mueller = (await create({ type: "customer", name: "Müller GmbH", aliases: ["MG"], evidence: "source/mail:<order-rule@example.com>" })).id
  ids.project = (await create({ type: "project", name: "Ladenbau Nord", parent_id: ids.mueller })).id
  ids.ops = ok<{ id: string }>(await mcp.call("entity_create", { scope: "ops", type: "department", name: "Lager", parent_id: null })).id
}, 120_000)
afterAll(async () => {
  await mcp.close()
  await server.close()
  cleanup()
})

describe("tools/list", () => {
  it("lists the eight graph tools with the verbatim descriptions and entity types as an enum from config", async () => {
    const tools = (await mcp.client.listTools()).tools
    const byName = new Map(tools.map((t) => [t.name, t]))
    for (const name of ["entity_resolve", "entity_create", "entity_move", "entity_update", "entity_tree", "entity_path", "link_propose", "link_list"]) {
      expect(byName.has(name), name).toBe(true)
    }
    expect(byName.get("entity_path")?.description).toBe(
      "Return the full path of one entity from the top level down, its status and its versions including moves. Use it when only the place of an entity is asked, and to check a candidate before filing something under it."
    )
    const typeSchema = (byName.get("entity_create")?.inputSchema.properties as Record<string, { enum?: Array<string> }>).type
    expect(typeSchema?.enum).toEqual(["customer", "project", "department", "object", "topic"])
  })
})

describe("entity_resolve", () => {
  it("finds by name, alias and misspelling with paths; nothing found points to entity_tree and entity_create", async () => {
    const exact = ok<{ candidates: Array<{ id: string; match: string; path: Array<string> }>; next: Array<{ tool: string }> }>(await mcp.call("entity_resolve", { scope: "sales", q: "Mueller" }))
    expect(exact.candidates[0]).toMatchObject({ id: ids.mueller, match: "exact", path: ["Müller GmbH"] })
    expect(exact.next.map((n) => n.tool)).toEqual(["entity_path", "link_propose"])
    expect(ok<{ candidates: Array<{ match: string }> }>(await mcp.call("entity_resolve", { scope: "sales", q: "MG" })).candidates[0]?.match).toBe("alias")
    expect(ok<{ candidates: Array<{ match: string }> }>(await mcp.call("entity_resolve", { scope: "sales", q: "Ladenbau Nrod" })).candidates[0]?.match).toBe("typo")
    const none = ok<{ candidates: Array<unknown>; next: Array<{ tool: string }> }>(await mcp.call("entity_resolve", { scope: "sales", q: "Zzyzx Corp" }))
    expect(none.candidates).toEqual([])
    expect(none.next.map((n) => n.tool)).toEqual(["entity_tree", "entity_create"])
    expect(ok<{ candidates: Array<unknown> }>(await mcp.call("entity_resolve", { scope: "sales", q: "Müller", type: "project" })).candidates).toEqual([])
    expect(await lastLog("sales")).toEqual({ channel: "mcp", operation: "resolve_entity", outcome: 200 })
  })
  it("refusals: a scope outside the grant and a locked scope in the guidance envelope; bad input is the SDK's error", async () => {
    const outside = refusal(await mcp.call("entity_resolve", { scope: "finance", q: "Müller" }))
    expect(outside.error).toBe("scope-not-allowed")
    expect(outside.next.map((n) => n.tool)).toEqual(["list_scopes"])
    expect(refusal(await mcp.call("entity_resolve", { scope: "hr", q: "Müller" })).error).toBe("scope-locked")
    for (const args of [{ scope: "sales", q: "Müller", type: "planet" }, { scope: "sales", q: "x".repeat(201) }, { scope: "sales", q: "\uFDFA".repeat(12) }, { scope: "sales", q: "  " }]) {
      expect(textOf(await mcp.call("entity_resolve", args))).toContain("Input validation error")
    }
  })
})

describe("entity_create", () => {
  it("creates an unconfirmed entity via mcp with its path, next and the approval_url", async () => {
    const r = ok<Record<string, unknown>>(await mcp.call("entity_create", { scope: "sales", type: "object", name: "Filiale Hamburg", parent_id: ids.project, evidence: "mail of 12 March" }))
    ids.hamburg = String(r.id)
    expect(r).toMatchObject({ created: true, status: "unconfirmed", pending: true, parent_id: ids.project, approval_url: `http://127.0.0.1:8787/approval/structure?scope=sales#${ids.hamburg}` })
    expect((r.path as Array<{ id: string }>).map((p) => p.id)).toEqual([ids.mueller, ids.project, ids.hamburg])
    expect((r.next as Array<{ tool: string }>).map((n) => n.tool)).toEqual(["link_propose", "entity_tree"])
    const v = await server.run(Effect.flatMap(sqlOf("sales"), (sql) => sql<{ channel: string; changed_by: string; created_by: string }>`
      SELECT v.channel, v.changed_by, e.created_by FROM entity_version v JOIN entity e ON e.id = v.id WHERE v.id = ${ids.hamburg}`))
    expect(v).toEqual([{ channel: "mcp", changed_by: "person:1", created_by: "agent" }])
    expect(await lastLog("sales")).toEqual({ channel: "mcp", operation: "create_entity", outcome: 201 })
  })
  it("duplicate-candidate, reason-missing, reference-unknown, scope-mismatch, depth-limit, parent-archived: each refused, nothing stored", async () => {
    const before = await entityRows("sales")
    const dup = refusal(await mcp.call("entity_create", { scope: "sales", type: "customer", name: "Mueller", parent_id: null }))
    expect(dup.error).toBe("duplicate-candidate")
    expect(dup.candidates?.[0]).toMatchObject({ id: ids.mueller, match: "exact" })
    expect(refusal(await mcp.call("entity_create", { scope: "sales", type: "customer", name: "Mueller", parent_id: null, force: true })).error).toBe("reason-missing")
    expect(refusal(await mcp.call("entity_create", { scope: "sales", type: "customer", name: "Neu", parent_id: "sales-e0999" })).error).toBe("reference-unknown")
    expect(refusal(await mcp.call("entity_create", { scope: "sales", type: "customer", name: "Neu", parent_id: ids.ops })).error).toBe("scope-mismatch")
    const deep = refusal(await mcp.call("entity_create", { scope: "sales", type: "topic", name: "Zu tief", parent_id: ids.hamburg }))
    expect(deep).toMatchObject({ error: "depth-limit", limit: 3 })
    expect(textOf(await mcp.call("entity_create", { scope: "sales", type: "planet", name: "Neu", parent_id: null }))).toContain("Input validation error")
    expect(await entityRows("sales")).toEqual(before)
    // forced with a reason, the person said it is different
    expect(ok(await mcp.call("entity_create", { scope: "sales", type: "customer", name: "Mueller", parent_id: null, force: true, reason: "the person says this is Müller Söhne" }))).toMatchObject({ created: true })
    // an archived parent
    const leaf = await create({ type: "topic", name: "Altes Thema" })
    await server.run(archiveEntity(leaf.id, { version: 1 }, { grantId: "person:1", identity: "dev@example.com" }))
    expect(refusal(await mcp.call("entity_create", { scope: "sales", type: "topic", name: "Unterthema", parent_id: leaf.id })).error).toBe("parent-archived")
    ids.archived = leaf.id
  })
})

describe("entity_move and entity_update", () => {
  it("moves with the old and the new path; the same parent moves nothing; a cycle carries both paths", async () => {
    const other = await create({ type: "customer", name: "Schmidt AG" })
    const moved = ok<{ moved: boolean; from_path: Array<{ id: string }>; path: Array<{ id: string }> }>(
      await mcp.call("entity_move", { scope: "sales", id: ids.project, parent_id: other.id, reason: "the project moved to Schmidt" }))
    expect(moved.moved).toBe(true)
    expect(moved.from_path.map((p) => p.id)).toEqual([ids.mueller, ids.project])
    expect(moved.path.map((p) => p.id)).toEqual([other.id, ids.project])
    expect(await lastLog("sales")).toEqual({ channel: "mcp", operation: "move_entity", outcome: 200 })
    expect(ok<{ moved: boolean }>(await mcp.call("entity_move", { scope: "sales", id: ids.project, parent_id: other.id })).moved).toBe(false)
    const before = await entityRows("sales")
    const cycle = refusal(await mcp.call("entity_move", { scope: "sales", id: other.id, parent_id: ids.hamburg }))
    expect(cycle.error).toBe("cycle")
    expect(cycle.paths?.target.map((p) => p.id)).toEqual([other.id, ids.project, ids.hamburg])
    expect(refusal(await mcp.call("entity_move", { scope: "sales", id: "sales-e0999", parent_id: null })).error).toBe("not-found")
    expect(refusal(await mcp.call("entity_move", { scope: "sales", id: ids.archived ?? "", parent_id: null })).error).toBe("entity-archived")
    expect(await entityRows("sales")).toEqual(before)
  })
  it("renames and changes aliases; nothing changed writes nothing; a missing alias and a duplicate name are refused", async () => {
    const u = ok<{ updated: boolean; name: string; aliases: Array<string> }>(
      await mcp.call("entity_update", { scope: "sales", id: ids.hamburg, name: "Filiale Hamburg-Altona", aliases_add: ["FHA"] }))
    expect(u).toMatchObject({ updated: true, name: "Filiale Hamburg-Altona", aliases: ["FHA"] })
    expect(ok<{ updated: boolean }>(await mcp.call("entity_update", { scope: "sales", id: ids.hamburg, name: "Filiale Hamburg-Altona" })).updated).toBe(false)
    const before = await entityRows("sales")
    expect(refusal(await mcp.call("entity_update", { scope: "sales", id: ids.hamburg, aliases_remove: ["nope"] })).error).toBe("validation-failed")
    const bremen = await create({ type: "object", name: "Filiale Bremen", parent_id: ids.project })
    const after = await entityRows("sales")
    expect(refusal(await mcp.call("entity_update", { scope: "sales", id: ids.hamburg, aliases_add: ["Filiale Bremen"] })).error).toBe("duplicate-candidate")
    expect(refusal(await mcp.call("entity_update", { scope: "sales", id: bremen.id, name: "Filiale Hamburg Altona" })).error).toBe("duplicate-candidate")
    expect(after).not.toEqual(before)
    expect(await entityRows("sales")).toEqual(after)
    expect(await lastLog("sales")).toMatchObject({ channel: "mcp", operation: "update_entity" })
  })
})

describe("entity_tree and entity_path", () => {
  it("reads the top level and a node's children with hidden counts; depth over 3 answers depth-limit with its remedy", async () => {
    const top = ok<{ nodes: Array<{ id: string; hidden_children: number }>; next: Array<{ tool: string }> }>(await mcp.call("entity_tree", { scope: "sales" }))
    expect(top.nodes.map((n) => n.id)).toContain(ids.mueller)
    expect(top.nodes.some((n) => n.hidden_children > 0)).toBe(true)
    const two = ok<{ nodes: Array<{ id: string; level: number }>; path: Array<{ id: string }> }>(await mcp.call("entity_tree", { scope: "sales", id: ids.project, depth: 2 }))
    expect(two.nodes.map((n) => n.id)).toContain(ids.hamburg)
    expect(two.nodes.every((n) => n.level === 1)).toBe(true)
    expect(two.path.map((p) => p.id).at(-1)).toBe(ids.project)
    expect(refusal(await mcp.call("entity_tree", { scope: "sales", depth: 4 }))).toMatchObject({ error: "depth-limit", limit: 3 })
    expect(refusal(await mcp.call("entity_tree", { scope: "sales", id: ids.ops })).error).toBe("not-found")
    expect(await lastLog("sales")).toMatchObject({ channel: "mcp", operation: "list_structure" })
  })
  it("returns the full path and every version including the move; another scope's id is the same not-found as an unknown one", async () => {
    const p = ok<{ path: Array<{ id: string }>; versions: Array<{ change: string }>; status: string }>(await mcp.call("entity_path", { scope: "sales", id: ids.project }))
    expect(p.path.map((x) => x.id).at(-1)).toBe(ids.project)
    expect(p.versions.map((v) => v.change)).toEqual(["create", "move"])
    const strip = (r: Refusal) => ({ ...r, request_id: undefined })
    const foreign = refusal(await mcp.call("entity_path", { scope: "sales", id: ids.ops }))
    const unknown = refusal(await mcp.call("entity_path", { scope: "sales", id: "sales-e0999" }))
    expect(strip(foreign)).toEqual(strip(unknown))
    expect(foreign.error).toBe("not-found")
    expect(await lastLog("sales")).toMatchObject({ channel: "mcp", operation: "read_entity", outcome: 404 })
  })
})

describe("link_propose and link_list", () => {
  it("proposes a link once (again: created false), refuses unknown ends, rejected rules and other scopes", async () => {
    const args = { scope: "sales", from_ref: "source/mail:<order-rule@example.com>", to_ref: `entity/${ids.mueller}`, type: "concerns", confidence: 0.8, reason: "the mail names Müller GmbH" }
    const first = ok<{ created: boolean; link: { id: string; status: string } }>(await mcp.call("link_propose", args))
    expect(first).toMatchObject({ created: true, link: { status: "proposed" } })
    expect(await lastLog("sales")).toEqual({ channel: "mcp", operation: "propose_link", outcome: 201 })
    expect(ok<{ created: boolean }>(await mcp.call("link_propose", args)).created).toBe(false)
    const before = await entityRows("sales")
    expect(refusal(await mcp.call("link_propose", { ...args, to_ref: "entity/sales-e0999" })).error).toBe("reference-unknown")
    expect(refusal(await mcp.call("link_propose", { ...args, from_ref: "rule/sales-0002" })).error).toBe("not-found")
    expect(refusal(await mcp.call("link_propose", { ...args, to_ref: `entity/${ids.ops}` })).error).toBe("scope-mismatch")
    expect(refusal(await mcp.call("link_propose", { ...args, to_ref: "entity/finance-e0001" })).error).toBe("scope-not-allowed")
    expect(textOf(await mcp.call("link_propose", { ...args, type: "supersedes" }))).toContain("Input validation error")
    expect(textOf(await mcp.call("link_propose", { ...args, confidence: 1.5 }))).toContain("Input validation error")
    expect(await entityRows("sales")).toEqual(before)
  })
  it("lists the links of an item, and everything about an entity grouped", async () => {
    const page = ok<{ links: Array<{ type: string; status: string }>; total: number }>(await mcp.call("link_list", { scope: "sales", ref: `entity/${ids.mueller}` }))
    expect(page.links.map((l) => [l.type, l.status])).toContainEqual(["concerns", "proposed"])
    const grouped = ok<{ grouped: boolean; groups: Array<unknown> }>(await mcp.call("link_list", { scope: "sales", ref: `entity/${ids.mueller}`, grouped: true }))
    expect(grouped.grouped).toBe(true)
    const rule = ok<{ links: Array<{ type: string }> }>(await mcp.call("link_list", { scope: "sales", ref: "rule/sales-0001" }))
    expect(rule.links.map((l) => l.type)).toContain("sourced_from")
    expect(await lastLog("sales")).toMatchObject({ channel: "mcp", operation: "list_links", outcome: 200 })
    expect(refusal(await mcp.call("link_list", { scope: "sales", ref: "rule/sales-0002" })).error).toBe("not-found")
  })
})
