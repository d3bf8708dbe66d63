/**
 * G5 counted links (graph.md §11) and validity on the target day (graph.md §4 "Validity").
 */
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { ScopeStore } from "../../src/db/scope-store.js"
import {
  type CountOptions,
  countedLinksOf,
  entityLinksOfRule,
  isCounted,
  isProposedMark,
  linkStatus,
  openOn,
  rulesLinkedToEntity
} from "../../src/graph/counted.js"
import { tempDir, testConfig } from "../support/env.js"
import { run, sqlOf } from "../support/run.js"
import { archiveRaw, insertLinkRow, insertReview, MAIL_REF, seedEntities, seedSourcesAndRules } from "./link-fixtures.js"

describe("isCounted and linkStatus (pure)", () => {
  const none = new Map<string, "confirm" | "reject" | "revert">()
  const proposed = (confidence: number) => ({ id: "sales-l0001", origin: "proposed" as const, confidence })

  it("deterministic and human links always count and are confirmed", () => {
    for (const origin of ["deterministic", "human"] as const) {
      expect(isCounted({ id: "sales-l0001", origin, confidence: null }, none, null)).toBe(true)
      expect(linkStatus({ origin }, undefined)).toBe("confirmed")
      expect(isProposedMark({ id: "sales-l0001", origin }, none)).toBe(false)
    }
  })

  it("a proposed link counts only after a confirm review when no minimum is configured", () => {
    expect(isCounted(proposed(0.99), none, null)).toBe(false)
    const confirmed = new Map([["link/sales-l0001", "confirm" as const]])
    expect(isCounted(proposed(0.1), confirmed, null)).toBe(true)
    expect(linkStatus({ origin: "proposed" }, "confirm")).toBe("confirmed")
    expect(isProposedMark({ id: "sales-l0001", origin: "proposed" }, confirmed)).toBe(false)
    expect(isProposedMark({ id: "sales-l0001", origin: "proposed" }, none)).toBe(true)
  })

  it("above the configured confidence it counts (still marked proposed); a reject never counts", () => {
    expect(isCounted(proposed(0.8), none, 0.8)).toBe(true)
    expect(isCounted(proposed(0.79), none, 0.8)).toBe(false)
    const rejected = new Map([["link/sales-l0001", "reject" as const]])
    expect(isCounted(proposed(1), rejected, 0)).toBe(false)
    expect(linkStatus({ origin: "proposed" }, "reject")).toBe("rejected")
    expect(linkStatus({ origin: "proposed" }, undefined)).toBe("proposed")
  })

  it("open on a day in the configured zone: valid_from ≤ end of day, valid_to null or later", () => {
    const zone = "Europe/Berlin"
    // 22:30Z is 23:30 in Berlin (winter): still the 12th; 23:30Z is already the 13th there
    expect(openOn({ valid_from: "2026-03-12T22:30:00Z", valid_to: null }, "2026-03-12", zone)).toBe(true)
    expect(openOn({ valid_from: "2026-03-12T23:30:00Z", valid_to: null }, "2026-03-12", zone)).toBe(false)
    expect(openOn({ valid_from: "2026-03-12T23:30:00Z", valid_to: null }, "2026-03-13", zone)).toBe(true)
    expect(openOn({ valid_from: "2026-03-01T00:00:00Z", valid_to: "2026-03-14T10:00:00Z" }, "2026-03-13", zone)).toBe(true)
    expect(openOn({ valid_from: "2026-03-01T00:00:00Z", valid_to: "2026-03-14T10:00:00Z" }, "2026-03-14", zone)).toBe(false)
    expect(openOn({ valid_from: "2026-03-01T00:00:00Z", valid_to: "2026-03-14T10:00:00Z" }, "2026-03-15", zone)).toBe(false)
  })
})

describe("counted links in a scope file", () => {
  let cleanup: () => void
  let config: ReturnType<typeof testConfig>
  let ids: ReadonlyArray<string> = []
  const zone = "Europe/Berlin"
  const opts = (minConfidence: number | null): CountOptions => ({ zone, minConfidence })

  beforeEach(async () => {
    const t = tempDir()
    cleanup = t.cleanup
    config = testConfig(t.dir)
    ids = await run(config, Effect.gen(function*() {
      yield* Effect.flatMap(ScopeStore, (s) => s.create("sales"))
      yield* seedSourcesAndRules
      return yield* seedEntities([
        { name: "Vertrieb", type: "department", status: "active" },
        (ids) => ({ name: "Nord", parent: ids[0] ?? null }),
        (ids) => ({ name: "Kunde Meier", type: "customer", parent: ids[1] ?? null }),
        { name: "Alt" }
      ])
    }))
  })
  afterEach(() => cleanup())

  const counted = (refs: ReadonlyArray<string>, day: string, min: number | null) =>
    run(config, Effect.flatMap(sqlOf("sales"), (sql) => countedLinksOf(sql, refs, day, opts(min))))

  it("confirmed, above-minimum, rejected and unreviewed proposed links on one day", async () => {
    const e = (i: number) => `entity/${ids[i] ?? ""}`
    const plain = await run(config, insertLinkRow("sales", { from_ref: "rule/sales-0002", to_ref: e(1), type: "concerns", origin: "proposed", confidence: 0.9 }))
    const confirmed = await run(config, insertLinkRow("sales", { from_ref: "rule/sales-0001", to_ref: e(1), type: "concerns", origin: "proposed", confidence: 0.2 }))
    const rejected = await run(config, insertLinkRow("sales", { from_ref: MAIL_REF, to_ref: e(1), type: "concerns", origin: "proposed", confidence: 0.95 }))
    const human = await run(config, insertLinkRow("sales", { from_ref: e(2), to_ref: e(1), type: "belongs_to", origin: "human" }))
    await run(config, insertReview("sales", `link/${confirmed}`, "confirm"))
    await run(config, insertReview("sales", `link/${rejected}`, "reject"))
    const day = "2026-06-01"

    const strict = await counted([e(1)], day, null)
    expect(strict.map((l) => l.id).sort()).toEqual([confirmed, human].sort())
    expect(strict.find((l) => l.id === confirmed)).toMatchObject({ status: "confirmed", proposed: false })

    const lenient = await counted([e(1)], day, 0.8)
    expect(lenient.map((l) => l.id).sort()).toEqual([plain, confirmed, human].sort())
    expect(lenient.find((l) => l.id === plain)).toMatchObject({ status: "proposed", proposed: true })
    // rejected never, even at minimum 0
    expect((await counted([e(1)], day, 0)).map((l) => l.id)).not.toContain(rejected)
  })

  it("validity: a link counts from the day of valid_from and not after valid_to", async () => {
    const e1 = `entity/${ids[1] ?? ""}`
    const later = await run(config, insertLinkRow("sales", { from_ref: "rule/sales-0002", to_ref: e1, type: "concerns", valid_from: "2026-04-10T08:00:00Z" }))
    const ended = await run(config, insertLinkRow("sales", {
      from_ref: "rule/sales-0002", to_ref: e1, type: "mentions", valid_from: "2026-01-01T08:00:00Z", valid_to: "2026-04-01T08:00:00Z"
    }))
    expect((await counted([e1], "2026-03-15", null)).map((l) => l.id)).toEqual([ended])
    expect((await counted([e1], "2026-04-05", null)).map((l) => l.id)).toEqual([])
    expect((await counted([e1], "2026-04-10", null)).map((l) => l.id)).toEqual([later])
  })

  it("links to a rejected rule are left out (invariant 8)", async () => {
    const e1 = `entity/${ids[1] ?? ""}`
    await run(config, insertLinkRow("sales", { from_ref: "rule/sales-0003", to_ref: e1, type: "concerns" }))
    expect(await counted([e1], "2026-06-01", null)).toEqual([])
  })

  it("entityLinksOfRule: one entry per entity, not archived, with its path; unproposed first, then confidence", async () => {
    const e = (i: number) => `entity/${ids[i] ?? ""}`
    await run(config, insertLinkRow("sales", { from_ref: "rule/sales-0002", to_ref: e(2), type: "concerns", origin: "proposed", confidence: 0.95 }))
    await run(config, insertLinkRow("sales", { from_ref: "rule/sales-0002", to_ref: e(0), type: "mentions", origin: "proposed", confidence: 0.85 }))
    await run(config, insertLinkRow("sales", { from_ref: "rule/sales-0002", to_ref: e(1), type: "concerns", origin: "human" }))
    await run(config, insertLinkRow("sales", { from_ref: "rule/sales-0002", to_ref: e(1), type: "mentions", origin: "proposed", confidence: 0.9 }))
    await run(config, insertLinkRow("sales", { from_ref: "rule/sales-0002", to_ref: "rule/sales-0001", type: "contradicts", origin: "human" }))
    // entity 3 is archived after a link was made to it
    await run(config, insertLinkRow("sales", { from_ref: "rule/sales-0002", to_ref: e(3), type: "concerns", origin: "human" }))
    await run(config, archiveRaw(ids[3] ?? ""))
    const got = await run(config, Effect.flatMap(sqlOf("sales"), (sql) => entityLinksOfRule(sql, "sales-0002", "2026-06-01", opts(0.8))))
    expect(got.map((x) => x.entity_id)).toEqual([ids[1], ids[2], ids[0]])
    expect(got[0]?.link.proposed).toBe(false)
    expect(got[1]?.path.map((p) => p.name)).toEqual(["Vertrieb", "Nord", "Kunde Meier"])
    expect(got[1]?.link.proposed).toBe(true)
  })

  it("rulesLinkedToEntity: rules with a counted link to the entity or one of its ancestors", async () => {
    const e = (i: number) => `entity/${ids[i] ?? ""}`
    await run(config, insertLinkRow("sales", { from_ref: "rule/sales-0002", to_ref: e(0), type: "concerns" }))
    await run(config, insertLinkRow("sales", { from_ref: "rule/sales-0001", to_ref: e(2), type: "mentions", origin: "proposed", confidence: 0.3 }))
    const of = (i: number, min: number | null) =>
      run(config, Effect.flatMap(sqlOf("sales"), (sql) => rulesLinkedToEntity(sql, ids[i] ?? "", "2026-06-01", opts(min))))
    expect([...await of(2, null)]).toEqual(["sales-0002"])
    expect([...await of(2, 0.3)].sort()).toEqual(["sales-0001", "sales-0002"])
    expect([...await of(0, 0.3)]).toEqual(["sales-0002"])
  })
})
