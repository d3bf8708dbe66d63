/** The compact search answer (architecture.md §6.5 "Compact form") and its size cap. */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { Bundle, Entry, Group, GroupKind, SearchResponse } from "../../src/domain/search-schemas.js"
import {
  type CompactRender,
  type CompactSearchResponse,
  RELATED_TITLE_CHARS,
  SEARCH_COMPACT_MAX_CHARS,
  toCompact
} from "../../src/search/compact.js"

const STAGE_OFF = { state: "off" as const, duration_ms: null, reason: "disabled in config" }

const entry = (ref: string, kind: Entry["kind"], title = `title of ${ref}`, proposed = false): Entry => ({
  ref, kind, date: "2026-03-01T08:00:00Z", title, excerpt: "x".repeat(300), link: null,
  origin: proposed ? "proposed" : "deterministic", proposed
})

const group = (kind: GroupKind, entries: ReadonlyArray<Entry>, count = entries.length): Group =>
  ({ kind, count, entries: entries.slice(0, 5), more: count - Math.min(5, entries.length) })

const bundle = (i: number, groups: ReadonlyArray<Group>, quote = `quote of rule ${i} `.padEnd(300, "q")): Bundle => ({
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

const response = (bundles: ReadonlyArray<Bundle>): SearchResponse => ({
  search_id: "5b0c3f0e-8f7e-4a53-9a55-3f1b0c3f0e8f",
  scopes: ["sales"],
  stages: { a: { state: "ran", duration_ms: 3, reason: null }, b: STAGE_OFF, c: STAGE_OFF },
  query: { terms: ["hakenleiste", "lieferzeit"], variants: { hakenleiste: ["hakenleiste", "hakenleisten"] } },
  bundles,
  abstained: null
})

const sizeOf = (c: CompactSearchResponse, render: CompactRender = (x) => JSON.stringify(x)) =>
  Math.max(render(c).length, JSON.stringify(c).length)

const mailEntry = (i: number) => entry(`source/mail:<m${i}@example.com>`, "mail")

describe("toCompact", () => {
  it("keeps the compact head, leaves the source group out, names entries by ref and each once in related", () => {
    const shared = entry("rule/sales-0100@2", "rule")
    const full = response([
      bundle(1, [
        group("source", [mailEntry(1)]),
        group("attachment", [entry("attachment/mail:<m1@example.com>#1", "attachment", "a.pdf")], 7),
        group("same-relation", [shared, entry("rule/sales-0101@1", "rule", "proposed rule", true)])
      ]),
      bundle(2, [group("source", [mailEntry(2)]), group("same-relation", [shared])])
    ])
    const c = toCompact(full)
    expect(c.truncated).toBeNull()
    expect(c.query).toEqual({ terms: ["hakenleiste", "lieferzeit"] })
    expect(c.stages).toEqual(full.stages)
    expect(c.abstained).toBeNull()
    expect(c.bundles[0]?.head).toEqual({
      ref: "rule/sales-0001@2", kind: "rule", status: "confirmed", scope: "sales",
      title: "Statement of rule number 1, long enough", quote: full.bundles[0]?.head.source.quote,
      date: "2026-03-12T09:15:00Z", valid_from: "2026-03-12", valid_until: null, recheck: null, adoption: { kind: "person" },
      source: { kind: "mail", id: "mail:<m1@example.com>", timestamp: null, link: "https://mail.example.com/m/1" },
      coverage: 0.5
    })
    expect(c.bundles[0]?.line).toBe(full.bundles[0]?.line)
    expect(c.bundles[0]?.groups).toEqual([
      { kind: "attachment", count: 7, refs: ["attachment/mail:<m1@example.com>#1"] },
      { kind: "same-relation", count: 2, refs: ["rule/sales-0100@2", "rule/sales-0101@1"], proposed_refs: ["rule/sales-0101@1"] }
    ])
    expect(c.bundles[1]?.groups).toEqual([{ kind: "same-relation", count: 1, refs: ["rule/sales-0100@2"] }])
    expect(c.related).toEqual([
      { ref: "attachment/mail:<m1@example.com>#1", kind: "attachment", date: "2026-03-01T08:00:00Z", title: "a.pdf" },
      { ref: "rule/sales-0100@2", kind: "rule", date: "2026-03-01T08:00:00Z", title: "title of rule/sales-0100@2" },
      { ref: "rule/sales-0101@1", kind: "rule", date: "2026-03-01T08:00:00Z", title: "proposed rule" }
    ])
  })

  it("cuts related titles to 120 characters ending in …", () => {
    const long = "Ä".repeat(119) + "😀".repeat(10)
    const c = toCompact(response([bundle(1, [
      group("thread", [entry("source/mail:<a@x>", "mail", long), entry("source/mail:<b@x>", "mail", "y".repeat(120))])
    ])]))
    const [a, b] = c.related
    expect([...(a?.title ?? "")].length).toBe(RELATED_TITLE_CHARS)
    expect(a?.title).toBe(`${"Ä".repeat(119)}…`)
    expect(b?.title).toBe("y".repeat(120))
  })

  it("an abstained search stays empty and explained", () => {
    const full = { ...response([]), abstained: { reason: "no-candidate" as const, best_coverage: null, min_coverage: 0 } }
    expect(toCompact(full)).toEqual({
      search_id: full.search_id, scopes: ["sales"], stages: full.stages, query: { terms: full.query.terms },
      bundles: [], abstained: full.abstained, related: [], truncated: null
    })
  })

  /** 50 bundles with 2,000-character quotes naming 501 distinct related entries: 10 of their own each, one shared. */
  const big = (quoteChars = 2000) => response(Array.from({ length: 50 }, (_, i) => bundle(i + 1, [
    group("source", [mailEntry(i)]),
    group("thread", Array.from({ length: 5 }, (_, j) => entry(`source/mail:<t${i}-${j}@example.com>`, "mail", `Re: ${"subject ".repeat(30)}`)), 9),
    group("same-relation", Array.from({ length: 5 }, (_, j) => entry(`rule/sales-${String(1000 + i * 5 + j).padStart(4, "0")}@1`, "rule")), 30),
    group("contradicts", [entry("rule/sales-0999@3", "rule")])
  ], "w".repeat(quoteChars))))

  it("50 bundles with 2,000-character quotes and 500 related entries: whole bundles from the end, as many as fit", () => {
    const full = big()
    const c = toCompact(full)
    const size = sizeOf(c)
    expect(size).toBeLessThanOrEqual(SEARCH_COMPACT_MAX_CHARS)
    expect(c.bundles.length).toBeGreaterThan(1)
    expect(c.truncated).toEqual({ omitted: 50 - c.bundles.length })
    expect(c.bundles.map((b) => b.head.ref)).toEqual(full.bundles.slice(0, c.bundles.length).map((b) => b.head.ref))
    // maximal: one more bundle would not fit
    const more = toCompact({ ...full, bundles: full.bundles.slice(0, c.bundles.length + 1) })
    expect(more.bundles.length).toBe(c.bundles.length)
    // related names exactly the entries of the kept bundles, once
    const named = new Set(c.bundles.flatMap((b) => b.groups.flatMap((g) => g.refs)))
    expect(c.related.map((r) => r.ref).sort()).toEqual([...named].sort())
    // the uncapped form would be far over
    expect(JSON.stringify(toCompact({ ...full, bundles: full.bundles.slice(0, 1) })).length * 50).toBeGreaterThan(SEARCH_COMPACT_MAX_CHARS)
  })

  it("the first bundle alone over the cap: its group refs go from the end (counts stay), then its quote is cut with …", () => {
    const groups: Array<Group> = [
      group("source", [mailEntry(1)]),
      group("thread", Array.from({ length: 5 }, (_, j) => entry(`source/mail:<t${j}@x>`, "mail")), 8),
      group("attachment", Array.from({ length: 5 }, (_, j) => entry(`attachment/mail:<m1@x>#${j + 1}`, "attachment"))),
      group("same-relation", [entry("rule/sales-0200@1", "rule", "p", true), entry("rule/sales-0201@1", "rule", "p", true)], 2)
    ]
    const full = response([bundle(1, groups, "z".repeat(2000)), bundle(2, [])])
    // a model text that weighs every named ref heavily: 12 refs × 3,000 characters do not fit
    const heavyRefs: CompactRender = (c) => JSON.stringify(c) + c.bundles.flatMap((b) => b.groups.flatMap((g) => g.refs)).map(() => "r".repeat(3000)).join("")
    const c = toCompact(full, heavyRefs)
    expect(sizeOf(c, heavyRefs)).toBeLessThanOrEqual(SEARCH_COMPACT_MAX_CHARS)
    const kept = c.bundles[0]?.groups.flatMap((g) => g.refs) ?? []
    expect(kept.length).toBeGreaterThanOrEqual(1)
    expect(c.truncated).toEqual({ omitted: 1, omitted_refs: 12 - kept.length })
    expect(kept).toEqual(["source/mail:<t0@x>", "source/mail:<t1@x>", "source/mail:<t2@x>", "source/mail:<t3@x>", "source/mail:<t4@x>",
      "attachment/mail:<m1@x>#1", "attachment/mail:<m1@x>#2", "attachment/mail:<m1@x>#3", "attachment/mail:<m1@x>#4", "attachment/mail:<m1@x>#5",
      "rule/sales-0200@1", "rule/sales-0201@1"].slice(0, kept.length))
    expect(c.bundles[0]?.groups.map((g) => [g.kind, g.count])).toEqual([["thread", 8], ["attachment", 5], ["same-relation", 2]])
    expect(c.bundles[0]?.groups.every((g) => g.proposed_refs === undefined || g.proposed_refs.length > 0)).toBe(true)
    expect(c.related.map((r) => r.ref)).toEqual(kept)
    expect(c.bundles[0]?.head.quote).toBe("z".repeat(2000))

    // a model text that weighs the quote: the refs all go, then the quote is cut to the longest that fits
    const heavyQuote: CompactRender = (x) => JSON.stringify(x) + (x.bundles[0]?.head.quote ?? "").repeat(20)
    const q = toCompact(full, heavyQuote)
    expect(sizeOf(q, heavyQuote)).toBeLessThanOrEqual(SEARCH_COMPACT_MAX_CHARS)
    expect(q.truncated).toEqual({ omitted: 1, omitted_refs: 12, quote_cut: true })
    const quote = q.bundles[0]?.head.quote ?? ""
    expect(quote.endsWith("…")).toBe(true)
    expect(quote.length).toBeGreaterThan(1000)
    const longer = { ...q, bundles: q.bundles.map((b) => ({ ...b, head: { ...b.head, quote: `z${quote}` } })) }
    expect(sizeOf(longer, heavyQuote)).toBeGreaterThan(SEARCH_COMPACT_MAX_CHARS)
    expect(q.bundles[0]?.groups.map((g) => [g.kind, g.count, g.refs.length])).toEqual([["thread", 8, 0], ["attachment", 5, 0], ["same-relation", 2, 0]])
    expect(q.bundles[0]?.head.title).toBe(full.bundles[0]?.head.title)
    expect(q.bundles[0]?.line).toBe(full.bundles[0]?.line)
    expect(q.related).toEqual([])
  })

  it("property: never over 30,000 characters of the larger of model text and JSON; the first head always stays", () => {
    const renders: Record<string, CompactRender> = {
      json: (c) => JSON.stringify(c),
      pretty: (c) => JSON.stringify(c, null, 2),
      framed: (c) => c.bundles.map((b) => `⟪gn:0123456789 untrusted⟫${b.head.title}\n${b.head.quote}⟪/gn:0123456789⟫\n${b.line}`).join("\n") +
        c.related.map((r) => `${r.ref} ⟪gn:0123456789 untrusted⟫${r.title}⟪/gn:0123456789⟫`).join("\n"),
      heavy: (c) => JSON.stringify(c) + (c.bundles[0]?.head.quote ?? "").repeat(12) + c.related.map((r) => r.title.repeat(8)).join(""),
      // over the cap with a quote of 1,500 characters alone: the quote cut
      heavier: (c) => JSON.stringify(c) + (c.bundles[0]?.head.quote ?? "").repeat(20) + c.related.map((r) => r.title.repeat(30)).join("")
    }
    // entries: per bundle i and group k distinct refs rule/sales-<1000 + 5k + j>@<i + 1>, or refs shared by all bundles
    const arbGroup = fc.record({
      kind: fc.constantFrom<GroupKind>("source", "thread", "attachment", "entity", "predecessor", "successor", "contradicts", "same-relation"),
      n: fc.integer({ min: 0, max: 5 }),
      extra: fc.integer({ min: 0, max: 40 }),
      shared: fc.boolean(),
      titleChars: fc.integer({ min: 1, max: 400 }),
      proposed: fc.boolean()
    })
    const arbResponse = fc.integer({ min: 1, max: 50 }).chain((count) =>
      fc.tuple(
        fc.array(fc.integer({ min: 1, max: 2000 }), { minLength: count, maxLength: count }),
        fc.array(fc.array(arbGroup, { maxLength: 6 }), { minLength: count, maxLength: count })
      ).map(([quotes, groupsPerBundle]) =>
        response(quotes.map((q, i) => bundle(i + 1, (groupsPerBundle[i] ?? []).map(({ kind, n, extra, shared, titleChars, proposed }, k) =>
          group(kind, Array.from({ length: n }, (_, j) =>
            entry(shared ? `rule/sales-${9000 + j}@1` : `rule/sales-${1000 + 5 * k + j}@${i + 1}`, "rule", "é".repeat(titleChars),
              proposed && j % 2 === 0)), n + extra)), "ü".repeat(q))))))

    fc.assert(fc.property(arbResponse, fc.constantFrom(...Object.keys(renders)), (full, name) => {
      const render = renders[name] as CompactRender
      const c = toCompact(full, render)
      expect(sizeOf(c, render)).toBeLessThanOrEqual(SEARCH_COMPACT_MAX_CHARS)
      const first = c.bundles[0]
      expect(first?.head.ref).toBe(full.bundles[0]?.head.ref)
      expect(first?.head.title).toBe(full.bundles[0]?.head.title)
      expect(first?.line).toBe(full.bundles[0]?.line)
      expect(c.bundles.length + (c.truncated?.omitted ?? 0)).toBe(full.bundles.length)
      // related: once per entry, exactly the entries the kept groups name, titles ≤ 120
      const refs = c.related.map((r) => r.ref)
      expect(new Set(refs).size).toBe(refs.length)
      expect(new Set(refs)).toEqual(new Set(c.bundles.flatMap((b) => b.groups.flatMap((g) => g.refs))))
      for (const r of c.related) expect([...r.title].length).toBeLessThanOrEqual(RELATED_TITLE_CHARS)
      // groups keep kind and count; the source group is left out
      c.bundles.forEach((b, i) => {
        const fullGroups = (full.bundles[i]?.groups ?? []).filter((g) => g.kind !== "source")
        expect(b.groups.map((g) => [g.kind, g.count])).toEqual(fullGroups.map((g) => [g.kind, g.count]))
        for (const g of b.groups) expect(g.refs.length).toBeLessThanOrEqual(5)
      })
      if (c.truncated === null) expect(c.bundles.length).toBe(full.bundles.length)
      // head.entities are left out: heads with 10 deep entities each compact exactly the same
      expect(toCompact({ ...full, bundles: full.bundles.map((b) => withEntities(b, 10)) }, render)).toEqual(c)
    }), { numRuns: 100 })
  })

  /** head.entities of a bundle: `n` entities, each under a deep path of long names. */
  const headEntities = (n: number, depth = 8): Bundle["head"]["entities"] => Array.from({ length: n }, (_, i) => {
    const path = Array.from({ length: depth }, (_, d) => ({
      ref: `entity/sales-e${String(100 * i + d + 1).padStart(4, "0")}`, name: `Ebene ${d} ${"n".repeat(60)}`, type: "department"
    }))
    const last = path[path.length - 1] ?? { ref: "", name: "", type: "" }
    return { ...last, path, proposed: i % 2 === 1 }
  })
  const withEntities = (b: Bundle, n: number): Bundle => ({ ...b, head: { ...b.head, entities: headEntities(n) } })

  it("leaves head.entities out: the entity group names the entities by ref, related carries each path as title once", () => {
    const meier = "Vertrieb › Nord › Kunde Meier"
    const long = Array.from({ length: 8 }, (_, d) => `Ebene ${d} ${"n".repeat(20)}`).join(" › ")
    const entityEntry = (ref: string, title: string, proposed: boolean): Entry => ({
      ref, kind: "entity", date: "2026-03-20T10:00:00.000Z", title, excerpt: null, link: null, origin: "proposed", proposed
    })
    const shared = entityEntry("entity/sales-e0003", meier, false)
    const full = response([
      withEntities(bundle(1, [group("source", [mailEntry(1)]), group("entity", [shared, entityEntry("entity/sales-e0009", long, true)])]), 2),
      withEntities(bundle(2, [group("entity", [shared])]), 1)
    ])
    const c = toCompact(full)
    for (const b of c.bundles) expect(Object.keys(b.head)).not.toContain("entities")
    expect(JSON.stringify(c)).not.toContain("Ebene 7 nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn")
    expect(c.bundles.map((b) => b.groups)).toEqual([
      [{ kind: "entity", count: 2, refs: ["entity/sales-e0003", "entity/sales-e0009"], proposed_refs: ["entity/sales-e0009"] }],
      [{ kind: "entity", count: 1, refs: ["entity/sales-e0003"] }]
    ])
    expect(c.related).toEqual([
      { ref: "entity/sales-e0003", kind: "entity", date: "2026-03-20T10:00:00.000Z", title: meier },
      { ref: "entity/sales-e0009", kind: "entity", date: "2026-03-20T10:00:00.000Z", title: `${[...long].slice(0, RELATED_TITLE_CHARS - 1).join("")}…` }
    ])
    // the compact answer does not depend on head.entities at all
    expect(toCompact({ ...full, bundles: full.bundles.map((b) => withEntities(b, 0)) })).toEqual(c)
  })

  it("head.entities weigh nothing against the cap: 50 bundles with 10 deep entities each compact exactly as without", () => {
    const plain = big()
    const heavy = { ...plain, bundles: plain.bundles.map((b) => withEntities(b, 10)) }
    expect(JSON.stringify(heavy).length).toBeGreaterThan(JSON.stringify(plain).length + 50 * 10 * 8 * 60)
    const c = toCompact(heavy)
    expect(sizeOf(c)).toBeLessThanOrEqual(SEARCH_COMPACT_MAX_CHARS)
    expect(c).toEqual(toCompact(plain))
  })

  it("the structured JSON counts when it is larger than the model text", () => {
    const full = big()
    const tiny: CompactRender = () => "short"
    const c = toCompact(full, tiny)
    expect(JSON.stringify(c).length).toBeLessThanOrEqual(SEARCH_COMPACT_MAX_CHARS)
    expect(c.bundles.length).toBe(toCompact(full).bundles.length)
  })
})
