/** The quote located in its source text with the quote check's normalization (src/approval/highlight.ts). */
import { describe, expect, it } from "vitest"
import { locateQuote, marked, offsetsOf, within } from "../../src/approval/highlight.js"
import { rejectedQuery } from "../../src/approval/rejected-similar.js"
import { MAIL_TEXT } from "../support/fixtures.js"

describe("locateQuote", () => {
  it("finds a quote across punctuation, case and a CRLF line break, and maps back to the raw text", () => {
    const quote = "vor jeder Bestellung schwarzer Hakenleisten RAL 9005 fragen wir beim Lieferanten die aktuelle Lieferzeit an"
    const span = locateQuote(MAIL_TEXT, quote)
    expect(span).not.toBeNull()
    const raw = MAIL_TEXT.slice(span?.start, span?.end)
    expect(raw.startsWith("Vor jeder Bestellung")).toBe(true)
    expect(raw.endsWith("Lieferzeit an")).toBe(true)
    expect(raw).toContain("(RAL 9005)")
    expect(raw).toContain("\r\n")
  })
  it("handles astral characters and NFKC forms before the quote", () => {
    const text = "😀 ﬁne print: Zahlung binnen 30 Tagen netto ohne Abzug."
    const span = locateQuote(text, "Zahlung binnen 30 Tagen netto ohne Abzug")
    expect(text.slice(span?.start, span?.end)).toBe("Zahlung binnen 30 Tagen netto ohne Abzug")
  })
  it("answers null when the quote is not there", () => {
    expect(locateQuote("nothing of the sort here at all", "a quote that is not in the text")).toBeNull()
  })
  it("marks the span and escapes the pieces; a quote over two jamie segments is split per segment", () => {
    expect(marked("a <b> c", { start: 2, end: 5 }).value).toBe("a <mark>&lt;b&gt;</mark> c")
    const pieces = ["we always ask the supplier", "before ordering black hook rails."]
    const span = locateQuote(pieces.join(" "), "ask the supplier before ordering")
    const [a, b] = offsetsOf(pieces)
    expect(within(span, a ?? { start: 0, end: 0 })).toEqual({ start: 10, end: 26 })
    expect(within(span, b ?? { start: 0, end: 0 })).toEqual({ start: 0, end: 15 })
  })
})

describe("rejectedQuery", () => {
  it("quotes every token (FTS5 operators and quote characters never reach MATCH bare) and drops stopwords", () => {
    expect(rejectedQuery(`Pay the "invoice" within 30 days OR NOT NEAR(xy*)`)).toBe(`"pay" OR "invoice" OR "30" OR "days" OR "near" OR "xy"`)
    expect(rejectedQuery("the and of")).toBeNull()
  })
})
