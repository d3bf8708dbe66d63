/**
 * Pending structure changes (graph.md §12): agent versions after the latest approval version
 * without a review, proposed links without a review, newest first, with their details.
 */
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { ScopeStore } from "../../src/db/scope-store.js"
import type { PendingEntityVersion, PendingLink } from "../../src/graph/review-schemas.js"
import { listPending, structureOf } from "../../src/structure/pending.js"
import { review } from "../../src/structure/review.js"
import { tempDir, testConfig } from "../support/env.js"
import { run, sqlOf } from "../support/run.js"
import { agentChange, insertLinkRow, MAIL_ID, MAIL_REF, seedEntities, seedSourcesAndRules } from "../graph/link-fixtures.js"

let cleanup: () => void
let config: ReturnType<typeof testConfig>
let ids: ReadonlyArray<string> = []
const person = { grantId: "person:1", identity: "dev@example.com" }
const opts = { scope: "sales", publicUrl: "http://127.0.0.1:8787", approval: false }

beforeEach(async () => {
  const t = tempDir()
  cleanup = t.cleanup
  config = testConfig(t.dir)
  ids = await run(config, Effect.gen(function*() {
    yield* Effect.flatMap(ScopeStore, (s) => s.create("sales"))
    yield* seedSourcesAndRules
    return yield* seedEntities([
      { name: "Vertrieb", type: "department", status: "active" }, // 0 reviewed
      { name: "Einkauf", type: "department", status: "active" }, // 1 reviewed
      (ids) => ({ name: "Nord", parent: ids[0] ?? null, status: "active" }), // 2 reviewed
      (ids) => ({ name: "Kunde Meier", type: "customer", parent: ids[2] ?? null, channel: "api" }) // 3 pending create
    ])
  }))
})
afterEach(() => cleanup())

const pending = (approval = false) => run(config, Effect.flatMap(sqlOf("sales"), (sql) => listPending(sql, { ...opts, approval })))

describe("pending", () => {
  it("an agent create: new under its parent, who, channel, reason, evidence; reviewed entities are not pending", async () => {
    const items = await pending()
    expect(items).toHaveLength(1)
    const item = items[0] as PendingEntityVersion
    expect(item).toMatchObject({
      kind: "entity", ref: `entity/${ids[3]}@1`, target: `entity/${ids[3]}@1`, current: true, change: "create", before: null,
      subtree: 0, status: "unconfirmed", by: "person:1", channel: "api", reason: "created via mcp", evidence: "source/mail:<x@y>",
      approval_url: `http://127.0.0.1:8787/approval/structure?scope=sales#${ids[3]}`
    })
    expect(item.after.map((p) => p.name)).toEqual(["Vertrieb", "Nord", "Kunde Meier"])
  })

  it("a move of a reviewed entity: old and new path, subtree size; gone after the review (even one that writes no version)", async () => {
    await run(config, review({ target: `entity/${ids[3]}@1`, verdict: "confirm" }, person))
    await run(config, agentChange(ids[2] ?? "", { parent: ids[1] ?? null }))
    const items = await pending()
    expect(items).toHaveLength(1)
    const move = items[0] as PendingEntityVersion
    expect(move).toMatchObject({ change: "move", ref: `entity/${ids[2]}@3`, subtree: 1, status: "active" })
    expect(move.before?.map((p) => p.name)).toEqual(["Vertrieb", "Nord"])
    expect(move.after.map((p) => p.name)).toEqual(["Einkauf", "Nord"])
    await run(config, review({ target: `entity/${ids[2]}@3`, verdict: "confirm" }, person))
    expect(await pending()).toEqual([])
  })

  it("create then rename, never reviewed: both versions pending, newest first, both with the current version as the form target", async () => {
    await run(config, agentChange(ids[3] ?? "", { name: "Meier GmbH", at: "2026-02-01T10:00:00.000Z" }))
    const items = await pending() as Array<PendingEntityVersion>
    expect(items.map((i) => [i.ref, i.change, i.current, i.target])).toEqual([
      [`entity/${ids[3]}@2`, "update", true, `entity/${ids[3]}@2`],
      [`entity/${ids[3]}@1`, "create", false, `entity/${ids[3]}@2`]
    ])
    expect(items[0]?.before?.at(-1)?.name).toBe("Kunde Meier")
    expect(items[0]?.after.at(-1)?.name).toBe("Meier GmbH")
    // a confirm of the current version ends both (the confirm is the latest approval version)
    await run(config, review({ target: `entity/${ids[3]}@2`, verdict: "confirm" }, person))
    expect(await pending()).toEqual([])
  })

  it("proposed links without a review, both ends described; human and reviewed links are not pending", async () => {
    await run(config, review({ target: `entity/${ids[3]}@1`, verdict: "confirm" }, person))
    const a = await run(config, insertLinkRow("sales", {
      from_ref: `attachment/${MAIL_ID}#1`, to_ref: `entity/${ids[3]}`, type: "belongs_to", origin: "proposed", confidence: 0.6,
      valid_from: "2026-03-01T10:00:00.000Z"
    }))
    const b = await run(config, insertLinkRow("sales", {
      from_ref: "rule/sales-0002", to_ref: `entity/${ids[2]}`, type: "concerns", origin: "proposed", confidence: 0.7
    }))
    await run(config, insertLinkRow("sales", { from_ref: MAIL_REF, to_ref: `entity/${ids[2]}`, type: "concerns", origin: "human" }))
    const reviewed = await run(config, insertLinkRow("sales", { from_ref: MAIL_REF, to_ref: `entity/${ids[0]}`, type: "mentions", origin: "proposed" }))
    await run(config, review({ target: `link/${reviewed}`, verdict: "reject", reason: "no" }, person))
    const items = await pending() as Array<PendingLink>
    expect(items.map((i) => i.id).sort()).toEqual([a, b].sort())
    const att = items.find((i) => i.id === a)
    expect(att).toMatchObject({
      kind: "link", target: `link/${a}`, type: "belongs_to", confidence: 0.6, by: "person:1", reason: "fixture",
      from: { ref: `attachment/${MAIL_ID}#1`, kind: "attachment", title: "preisliste.pdf", path: null },
      to: { ref: `entity/${ids[3]}`, kind: "entity", title: null }
    })
    expect(att?.to.path?.map((p) => p.name)).toEqual(["Vertrieb", "Nord", "Kunde Meier"])
    expect(items.find((i) => i.id === b)?.from.title).toBe("Always confirm the delivery time in writing before ordering")
  })

  it("a link to a rejected rule is pending only on the approval channel", async () => {
    await run(config, review({ target: `entity/${ids[3]}@1`, verdict: "confirm" }, person))
    const l = await run(config, insertLinkRow("sales", { from_ref: "rule/sales-0003", to_ref: `entity/${ids[2]}`, type: "concerns", origin: "proposed" }))
    expect(await pending(false)).toEqual([])
    expect((await pending(true)).map((i) => i.ref)).toEqual([`link/${l}`])
  })

  it("newest first across entities and links; counts", async () => {
    const l = await run(config, insertLinkRow("sales", {
      from_ref: MAIL_REF, to_ref: `entity/${ids[1]}`, type: "concerns", origin: "proposed", valid_from: "2026-01-06T10:00:00.000Z"
    }))
    await run(config, agentChange(ids[1] ?? "", { name: "Beschaffung", at: "2026-01-07T10:00:00.000Z" }))
    const s = await run(config, Effect.flatMap(sqlOf("sales"), (sql) => structureOf(sql, opts)))
    // the fixture writes created_at = 2026-01-05T10:00 for links, the same instant as the create of ids[3]
    expect(s.pending.map((p) => p.ref)).toEqual([`entity/${ids[1]}@3`, `entity/${ids[3]}@1`, `link/${l}`])
    expect(s.counts).toEqual({ entities: 2, versions: 2, links: 1 })
    expect(s.approval_url).toBe("http://127.0.0.1:8787/approval/structure?scope=sales")
  })
})
