/**
 * MCP answers after a redaction, with the official SDK client (gaps.md §12): structuredContent
 * carries `redacted: true` on the touched records; the model text writes `redacted: true` as a
 * server word and frames a statement holding "[redacted]" like any foreign text — a person-confirmed
 * statement stops being written as human-confirmed once a redaction touched it. propose_rule with a
 * quote holding the marker is refused quote-not-found, with the server's own sentence.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { decide } from "../../src/decision/decide.js"
import { propose } from "../../src/domain/proposals.js"
import { storeSource } from "../../src/domain/sources.js"
import { tempDir, testConfig } from "../support/env.js"
import { mailProposal, mailSource, manualProposal } from "../support/fixtures.js"
import { redactRows } from "../support/redaction.js"
import { sqlOf } from "../support/run.js"
import { startServer, type TestServer } from "../support/server.js"
import { scanRendered } from "../security/scan.js"
import { connect, type Mcp, structured, textOf } from "./support.js"

const AUTH = { authorization: `Bearer ${"m".repeat(40)}` }
const MAIL_ID = "mail:<order-rule@example.com>"
const STATEMENT = "Ask the supplier for the delivery time before ordering black hook rails"

let server: TestServer
let cleanup: () => void
let mcp: Mcp

type Json = Record<string, unknown>

beforeAll(async () => {
  const t = tempDir()
  cleanup = t.cleanup
  server = await startServer(testConfig(t.dir))
  await server.run(Effect.gen(function*() {
    const ops = yield* OpsStore
    yield* (yield* ScopeStore).create("sales")
    yield* ops.createGrant({ kind: "person", auth: "email", identity: "dev@example.com", scopes: ["sales"], rights: ["read", "propose"] })
    yield* storeSource(mailSource(), "service:9")
    const by = { grantId: "service:9", channel: "api" as const }
    const person = { grantId: "person:9", identity: "p@example.com" }
    yield* propose(mailProposal(), by)
    yield* decide("sales-0001", { decision: "confirm", version: 1 }, person)
    yield* propose(manualProposal("The warehouse counts the black hook rails every Friday", { keywords: ["Hakenleiste"], relations: [] }), by)
    yield* decide("sales-0002", { decision: "confirm", version: 1 }, person)
  }))
  mcp = await connect(server.url, AUTH)
})
afterAll(async () => {
  await mcp.close()
  await server.close()
  cleanup()
})

const headOf = (r: Awaited<ReturnType<Mcp["call"]>>) => structured<{ head: Json }>(r).head

describe("MCP answers after a redaction", () => {
  it("before: the person-confirmed statement is written as is and nothing says redacted", async () => {
    const r = await mcp.call("read_rule", { ref: "rule/sales-0001" })
    expect(r.isError, textOf(r)).toBeFalsy()
    expect(headOf(r).redacted).toBeUndefined()
    expect(textOf(r)).toContain(`title (human-confirmed): ${STATEMENT}`)
    expect(textOf(r)).not.toContain("redacted")
  })

  it("after: read_rule, rule_provenance and search_rules mark the record; the statement is framed, redacted: true is a server word", async () => {
    await server.run(Effect.flatMap(sqlOf("sales"), (sql) => redactRows(sql, "sales", "supplier", [
      { table: "rule_version", key: { rule_id: "sales-0001", version: 1 }, columns: ["statement"] },
      { table: "rule_version", key: { rule_id: "sales-0001", version: 2 }, columns: ["statement"] }
    ])))
    await server.run(Effect.flatMap(sqlOf("sales"), (sql) => redactRows(sql, "sales", "Lieferanten", [
      { table: "source", key: { id: MAIL_ID }, columns: ["excerpt"] },
      { table: "rule_version", key: { rule_id: "sales-0001", version: 1 }, columns: ["quote"] },
      { table: "rule_version", key: { rule_id: "sales-0001", version: 2 }, columns: ["quote"] }
    ])))

    const read = await mcp.call("read_rule", { ref: "rule/sales-0001" })
    expect(read.isError, textOf(read)).toBeFalsy()
    const head = headOf(read)
    expect([head.redacted, head.status, head.title]).toEqual([true, "confirmed", "Ask the [redacted] for the delivery time before ordering black hook rails"])
    const text = textOf(read)
    expect(text).not.toContain("(human-confirmed)")
    const scanned = scanRendered(text)
    // the marker appears only inside untrusted blocks; the flag outside them, as the server's word
    expect(scanned.outside).not.toContain("[redacted]")
    expect(scanned.outside).toContain("redacted: true")
    expect(scanned.blocks.find((b) => b.text.startsWith("Ask the [redacted]"))?.label).toBe("title, redacted")
    // the line of a bundle whose head was touched is framed too
    expect(scanned.blocks.some((b) => b.label === "line")).toBe(true)

    const prov = await mcp.call("rule_provenance", { ref: "rule/sales-0001" })
    const p = structured<Json & { source: Json }>(prov)
    expect([p.redacted, p.source.redacted]).toEqual([true, true])
    expect(scanRendered(textOf(prov)).outside).not.toContain("[redacted]")

    const search = await mcp.call("search_rules", { scopes: ["sales"], text: "Lieferzeit Hakenleiste" })
    expect(search.isError, textOf(search)).toBeFalsy()
    const bundles = structured<{ bundles: Array<{ head: Json }> }>(search).bundles
    expect(bundles.map((b) => [b.head.ref, b.head.redacted ?? null])).toEqual([["rule/sales-0001@2", true], ["rule/sales-0002@2", null]])
    const s = scanRendered(textOf(search))
    expect(s.outside).not.toContain("[redacted]")
    // the untouched rule's statement is still written as is
    expect(textOf(search)).toContain("title (human-confirmed): The warehouse counts the black hook rails every Friday")
  })

  it("propose_rule with a quote holding the marker is refused quote-not-found; nothing is stored", async () => {
    const before = await server.run(Effect.flatMap(sqlOf("sales"), (sql) => sql<{ n: number }>`SELECT count(*) AS n FROM rule`))
    const r = await mcp.call("propose_rule", {
      scope: "sales", kind: "rule", statement: "Ask before every order of black hook rails",
      source: { kind: "mail", id: MAIL_ID, quote: "Hakenleisten (RAL 9005) fragen wir beim [redacted] die aktuelle Lieferzeit an" }
    })
    expect(r.isError).toBe(true)
    expect(structured(r)).toMatchObject({ error: "quote-not-found" })
    const text = textOf(r)
    expect(text).toContain("quote-not-found")
    const across = await mcp.call("propose_rule", {
      scope: "sales", kind: "rule", statement: "Ask before every order of black hook rails",
      source: { kind: "mail", id: MAIL_ID, quote: "Hakenleisten (RAL 9005) fragen wir beim redacted die aktuelle Lieferzeit an" }
    })
    expect([across.isError, structured(across).error]).toEqual([true, "quote-not-found"])
    const after = await server.run(Effect.flatMap(sqlOf("sales"), (sql) => sql<{ n: number }>`SELECT count(*) AS n FROM rule`))
    expect(after).toEqual(before)
  })
})
