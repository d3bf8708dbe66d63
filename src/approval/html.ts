/**
 * The HTML escaper of the approval pages (gaps.md §1: our own tagged template in place of
 * hono/html): every interpolated value is escaped unless it is already Html.
 */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value
  }
}

export const escapeHtml = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;")

const render = (v: unknown): string => {
  if (v instanceof Html) return v.value
  if (Array.isArray(v)) return v.map(render).join("")
  if (v === null || v === undefined || v === false) return ""
  return escapeHtml(String(v))
}

export const html = (strings: TemplateStringsArray, ...values: ReadonlyArray<unknown>): Html =>
  new Html(strings.reduce((out, s, i) => out + s + (i < values.length ? render(values[i]) : ""), ""))

/** Headers of every page (architecture.md §5.3). */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-content-type-options": "nosniff",
  "cache-control": "no-store"
}
