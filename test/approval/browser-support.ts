/** The browser side of the approval tests: Debian chromium through playwright-core, screenshots, DOM checks. */
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import type { Browser, BrowserContextOptions, Page } from "playwright-core"
import { expect } from "vitest"
import { APPROVAL_TOKEN } from "./support.js"

export const CHROMIUM = "/usr/bin/chromium"
export const SCREENSHOTS = join(import.meta.dirname, "..", "..", "test-output", "screenshots")

export const watch = (p: Page, into: Array<string>, dialogsInto: Array<string>) => {
  p.on("console", (m) => {
    if (/content security policy|refused to/i.test(m.text())) into.push(`${p.url()}: ${m.text()}`)
  })
  p.on("dialog", (d) => {
    dialogsInto.push(d.message())
    void d.dismiss()
  })
}

/** A page of a new browser context (a laptop's viewport unless `options` say otherwise) whose CSP violations and dialogs are collected. */
export const watchedPage = async (browser: Browser, violations: Array<string>, dialogs: Array<string>, options: BrowserContextOptions = {}): Promise<Page> => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...options })
  const p = await context.newPage()
  watch(p, violations, dialogs)
  return p
}

/** Sends the login form the page shows with the approval token and waits until the browser lands on `landing`. */
export const submitToken = async (p: Page, url: string, landing = "/approval"): Promise<void> => {
  await p.fill("#token", APPROVAL_TOKEN)
  await Promise.all([p.waitForURL(`${url}${landing}`), p.click("button[type=submit]")])
}

/** Signs the page in through the login form, as a person does: it then stands on /approval. */
export const signIn = async (p: Page, url: string): Promise<void> => {
  await p.goto(`${url}/approval/login`)
  await submitToken(p, url)
}

/** The two widths every page is looked at: a laptop and a phone. */
export const WIDTHS = [{ name: "desktop", width: 1280, height: 900 }, { name: "phone", width: 390, height: 844 }] as const

/** Full-page screenshots of the page at desktop and phone width (`<name>-desktop.png`, `<name>-phone.png`); the viewport is restored. */
export const shot = async (p: Page, name: string) => {
  mkdirSync(SCREENSHOTS, { recursive: true })
  const before = p.viewportSize()
  for (const w of WIDTHS) {
    await p.setViewportSize({ width: w.width, height: w.height })
    await p.screenshot({ path: join(SCREENSHOTS, `${name}-${w.name}.png`), fullPage: true })
  }
  if (before !== null) await p.setViewportSize(before)
}

/** Clicks a submit button and returns the status of the navigation it causes. */
export const submit = async (p: Page, selector: string): Promise<number> => {
  const [response] = await Promise.all([p.waitForNavigation(), p.click(selector)])
  const first = response?.request().redirectedFrom()
  const r = first === null || first === undefined ? response : await first.response()
  return r?.status() ?? 0
}

/** Every payload must arrive as text: no element, attribute or URL scheme of it in the DOM. */
export const XSS = [
  "<script>window.__xss=1</script>",
  "\"><img src=x onerror=window.__xss=2>",
  "'><svg onload=window.__xss=3>",
  "javascript:window.__xss=4",
  "</textarea><script>window.__xss=5</script>",
  "<a href=\"javascript:window.__xss=6\">click</a>",
  "<style>body{display:none}</style>",
  "<meta http-equiv=\"refresh\" content=\"0;url=https://evil.example\">",
  "<base href=\"https://evil.example/\">",
  "<iframe src=\"https://evil.example\"></iframe>",
  "&lt;b&gt;double&lt;/b&gt; &amp;",
  "<form action=\"https://evil.example\"><button>x</button></form>"
]

const ALLOWED_TAGS = new Set(["HTML", "HEAD", "META", "TITLE", "LINK", "BODY", "A", "HEADER", "NAV", "SPAN", "B", "FORM", "INPUT", "BUTTON",
  "MAIN", "P", "H1", "H2", "H3", "DIV", "BLOCKQUOTE", "DL", "DT", "DD", "UL", "OL", "LI", "SECTION", "DETAILS", "SUMMARY", "TABLE",
  "THEAD", "TBODY", "TR", "TH", "TD", "TIME", "MARK", "TEXTAREA", "SELECT", "OPTION", "LABEL", "PRE", "CODE", "FIELDSET", "LEGEND"])
const ALLOWED_ATTRIBUTES = new Set(["lang", "charset", "name", "content", "rel", "href", "class", "id", "aria-label", "aria-labelledby", "role",
  "title", "datetime", "method", "action", "type", "value", "required", "minlength", "maxlength", "min", "autocomplete", "autofocus", "for",
  "selected", "open", "reversed", "scope", "inputmode", "pattern", "placeholder", "checked", "form", "disabled", "hidden"])

/** Tags, attributes, hrefs and form actions of the page, and whether a payload ran. */
export interface DomFacts {
  readonly tags: Array<string>
  readonly attributes: Array<string>
  readonly hrefs: Array<string>
  readonly actions: Array<string>
  readonly metas: number
  readonly xss: unknown
  readonly text: string
}

/** Runs in the page (a string: the project's TypeScript has no DOM types). */
const DOM_FACTS = `(() => {
  const all = [...document.querySelectorAll("*")]
  return {
    tags: [...new Set(all.map((e) => e.tagName))],
    attributes: [...new Set(all.flatMap((e) => [...e.attributes].map((a) => a.name)))],
    hrefs: all.filter((e) => e.hasAttribute("href")).map((e) => e.getAttribute("href") || ""),
    actions: [...document.forms].map((f) => f.getAttribute("action") || ""),
    metas: document.querySelectorAll("meta").length,
    xss: window.__xss === undefined ? null : window.__xss,
    text: document.body.innerText
  }
})()`

/** Tags, attributes, hrefs and form actions of the page, and whether a payload ran. */
export const inspectDom = (p: Page): Promise<DomFacts> => p.evaluate(DOM_FACTS) as Promise<DomFacts>

/** Evaluates an expression in the page. */
export const inPage = <A>(p: Page, expression: string): Promise<A> => p.evaluate(expression) as Promise<A>

export const expectInert = (dom: DomFacts, origin: string, allowedActions: RegExp) => {
  expect(dom.xss).toBeNull()
  expect(dom.tags.filter((t) => !ALLOWED_TAGS.has(t))).toEqual([])
  expect(dom.attributes.filter((a) => !ALLOWED_ATTRIBUTES.has(a))).toEqual([])
  expect(dom.metas).toBe(3)
  for (const h of dom.hrefs) {
    const u = new URL(h, origin)
    expect(["http:", "https:"], h).toContain(u.protocol)
    expect(h.startsWith("//"), h).toBe(false)
    if (u.origin !== origin) expect(["mail.example.com", "jamie.example.com"], h).toContain(u.hostname)
  }
  for (const a of dom.actions) expect(a, a).toMatch(allowedActions)
}

export const DECISION_ACTIONS =
  /^\/(v1\/rules\/[a-z0-9-]+\/decision|v1\/decisions|approval\/logout|v1\/reviews|v1\/entities\/[a-z0-9-]+\/(archive|unarchive)|v1\/structure\/(entities|links)|v1\/links\/[a-z0-9-]+\/close)$/

