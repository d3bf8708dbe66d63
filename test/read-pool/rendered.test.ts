/**
 * renderSearch (src/read-pool/rendered.ts): the bytes are the UTF-8 of exactly JSON.stringify's text of the response,
 * and a bundle object is rendered once (a held answer's bundles are the same objects in every
 * answer that shows them).
 */
import { describe, expect, it } from "vitest"
import type { Bundle, SearchResponse } from "../../src/domain/search-schemas.js"
import { renderSearch, responseParts } from "../../src/read-pool/rendered.js"

/** JSON.stringify(response), with each bundle's text as kept */
const responseJson = (r: SearchResponse): string => responseParts(r).json

const bundle = (ref: string, statement: string): Bundle => ({
  head: { ref, scope: "sales", statement, quote: "„Skonto“ — 2 % \"netto\"\n\ttab \\ slash \u2028", rank: { a: 1.25, b: null, rrf: null, reranker: null }, age_days: 0, entities: [] },
  groups: [{ kind: "source", count: 1, more: 0, entries: [{ ref: "source/mail:<a@x>", title: null, origin: "deterministic", proposed: false }] }],
  line: `Rule: ${statement} 😀`
} as unknown as Bundle)

const response = (bundles: ReadonlyArray<Bundle>): SearchResponse => ({
  search_id: "00000000-0000-4000-8000-000000000000",
  scopes: ["sales"],
  stages: { a: { state: "ran", duration_ms: 3, reason: null }, b: { state: "off", duration_ms: null, reason: "disabled in config" }, c: { state: "off", duration_ms: null, reason: "disabled in config" } },
  query: { terms: ["rechnung", "skonto"], variants: { rechnung: ["rechnungen"], "~skonto": [] } },
  bundles,
  abstained: bundles.length === 0 ? { reason: "no-candidate", best_coverage: null, min_coverage: 0.3 } : null
})

describe("renderSearch", () => {
  it("gives the UTF-8 of JSON.stringify's text of the response, with and without bundles", () => {
    const some = response([bundle("rule/sales-0001@2", "Rechnungen mit Skonto"), bundle("rule/sales-0002@2", "Zahlungsziel dreißig Tage")])
    const none = response([])
    // a head with characters past ASCII: the tail's byte is not its character index
    const wide: SearchResponse = { ...some, stages: { ...some.stages, b: { state: "off", duration_ms: null, reason: "Modell läuft nicht — später" } } }
    for (const r of [some, none, wide]) {
      expect(responseJson(r)).toBe(JSON.stringify(r))
      const rendered = renderSearch({ response: r, perScope: [] })
      expect(new TextDecoder().decode(rendered.body)).toBe(JSON.stringify(r))
      // the tail begins at a byte of its own: the head's bytes decode to the text up to the tail
      expect(new TextDecoder().decode(rendered.body.subarray(0, rendered.tailAt))).toBe(responseParts(r).json.slice(0, responseParts(r).tailAt))
      expect(JSON.parse(responseJson(r))).toEqual(r)
    }
  })

  it("writes the bytes of JSON.stringify's text, byte for byte, wherever the tail begins", () => {
    const one = bundle("rule/sales-0001@2", "Rechnungen mit Skonto – „netto“ 😀")
    const two = bundle("rule/sales-0002@2", "Zahlungsziel dreißig Tage")
    const wide = { ...response([one, two]), stages: { ...response([]).stages, c: { state: "off", duration_ms: null, reason: "läuft nicht — später" } } } as SearchResponse
    for (const r of [response([]), response([one]), response([one, two]), wide]) {
      const rendered = renderSearch({ response: r, perScope: [] })
      expect(Buffer.from(rendered.body).equals(Buffer.from(JSON.stringify(r), "utf8"))).toBe(true)
      // the head's bytes are the UTF-8 of the text up to the tail, and the body is a buffer of its own (a worker moves it)
      expect(Buffer.from(rendered.body.subarray(0, rendered.tailAt)).equals(Buffer.from(responseParts(r).json.slice(0, responseParts(r).tailAt), "utf8"))).toBe(true)
      expect(rendered.body.byteOffset).toBe(0)
      expect(rendered.body.buffer.byteLength).toBe(rendered.body.length)
    }
    // a held answer's bundle, rendered again in another answer: the kept bytes, not a new rendering
    const first = renderSearch({ response: response([one]), perScope: [] })
    ;(one as { line: string }).line = "changed"
    const again = renderSearch({ response: { ...response([one]), search_id: "00000000-0000-4000-8000-000000000001" }, perScope: [] })
    expect(new TextDecoder().decode(again.body)).toBe(new TextDecoder().decode(first.body).replace("00000000-0000-4000-8000-000000000000", "00000000-0000-4000-8000-000000000001"))
  })

  it("renders a bundle object once: the next answer with it takes its text as kept", () => {
    const held = bundle("rule/sales-0001@2", "Rechnungen mit Skonto")
    const first = responseJson(response([held]))
    // the same object in another answer (another search_id): the same bundle text
    const second = responseJson({ ...response([held]), search_id: "00000000-0000-4000-8000-000000000001" })
    expect(second).toBe(first.replace("00000000-0000-4000-8000-000000000000", "00000000-0000-4000-8000-000000000001"))
    // the kept text is the object's first rendering: a change made after it (nothing does so) is not seen
    ;(held as { line: string }).line = "changed"
    expect(responseJson(response([held]))).toBe(first)
    expect(responseJson(response([{ ...held }]))).toContain("\"line\":\"changed\"")
  })
})
