/** modeFor and decideOutcome (gaps.md §10): modes A/B/C, the daily limit, supersedes, exceptions. */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { ApprovalConfig } from "../../../src/config/schema.js"
import { classify, PROPOSAL_CLASSES, type ClassifyInput } from "../../../src/decision/policy/classify.js"
import { decideOutcome, modeFor } from "../../../src/decision/policy/outcome.js"
import { plain, plainInput, TRIGGERS } from "./fixtures.js"

const MODES = ["autonomous", "classified", "manual"] as const

/** Statements of every class, none with an exception of its own (payment carries its exception by nature). */
const BY_CLASS = [
  "Muster gehen immer zuerst an die Qualitätssicherung.", "The warehouse closes at 2 pm on Fridays.",
  "Krankmeldungen gehen direkt an die Personalabteilung.", "The personnel file is kept for ten years.",
  "Muster gehen an Kunden nur über den Vertrieb.", "Suppliers receive drawings only as PDF.",
  "Neukunden zahlen per Vorkasse.", "Invoices above EUR 10,000 need two approvals."
]

/** Any proposal: a statement of any class, any set of exception triggers, maybe a supersedes. */
const anyInput: fc.Arbitrary<ClassifyInput> = fc.tuple(
  plainInput,
  fc.constantFrom(...BY_CLASS),
  fc.array(fc.constantFrom(...Object.values(TRIGGERS)).chain((t): fc.Arbitrary<(i: ClassifyInput) => ClassifyInput> => t), { maxLength: 3 }),
  fc.option(fc.constantFrom("sales-0001", "sales-0042"), { nil: null })
).map(([base, statement, triggers, supersedes]) => {
  const input: ClassifyInput = { ...base, proposal: { ...base.proposal, statement, supersedes } }
  return triggers.reduce((acc, t) => t(acc), input)
})

describe("modeFor", () => {
  const approval = (over: Partial<ApprovalConfig> = {}): ApprovalConfig => ({ default_mode: "classified", daily_limit: 20, own_domains: [], ...over })

  it("is manual without an approval block", () => {
    for (const cls of PROPOSAL_CLASSES) expect(modeFor(undefined, "sales", cls)).toBe("manual")
  })

  it("takes the scope's class mode, else the scope's mode, else default_mode", () => {
    const a = approval({
      default_mode: "manual",
      scopes: { sales: { mode: "classified", classes: { external: "autonomous", personal: "manual" } }, ops: { classes: { general: "autonomous" } } }
    })
    expect(modeFor(a, "sales", "external")).toBe("autonomous")
    expect(modeFor(a, "sales", "personal")).toBe("manual")
    expect(modeFor(a, "sales", "general")).toBe("classified")
    expect(modeFor(a, "ops", "general")).toBe("autonomous")
    expect(modeFor(a, "ops", "external")).toBe("manual")
    expect(modeFor(a, "hr", "general")).toBe("manual")
    expect(modeFor(approval(), "sales", "general")).toBe("classified")
  })
})

describe("decideOutcome", () => {
  it("mode A adopts a plain proposal, B adopts only general, C never; each answer gives its reasons", () => {
    const general = classify(plain("Muster gehen immer zuerst an die Qualitätssicherung."))
    expect(decideOutcome(general, "autonomous", 5)).toEqual({
      outcome: "auto",
      reasons: ["Adopted automatically (autonomous mode, class general, no mandatory exception, ruleset gn-1); it stays retractable until a person confirms it."]
    })
    expect(decideOutcome(general, "classified", 1).outcome).toBe("auto")
    expect(decideOutcome(general, "manual", 5)).toEqual({ outcome: "person", reasons: ["Manual mode: a person decides every proposal in this scope."] })

    const external = classify(plain("Suppliers receive drawings only as PDF."))
    expect(external.exceptions).toEqual([])
    expect(decideOutcome(external, "autonomous", 5).outcome).toBe("auto")
    expect(decideOutcome(external, "classified", 5)).toEqual({ outcome: "person", reasons: ["Classified mode adopts only general proposals; this one is external."] })
  })

  it("the daily limit: N left adopts, 0 left sends to a person", () => {
    const general = classify(plain("Muster gehen immer zuerst an die Qualitätssicherung."))
    expect(decideOutcome(general, "autonomous", 1).outcome).toBe("auto")
    expect(decideOutcome(general, "autonomous", 0)).toEqual({ outcome: "person", reasons: ["The daily limit of automatic adoptions for this scope is reached; a person decides."] })
    expect(decideOutcome(general, "autonomous", -3).outcome).toBe("person")
    expect(decideOutcome(general, "autonomous", Number.NaN).outcome).toBe("person")
  })

  it("a proposal that supersedes a rule waits for a person in every mode", () => {
    const c = classify({ ...plain("Muster gehen immer zuerst an die Qualitätssicherung."), proposal: { ...plain("Muster gehen immer zuerst an die Qualitätssicherung.").proposal, supersedes: "sales-0042" } })
    for (const mode of MODES) {
      const o = decideOutcome(c, mode, 10)
      expect(o.outcome).toBe("person")
      expect(o.reasons[0]).toBe("It replaces confirmed rule sales-0042: only a person supersedes a rule.")
    }
  })

  it("lists every reason that applies: exceptions, supersedes, mode, limit", () => {
    const s = "Vielleicht zahlen Kunden per Vorkasse?"
    const input = plain(s)
    const c = classify({ ...input, proposal: { ...input.proposal, supersedes: "sales-0001" } })
    const o = decideOutcome(c, "classified", 0)
    expect(o.reasons).toEqual([
      ...c.exceptions.map((e) => e.reason),
      "It replaces confirmed rule sales-0001: only a person supersedes a rule.",
      "Classified mode adopts only general proposals; this one is payment.",
      "The daily limit of automatic adoptions for this scope is reached; a person decides."
    ])
  })

  it("properties: C never adopts, B adopts only general, limit 0 never adopts, auto only without exceptions and supersedes", () => {
    fc.assert(fc.property(anyInput, fc.constantFrom(...MODES), fc.integer({ min: -2, max: 1000 }), (input, mode, limit) => {
      const c = classify(input)
      const o = decideOutcome(c, mode, limit)
      expect(o.reasons.length).toBeGreaterThan(0)
      if (mode === "manual") expect(o.outcome).toBe("person")
      if (limit <= 0) expect(o.outcome).toBe("person")
      if (c.exceptions.length > 0 || c.supersedes !== null) expect(o.outcome).toBe("person")
      if (o.outcome === "auto") {
        expect(mode).not.toBe("manual")
        if (mode === "classified") expect(c.class).toBe("general")
        expect(c.exceptions).toEqual([])
        expect(c.supersedes).toBeNull()
        expect(limit).toBeGreaterThan(0)
        expect(c.class).not.toBe("payment")
      }
      // deterministic too
      expect(decideOutcome(c, mode, limit)).toEqual(o)
    }), { numRuns: 1000 })
  })

  it("property: a plain proposal under the limit is adopted in modes A and B", () => {
    fc.assert(fc.property(plainInput, fc.integer({ min: 1, max: 1000 }), (input, limit) => {
      const c = classify(input)
      expect(decideOutcome(c, "autonomous", limit).outcome).toBe("auto")
      expect(decideOutcome(c, "classified", limit).outcome).toBe("auto")
    }), { numRuns: 200 })
  })
})
