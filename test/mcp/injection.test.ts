/**
 * The injection corpus against every MCP tool result (architecture.md §9, invariant 11): 58
 * payloads — close-the-block attempts, fake boundaries, fake preambles, zero-width and look-alike
 * characters, Markdown/HTML, "ignore previous instructions" in English and German — placed in
 * quotes, mail subjects and senders, mail text, speaker names, attachment names and texts,
 * keywords, relation names, proposal statements, source ids, search text and terms, and prompt
 * arguments. Every rendered text is scanned: none of a payload appears outside an untrusted
 * block, every block is closed by its own boundary, and expected errors carry codes only.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { decide } from "../../src/decision/decide.js"
import type { ProposalRequest } from "../../src/domain/proposal-schemas.js"
import { propose } from "../../src/domain/proposals.js"
import { storeSource } from "../../src/domain/sources.js"
import { tempDir, testConfig } from "../support/env.js"
import { startServer, type TestServer } from "../support/server.js"
import { MARKERS, PAYLOADS } from "../security/corpus.js"
import { scanRendered } from "../security/scan.js"
import { connect, type Mcp, structured, textOf } from "./support.js"

let server: TestServer
let cleanup: () => void
let mcp: Mcp
const seen: Array<CallToolResult> = []
const prompts: Array<string> = []
const ruleIds: Array<string> = []

const mailId = (i: number) => `mail:<${PAYLOADS[i]?.marker ?? "x"}.${i}@example.com>`
// the quote starts with 20 plain characters: SQLite length() stops at a NUL (the CHECK on rule_version.quote)
const quoteOf = (i: number) => `Regel zu den Hakenleisten: ${PAYLOADS[i]?.text ?? ""} for the black hook rails`
const cut = (s: string, n: number) => [...s].slice(0, n).join("")

const proposal = (i: number, confirmedLater: boolean): ProposalRequest => {
  const t = PAYLOADS[i]?.text ?? ""
  return {
    scope: "sales",
    kind: i % 2 === 0 ? "rule" : "note",
    // a statement a person will confirm is the person's; every other statement carries the payload
    statement: confirmedLater ? `Rule ${i}: ask the supplier about the black hook rails` : cut(`Rule ${i} on Hakenleiste: ${t}`, 500),
    source: { kind: "mail", id: mailId(i), quote: quoteOf(i), link: null },
    said_at: "2026-03-12T09:15:00Z",
    speaker: cut(t, 200),
    relations: [{ kind: "customer", name: "Müller GmbH", ref: null }, { kind: "product", name: cut(t, 200), ref: cut(t, 200) }],
    keywords: ["Hakenleiste", cut(t, 100)],
    valid_from: "2026-03-12",
    supersedes: null
  }
}

beforeAll(async () => {
  const t = tempDir()
  cleanup = t.cleanup
  server = await startServer(testConfig(t.dir, { limits: { requests_per_minute: 100_000 } }))
  await server.run(Effect.gen(function*() {
    const ops = yield* OpsStore
    yield* Effect.flatMap(ScopeStore, (s) => s.create("sales"))
    yield* ops.createGrant({ kind: "person", auth: "email", identity: "dev@example.com", scopes: ["sales"], rights: ["read", "propose"] })
    const feeder = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: ["sales"], rights: ["read", "propose"] })
    for (const [i, p] of PAYLOADS.entries()) {
      yield* storeSource({
        scope: "sales",
        source: {
          kind: "mail", id: mailId(i), title: cut(p.text, 500), occurred_at: `2026-03-${String(1 + (i % 28)).padStart(2, "0")}T08:00:00Z`,
          sender: cut(p.text, 500), thread: i === 0 ? null : mailId(0), link: "https://mail.example.com/m/1"
        },
        text: `Hallo,\n${quoteOf(i)}\nViele Grüße`,
        attachments: [
          { filename: cut(p.text, 500), media_type: "application/pdf", size: 10, external: null, text: p.text, text_origin: "ocr" },
          { filename: `${p.marker}.jpg`, media_type: "image/jpeg", size: null, external: cut(p.text, 500), text: null, text_origin: null }
        ]
      }, feeder.id)
    }
    yield* storeSource({
      scope: "sales",
      source: { kind: "jamie", id: "jamie:ZQX-meeting", title: cut(PAYLOADS[1]?.text ?? "", 500), occurred_at: "2026-03-12T10:00:00Z", sender: null, link: "https://jamie.example.com/m/7" },
      segments: PAYLOADS.map((p, i) => ({ start_s: i * 10, speaker: cut(p.text, 200), text: `${p.text} about the black hook rails` })),
      attachments: []
    }, feeder.id)
    const by = { grantId: feeder.id, channel: "api" as const }
    const person = { grantId: "person:9", identity: "p@example.com" }
    // every third proposal is confirmed by a person; the rest stay proposed
    for (let i = 0; i < PAYLOADS.length; i += 2) {
      const created = yield* propose(proposal(i, i % 3 === 0), by)
      const id = created.ref.replace(/^rule\//, "").replace(/@\d+$/, "")
      ruleIds.push(id)
      if (i % 3 === 0) yield* decide(id, { decision: "confirm", version: 1 }, person)
    }
    // a jamie rule quoting a segment whose speaker and text carry payloads
    const jamie = yield* propose({
      ...proposal(3, false),
      source: { kind: "jamie", id: "jamie:ZQX-meeting", quote: `${PAYLOADS[3]?.text ?? ""} about the black hook rails`, timestamp_s: 30, link: "https://jamie.example.com/m/7" }
    }, by)
    ruleIds.push(jamie.ref.replace(/^rule\//, "").replace(/@\d+$/, ""))
  }))
  mcp = await connect(server.url, { authorization: `Bearer ${"m".repeat(40)}` }, seen)
}, 120_000)
afterAll(async () => {
  await mcp.close()
  await server.close()
  cleanup()
})

describe("the injection corpus", () => {
  it("has at least 50 payloads", () => {
    expect(PAYLOADS.length).toBeGreaterThanOrEqual(50)
  })

  it("calls every tool with the payloads in every foreign field", async () => {
    // propose_rule over MCP: the odd payloads (success answers) and a refused quote (error answer)
    for (let i = 1; i < PAYLOADS.length; i += 2) {
      const r = await mcp.call("propose_rule", proposal(i, false))
      if ((PAYLOADS[i]?.text ?? "").includes("\u0000")) {
        // rule text never holds a NUL (docs/decisions.md, §6 HTTP API): refused by the tool's schema (the contract's), nothing stored
        expect(r.isError).toBe(true)
        expect(textOf(r)).toContain("must not contain a NUL character")
        continue
      }
      expect(r.isError, `${i} ${textOf(r)}`).toBeFalsy()
      ruleIds.push(structured<{ ref: string }>(r).ref.replace(/^rule\//, "").replace(/@\d+$/, ""))
    }
    const refused = await mcp.call("propose_rule", { ...proposal(5, false), source: { kind: "mail", id: mailId(5), quote: PAYLOADS[6]?.text ?? "", link: null } })
    expect(refused.isError).toBe(true)
    // search: compact and full, the payloads as text and as terms
    for (const detail of ["compact", "full"] as const) {
      const r = await mcp.call("search_rules", { scopes: ["sales"], text: "Hakenleiste Müller", include_proposals: true, limit: 50, detail })
      const b = structured<{ bundles: Array<unknown>; truncated?: { omitted: number } | null }>(r)
      expect(b.bundles.length + (b.truncated?.omitted ?? 0)).toBeGreaterThan(10)
      expect(textOf(r).length).toBeLessThanOrEqual(detail === "compact" ? 30_000 : Infinity)
    }
    for (const p of PAYLOADS) {
      await mcp.call("search_rules", { scopes: ["sales"], text: p.text, include_proposals: true, detail: "full", limit: 3 })
    }
    await mcp.call("search_rules", { scopes: ["sales"], terms: PAYLOADS.slice(0, 20).map((p) => cut(p.text, 100)), include_proposals: true, limit: 10 })
    await mcp.call("search_rules", { scopes: ["sales"], terms: PAYLOADS.slice(20, 40).map((p) => cut(p.text, 100)), include_proposals: true, detail: "full", limit: 10 })
    for (const id of ruleIds) {
      expect((await mcp.call("read_rule", { ref: `rule/${id}`, include_proposals: true })).isError).toBeFalsy()
      expect((await mcp.call("rule_provenance", { ref: `rule/${id}` })).isError).toBeFalsy()
    }
    // the graph: entity names, aliases, evidence and reasons carry the payloads
    const root = await mcp.call("entity_create", { scope: "sales", type: "organisation", name: "Ladenbau Nord", parent_id: null })
    const rootId = structured<{ id: string }>(root).id
    const entities: Array<string> = []
    for (const [i, p] of PAYLOADS.entries()) {
      const r = await mcp.call("entity_create", {
        scope: "sales", type: "customer", name: cut(p.text, 200), parent_id: i % 2 === 0 ? rootId : null,
        aliases: [cut(`${p.marker} alias ${p.text}`, 200)], evidence: cut(p.text, 1000), force: true, reason: cut(p.text, 1000)
      })
      expect(r.isError, `${i} ${textOf(r)}`).toBeFalsy()
      entities.push(structured<{ id: string }>(r).id)
    }
    for (const [i, p] of PAYLOADS.entries()) {
      const id = entities[i] ?? ""
      await mcp.call("entity_resolve", { scope: "sales", q: cut(p.text, 200) })
      await mcp.call("entity_path", { scope: "sales", id })
      await mcp.call("entity_update", { scope: "sales", id, aliases_add: [cut(`${p.marker} second ${p.text}`, 200)], force: true, reason: cut(p.text, 1000) })
      const link = await mcp.call("link_propose", {
        scope: "sales", from_ref: `source/${mailId(i)}`, to_ref: `entity/${id}`, type: "concerns", confidence: 0.7, reason: cut(p.text, 1000), evidence: cut(p.text, 1000)
      })
      expect(link.isError, textOf(link)).toBeFalsy()
      await mcp.call("link_list", { scope: "sales", ref: `entity/${id}` })
      await mcp.call("link_list", { scope: "sales", ref: `source/${mailId(i)}` })
    }
    await mcp.call("entity_move", { scope: "sales", id: entities[1] ?? "", parent_id: rootId, reason: PAYLOADS[1]?.text ?? "" })
    await mcp.call("entity_tree", { scope: "sales", id: rootId, depth: 2 })
    await mcp.call("entity_tree", { scope: "sales" })
    await mcp.call("link_list", { scope: "sales", ref: `entity/${rootId}`, grouped: true })
    // refusals whose candidates and paths carry the payloads
    expect((await mcp.call("entity_create", { scope: "sales", type: "customer", name: cut(PAYLOADS[0]?.text ?? "", 200), parent_id: rootId })).isError).toBe(true)
    expect((await mcp.call("entity_move", { scope: "sales", id: rootId, parent_id: entities[0] ?? "" })).isError).toBe(true)
    for (const detail of ["compact", "full"] as const) {
      await mcp.call("search_rules", { scopes: ["sales"], text: "Hakenleiste", include_proposals: true, limit: 20, detail })
    }
    const s = structured<{ search_id: string }>(await mcp.call("search_rules", { scopes: ["sales"], text: "Hakenleiste" }))
    await mcp.call("search_feedback", { search_id: s.search_id, bundles: [], missing: [`rule/${ruleIds[0] ?? ""}`] })
    await mcp.call("list_scopes", {})
    // prompts with every foreign argument carrying a payload
    for (const p of PAYLOADS) {
      const name = cut(p.text, 200)
      const long = cut(p.text, 1000)
      const get = async (prompt: string, args: Record<string, string>) => {
        const r = await mcp.client.getPrompt({ name: prompt, arguments: args })
        const c = r.messages[0]?.content
        prompts.push(c?.type === "text" ? c.text : "")
      }
      await get("create_level", { scope: "sales", name, type: "customer", parent: name, evidence: long })
      await get("file_incoming_mail", { scope: "sales", source: mailId(0), subject: long, sender: long, hint: long })
      await get("assign_document", { scope: "sales", ref: `attachment/${mailId(0)}#1`, description: cut(p.text, 2000), hint: long })
      await get("restructure", { scope: "sales", entity: name, new_parent: name, reason: long })
      await get("where_does_this_belong", { scope: "sales", description: cut(p.text, 2000), hint: long })
    }
  }, 300_000)

  it("no payload appears outside an untrusted block in any rendered result or prompt", () => {
    expect(seen.length).toBeGreaterThan(500)
    expect(seen.filter((r) => r.isError === true).length).toBeGreaterThanOrEqual(3)
    let blocks = 0
    for (const r of seen) {
      const text = textOf(r)
      if (r.isError === true && text.startsWith("{")) {
        // an expected error: plain JSON with codes and request ids only
        expect(Object.keys(JSON.parse(text) as object).every((k) => ["error", "current", "request_id"].includes(k))).toBe(true)
        for (const m of MARKERS) expect(text).not.toContain(m)
        continue
      }
      const s = scanRendered(text)
      blocks += s.blocks.length
      for (const m of MARKERS) expect(s.outside, `${m} outside a block in:\n${text.slice(0, 2000)}`).not.toContain(m)
    }
    expect(blocks).toBeGreaterThan(1000)
    expect(prompts.length).toBe(PAYLOADS.length * 5)
    for (const text of prompts) {
      const s = scanRendered(text, "last")
      for (const m of MARKERS) expect(s.outside).not.toContain(m)
      expect(s.blocks.length).toBeGreaterThanOrEqual(2)
    }
  })

  it("structured content marks foreign objects untrusted and carries the injection signals of each record", () => {
    const all = seen.filter((r) => r.isError !== true).map((r) => JSON.stringify(r.structuredContent))
    expect(all.every((j) => !/"quote":"ZQX/.test(j) || j.includes("\"untrusted\":true"))).toBe(true)
    const signals = new Set(all.flatMap((j) => [...j.matchAll(/"signals":\[([^\]]*)\]/g)].flatMap((m) => (m[1] ?? "").split(",").filter((x) => x !== "").map((x) => JSON.parse(x) as string))))
    expect([...signals].sort()).toEqual(["action-request", "boundary-forgery", "hidden-characters", "instruction-override", "markup", "role-change", "role-marker"])
  })
})
