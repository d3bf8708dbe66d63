/**
 * Answers after a redaction over real HTTP (gaps.md §12): every record whose shown text a
 * redaction touched carries `redacted: true` — rule reads, versions, lists, provenance, search
 * bundles (head, head.entities and every group), the feeder's source read-back, entities (read,
 * tree, resolve), links and the pending structure — and the field is absent everywhere else. The
 * redaction is made at the database level the way the redaction's transaction makes it
 * (test/support/redaction.ts). A later proposal whose quote holds the marker is refused.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { decide } from "../../src/decision/decide.js"
import { propose } from "../../src/domain/proposals.js"
import { storeSource } from "../../src/domain/sources.js"
import { createEntity } from "../../src/graph/entities.js"
import { proposeLink } from "../../src/graph/links.js"
import { tempDir, testConfig } from "../support/env.js"
import { mailProposal, mailSource, manualProposal } from "../support/fixtures.js"
import { redactRows } from "../support/redaction.js"
import { sqlOf } from "../support/run.js"
import { startServer, type TestServer } from "../support/server.js"

let server: TestServer
let cleanup: () => void
let token = ""
const ids = { entity: "", other: "", link: "", linkSeq: 0 }
const MAIL_ID = "mail:<order-rule@example.com>"

type Json = Record<string, unknown>
const call = async (method: "GET" | "POST", path: string, body?: unknown) => {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const text = await res.text()
  return { status: res.status, text, json: JSON.parse(text) as Json }
}
const get = (path: string) => call("GET", path)

/** Every object in a JSON value that carries `redacted`, by its ref (or id), with the value. */
const marked = (v: unknown, out: Array<string> = []): Array<string> => {
  if (Array.isArray(v)) v.forEach((x) => marked(x, out))
  else if (typeof v === "object" && v !== null) {
    const o = v as Json
    if ("redacted" in o) out.push(`${String(o.ref ?? o.id ?? o.version ?? o.kind)}=${String(o.redacted)}`)
    Object.values(o).forEach((x) => marked(x, out))
  }
  return out
}

beforeAll(async () => {
  const t = tempDir()
  cleanup = t.cleanup
  // proposed links of confidence ≥ 0.8 count (G5): the rule's entity shows in its bundle while the link stays pending
  server = await startServer(testConfig(t.dir, { graph: { proposed_min_confidence: 0.8 } }))
  await server.run(Effect.gen(function*() {
    const ops = yield* OpsStore
    const store = yield* ScopeStore
    yield* store.create("sales")
    const a = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: ["sales"], rights: ["read", "propose"] })
    token = "token" in a ? a.token : ""
    yield* storeSource(mailSource(), a.id)
    const by = { grantId: a.id, channel: "api" as const }
    const person = { grantId: "person:9", identity: "p@example.com" }
    // sales-0001 quotes the mail and names Maria as its speaker; sales-0002 never names her
    yield* propose(mailProposal(), by)
    yield* decide("sales-0001", { decision: "confirm", version: 1 }, person)
    yield* propose(manualProposal("The warehouse counts the black hook rails every Friday", { keywords: ["Inventur"], relations: [] }), by)
    yield* decide("sales-0002", { decision: "confirm", version: 1 }, person)
    const entity = yield* createEntity({ scope: "sales", type: "department", name: "Team Maria", parent_id: null }, by)
    const other = yield* createEntity({ scope: "sales", type: "department", name: "Lager", parent_id: null }, by)
    ids.entity = entity.id
    ids.other = other.id
    const link = yield* proposeLink({
      scope: "sales", from_ref: "rule/sales-0001", to_ref: `entity/${entity.id}`, type: "concerns", confidence: 0.9,
      reason: "Maria wrote the mail for her team"
    }, { grantId: a.id })
    ids.link = link.link.id ?? ""
    yield* proposeLink({
      scope: "sales", from_ref: "rule/sales-0002", to_ref: `entity/${other.id}`, type: "concerns", confidence: 0.9, reason: "the warehouse counts"
    }, { grantId: a.id })
    const sql = yield* sqlOf("sales")
    ids.linkSeq = (yield* sql<{ seq: number }>`SELECT seq FROM link WHERE id = ${ids.link}`)[0]?.seq ?? 0
  }))
})
afterAll(async () => {
  await server.close()
  cleanup()
})

/** Redacts "Maria" in the mail, both versions of sales-0001, the entity's name and the link's reason. */
const redactMaria = () =>
  server.run(Effect.flatMap(sqlOf("sales"), (sql) => redactRows(sql, "sales", "Maria", [
    { table: "source", key: { id: MAIL_ID }, columns: ["title", "sender", "excerpt"] },
    { table: "rule_version", key: { rule_id: "sales-0001", version: 1 }, columns: ["statement", "quote", "speaker", "reason"] },
    { table: "rule_version", key: { rule_id: "sales-0001", version: 2 }, columns: ["statement", "quote", "speaker", "reason"] },
    { table: "entity_version", key: { id: ids.entity, version: 1 }, columns: ["name", "aliases", "evidence", "reason"] },
    { table: "link", key: { seq: ids.linkSeq }, columns: ["reason", "evidence"] }
  ])))

describe("answers before any redaction", () => {
  it("carry no redacted field anywhere", async () => {
    for (const path of [
      "/v1/rules/sales-0001", "/v1/rules/sales-0001/versions", "/v1/rules/sales-0001/provenance", "/v1/rules?scope=sales",
      `/v1/sources/${encodeURIComponent(MAIL_ID)}?scope=sales&include=text,attachments`, `/v1/entities/${ids.entity}`,
      "/v1/entities?scope=sales", `/v1/links?scope=sales&ref=rule/sales-0001`, "/v1/structure?scope=sales"
    ]) {
      const r = await get(path)
      expect([path, r.status]).toEqual([path, 200])
      expect(marked(r.json)).toEqual([])
    }
    expect(marked((await call("POST", "/v1/search", { scopes: ["sales"], text: "Lieferzeit Hakenleiste" })).json)).toEqual([])
  })
})

describe("answers after a redaction", () => {
  beforeAll(async () => {
    expect(await redactMaria()).toEqual({ id: "sales-x0001", places: 6 })
  })

  it("GET /v1/rules/:id: the head, its entity and the source and entity entries are marked; the attachments and the untouched are not", async () => {
    const r = await get("/v1/rules/sales-0001")
    expect(r.status).toBe(200)
    const b = r.json as { head: Json & { speaker: string; entities: Array<Json> }; groups: Array<{ kind: string; entries: Array<Json> }> }
    expect(b.head.redacted).toBe(true)
    expect(b.head.speaker).toBe("[redacted]")
    expect(b.head.status).toBe("confirmed")
    expect(b.head.entities.map((e) => [e.ref, e.name, e.redacted])).toEqual([[`entity/${ids.entity}`, "Team [redacted]", true]])
    const entries = Object.fromEntries(b.groups.map((g) => [g.kind, g.entries.map((e) => [e.ref, e.redacted ?? null])]))
    expect(entries.source).toEqual([[`source/${MAIL_ID}`, true]])
    expect(entries.entity).toEqual([[`entity/${ids.entity}`, true]])
    expect(entries.attachment).toEqual([[`attachment/${MAIL_ID}#1`, null], [`attachment/${MAIL_ID}#2`, null]])
    expect(r.text).not.toContain("Maria")
    const other = await get("/v1/rules/sales-0002")
    expect(marked(other.json)).toEqual([])
  })

  it("versions, the list and the provenance mark the touched versions and the source", async () => {
    const v = (await get("/v1/rules/sales-0001/versions")).json as { versions: Array<Json>; decisions: Array<Json> }
    expect(v.versions.map((x) => [x.version, x.redacted])).toEqual([[1, true], [2, true]])
    expect(v.decisions.map((d) => d.redacted ?? null)).toEqual([null])
    const list = (await get("/v1/rules?scope=sales")).json as { rules: Array<Json> }
    expect(list.rules.map((x) => [x.rule_id, x.redacted ?? null])).toEqual([["sales-0001", true], ["sales-0002", null]])
    const p = (await get("/v1/rules/sales-0001/provenance")).json as Json & { source: Json; attachments: Array<Json>; excerpt: string }
    expect([p.redacted, p.source.redacted, p.attachments.map((a) => a.redacted ?? null)]).toEqual([true, true, [null, null]])
    expect(p.excerpt).toContain("[redacted]")
  })

  it("POST /v1/search: the head and its entries are marked in the bundle", async () => {
    const r = await call("POST", "/v1/search", { scopes: ["sales"], text: "Lieferzeit Hakenleiste" })
    expect(r.status).toBe(200)
    const bundles = r.json.bundles as Array<{ head: Json & { entities: Array<Json> }; groups: Array<{ kind: string; entries: Array<Json> }> }>
    const head = bundles.find((b) => b.head.ref === "rule/sales-0001@2")
    expect(head?.head.redacted).toBe(true)
    expect(head?.head.entities[0]?.redacted).toBe(true)
    expect(head?.groups.find((g) => g.kind === "source")?.entries[0]?.redacted).toBe(true)
  })

  it("GET /v1/sources/:id: the source is marked, its untouched attachments are not", async () => {
    const r = await get(`/v1/sources/${encodeURIComponent(MAIL_ID)}?scope=sales&include=text,attachments`)
    expect(r.status).toBe(200)
    expect(r.json.redacted).toBe(true)
    expect(r.json.text).toContain("[redacted]")
    expect((r.json.attachments as Array<Json>).map((a) => a.redacted ?? null)).toEqual([null, null])
  })

  it("entities: read (with its version), tree and resolve mark the touched entity only", async () => {
    const e = (await get(`/v1/entities/${ids.entity}`)).json as Json & { versions: Array<Json> }
    expect([e.name, e.redacted, e.versions.map((v) => v.redacted ?? null)]).toEqual(["Team [redacted]", true, [true]])
    expect(marked((await get(`/v1/entities/${ids.other}`)).json)).toEqual([])
    const tree = (await get("/v1/entities?scope=sales")).json as { nodes: Array<Json> }
    expect(tree.nodes.map((n) => [n.id, n.redacted ?? null])).toEqual([[ids.other, null], [ids.entity, true]])
    const resolved = (await get(`/v1/entities/resolve?scope=sales&q=${encodeURIComponent("Team [redacted]")}`)).json as { candidates: Array<Json> }
    expect(resolved.candidates.map((c) => [c.id, c.redacted ?? null])).toEqual([[ids.entity, true]])
  })

  it("links and the pending structure mark the touched link and entity", async () => {
    const flat = (await get("/v1/links?scope=sales&ref=rule/sales-0001")).json as { links: Array<Json> }
    expect(flat.links.filter((l) => l.id !== null).map((l) => [l.id, l.reason, l.redacted])).toEqual([[ids.link, "[redacted] wrote the mail for her team", true]])
    const grouped = (await get(`/v1/links?scope=sales&ref=entity/${ids.entity}&grouped=true`)).json
    expect(marked(grouped)).toEqual(["rule/sales-0001@2=true"])
    const s = (await get("/v1/structure?scope=sales")).json as { pending: Array<Json> }
    const byRef = Object.fromEntries(s.pending.map((p) => [p.ref, p.redacted ?? null]))
    expect(byRef[`entity/${ids.entity}@1`]).toBe(true)
    expect(byRef[`entity/${ids.other}@1`]).toBeNull()
    expect(byRef[`link/${ids.link}`]).toBe(true)
  })
})

describe("a later proposal whose quote holds the marker", () => {
  it("is refused quote-not-found, a manual one too, and nothing is stored", async () => {
    const before = await server.run(Effect.flatMap(sqlOf("sales"), (sql) => sql<{ n: number }>`SELECT count(*) AS n FROM rule`))
    const quote = "Vor jeder Bestellung schwarzer Hakenleisten (RAL 9005) fragen wir beim Lieferanten die aktuelle Lieferzeit an"
    // the quote as the redacted mail now reads it (signature included), and one that reads the marker as a word
    const mail = await call("POST", "/v1/proposals", {
      ...mailProposal({ statement: "Ask the supplier again before ordering black hook rails" }),
      source: { kind: "mail", id: MAIL_ID, quote: "„ohne Bestätigung keine Bestellung“. Viele Grüße [redacted]", link: null }
    })
    expect([mail.status, mail.json.error, mail.json.message]).toEqual([
      422, "quote-not-found", "the quote holds the marker [redacted]: redacted text is not evidence; quote only text the source still shows"
    ])
    const word = await call("POST", "/v1/proposals", {
      ...mailProposal({ statement: "Ask the supplier again before ordering black hook rails" }),
      source: { kind: "mail", id: MAIL_ID, quote: "keine Bestellung. Viele Grüße redacted", link: null }
    })
    expect([word.status, word.json.error]).toEqual([422, "quote-not-found"])
    const manual = await call("POST", "/v1/proposals", manualProposal("Order hook rails only as [redacted] said", {
      source: { kind: "manual", quote: "as [redacted] said in the hallway", link: null }
    }))
    expect([manual.status, manual.json.error]).toEqual([422, "quote-not-found"])
    // the mail's untouched text still passes
    const ok = await call("POST", "/v1/proposals", mailProposal({
      statement: "Ask the supplier for the delivery time before each order of hook rails",
      source: { kind: "mail", id: MAIL_ID, quote, link: null }, keywords: ["Bestellung"]
    }))
    expect(ok.status).toBe(201)
    const after = await server.run(Effect.flatMap(sqlOf("sales"), (sql) => sql<{ n: number }>`SELECT count(*) AS n FROM rule`))
    expect(after[0]?.n).toBe((before[0]?.n ?? 0) + 1)
  })
})
