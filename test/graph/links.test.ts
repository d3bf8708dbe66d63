/**
 * proposeLink (graph.md §4 "Link"): every check in its order, each refusal leaving the file as it
 * was, the same open link answered with created: false, and the stored row.
 */
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { ScopeStore } from "../../src/db/scope-store.js"
import type { GraphRefusal } from "../../src/contracts/errors.js"
import type { LinkRequest } from "../../src/graph/link-types.js"
import { proposeLink } from "../../src/graph/links.js"
import { tempDir, testConfig } from "../support/env.js"
import { fileHash, run, runFail, sqlOf } from "../support/run.js"
import { graphCounts, insertReview, MAIL_REF, seedEntities, seedSourcesAndRules } from "./link-fixtures.js"

let cleanup: () => void
let config: ReturnType<typeof testConfig>
let ids: ReadonlyArray<string> = []
let file = ""

beforeEach(async () => {
  const t = tempDir()
  cleanup = t.cleanup
  config = testConfig(t.dir)
  ids = await run(config, Effect.gen(function*() {
    const store = yield* ScopeStore
    yield* store.create("sales")
    yield* store.create("ops")
    yield* seedSourcesAndRules
    return yield* seedEntities([
      { name: "Vertrieb", type: "department", status: "active" },
      (ids) => ({ name: "Projekt Nord", parent: ids[0] ?? null }),
      { name: "Altkunde", type: "customer", status: "archived" }
    ])
  }))
  file = `${t.dir}/scopes/sales.sqlite`
})
afterEach(() => cleanup())

const writer = { grantId: "person:1" }
const link = (over: Partial<LinkRequest> = {}): LinkRequest => ({
  scope: "sales", from_ref: MAIL_REF, to_ref: `entity/${ids[1] ?? ""}`, type: "concerns", confidence: 0.7,
  reason: "the mail names the project", ...over
})

/** The refusal of a propose that must fail, with the file byte-identical afterwards. */
const refused = async (req: LinkRequest) => {
  const before = fileHash(file)
  const counts = await run(config, graphCounts())
  const e = await runFail(config, proposeLink(req, writer)) as GraphRefusal
  expect(await run(config, graphCounts())).toEqual(counts)
  expect(fileHash(file)).toBe(before)
  return e
}

describe("proposeLink writes a proposed link", () => {
  it("stores origin proposed, the grant as created_by, valid_from = now, and answers the entity path", async () => {
    const r = await run(config, proposeLink(link({ evidence: "subject line" }), writer))
    expect(r.created).toBe(true)
    expect(r.status).toBe("proposed")
    expect(r.link).toMatchObject({
      id: "sales-l0001", from_ref: MAIL_REF, to_ref: `entity/${ids[1]}`, type: "concerns", origin: "proposed",
      confidence: 0.7, status: "proposed", reason: "the mail names the project", evidence: "subject line", valid_to: null
    })
    expect(r.link.valid_from).toBe(r.link.created_at)
    expect(r.path.map((p) => p.name)).toEqual(["Vertrieb", "Projekt Nord"])
    expect(r.next.length).toBeGreaterThan(0)
    expect(r.approval_url).toBe("http://127.0.0.1:8787/approval/structure?scope=sales#sales-l0001")
    const rows = await run(config, Effect.flatMap(sqlOf("sales"), (sql) => sql`SELECT * FROM link`))
    expect(rows).toEqual([expect.objectContaining({ origin: "proposed", created_by: "person:1", confidence: 0.7, valid_from: r.link.valid_from })])
  })

  it("a link between two rules and between a rule and an entity; path [] without an entity end", async () => {
    const r = await run(config, proposeLink(link({ from_ref: "rule/sales-0001", to_ref: "rule/sales-0002", type: "contradicts" }), writer))
    expect(r.created).toBe(true)
    expect(r.path).toEqual([])
    const m = await run(config, proposeLink(link({ from_ref: "rule/sales-0001", type: "mentions" }), writer))
    expect(m.link.id).toBe("sales-l0002")
    const a = await run(config, proposeLink(link({ from_ref: `attachment/${MAIL_REF.slice(7)}#2`, type: "belongs_to" }), writer))
    expect(a.created).toBe(true)
  })
})

describe("the same open link", () => {
  it("answers created: false with its status and writes nothing", async () => {
    const first = await run(config, proposeLink(link(), writer))
    const before = fileHash(file)
    const again = await run(config, proposeLink(link({ confidence: 0.9, reason: "again" }), writer))
    expect(again.created).toBe(false)
    expect(again.status).toBe("proposed")
    expect(again.link.id).toBe(first.link.id)
    expect(again.link.confidence).toBe(0.7)
    expect(fileHash(file)).toBe(before)
  })

  it("a rejected link stays rejected: created false, status rejected, never re-proposed", async () => {
    const first = await run(config, proposeLink(link(), writer))
    await run(config, insertReview("sales", `link/${first.link.id}`, "reject"))
    const again = await run(config, proposeLink(link(), writer))
    expect(again).toMatchObject({ created: false, status: "rejected", approval_url: null })
    expect(again.link.status).toBe("rejected")
    expect((await run(config, graphCounts())).link).toBe(1)
  })

  it("a confirmed link answers status confirmed", async () => {
    const first = await run(config, proposeLink(link(), writer))
    await run(config, insertReview("sales", `link/${first.link.id}`, "confirm"))
    expect(await run(config, proposeLink(link(), writer))).toMatchObject({ created: false, status: "confirmed" })
  })

  it("contradicts and same_as are the same link in either direction", async () => {
    const c = await run(config, proposeLink(link({ from_ref: "rule/sales-0001", to_ref: "rule/sales-0002", type: "contradicts" }), writer))
    const back = await run(config, proposeLink(link({ from_ref: "rule/sales-0002", to_ref: "rule/sales-0001", type: "contradicts" }), writer))
    expect(back).toMatchObject({ created: false })
    expect(back.link.id).toBe(c.link.id)
    // concerns is directed: another type between the same ends is another link
    const other = await run(config, proposeLink(link({ type: "mentions" }), writer))
    expect(other.created).toBe(true)
  })
})

describe("refusals in the order of graph.md §4, nothing written", () => {
  it("a rule or entity id of another scope → scope-mismatch (before the lookup)", async () => {
    const e = await refused(link({ to_ref: "entity/ops-e0001" }))
    expect(e.code).toBe("scope-mismatch")
    expect(e.remedy).toMatch(/one scope/)
    expect((await refused(link({ from_ref: "rule/ops-0001", to_ref: "entity/nowhere-e9999" }))).code).toBe("scope-mismatch")
  })

  it("an unknown end → reference-unknown with a remedy per kind", async () => {
    const entity = await refused(link({ to_ref: "entity/sales-e0099" }))
    expect(entity.code).toBe("reference-unknown")
    expect(entity.next.map((n) => n.tool)).toContain("entity_resolve")
    expect((await refused(link({ from_ref: "source/mail:<nope@example.com>" }))).code).toBe("reference-unknown")
    expect((await refused(link({ from_ref: `attachment/${MAIL_REF.slice(7)}#3` }))).code).toBe("reference-unknown")
    const rule = await refused(link({ from_ref: "rule/sales-0099" }))
    expect(rule.code).toBe("reference-unknown")
    expect(rule.remedy).toMatch(/search_rules/)
  })

  it("existence comes before the rejected rule and the archived entity", async () => {
    const e = await refused(link({ from_ref: "rule/sales-0003", to_ref: "entity/sales-e0099" }))
    expect(e.code).toBe("reference-unknown")
  })

  it("a rejected rule end → not-found that does not say rejected (invariant 8)", async () => {
    const e = await refused(link({ from_ref: "rule/sales-0003" }))
    expect(e.code).toBe("not-found")
    expect(JSON.stringify(e)).not.toMatch(/reject/i)
  })

  it("an archived entity end → reference-unknown whose remedy names it archived", async () => {
    const e = await refused(link({ to_ref: `entity/${ids[2]}` }))
    expect(e.code).toBe("reference-unknown")
    expect(e.remedy).toMatch(/archived/)
  })

  it("the rejected rule is refused before the archived entity", async () => {
    expect((await refused(link({ from_ref: "rule/sales-0003", to_ref: `entity/${ids[2]}` }))).code).toBe("not-found")
  })

  it("a computed or unknown type, or ends the type does not take → validation-failed", async () => {
    const computed = await refused(link({ type: "replies_to" }))
    expect(computed.code).toBe("validation-failed")
    expect(computed.message).toMatch(/computed/)
    expect(computed.remedy).toMatch(/concerns, belongs_to, contradicts, mentions, same_as/)
    expect((await refused(link({ type: "supersedes", from_ref: "rule/sales-0001", to_ref: "rule/sales-0002" }))).code).toBe("validation-failed")
    expect((await refused(link({ type: "likes" }))).code).toBe("validation-failed")
    const ends = await refused(link({ type: "contradicts" }))
    expect(ends.code).toBe("validation-failed")
    expect(ends.issues?.[0]?.path).toBe("from_ref")
    expect((await refused(link({ type: "same_as", from_ref: `entity/${ids[0]}`, to_ref: "rule/sales-0001" }))).issues?.[0]?.path).toBe("to_ref")
    expect((await refused(link({ type: "belongs_to", from_ref: "rule/sales-0001" }))).code).toBe("validation-failed")
  })

  it("an archived end is refused before the type", async () => {
    expect((await refused(link({ type: "replies_to", to_ref: `entity/${ids[2]}` }))).code).toBe("reference-unknown")
  })
})
