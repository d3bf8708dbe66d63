/** The bundle line (architecture.md §8, graph.md §11): a pure function of head, groups and unread count. */
import { describe, expect, it } from "vitest"
import type { Entry, Group, GroupKind } from "../../src/domain/search-schemas.js"
import { bundleLine, GROUP_ORDER, type LineHead } from "../../src/search/line.js"

const STATEMENT = "Ask the supplier for the delivery time before ordering black hook rails"

const head = (over: Partial<LineHead> = {}): LineHead => ({
  kind: "rule", status: "confirmed", date: "2026-03-12T10:00:00Z", title: STATEMENT, age_days: 3, recheck: null, ...over
})

const entry = (ref: string, kind: Entry["kind"], proposed = false): Entry => ({
  ref, kind, date: "2026-03-01T00:00:00Z", title: "t", excerpt: null, link: null,
  origin: proposed ? "proposed" : "deterministic", proposed
})

const group = (kind: GroupKind, count: number, entries: ReadonlyArray<Entry>): Group =>
  ({ kind, count, entries: entries.slice(0, 5), more: count - Math.min(5, entries.length) })

const rules = (n: number, prefix = "sales-01"): Array<Entry> =>
  Array.from({ length: n }, (_, i) => entry(`rule/${prefix}${String(i).padStart(2, "0")}@1`, "rule"))

const facts = { zone: "Europe/Berlin", unreadAttachments: 0 }

describe("bundleLine", () => {
  it("reproduces the contract's example byte for byte", () => {
    const line = bundleLine(head({ age_days: 220, recheck: "still valid?" }), [
      group("source", 1, [entry("source/jamie:m", "meeting")]),
      group("attachment", 2, [entry("attachment/jamie:m#1", "attachment"), entry("attachment/jamie:m#2", "attachment")])
    ], facts)
    expect(line).toBe(
      "Rule from 2026-03-12: Ask the supplier for the delivery time before ordering black hook rails — with 1 meeting, 2 attachments; last reviewed 220 days ago, still valid?"
    )
  })

  it("without groups there is no \" — with\" part", () => {
    expect(bundleLine(head({ age_days: 1 }), [], facts)).toBe(`Rule from 2026-03-12: ${STATEMENT}; last reviewed 1 day ago`)
    expect(bundleLine(head({ age_days: 0 }), [], facts)).toBe(`Rule from 2026-03-12: ${STATEMENT}; last reviewed 0 days ago`)
  })

  it("labels: Rule, Note, Unconfirmed rule/note for proposals, Superseded rule/note", () => {
    const labelOf = (kind: LineHead["kind"], status: LineHead["status"]) =>
      bundleLine(head({ kind, status }), [], facts).split(" from ")[0]
    expect(labelOf("rule", "confirmed")).toBe("Rule")
    expect(labelOf("note", "confirmed")).toBe("Note")
    expect(labelOf("rule", "proposed")).toBe("Unconfirmed rule")
    expect(labelOf("note", "proposed")).toBe("Unconfirmed note")
    expect(labelOf("rule", "superseded")).toBe("Superseded rule")
    expect(labelOf("note", "superseded")).toBe("Superseded note")
  })

  it("review: proposals say how long they wait; recheck only adds \", still valid?\"", () => {
    expect(bundleLine(head({ status: "proposed", age_days: 1 }), [], facts)).toBe(
      `Unconfirmed rule from 2026-03-12: ${STATEMENT}; proposed 1 day ago, not confirmed`
    )
    expect(bundleLine(head({ status: "proposed", age_days: 12 }), [], facts).endsWith("; proposed 12 days ago, not confirmed")).toBe(true)
    expect(bundleLine(head({ age_days: 181, recheck: "still valid?" }), [], facts).endsWith("; last reviewed 181 days ago, still valid?")).toBe(true)
    expect(bundleLine(head({ status: "superseded", age_days: 400 }), [], facts).endsWith("; last reviewed 400 days ago")).toBe(true)
  })

  it("the date is the said_at day in the configured zone", () => {
    expect(bundleLine(head({ date: "2026-03-11T23:30:00Z" }), [], facts).startsWith("Rule from 2026-03-12: ")).toBe(true)
    expect(bundleLine(head({ date: "2026-03-11T23:30:00Z" }), [], { ...facts, zone: "UTC" }).startsWith("Rule from 2026-03-11: ")).toBe(true)
    expect(bundleLine(head({ date: "2026-03-12T03:00:00Z" }), [], { ...facts, zone: "America/New_York" }).startsWith("Rule from 2026-03-11: ")).toBe(true)
  })

  it("counts unread attachments: \"(u unread)\" only when u > 0", () => {
    const groups = [group("attachment", 7, Array.from({ length: 7 }, (_, i) => entry(`attachment/mail:<a>#${i + 1}`, "attachment")))]
    expect(bundleLine(head(), groups, { ...facts, unreadAttachments: 2 })).toContain(" — with 7 attachments (2 unread); ")
    expect(bundleLine(head(), groups, facts)).toContain(" — with 7 attachments; ")
    const one = [group("attachment", 1, [entry("attachment/mail:<a>#1", "attachment")])]
    expect(bundleLine(head(), one, { ...facts, unreadAttachments: 1 })).toContain(" — with 1 attachment (1 unread); ")
  })

  it("\"(of which p proposed)\" closes the parts when shown entries are proposed", () => {
    const groups = [
      group("source", 1, [entry("source/mail:<a>", "mail")]),
      group("entity", 3, [entry("entity/sales-e0001", "entity", true), entry("entity/sales-e0002", "entity"), entry("entity/sales-e0003", "entity", true)]),
      group("same-relation", 2, [entry("rule/sales-0002@1", "rule", true), entry("rule/sales-0003@2", "rule")])
    ]
    expect(bundleLine(head(), groups, facts)).toBe(
      `Rule from 2026-03-12: ${STATEMENT} — with 1 mail, 3 entities, 2 related rules (of which 3 proposed); last reviewed 3 days ago`
    )
  })

  it("reads the groups in the fixed order whatever order they come in", () => {
    const groups = [
      group("same-relation", 1, rules(1)),
      group("thread", 2, [entry("source/mail:<b>", "mail"), entry("source/mail:<c>", "mail")]),
      group("source", 1, [entry("source/mail:<a>", "mail")])
    ]
    expect(bundleLine(head(), groups, facts)).toContain(" — with 1 mail, 2 mails in thread, 1 related rule; ")
  })

  /** The expected part of each group kind, written out independently of the implementation. */
  const PARTS: Record<GroupKind, { singular: [Group, string]; plural: [Group, string] }> = {
    source: {
      singular: [group("source", 1, [entry("source/jamie:m", "meeting")]), "1 meeting"],
      plural: [group("source", 1, [entry("source/mail:<a>", "mail")]), "1 mail"]
    },
    thread: {
      singular: [group("thread", 1, [entry("source/mail:<b>", "mail")]), "1 mail in thread"],
      plural: [group("thread", 9, Array.from({ length: 9 }, (_, i) => entry(`source/mail:<t${i}>`, "mail"))), "9 mails in thread"]
    },
    attachment: {
      singular: [group("attachment", 1, [entry("attachment/mail:<a>#1", "attachment")]), "1 attachment"],
      plural: [group("attachment", 2, [entry("attachment/mail:<a>#1", "attachment"), entry("attachment/mail:<a>#2", "attachment")]), "2 attachments"]
    },
    entity: {
      singular: [group("entity", 1, [entry("entity/sales-e0001", "entity")]), "1 entity"],
      plural: [group("entity", 6, Array.from({ length: 6 }, (_, i) => entry(`entity/sales-e000${i}`, "entity"))), "6 entities"]
    },
    predecessor: {
      singular: [group("predecessor", 1, [entry("rule/sales-0001@3", "rule")]), "replaces sales-0001"],
      plural: [group("predecessor", 1, [entry("rule/sales-0042@2", "note")]), "replaces sales-0042"]
    },
    successor: {
      singular: [group("successor", 1, [entry("rule/sales-0002@2", "rule")]), "superseded by sales-0002"],
      plural: [group("successor", 1, [entry("rule/sales-10000@2", "rule")]), "superseded by sales-10000"]
    },
    contradicts: {
      singular: [group("contradicts", 1, rules(1, "sales-02")), "1 contradicting rule"],
      plural: [group("contradicts", 2, rules(2, "sales-02")), "2 contradicting rules"]
    },
    "same-relation": {
      singular: [group("same-relation", 1, rules(1)), "1 related rule"],
      plural: [group("same-relation", 12, rules(12)), "12 related rules"]
    }
  }

  it("every combination of groups: the parts in group order, joined by \", \"", () => {
    for (let mask = 0; mask < 1 << GROUP_ORDER.length; mask++) {
      for (const form of ["singular", "plural"] as const) {
        const kinds = GROUP_ORDER.filter((_, i) => (mask & (1 << i)) !== 0)
        const chosen = kinds.map((k) => PARTS[k][form])
        // hand them over in reverse order: the line sorts them
        const line = bundleLine(head(), chosen.map(([g]) => g).reverse(), facts)
        const parts = chosen.map(([, p]) => p)
        expect(line).toBe(`Rule from 2026-03-12: ${STATEMENT}${parts.length === 0 ? "" : ` — with ${parts.join(", ")}`}; last reviewed 3 days ago`)
      }
    }
  })

  /** A graph group whose shown entries hang on links, the first `p` of them proposed. */
  const graphGroup = (kind: "entity" | "contradicts" | "same-relation", count: number, p: number): Group => {
    const n = Math.min(5, count)
    const entries = Array.from({ length: n }, (_, i) =>
      kind === "entity" ? entry(`entity/sales-e00${10 + i}`, "entity", i < p) : entry(`rule/sales-03${10 + i}@1`, "rule", i < p))
    return group(kind, count, entries)
  }

  it("every combination with graph groups: their parts in group order, and \"(of which p proposed)\" counts the proposed shown entries", () => {
    const graph = [
      { g: graphGroup("entity", 1, 1), part: "1 entity", p: 1 },
      { g: graphGroup("entity", 7, 2), part: "7 entities", p: 2 },
      { g: graphGroup("contradicts", 1, 0), part: "1 contradicting rule", p: 0 },
      { g: graphGroup("contradicts", 3, 3), part: "3 contradicting rules", p: 3 },
      { g: graphGroup("same-relation", 9, 1), part: "9 related rules", p: 1 }
    ]
    const plain: Array<[Group, string]> = [
      PARTS.source.plural, PARTS.attachment.plural, PARTS.predecessor.singular, PARTS.successor.singular
    ]
    for (let mask = 0; mask < 1 << plain.length; mask++) {
      for (const entityChoice of [null, 0, 1]) {
        for (const contradictsChoice of [null, 2, 3]) {
          const chosenGraph = [entityChoice, contradictsChoice, 4].filter((i): i is number => i !== null).map((i) => graph[i]!)
          const chosenPlain = plain.filter((_, i) => (mask & (1 << i)) !== 0)
          const all = [...chosenPlain.map(([g, part]) => ({ g, part })), ...chosenGraph]
          const ordered = [...all].sort((a, b) => GROUP_ORDER.indexOf(a.g.kind) - GROUP_ORDER.indexOf(b.g.kind))
          const p = chosenGraph.reduce((n, x) => n + x.p, 0)
          const line = bundleLine(head(), all.map((x) => x.g).reverse(), facts)
          expect(line).toBe(
            `Rule from 2026-03-12: ${STATEMENT} — with ${ordered.map((x) => x.part).join(", ")}${p > 0 ? ` (of which ${p} proposed)` : ""}; last reviewed 3 days ago`
          )
        }
      }
    }
  })

  it("the new parts in place: entities after attachments, contradicting rules after the successor", () => {
    const groups = [
      group("source", 1, [entry("source/mail:<a>", "mail")]),
      group("attachment", 2, [entry("attachment/mail:<a>#1", "attachment"), entry("attachment/mail:<a>#2", "attachment")]),
      graphGroup("entity", 2, 0),
      group("successor", 1, [entry("rule/sales-0002@2", "rule")]),
      graphGroup("contradicts", 2, 1)
    ]
    expect(bundleLine(head({ status: "superseded", age_days: 40 }), groups, { ...facts, unreadAttachments: 1 })).toBe(
      `Superseded rule from 2026-03-12: ${STATEMENT} — with 1 mail, 2 attachments (1 unread), 2 entities, superseded by sales-0002, 2 contradicting rules (of which 1 proposed); last reviewed 40 days ago`
    )
    // a proposed head: the graph parts read the same, the review part stays the proposal's
    expect(bundleLine(head({ status: "proposed", age_days: 2 }), [graphGroup("entity", 1, 1)], facts)).toBe(
      `Unconfirmed rule from 2026-03-12: ${STATEMENT} — with 1 entity (of which 1 proposed); proposed 2 days ago, not confirmed`
    )
  })
})
