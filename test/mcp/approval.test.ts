/**
 * The approval modes over MCP with the official SDK client (gaps.md §10):
 * propose_rule with only the required fields (the rest filled), an auto-adopted rule's statement
 * staying inside an untrusted block marked auto-adopted in every answer (propose_rule, read_rule,
 * search_rules, rule_provenance), rule_retract, quote-not-found with the closest passage framed,
 * secret-detected naming field and kind, the instructions' two sentences, and no tool that
 * confirms, rejects, revokes or reviews.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { storeSource } from "../../src/domain/sources.js"
import { INSTRUCTIONS } from "../../src/mcp/instructions.js"
import { approvalOf, internalMail, PLAIN } from "../support/approval.js"
import { tempDir, testConfig } from "../support/env.js"
import { sqlOf } from "../support/run.js"
import { startServer, type TestServer } from "../support/server.js"
import { scanRendered } from "../security/scan.js"
import { connect, type Mcp, structured, textOf } from "./support.js"

const AUTH = { authorization: `Bearer ${"m".repeat(40)}` }
const MAIL_ID = internalMail().source.id

let server: TestServer
let cleanup: () => void
let mcp: Mcp

beforeAll(async () => {
  const t = tempDir()
  cleanup = t.cleanup
  server = await startServer(testConfig(t.dir, approvalOf("autonomous")))
  await server.run(Effect.gen(function*() {
    const ops = yield* OpsStore
    yield* (yield* ScopeStore).create("sales")
    yield* ops.createGrant({ kind: "person", auth: "email", identity: "dev@example.com", scopes: ["sales"], rights: ["read", "propose"] })
    yield* storeSource(internalMail(), "service:9")
  }))
  mcp = await connect(server.url, AUTH)
})
afterAll(async () => {
  await mcp.close()
  await server.close()
  cleanup()
})

/** The blocks of a rendered text labelled `label`. */
const blocks = (text: string, label: string) => scanRendered(text).blocks.filter((b) => b.label === label).map((b) => b.text)

describe("an auto-adopted rule over MCP", () => {
  it("propose_rule with only scope, kind, statement and source: defaults filled, adopted, the statement framed as auto-adopted", async () => {
    const r = await mcp.call("propose_rule", {
      scope: "sales", kind: "rule", statement: PLAIN[1], source: { kind: "mail", id: MAIL_ID, quote: PLAIN[1] }
    })
    expect(r.isError).toBeFalsy()
    expect(structured(r)).toMatchObject({
      ref: "rule/sales-0001@2", status: "confirmed", adoption: { kind: "auto", ruleset: "gn-1" }, marking: "auto-adopted",
      valid: { from: "2026-01-14", until: null }
    })
    const text = textOf(r)
    expect(text).toContain("marking: auto-adopted")
    expect(text).not.toContain("human-confirmed")
    // said_at is the mail's date, valid_from its day in the zone, the rest null or []
    const v = await server.run(Effect.flatMap(sqlOf("sales"), (sql) =>
      sql`SELECT said_at, valid_from, speaker, relations, keywords, supersedes, source_link FROM rule_version WHERE rule_id = 'sales-0001' AND version = 1`))
    expect(v).toEqual([{ said_at: "2026-01-14T09:00:00Z", valid_from: "2026-01-14", speaker: null, relations: "[]", keywords: "[]", supersedes: null, source_link: null }])
  })

  it("read_rule, search_rules and rule_provenance keep the statement in an untrusted block marked auto-adopted, never human-confirmed", async () => {
    const read = textOf(await mcp.call("read_rule", { ref: "rule/sales-0001" }))
    expect(blocks(read, "title, auto-adopted")).toEqual([PLAIN[1]])
    expect(read).not.toContain("human-confirmed")
    expect(scanRendered(read).outside).not.toContain(PLAIN[1])
    expect(read).toMatch(/adoption:\n\s+kind: auto\n\s+ruleset: gn-1/)
    const search = await mcp.call("search_rules", { scopes: ["sales"], text: "Paletten Hof" })
    const compact = structured<{ bundles: Array<{ head: { adoption: unknown } }> }>(search)
    expect(compact.bundles[0]?.head.adoption).toEqual({ kind: "auto", ruleset: "gn-1" })
    expect(blocks(textOf(search), "title, auto-adopted")).toEqual([PLAIN[1]])
    expect(textOf(search)).not.toContain("human-confirmed")
    const prov = await mcp.call("rule_provenance", { ref: "rule/sales-0001" })
    expect(structured(prov)).toMatchObject({ status: "confirmed", adoption: { kind: "auto", ruleset: "gn-1" } })
  })

  it("rule_retract takes it back; a second retract is already-decided; read_rule then shows it superseded", async () => {
    const r = await mcp.call("rule_retract", { ref: "rule/sales-0001@2", reason: "the person says it is outdated" })
    expect(r.isError).toBeFalsy()
    expect(structured(r)).toMatchObject({ retracted: "rule/sales-0001@2", current: "rule/sales-0001@3", status: "superseded", decision: { kind: "retract", origin: "grant", decided_by: "person:1" } })
    const again = await mcp.call("rule_retract", { ref: "rule/sales-0001", reason: "again" })
    expect(again.isError).toBe(true)
    expect(JSON.parse(textOf(again))).toMatchObject({ error: "already-decided", current: "rule/sales-0001@3" })
    const read = await mcp.call("read_rule", { ref: "rule/sales-0001", as_of: "2026-01-14" })
    expect(structured(read)).toMatchObject({ head: { status: "superseded", adoption: { kind: "auto", ruleset: "gn-1" } } })
    const log = await server.run(Effect.flatMap(sqlOf("sales"), (sql) => sql<{ channel: string; outcome: number }>`SELECT channel, outcome FROM search_log WHERE operation = 'retract' ORDER BY at, rowid`))
    expect(log).toEqual([{ channel: "mcp", outcome: 200 }, { channel: "mcp", outcome: 409 }])
  })
})

describe("refusals an agent can act on", () => {
  it("quote-not-found shows the closest passage and where the quote differs, framed as foreign text", async () => {
    const r = await mcp.call("propose_rule", {
      scope: "sales", kind: "rule", statement: PLAIN[2], source: { kind: "mail", id: MAIL_ID, quote: "Sonderfarben werden nur in Halle 4 lackiert." }
    })
    expect(r.isError).toBe(true)
    expect(structured(r)).toMatchObject({ error: "quote-not-found", closest: { differs_at: 33 } })
    const text = textOf(r)
    expect(blocks(text, "passage")).toEqual(["sonderfarben werden nur in halle 3 lackiert"])
    expect(scanRendered(text).outside).not.toContain("sonderfarben")
    expect(text).toContain("differs_at: 33")
  })

  it("secret-detected names the field and the kind, never the secret", async () => {
    const r = await mcp.call("propose_rule", {
      scope: "sales", kind: "rule", statement: "Der Zugang zum Lager-PC: Passwort: Lager2026!", source: { kind: "mail", id: MAIL_ID, quote: PLAIN[3] }
    })
    expect(r.isError).toBe(true)
    expect(structured(r)).toMatchObject({ error: "secret-detected", findings: [{ field: "statement", kind: "password" }] })
    expect(JSON.stringify(r)).not.toContain("Lager2026")
  })

  it("a missing required field is the SDK's input validation error naming it", async () => {
    const r = await mcp.call("propose_rule", { scope: "sales", kind: "rule", source: { kind: "mail", id: MAIL_ID, quote: PLAIN[3] } })
    expect(r.isError).toBe(true)
    expect(textOf(r)).toContain("statement")
  })
})

describe("what agents are told and what they can do", () => {
  it("the instructions end with the two approval-mode sentences; rule_retract is described", async () => {
    expect(mcp.client.getInstructions()).toBe(INSTRUCTIONS)
    expect(INSTRUCTIONS).toContain("A rule marked auto-adopted was adopted by the policy without a person: say \"auto-adopted\" when you cite it.")
    expect(INSTRUCTIONS.endsWith("When the person asks, you may retract an auto-adopted rule with rule_retract; you never confirm a rule.")).toBe(true)
    const tools = (await mcp.client.listTools()).tools
    expect(tools.find((t) => t.name === "rule_retract")?.description).toContain("only a person can revoke it on the approval page")
    const propose = tools.find((t) => t.name === "propose_rule")
    expect(propose?.inputSchema.required?.slice().sort()).toEqual(["kind", "scope", "source", "statement"])
  })

  it("no tool confirms, rejects, revokes or reviews: after these calls no decision of a grant but the retract exists", async () => {
    const names = (await mcp.client.listTools()).tools.map((t) => t.name)
    expect(names.filter((n) => /confirm|reject|revoke|review|decide|approve|archive|revert/.test(n))).toEqual([])
    const decisions = await server.run(Effect.flatMap(sqlOf("sales"), (sql) => sql<{ kind: string; origin: string }>`SELECT kind, origin FROM decision ORDER BY id`))
    expect(decisions).toEqual([{ kind: "confirm", origin: "auto" }, { kind: "retract", origin: "grant" }])
  })
})
