import fc from "fast-check"
import MarkdownIt from "markdown-it"
import { describe, expect, it } from "vitest"
import { escapeForeign, foreignBlock, isMultiline, normalizeNewlines } from "../../src/export/escape.js"

const md = new MarkdownIt({ html: true, linkify: true })

/** Text content of markdown-it output: tags dropped, markdown-it's own entities decoded. */
const textOf = (html: string): string =>
  html.replace(/<[^>]*>/g, "").replace(/&quot;/g, "\"").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&")

const squash = (s: string): string => s.replace(/\s+/g, " ").trim()

/** Tags markdown-it may emit for escaped foreign text: paragraphs, hard breaks, our list. */
const tagsOf = (html: string): Array<string> => [...html.matchAll(/<\/?([a-z0-9]+)/g)].map((m) => m[1] ?? "")

const PAYLOADS = [
  "[x](https://evil)",
  "<script>alert(1)</script>",
  "<img src=x onerror=1>",
  "# Heading",
  "Title\n===",
  "Title\n---",
  "| a | b |\n|---|---|",
  "https://evil.example",
  "www.evil.example",
  "WWW.evil.example",
  "mail@evil.example",
  "mailto:mail@evil.example",
  "`code`",
  "```\nfenced\n```",
  "~~~\nfenced\n~~~",
  "&lt;b&gt;",
  "&#60;script&#62;",
  "line one\rline two\u0085line three\u2028line four\u2029line five\r\nline six",
  "x //localhost:8080 y",
  "<https://evil.example>",
  "[ref]: https://evil.example\n\n[ref]",
  "![img](https://evil.example/x.png)",
  "> quoted\n>> deeper",
  "- item\n+ item\n* item\n1. item\n2) item\n  10. item",
  "***\n___\n- - -",
  "    indented code\n\n        more",
  "\tTabbed - x",
  "back\\slash\\\nbreak",
  "<!-- comment -->",
  "<div>\n\nblock html\n\n</div>",
  "a|b",
  "##no space",
  "ftp://evil.example/x",
  "#hashtag and @mention"
]

describe("normalizeNewlines", () => {
  it("maps CRLF, CR, NEL, U+2028 and U+2029 to LF and nothing else", () => {
    expect(normalizeNewlines("a\r\nb\rc\u0085d\u2028e\u2029f\ng")).toBe("a\nb\nc\nd\ne\nf\ng")
    expect(normalizeNewlines("\r\n\r\n")).toBe("\n\n")
    expect(normalizeNewlines("tab\there\u000bvt")).toBe("tab\there\u000bvt")
  })
})

describe("escapeForeign", () => {
  it("escapes the contract's characters and the GFM extras", () => {
    expect(escapeForeign("\\ ` | [ ] < >")).toBe("\\\\ \\` \\| \\[ \\] \\< \\>")
    expect(escapeForeign("a # b @ c & d")).toBe("a \\# b \\@ c \\& d")
    expect(escapeForeign("https://x")).toBe("https\\:\\//x")
    expect(escapeForeign("see www.x and :/ and a/b")).toBe("see www\\.x and :/ and a/b")
    expect(escapeForeign("= - + * _ ~ mid-line stay")).toBe("\\= - + * _ ~ mid-line stay")
    expect(escapeForeign("  - item\n12. x\n3) y\n4a. z")).toBe("  \\- item\n12\\. x\n3\\) y\n4a. z")
    expect(escapeForeign("plain text, 1.5 % (ok) \"quoted\" 'x' ! ä")).toBe("plain text, 1.5 % (ok) \"quoted\" 'x' ! ä")
  })

  it("normalizes line breaks first", () => {
    expect(escapeForeign("a\r\n# b\u2028- c")).toBe("a\n\\# b\n\\- c")
    expect(isMultiline("a\u0085b")).toBe(true)
    expect(isMultiline("ab")).toBe(false)
  })

  it.each(PAYLOADS)("renders %j as its own text, inline and as a block", (payload) => {
    const expected = squash(normalizeNewlines(payload))
    const renders: Array<readonly [string, string]> = [[md.render(foreignBlock(payload)), expected]]
    if (!isMultiline(payload)) renders.push([md.render(`- label: ${escapeForeign(payload)}`), `label: ${expected}`])
    for (const [html, text] of renders) {
      for (const tag of new Set(tagsOf(html))) expect(["p", "br", "ul", "li"], `${tag} in ${html}`).toContain(tag)
      expect(squash(textOf(html))).toBe(text)
    }
  })

  it("keeps indentation of block lines as text, never as a code block", () => {
    const html = md.render(foreignBlock("first\n\n    indented\n\tand tabbed"))
    expect(html).not.toContain("<pre")
    expect(textOf(html)).toContain("    indented\n\tand tabbed")
  })

  it("indents block lines for list items and drops outer blank lines", () => {
    expect(foreignBlock("\n\n a\n  \n# b\n\n", "  ")).toBe("  &#32;a\n\n  \\# b")
    expect(foreignBlock(" \n\t\n")).toBe("")
  })

  it("property: any text of Markdown-active characters renders as itself and forms no structure", () => {
    // `*`, `_` and `~` inside a line may still form emphasis (formatting, not structure): left out
    const alphabet = [
      "a", "b", "w", "W", "h", "t", "p", "s", ":", "/", ".", "@", "&", ";", "#", "[", "]", "(", ")", "<", ">",
      "!", "`", "|", "\\", "-", "+", "=", "1", "9", "\"", "'", "{", "}", "ä", " ", " ", "\t", "\n", "\r", "\u0085",
      "\u2028", "\u2029", "x", "q", "l", "g", "m", "i", "o"
    ]
    const text = fc.array(fc.constantFrom(...alphabet), { maxLength: 60 }).map((cs) => cs.join(""))
    fc.assert(fc.property(text, (payload) => {
      const html = md.render(foreignBlock(payload))
      for (const tag of tagsOf(html)) expect(["p", "br"]).toContain(tag)
      expect(squash(textOf(html))).toBe(squash(normalizeNewlines(payload)))
      const line = normalizeNewlines(payload).replace(/\n/g, " ")
      const inline = md.render(`- label: ${escapeForeign(line)}`)
      for (const tag of tagsOf(inline)) expect(["ul", "li", "br"]).toContain(tag)
      expect(squash(textOf(inline))).toBe(squash(`label: ${line}`))
    }), { numRuns: 2000 })
  })
})
