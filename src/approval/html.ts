/**
 * The HTML escaper of the approval pages (gaps.md §1: our own tagged template in place of
 * hono/html): every interpolated value is escaped unless it is already Html. It is the only way
 * the pages build HTML: there is no "raw" helper, so a string from the database can never become
 * markup. Attributes are always written double-quoted in the templates; a URL reaches an href
 * only through safeHref (http: and https: only).
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

/** Joins values (each escaped unless Html) with a separator. */
export const join = (values: ReadonlyArray<unknown>, separator: string): Html =>
  new Html(values.map(render).join(escapeHtml(separator)))

/**
 * A URL that may stand in an href: absolute http: or https: only (no javascript:, data:,
 * protocol-relative or scheme-less values), else null so the caller prints it as text.
 */
export const safeHref = (url: string | null | undefined): string | null => {
  if (url === null || url === undefined) return null
  if (!/^https?:\/\//i.test(url)) return null
  try {
    const parsed = new URL(url)
    return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.href : null
  } catch {
    return null
  }
}

/** A path segment of our own URLs (ids are checked by their patterns before; this is the second guard). */
export const segment = (s: string): string => encodeURIComponent(s)

/** Headers of every page (architecture.md §5.3). */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy": "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-content-type-options": "nosniff",
  "cache-control": "no-store"
}
