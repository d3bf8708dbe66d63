/**
 * link_list (graph.md §9.2, §6): stored and computed links of one item, 50 a page; grouped: true
 * on an entity = everything about it and its descendants, counted per G5.
 */
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { ScopeStore } from "../../src/db/scope-store.js"
import { propose } from "../../src/domain/proposals.js"
import type { GraphRefusal } from "../../src/contracts/errors.js"
import { type EverythingAbout, listLinks, type LinksPage } from "../../src/graph/link-list.js"
import { tempDir, testConfig } from "../support/env.js"
import { mailProposal } from "../support/fixtures.js"
import { run, runFail } from "../support/run.js"
import { insertLinkRow, insertReview, MAIL_ID, MAIL_REF, REPLY_ID, seedEntities, seedSourcesAndRules } from "./link-fixtures.js"

let cleanup: () => void
let dir = ""
let ids: ReadonlyArray<string> = []
const links: Record<string, string> = {}

const e = (i: number) => `entity/${ids[i] ?? ""}`

beforeEach(async () => {
  const t = tempDir()
  cleanup = t.cleanup
  dir = t.dir
  const config = testConfig(dir)
  ids = await run(config, Effect.gen(function*() {
    yield* Effect.flatMap(ScopeStore, (s) => s.create("sales"))
    yield* seedSourcesAndRules
    // sales-0004 proposes to supersede the confirmed sales-0002
    yield* propose(mailProposal({ statement: "Ask for the delivery time and the price before ordering hook rails", supersedes: "sales-0002" }), {
      grantId: "service:2", channel: "api"
    })
    return yield* seedEntities([
      { name: "Vertrieb", type: "department", status: "active" },
      (ids) => ({ name: "Nord", parent: ids[0] ?? null }),
      (ids) => ({ name: "Kunde Meier", type: "customer", parent: ids[1] ?? null }),
      { name: "Partner", type: "organisation" }
    ])
  }))
  links.mail = await run(config, insertLinkRow("sales", { from_ref: MAIL_REF, to_ref: e(1), type: "concerns", valid_from: "2026-03-12T10:00:00.000Z" }))
  links.confirmed = await run(config, insertLinkRow("sales", {
    from_ref: "rule/sales-0002", to_ref: e(2), type: "concerns", origin: "proposed", confidence: 0.9, valid_from: "2026-03-13T10:00:00.000Z"
  }))
  await run(config, insertReview("sales", `link/${links.confirmed}`, "confirm"))
  links.proposedRule = await run(config, insertLinkRow("sales", { from_ref: "rule/sales-0001", to_ref: e(0), type: "mentions" }))
  links.attachment = await run(config, insertLinkRow("sales", {
    from_ref: `attachment/${MAIL_ID}#1`, to_ref: e(2), type: "belongs_to", origin: "proposed", confidence: 0.6
  }))
  links.rejectedRule = await run(config, insertLinkRow("sales", { from_ref: "rule/sales-0003", to_ref: e(1), type: "concerns" }))
  links.partner = await run(config, insertLinkRow("sales", { from_ref: e(3), to_ref: e(1), type: "same_as", valid_from: "2026-03-14T10:00:00.000Z" }))
})
afterEach(() => cleanup())

const list = (q: { ref: string; grouped?: boolean; page?: number }, min: number | null = null) =>
  run(testConfig(dir, { graph: { proposed_min_confidence: min } }), listLinks({ scope: "sales", grouped: false, page: 1, ...q }))

describe("the links of one item", () => {
  it("a source: its stored link and its computed links (id null, deterministic, confirmed); no rejected rule", async () => {
    const page = await list({ ref: MAIL_REF }) as LinksPage
    expect(page.grouped).toBe(false)
    const key = (l: LinksPage["links"][number]) => `${l.from_ref} ${l.type} ${l.to_ref}`
    expect(page.links.map(key).sort()).toEqual([
      `${MAIL_REF} concerns ${e(1)}`,
      `attachment/${MAIL_ID}#1 attachment_of ${MAIL_REF}`,
      `attachment/${MAIL_ID}#2 attachment_of ${MAIL_REF}`,
      `rule/sales-0001 sourced_from ${MAIL_REF}`,
      `rule/sales-0002 sourced_from ${MAIL_REF}`,
      `rule/sales-0004 sourced_from ${MAIL_REF}`,
      `source/${REPLY_ID} replies_to ${MAIL_REF}`
    ].sort())
    for (const l of page.links.filter((l) => l.type !== "concerns")) {
      expect(l).toMatchObject({ id: null, origin: "deterministic", status: "confirmed", confidence: null, created_at: null, valid_to: null })
    }
    expect(page.links.find((l) => l.type === "concerns")).toMatchObject({ id: links.mail, origin: "human", status: "confirmed" })
    // newest first
    const dates = page.links.map((l) => l.valid_from)
    expect([...dates].sort().reverse()).toEqual(dates)
    expect(page).toMatchObject({ total: 7, page: 1, more: false, path: [] })
  })

  it("a reply: replies_to its thread root; an attachment: attachment_of its source", async () => {
    const reply = await list({ ref: `source/${REPLY_ID}` }) as LinksPage
    expect(reply.links.map((l) => [l.type, l.to_ref])).toEqual([["replies_to", MAIL_REF]])
    const att = await list({ ref: `attachment/${MAIL_ID}#1` }) as LinksPage
    expect(att.links.map((l) => [l.type, l.status]).sort()).toEqual([["attachment_of", "confirmed"], ["belongs_to", "proposed"]])
    expect(att.links.find((l) => l.type === "belongs_to")?.confidence).toBe(0.6)
  })

  it("a rule: sourced_from and supersedes computed both ways; proposed links show status and confidence", async () => {
    const r2 = await list({ ref: "rule/sales-0002" }) as LinksPage
    expect(r2.links.map((l) => `${l.from_ref} ${l.type} ${l.to_ref}`).sort()).toEqual([
      `rule/sales-0002 concerns ${e(2)}`,
      `rule/sales-0002 sourced_from ${MAIL_REF}`,
      "rule/sales-0004 supersedes rule/sales-0002"
    ])
    expect(r2.links.find((l) => l.type === "concerns")).toMatchObject({ status: "confirmed", origin: "proposed", confidence: 0.9 })
    const r4 = await list({ ref: "rule/sales-0004" }) as LinksPage
    expect(r4.links.map((l) => l.type).sort()).toEqual(["sourced_from", "supersedes"])
  })

  it("an entity: its path, and the links of the entity itself (stored only)", async () => {
    const page = await list({ ref: e(1) }) as LinksPage
    expect(page.path.map((p) => p.name)).toEqual(["Vertrieb", "Nord"])
    expect(page.links.map((l) => l.id).sort()).toEqual([links.mail, links.partner].sort())
    expect(page.next.map((n) => n.tool)).toContain("link_list")
  })

  it("50 a page", async () => {
    const config = testConfig(dir)
    const many = await run(config, seedEntities(Array.from({ length: 52 }, (_, i) => ({ name: `Filiale ${i}` }))))
    for (const id of many) await run(config, insertLinkRow("sales", { from_ref: `entity/${id}`, to_ref: e(3), type: "same_as" }))
    const first = await list({ ref: e(3) }) as LinksPage
    expect(first.links).toHaveLength(50)
    expect(first).toMatchObject({ total: 53, more: true, page: 1 })
    const second = await list({ ref: e(3), page: 2 }) as LinksPage
    expect(second.links).toHaveLength(3)
    expect(second.more).toBe(false)
    expect(new Set([...first.links, ...second.links].map((l) => l.id)).size).toBe(53)
  })
})

describe("everything about X (grouped: true)", () => {
  it("the subtree's counted links, other ends resolved to entries, grouped by kind, newest first", async () => {
    const about = await list({ ref: e(0), grouped: true }) as EverythingAbout
    expect(about.grouped).toBe(true)
    expect(about.entity).toMatchObject({ id: ids[0], name: "Vertrieb" })
    expect(about.subtree).toBe(3)
    expect(about.path.map((p) => p.name)).toEqual(["Vertrieb"])
    expect(about.groups.map((g) => [g.kind, g.count])).toEqual([["rule", 1], ["mail", 1], ["entity", 1]])
    const [rule, mail, entity] = about.groups
    expect(rule?.entries[0]).toMatchObject({
      ref: "rule/sales-0002@2", kind: "rule", origin: "proposed", proposed: false, link_id: links.confirmed, link_type: "concerns", entity_id: ids[2]
    })
    expect(mail?.entries[0]).toMatchObject({ ref: MAIL_REF, kind: "mail", title: "Bestellungen Hakenleisten", origin: "human", entity_id: ids[1] })
    expect(entity?.entries[0]).toMatchObject({ ref: e(3), kind: "entity", title: "Partner", date: "2026-03-14T10:00:00.000Z", excerpt: null })
    // left out: the proposed rule sales-0001, the unconfirmed attachment link (no minimum), the rejected rule
    const refs = about.groups.flatMap((g) => g.entries.map((x) => x.ref))
    expect(refs.some((r) => r.startsWith("rule/sales-0001") || r.startsWith("rule/sales-0003") || r.startsWith("attachment/"))).toBe(false)
    expect(about.total).toBe(3)
  })

  it("a descendant sees only its own subtree; above the configured confidence a proposed link counts, marked proposed", async () => {
    const strict = await list({ ref: e(2), grouped: true }) as EverythingAbout
    expect(strict.groups.map((g) => g.kind)).toEqual(["rule"])
    const lenient = await list({ ref: e(2), grouped: true }, 0.5) as EverythingAbout
    expect(lenient.groups.map((g) => g.kind)).toEqual(["rule", "attachment"])
    expect(lenient.groups[1]?.entries[0]).toMatchObject({ ref: `attachment/${MAIL_ID}#1`, title: "preisliste.pdf", proposed: true, origin: "proposed" })
    expect(lenient.path.map((p) => p.name)).toEqual(["Vertrieb", "Nord", "Kunde Meier"])
  })

  it("a rejected link never counts, whatever the minimum", async () => {
    await run(testConfig(dir), insertReview("sales", `link/${links.attachment}`, "reject"))
    const about = await list({ ref: e(2), grouped: true }, 0) as EverythingAbout
    expect(about.groups.map((g) => g.kind)).toEqual(["rule"])
  })
})

describe("refusals", () => {
  const fail = (q: { ref: string; grouped?: boolean }) =>
    runFail(testConfig(dir), listLinks({ scope: "sales", grouped: false, page: 1, ...q })) as Promise<GraphRefusal>

  it("an unknown item and a rejected rule get the same not-found", async () => {
    const unknown = await fail({ ref: "rule/sales-0099" })
    const rejected = await fail({ ref: "rule/sales-0003" })
    expect(unknown.code).toBe("not-found")
    expect(rejected.code).toBe("not-found")
    expect((await fail({ ref: "entity/sales-e0099" })).code).toBe("not-found")
    expect((await fail({ ref: "source/mail:<none@example.com>" })).code).toBe("not-found")
  })

  it("an id of another scope → scope-mismatch; grouped on a non-entity → validation-failed", async () => {
    expect((await fail({ ref: "entity/ops-e0001" })).code).toBe("scope-mismatch")
    const g = await fail({ ref: MAIL_REF, grouped: true })
    expect(g.code).toBe("validation-failed")
    expect(g.remedy).toMatch(/entity/)
  })
})
