/**
 * The compact search answer of search_rules under the 30,000-character cap, measured on what the
 * tool answers (architecture.md §6.5): the larger of the model text of renderResultForModel and
 * the JSON of the annotated structured content — on the large fixture of the search tests (50
 * bundles, 2,000-character quotes, 500 related entries) and over real HTTP on 60 long rules.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { decide } from "../../src/decision/decide.js"
import type { Bundle, Entry, Group, GroupKind, SearchResponse } from "../../src/domain/search-schemas.js"
import { propose } from "../../src/domain/proposals.js"
import { SEARCH_COMPACT_MAX_CHARS, toCompact } from "../../src/search/compact.js"
import { annotateForeign, newBoundary, renderResultForModel } from "../../src/security/model-output.js"
import { tempDir, testConfig } from "../support/env.js"
import { manualProposal } from "../support/fixtures.js"
import { startServer, type TestServer } from "../support/server.js"
import { scanRendered } from "../security/scan.js"
import { connect, structured, textOf } from "./support.js"

// the large fixture of test/search/compact.test.ts
const STAGE_OFF = { state: "off" as const, duration_ms: null, reason: "disabled in config" }
const entry = (ref: string, kind: Entry["kind"], title = `title of ${ref}`): Entry => ({
  ref, kind, date: "2026-03-01T08:00:00Z", title, excerpt: "x".repeat(300), link: null, origin: "deterministic", proposed: false
})
const group = (kind: GroupKind, entries: ReadonlyArray<Entry>, count = entries.length): Group =>
  ({ kind, count, entries: entries.slice(0, 5), more: count - Math.min(5, entries.length) })
const bundle = (i: number, groups: ReadonlyArray<Group>, quote: string): Bundle => ({
  head: {
    ref: `rule/sales-${String(i).padStart(4, "0")}@2`, kind: "rule", date: "2026-03-12T09:15:00Z",
    title: `Statement of rule number ${i}, long enough`, excerpt: quote, link: "https://mail.example.com/m/1",
    scope: "sales", status: "confirmed", unconfirmed: false, valid_from: "2026-03-12", valid_until: null,
    superseded_by: null, last_reviewed_at: "2026-03-20T10:00:00.000Z", adoption: { kind: "person" }, age_days: 3, recheck: null,
    source: { kind: "mail", id: `mail:<m${i}@example.com>`, quote, timestamp: null, link: "https://mail.example.com/m/1" },
    speaker: "Maria", relations: [{ kind: "product", name: "Hakenleiste schwarz", ref: null }],
    rank: { a: 1.25, b: null, rrf: null, reranker: null }, found_via: ["hakenleiste"], coverage: 0.5, matched_terms: 1, entities: []
  },
  groups,
  line: `Rule from 2026-03-12: Statement of rule number ${i}, long enough — with 1 mail; last reviewed 3 days ago`
})
const big = (): SearchResponse => ({
  search_id: "5b0c3f0e-8f7e-4a53-9a55-3f1b0c3f0e8f",
  scopes: ["sales"],
  stages: { a: { state: "ran", duration_ms: 3, reason: null }, b: STAGE_OFF, c: STAGE_OFF },
  query: { terms: ["hakenleiste", "lieferzeit"], variants: { hakenleiste: ["hakenleiste", "hakenleisten"] } },
  bundles: Array.from({ length: 50 }, (_, i) => bundle(i + 1, [
    group("source", [entry(`source/mail:<m${i}@example.com>`, "mail")]),
    group("thread", Array.from({ length: 5 }, (_, j) => entry(`source/mail:<t${i}-${j}@example.com>`, "mail", `Re: ${"subject ".repeat(30)}`)), 9),
    group("same-relation", Array.from({ length: 5 }, (_, j) => entry(`rule/sales-${String(1000 + i * 5 + j).padStart(4, "0")}@1`, "rule")), 30),
    group("contradicts", [entry("rule/sales-0999@3", "rule")])
  ], "w".repeat(2000))),
  abstained: null
})

const measured = (full: SearchResponse) => {
  const boundary = newBoundary()
  const c = toCompact(full, (x) => renderResultForModel(x, { boundary }), annotateForeign)
  return { c, text: renderResultForModel(c, { boundary }), json: JSON.stringify(annotateForeign(c)) }
}

describe("the compact cap measures the MCP rendering", () => {
  it("the large fixture: model text and structured JSON both ≤ 30,000, as many whole bundles as fit", () => {
    const { c, text, json } = measured(big())
    expect(text.length).toBeLessThanOrEqual(SEARCH_COMPACT_MAX_CHARS)
    expect(json.length).toBeLessThanOrEqual(SEARCH_COMPACT_MAX_CHARS)
    expect(c.bundles.length).toBeGreaterThan(1)
    expect(c.truncated).toEqual({ omitted: 50 - c.bundles.length })
    // one more bundle would not fit the rendering (the framed text is the larger measure here)
    const more = toCompact({ ...big(), bundles: big().bundles.slice(0, c.bundles.length + 1) }, (x) => renderResultForModel(x, { boundary: "0123456789abcdef" }), annotateForeign)
    expect(more.bundles.length).toBe(c.bundles.length)
    // measured by the JSON alone the cap would keep more: the renderer is what limits
    expect(toCompact(big()).bundles.length).toBeGreaterThanOrEqual(c.bundles.length)
    scanRendered(text)
  })
})

let server: TestServer
let cleanup: () => void
beforeAll(async () => {
  const t = tempDir()
  cleanup = t.cleanup
  server = await startServer(testConfig(t.dir))
  await server.run(Effect.gen(function*() {
    const ops = yield* OpsStore
    yield* Effect.flatMap(ScopeStore, (s) => s.create("sales"))
    yield* ops.createGrant({ kind: "person", auth: "email", identity: "dev@example.com", scopes: ["sales"], rights: ["read", "propose"] })
    for (let i = 0; i < 60; i++) {
      const created = yield* propose(manualProposal(`Rule ${i}: the supplier names the delivery time of hook rails`, {
        source: { kind: "manual", quote: `Hakenleiste ${i} `.padEnd(2000, "lieferzeit "), link: null },
        keywords: ["Hakenleiste", "Lieferzeit", `k${i}`], relations: [{ kind: "customer", name: "Müller GmbH", ref: null }]
      }), { grantId: "service:1", channel: "api" })
      yield* decide(created.ref.slice(5, -2), { decision: "confirm", version: 1 }, { grantId: "person:9", identity: "p@example.com" })
    }
  }))
}, 120_000)
afterAll(async () => {
  await server.close()
  cleanup()
})

describe("search_rules over HTTP", () => {
  it("60 rules with 2,000-character quotes and a shared customer: the compact answer stays ≤ 30,000 in text and JSON", async () => {
    const mcp = await connect(server.url, { authorization: `Bearer ${"m".repeat(40)}` })
    const r = await mcp.call("search_rules", { scopes: ["sales"], text: "Hakenleiste Lieferzeit", limit: 50 })
    const text = textOf(r)
    const c = structured<{ bundles: Array<unknown>; truncated: { omitted: number } | null }>(r)
    expect(text.length).toBeLessThanOrEqual(SEARCH_COMPACT_MAX_CHARS)
    expect(JSON.stringify(r.structuredContent).length).toBeLessThanOrEqual(SEARCH_COMPACT_MAX_CHARS)
    expect(c.bundles.length).toBeGreaterThan(0)
    expect(c.truncated?.omitted).toBe(50 - c.bundles.length)
    const full = await mcp.call("search_rules", { scopes: ["sales"], text: "Hakenleiste Lieferzeit", limit: 50, detail: "full" })
    expect(textOf(full).length).toBeGreaterThan(100_000)
    await mcp.close()
  })
})
