import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  closestInSegments, closestPassage, holdsMarker, jamieQuoteFound, jamieWindow, mailQuoteFound, normalizeQuote
} from "../../src/domain/quote-check.js"

describe("normalizeQuote", () => {
  it("applies NFKC: ligatures, full-width letters, superscripts", () => {
    expect(normalizeQuote("ﬁnal ＡＢＣ x²")).toBe("final abc x2")
  })
  it("lowercases after NFKC", () => {
    expect(normalizeQuote("Straße ÄRGER")).toBe("straße ärger")
  })
  it("turns curly and straight quotes, guillemets and primes into spaces", () => {
    expect(normalizeQuote("„ohne Bestätigung“ «keine» 'x' \"y\" `z` ′a″")).toBe("ohne bestätigung keine x y z a")
  })
  it("turns every dash and punctuation mark into a space", () => {
    expect(normalizeQuote("Lieferzeit – anfragen — sofort-los; ok! (ja) […]")).toBe("lieferzeit anfragen sofort los ok ja")
  })
  it("collapses line breaks and all whitespace kinds", () => {
    expect(normalizeQuote("a\r\nb\n\nc\td\u00a0e\u2028f\u2003g")).toBe("a b c d e f g")
  })
  it("trims", () => {
    expect(normalizeQuote("  ...hello  ")).toBe("hello")
  })
})

describe("mail quote check", () => {
  const mail = "Hallo,\r\nab sofort gilt: Vor jeder Bestellung\r\nschwarzer Hakenleisten fragen wir – „ohne Bestätigung keine Bestellung“."
  it("finds a quote across a line break with other punctuation", () => {
    expect(mailQuoteFound("Vor jeder Bestellung schwarzer Hakenleisten fragen wir", mail)).toBe(true)
  })
  it("finds a quote with straight quotes where the mail has curly ones", () => {
    expect(mailQuoteFound("fragen wir - \"ohne Bestätigung keine Bestellung\"", mail)).toBe(true)
  })
  it("refuses a quote whose normalized form is shorter than 20 characters", () => {
    expect(mailQuoteFound("„Vor jeder Bestell“", mail)).toBe(false)
    expect(normalizeQuote("Vor jeder Bestellung").length).toBe(20)
    expect(mailQuoteFound("Vor jeder Bestellung", mail)).toBe(true)
  })
  it("refuses a changed word", () => {
    expect(mailQuoteFound("Vor jeder Bestellung weißer Hakenleisten", mail)).toBe(false)
  })
})

describe("jamie window", () => {
  const segments = [
    { n: 1, start_s: 0, text: "alpha words at the start" },
    { n: 2, start_s: 100, text: "we always ask the supplier" },
    { n: 3, start_s: 220, text: "for the delivery time first" },
    { n: 4, start_s: 341, text: "way later remark here" }
  ]
  it("joins the segments within ±120 s in n order with a space, speakers excluded", () => {
    expect(jamieWindow(segments, 100)).toBe("alpha words at the start we always ask the supplier for the delivery time first")
  })
  it("includes a segment exactly 120 s before or after", () => {
    expect(jamieQuoteFound("we always ask the supplier for the delivery time", segments, 220)).toBe(true)
    expect(jamieQuoteFound("alpha words at the start we always", segments, 120)).toBe(true)
    expect(jamieQuoteFound("for the delivery time first way later remark", segments, 221)).toBe(true)
  })
  it("excludes a segment 121 s away", () => {
    expect(jamieQuoteFound("alpha words at the start we always", segments, 121)).toBe(false)
    expect(jamieQuoteFound("for the delivery time first way later remark", segments, 220)).toBe(false)
  })
  it("matches across segment boundaries", () => {
    expect(jamieQuoteFound("ask the supplier for the delivery", segments, 150)).toBe(true)
  })
})

/** Characters that stress the normalization: letters, umlauts, ligatures, quotes, dashes, breaks. */
const tricky = fc.constantFrom(
  "a", "b", "Z", "ä", "Ö", "ß", "é", "ﬁ", "Ａ", "²", "1", " ", " ", "\n", "\r\n", "\t", "\u00a0", "\u2028",
  "„", "“", "”", "«", "»", "'", "\"", "`", "–", "—", "-", ".", ",", ";", "!", "?", "(", ")", "…", "€", "İ", "Σ", "ς"
)
const mailText = fc.array(fc.oneof(tricky, fc.string({ minLength: 1, maxLength: 6 })), { minLength: 10, maxLength: 200 })
  .map((parts) => parts.join(""))

describe("property: any substring of ≥ 20 normalized characters of a stored mail is found", () => {
  it("holds for tricky text", () => {
    fc.assert(fc.property(mailText, fc.nat(), fc.nat(), (text, a, b) => {
      const norm = [...normalizeQuote(text)]
      fc.pre(norm.length >= 20)
      const len = 20 + (b % (norm.length - 19))
      const start = a % (norm.length - len + 1)
      const quote = norm.slice(start, start + len).join("")
      fc.pre([...quote.trim()].length >= 20)
      return mailQuoteFound(quote, text)
    }), { numRuns: 2000 })
  })
  it("holds for arbitrary unicode text", () => {
    fc.assert(fc.property(fc.string({ unit: "grapheme", minLength: 20, maxLength: 300 }), fc.nat(), (text, a) => {
      const norm = [...normalizeQuote(text)]
      fc.pre(norm.length >= 20)
      const start = a % (norm.length - 19)
      const quote = norm.slice(start).join("")
      fc.pre([...quote.trim()].length >= 20)
      return mailQuoteFound(quote, text)
    }), { numRuns: 2000 })
  })
  it("normalization is idempotent", () => {
    fc.assert(fc.property(mailText, (text) => normalizeQuote(normalizeQuote(text)) === normalizeQuote(text)), { numRuns: 2000 })
  })
})

describe("closestPassage: what an agent needs to fix a quote", () => {
  const MAIL = "Hallo zusammen,\nab sofort gilt: Vor jeder Bestellung schwarzer Hakenleisten (RAL 9005) fragen wir beim Lieferanten die aktuelle Lieferzeit an.\nViele Grüße"

  it("a quote with one wrong word: the aligned passage, where it first differs, and both from there", () => {
    const c = closestPassage("Vor jeder Bestellung weißer Hakenleisten (RAL 9005) fragen wir", MAIL)
    expect(c).not.toBeNull()
    expect(c?.differs_at).toBe("vor jeder bestellung ".length)
    expect(c?.quote_from.startsWith("weißer hakenleisten")).toBe(true)
    expect(c?.source_from.startsWith("schwarzer hakenleisten")).toBe(true)
    expect(c?.passage).toContain("vor jeder bestellung schwarzer hakenleisten ral 9005 fragen wir")
  })

  it("a quote whose start is wrong is anchored at its end or a later word", () => {
    const c = closestPassage("Bitte bei jeder Bestellung schwarzer Hakenleisten (RAL 9005) fragen wir beim Lieferanten", MAIL)
    expect(c?.passage).toContain("bestellung schwarzer hakenleisten ral 9005 fragen wir beim lieferanten")
    expect(c?.differs_at).toBe(0)
  })

  it("a first word of another length (nach for vor): both sides start at their own first word", () => {
    for (const [quote, word] of [["Nach", "nach"], ["Bei", "bei"], ["Vorher bei", "vorher bei"]] as const) {
      const c = closestPassage(`${quote} jeder Bestellung schwarzer Hakenleisten (RAL 9005) fragen wir`, MAIL)
      expect(c?.differs_at, quote).toBe(0)
      expect(c?.quote_from.startsWith(`${word} jeder`), quote).toBe(true)
      expect(c?.source_from.startsWith(quote === "Vorher bei" ? "gilt vor jeder" : "vor jeder"), quote).toBe(true)
      expect(c?.passage.startsWith(quote === "Vorher bei" ? "gilt vor jeder" : "vor jeder bestellung"), quote).toBe(true)
    }
  })

  it("the passage, sent as the quote, passes the check; nothing alike is null", () => {
    const c = closestPassage("Vor jeder Bestellung schwarzer Hakenleisten (RAL 9006) fragen wir", MAIL)
    expect(c).not.toBeNull()
    expect(mailQuoteFound(c?.passage ?? "", MAIL)).toBe(true)
    expect(closestPassage("Completely unrelated English sentence about pallets", MAIL)).toBeNull()
  })

  it("property: a quote cut from the text with one character changed is placed where it was cut", () => {
    const norm = normalizeQuote(MAIL)
    fc.assert(fc.property(fc.integer({ min: 0, max: norm.length - 40 }), fc.integer({ min: 30, max: 40 }), fc.integer({ min: 12, max: 25 }), (start, len, at) => {
      const cut = norm.slice(start, start + len)
      fc.pre(cut[at] !== " " && cut[at] !== "x" && !cut.startsWith(" "))
      const quote = `${cut.slice(0, at)}x${cut.slice(at + 1)}`
      const c = closestPassage(quote, MAIL)
      return c !== null && c.differs_at === at && c.passage.includes(cut.slice(0, at))
    }), { numRuns: 300 })
  })
})

describe("closestInSegments: the closest passage of a meeting stays within one segment", () => {
  const SEGMENTS = [
    { start_s: 0, text: "Good morning everyone, let's start." },
    { start_s: 100, text: "From now on we always ask the supplier for the delivery time" },
    { start_s: 220, text: "before ordering black hook rails." },
    { start_s: 400, text: "Agreed, next topic is the payment terms for Müller GmbH." }
  ]
  const normalized = SEGMENTS.map((s) => normalizeQuote(s.text))

  it("a quote running past the end of a segment: the passage ends with the segment, named by its start_s", () => {
    const c = closestInSegments("we always ask the supplier for the delivery time of all pallets", SEGMENTS)
    expect(c?.start_s).toBe(100)
    expect(c?.passage).toBe("we always ask the supplier for the delivery time")
    expect(normalized.some((s) => s.includes(c?.source_from ?? "∅"))).toBe(true)
  })

  it("the segment with the longer run wins; nothing alike is null", () => {
    const c = closestInSegments("before ordering black hook rails from the usual shop", SEGMENTS)
    expect(c?.start_s).toBe(220)
    expect(c?.passage).toBe("before ordering black hook rails")
    expect(closestInSegments("Completely unrelated English sentence about pallets", SEGMENTS)).toBeNull()
  })

  it("property: every passage lies within one segment", () => {
    const joined = normalized.join(" ")
    fc.assert(fc.property(fc.integer({ min: 0, max: joined.length - 30 }), fc.integer({ min: 20, max: 60 }), (start, len) => {
      const c = closestInSegments(`${joined.slice(start, start + len)} zzz`, SEGMENTS)
      return c === null || normalized.some((s) => s.includes(c.passage))
    }), { numRuns: 300 })
  })
})

describe("after a redaction: the quote check never matches across the marker", () => {
  const mail = "Hallo,\r\nwie Frau [redacted] sagt, liefern wir schwarze Hakenleisten nur gegen Vorkasse an Neukunden."
  it("refuses a quote that holds the marker, in any case or width, even when the stored text holds it word for word", () => {
    expect(mailQuoteFound("wie Frau [redacted] sagt, liefern wir schwarze Hakenleisten", mail)).toBe(false)
    expect(mailQuoteFound("wie Frau [REDACTED] sagt, liefern wir schwarze Hakenleisten", mail)).toBe(false)
    expect(mailQuoteFound("wie Frau ［redacted］ sagt, liefern wir schwarze Hakenleisten", mail)).toBe(false)
    expect(holdsMarker("Frau [Redacted] sagt")).toBe(true)
    expect(holdsMarker("Frau redacted sagt")).toBe(false)
  })
  it("does not let the marker's word stand for the erased text: \"Frau redacted sagt …\" is not found", () => {
    // normalized, the stored text reads "frau redacted sagt": the check cuts it at the marker first
    expect(normalizeQuote(mail)).toContain("frau redacted sagt liefern wir")
    expect(mailQuoteFound("wie Frau redacted sagt, liefern wir schwarze Hakenleisten", mail)).toBe(false)
    expect(mailQuoteFound("redacted sagt, liefern wir schwarze Hakenleisten nur gegen Vorkasse", mail)).toBe(false)
  })
  it("still finds a quote within one part between markers", () => {
    expect(mailQuoteFound("liefern wir schwarze Hakenleisten nur gegen Vorkasse an Neukunden", mail)).toBe(true)
    expect(mailQuoteFound("sagt, liefern wir schwarze Hakenleisten nur gegen Vorkasse", mail)).toBe(true)
  })
  it("a meeting: the window is cut at the marker as well", () => {
    const segments = [
      { n: 1, start_s: 10, text: "Laut Herrn [redacted] gilt ab Mai" },
      { n: 2, start_s: 20, text: "eine Mindestbestellmenge von zehn Paletten." }
    ]
    expect(jamieQuoteFound("Laut Herrn redacted gilt ab Mai eine Mindestbestellmenge", segments, 15)).toBe(false)
    expect(jamieQuoteFound("gilt ab Mai eine Mindestbestellmenge von zehn Paletten", segments, 15)).toBe(true)
  })
  it("the closest passage never spans the marker (mail and meeting)", () => {
    const c = closestPassage("wie Frau redacted sagt, liefern wir schwarze Hakenleisten", mail)
    expect(c).not.toBeNull()
    expect(c?.passage).not.toContain("redacted")
    expect(c?.passage).toContain("sagt liefern wir schwarze hakenleisten")
    const s = closestInSegments("Laut Herrn redacted gilt ab Mai", [{ start_s: 10, text: "Laut Herrn [redacted] gilt ab Mai eine Menge" }])
    expect(s?.passage ?? "").not.toContain("redacted")
    // the passage a refusal offers passes the check as the quote
    expect(mailQuoteFound(c?.passage ?? "", mail)).toBe(true)
  })
})
