/**
 * POST /v1/proposals and POST /v1/sources over real HTTP: what a feeder sends and what it is told.
 * A repeat is only a repeat when every field sent is the same (a changed supersedes is checked
 * and refused, nothing stored); the mandatory exceptions as codes beside the reasons; the
 * request's optional fields (absent or null) filled with the server's defaults, the same shape as
 * propose_rule's; the closest passage of a meeting within one segment; a source-conflict naming
 * the fields that differ (for the grant's own source only, never the stored text).
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { normalizeQuote, quoteFoundIn } from "../../src/domain/quote-check.js"
import { addedRows, allRows, approvalOf, EXCEPTION_LINES, internalMail, outsideMail, PLAIN, quoting } from "../support/approval.js"
import { tempDir, testConfig } from "../support/env.js"
import { jamieSource, mailSource } from "../support/fixtures.js"
import { sqlOf } from "../support/run.js"
import { startServer, type TestServer } from "../support/server.js"

let server: TestServer
let cleanup: () => void
const tokens = { feeder: "", other: "", reader: "" }
const JAMIE = jamieSource()
const JAMIE_ID = JAMIE.source.id

const call = async (method: string, path: string, body?: unknown, token = tokens.feeder) => {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` }
  if (body !== undefined) headers["content-type"] = "application/json"
  const res = await fetch(`${server.url}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
  const text = await res.text()
  return { status: res.status, text, json: JSON.parse(text) as Record<string, unknown> }
}
const rows = () => server.run(Effect.flatMap(sqlOf("sales"), allRows))
const version1 = (id: string) =>
  server.run(Effect.flatMap(sqlOf("sales"), (sql) =>
    sql<Record<string, unknown>>`SELECT said_at, valid_from, speaker, relations, keywords, supersedes, source_link, timestamp_s FROM rule_version WHERE rule_id = ${id} AND version = 1`))
const idOf = (ref: unknown) => String(ref).replace(/^rule\/|@\d+$/g, "")

beforeAll(async () => {
  const t = tempDir()
  cleanup = t.cleanup
  server = await startServer(testConfig(t.dir, { ...approvalOf("classified", 1000), limits: { requests_per_minute: 100_000 } }))
  await server.run(Effect.gen(function*() {
    const ops = yield* OpsStore
    yield* (yield* ScopeStore).create("sales")
    const feeder = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: ["sales"], rights: ["read", "propose"], label: "feeder" })
    const other = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: ["sales"], rights: ["read", "propose"], label: "other" })
    const reader = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: ["sales"], rights: ["read"], label: "reader" })
    tokens.feeder = "token" in feeder ? feeder.token : ""
    tokens.other = "token" in other ? other.token : ""
    tokens.reader = "token" in reader ? reader.token : ""
  }))
  for (const source of [internalMail(), outsideMail(), JAMIE]) expect((await call("POST", "/v1/sources", source)).status).toBe(201)
}, 60_000)
afterAll(async () => {
  await server.close()
  cleanup()
})

describe("a repeat is a repeat only when every field sent is the same", () => {
  it("the same proposal with an unknown supersedes is refused with reference-unknown; nothing but its search_log row is stored", async () => {
    const first = await call("POST", "/v1/proposals", quoting(PLAIN[0]))
    expect(first.status).toBe(201)
    const before = await rows()
    const r = await call("POST", "/v1/proposals", quoting(PLAIN[0], { supersedes: "sales-9999" }))
    expect([r.status, r.json.error]).toEqual([422, "reference-unknown"])
    expect(r.json.message).toContain("sales-9999")
    const added = addedRows(before, await rows())
    expect(Object.keys(added)).toEqual(["search_log"])
    expect(added.search_log?.map((l) => JSON.parse(l) as { operation: string; outcome: number }).map((l) => [l.operation, l.outcome])).toEqual([["propose", 422]])
  })

  it("a field that differs (keywords, speaker, kind) makes a new proposal; the identical request answers the existing rule", async () => {
    const first = await call("POST", "/v1/proposals", quoting(PLAIN[1]))
    expect(first.status).toBe(201)
    const same = await call("POST", "/v1/proposals", quoting(PLAIN[1]))
    expect([same.status, same.json.ref]).toEqual([200, first.json.ref])
    for (const over of [{ keywords: ["Paletten"] }, { speaker: "Maria" }, { kind: "note" as const }, { valid_from: "2026-02-01" }]) {
      const r = await call("POST", "/v1/proposals", quoting(PLAIN[1], over))
      expect(r.status, JSON.stringify(over)).toBe(201)
      expect(idOf(r.json.ref), JSON.stringify(over)).not.toBe(idOf(first.json.ref))
    }
  })

  it("a field left out is not compared: the repeat without said_at and valid_from answers the rule that sent them", async () => {
    const first = await call("POST", "/v1/proposals", quoting(PLAIN[2]))
    const { said_at: _s, valid_from: _v, ...rest } = quoting(PLAIN[2])
    const again = await call("POST", "/v1/proposals", rest)
    expect([again.status, again.json.ref]).toEqual([200, first.json.ref])
  })
})

describe("the mandatory exceptions as codes", () => {
  it("ProposalCreated carries exceptions: [] when none applies, the codes when some do, the same in a repeat's answer", async () => {
    const plain = await call("POST", "/v1/proposals", quoting(PLAIN[3]))
    expect([plain.status, plain.json.status, plain.json.exceptions]).toEqual([201, "confirmed", []])
    const doubt = await call("POST", "/v1/proposals", quoting(EXCEPTION_LINES.doubt))
    expect([doubt.json.status, doubt.json.exceptions]).toEqual(["proposed", ["doubt"]])
    expect((doubt.json.reasons as Array<string>).some((r) => r.startsWith("Doubt:"))).toBe(true)
    const line = "Kartons werden ab Montag nur noch gefaltet angeliefert."
    const outside = quoting(line, { source: { kind: "mail", id: outsideMail().source.id, quote: line, link: null }, said_at: "2026-01-14T10:00:00Z" })
    const external = await call("POST", "/v1/proposals", outside)
    expect([external.status, external.json.exceptions]).toEqual([201, ["external-sensitive"]])
    const repeat = await call("POST", "/v1/proposals", outside)
    expect([repeat.status, repeat.json.exceptions]).toEqual([200, ["external-sensitive"]])
    const manual = await call("POST", "/v1/proposals", quoting("Vielleicht bezahlen wir Rechnungen künftig per Lastschrift.", { source: { kind: "manual", quote: "said in the hallway", link: null } }))
    expect(manual.json.exceptions).toEqual(["payment", "unchecked-quote", "doubt"])
  })

  it("the rule answers carry them too: GET /v1/proposals, GET /v1/rules and the versions", async () => {
    const doubt = await call("POST", "/v1/proposals", quoting(EXCEPTION_LINES.secret))
    const id = idOf(doubt.json.ref)
    const open = await call("GET", "/v1/proposals?scope=sales&limit=200", undefined, tokens.reader)
    const proposals = open.json.proposals as Array<Record<string, unknown>>
    expect(proposals.find((p) => idOf(p.ref) === id)?.exceptions).toEqual(["secret"])
    expect(proposals.every((p) => Array.isArray(p.exceptions))).toBe(true)
    const list = await call("GET", "/v1/rules?scope=sales&limit=200", undefined, tokens.reader)
    const rules = list.json.rules as Array<Record<string, unknown>>
    expect(rules.find((r) => r.rule_id === id)?.exceptions).toEqual(["secret"])
    expect(rules.find((r) => r.status === "confirmed")?.exceptions).toEqual([])
    const versions = await call("GET", `/v1/rules/${id}/versions`, undefined, tokens.reader)
    expect(versions.json.exceptions).toEqual(["secret"])
  })
})

describe("one request shape for both doors: optional fields absent or null take the server's defaults", () => {
  const QUOTE = "From now on we always ask the supplier for the delivery time"

  it("a jamie proposal with link null, said_at null and valid_from null: the meeting's link, date and day", async () => {
    const r = await call("POST", "/v1/proposals", {
      scope: "sales", kind: "rule", statement: "Ask the supplier for the delivery time before ordering hook rails",
      source: { kind: "jamie", id: JAMIE_ID, quote: QUOTE, timestamp_s: 100, link: null }, said_at: null, valid_from: null
    })
    expect(r.status, r.text).toBe(201)
    expect(await version1(idOf(r.json.ref))).toEqual([{
      said_at: "2026-03-12T10:00:00Z", valid_from: "2026-03-12", speaker: null, relations: "[]", keywords: "[]", supersedes: null,
      source_link: "https://jamie.example.com/m/7", timestamp_s: 100
    }])
  })

  it("a jamie proposal without link and the other optional fields; a mail proposal with only the required fields", async () => {
    const jamie = await call("POST", "/v1/proposals", {
      scope: "sales", kind: "note", statement: "Delivery times are asked before ordering black hook rails",
      source: { kind: "jamie", id: JAMIE_ID, quote: QUOTE, timestamp_s: 100 }
    })
    expect(jamie.status, jamie.text).toBe(201)
    expect((await version1(idOf(jamie.json.ref)))[0]).toMatchObject({ source_link: "https://jamie.example.com/m/7", said_at: "2026-03-12T10:00:00Z" })
    const mail = await call("POST", "/v1/proposals", { scope: "sales", kind: "rule", statement: PLAIN[4], source: { kind: "mail", id: internalMail().source.id, quote: PLAIN[4] } })
    expect(mail.status, mail.text).toBe(201)
    expect((await version1(idOf(mail.json.ref)))[0]).toMatchObject({ said_at: "2026-01-14T09:00:00Z", valid_from: "2026-01-14", source_link: null })
  })

  it("a missing required field or an unknown key is still 400 validation-failed naming it, nothing stored", async () => {
    const before = await rows()
    const r = await call("POST", "/v1/proposals", { scope: "sales", kind: "rule", source: { kind: "mail", id: internalMail().source.id, quote: PLAIN[5] } })
    expect([r.status, r.json.error]).toEqual([400, "validation-failed"])
    expect(JSON.stringify(r.json.issues)).toContain("statement")
    const extra = await call("POST", "/v1/proposals", { ...quoting(PLAIN[5]), colour: "red" })
    expect([extra.status, extra.json.error]).toEqual([400, "validation-failed"])
    expect(addedRows(before, await rows())).toEqual({})
  })

  it("/openapi.json documents the one shape: only scope, kind, statement and source required, the defaults described", async () => {
    const doc = await (await fetch(`${server.url}/openapi.json`)).json() as {
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: Record<string, unknown> }> } }>>
      components?: { schemas?: Record<string, Record<string, unknown>> }
    }
    let schema = doc.paths["/v1/proposals"]?.post?.requestBody?.content["application/json"]?.schema ?? {}
    if (typeof schema.$ref === "string") schema = doc.components?.schemas?.[schema.$ref.split("/").pop() ?? ""] ?? {}
    expect([...(schema.required as Array<string>)].sort()).toEqual(["kind", "scope", "source", "statement"])
    expect(JSON.stringify(schema.properties)).toContain("the date of the stored mail or meeting")
  })
})

describe("the closest passage of a meeting stays within one segment", () => {
  const segments = (JAMIE.segments ?? []).map((s) => normalizeQuote(s.text))

  it("a quote that ends in words the meeting never said: the passage is the segment's, not the next one's", async () => {
    for (const quote of ["we always ask the supplier for the delivery time of all pallets", "we always ask the supplier for the delivery time before ordering red hook rails"]) {
      const r = await call("POST", "/v1/proposals", {
        scope: "sales", kind: "rule", statement: "Ask the supplier for the delivery time first",
        source: { kind: "jamie", id: JAMIE_ID, quote, timestamp_s: 100, link: "https://jamie.example.com/m/7" },
        said_at: "2026-03-12T10:00:00Z", speaker: null, relations: [], keywords: [], valid_from: "2026-03-12", supersedes: null
      })
      expect([r.status, r.json.error], quote).toEqual([422, "quote-not-found"])
      const closest = r.json.closest as { passage: string; source_from: string }
      expect(segments.some((s) => s.includes(closest.passage)), `${quote} → ${closest.passage}`).toBe(true)
      expect(closest.passage).toContain("we always ask the supplier for the delivery time")
      expect(segments.some((s) => s.includes(closest.source_from)), closest.source_from).toBe(true)
      expect(r.json.message).toContain("timestamp_s 100")
      expect(quoteFoundIn(closest.passage, (JAMIE.segments ?? []).map((s) => s.text).join(" "))).toBe(true)
    }
  })
})

describe("source-conflict names the fields that differ", () => {
  it("the grant's own source sent again with other fields: the fields named in issues, never the stored text", async () => {
    const src = mailSource({ scope: "sales" }, "mail:<conflict@acme.example>")
    expect((await call("POST", "/v1/sources", src)).status).toBe(201)
    const before = await rows()
    const changed = { ...src, source: { ...src.source, title: "Another subject" }, text: "Another text entirely" }
    const r = await call("POST", "/v1/sources", changed)
    expect([r.status, r.json.error]).toEqual([409, "source-conflict"])
    expect(r.json.issues).toEqual([
      { path: "source.title", message: "differs from the stored source with this id" },
      { path: "text", message: "differs from the stored source with this id" }
    ])
    expect(r.json.message).toBe("a source with this id is already stored in this scope and differs from this request")
    expect(r.json.remedy).toContain("GET /v1/sources/:id")
    const attachments = await call("POST", "/v1/sources", { ...src, attachments: src.attachments.slice(0, 1) })
    expect((attachments.json.issues as Array<{ path: string }>).map((i) => i.path)).toEqual(["attachments"])
    const renamed = await call("POST", "/v1/sources", { ...src, attachments: [{ ...src.attachments[0], filename: "preise.pdf" }, src.attachments[1]] })
    expect((renamed.json.issues as Array<{ path: string }>).map((i) => i.path)).toEqual(["attachments[0].filename"])
    for (const body of [r.text, attachments.text, renamed.text]) {
      expect(body).not.toContain("Bestellungen Hakenleisten")
      expect(body).not.toContain("Hakenleisten (RAL")
      expect(body).not.toContain("preisliste")
    }
    // nothing stored but the three refusals' search_log rows
    const added = addedRows(before, await rows())
    expect(Object.keys(added)).toEqual(["search_log"])
    expect(added.search_log?.map((l) => (JSON.parse(l) as { outcome: number }).outcome)).toEqual([409, 409, 409])
  })

  it("another grant's conflict says nothing about the stored source: the generic message, no fields", async () => {
    const src = mailSource({ scope: "sales" }, "mail:<conflict@acme.example>")
    const r = await call("POST", "/v1/sources", { ...src, source: { ...src.source, title: "Another subject" } }, tokens.other)
    expect(r.status).toBe(409)
    const same = await call("POST", "/v1/sources", src, tokens.other)
    expect(r.json).toEqual(same.json)
    expect(r.json).toEqual({ error: "source-conflict", message: "a source with this id is already stored in this scope and differs from this request" })
  })
})
