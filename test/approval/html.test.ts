/** The one escaper of the approval pages (src/approval/html.ts) and its URL guard. */
import { describe, expect, it } from "vitest"
import { escapeHtml, html, join, safeHref } from "../../src/approval/html.js"

describe("html``", () => {
  it("escapes every interpolated value: & < > \" '", () => {
    const v = `<script>alert("x")</script> & 'y'`
    expect(html`<p title="${v}">${v}</p>`.value).toBe(
      "<p title=\"&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;\">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;</p>"
    )
  })
  it("keeps nested Html, escapes arrays element by element, drops null/undefined/false", () => {
    const inner = html`<b>${"<i>"}</b>`
    expect(html`${inner}${["<a>", inner]}${null}${undefined}${false}${0}`.value).toBe("<b>&lt;i&gt;</b>&lt;a&gt;<b>&lt;i&gt;</b>0")
  })
  it("a plain object or a string that looks like markup is never trusted", () => {
    const fake = { value: "<script>x</script>" }
    expect(html`${fake}`.value).toBe("[object Object]")
    expect(html`${"<!-- -->"}`.value).toBe("&lt;!-- --&gt;")
  })
  it("join escapes values and the separator", () => {
    expect(join(["<a>", "b"], " & ").value).toBe("&lt;a&gt; &amp; b")
  })
  it("escapeHtml is idempotent-safe: an escaped entity is escaped again, never decoded", () => {
    expect(escapeHtml("&lt;")).toBe("&amp;lt;")
  })
})

describe("safeHref", () => {
  it("passes absolute http and https URLs", () => {
    expect(safeHref("https://mail.example.com/m/1")).toBe("https://mail.example.com/m/1")
    expect(safeHref("HTTP://example.com")).toBe("http://example.com/")
  })
  it("refuses every other scheme and scheme-less or protocol-relative values", () => {
    for (const bad of ["javascript:alert(1)", "JaVaScRiPt:alert(1)", " javascript:alert(1)", "data:text/html,<b>", "vbscript:x",
      "//evil.example/x", "/approval", "mailto:a@b", "http:/x", "file:///etc/passwd", "\u0000javascript:alert(1)", "java\nscript:alert(1)"]) {
      expect(safeHref(bad), bad).toBeNull()
    }
    expect(safeHref(null)).toBeNull()
  })
})
