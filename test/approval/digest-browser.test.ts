/**
 * The digest page and the recheck page (gaps.md §13) over real HTTP and in a real browser (Debian
 * chromium through playwright-core) at 1280 and 390 px: per scope what the policy adopted since
 * the day, what waits, what is due for recheck (oldest first) with one click to mark it reviewed;
 * the index links both; a missing or bad `since` is a 400 page naming it. Fixtures are written
 * with the real writers on a TestClock (40 days ago, an hour ago). Screenshots go to
 * test-output/screenshots/.
 */
import { mkdirSync } from "node:fs"
import { Effect, TestClock, TestContext } from "effect"
import { type Browser, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { dayBefore, dayIn } from "../../src/contracts/time.js"
import { decide } from "../../src/decision/decide.js"
import { intake } from "../../src/domain/intake.js"
import { storeSource } from "../../src/domain/sources.js"
import { approvalOf, EXCEPTION_LINES, internalMail, PLAIN, quoting } from "../support/approval.js"
import type { Stores } from "../support/run.js"
import { CHROMIUM, DECISION_ACTIONS, expectInert, inspectDom, SCREENSHOTS, shot, submit, submitToken, watchedPage } from "./browser-support.js"
import { APPROVAL_TOKEN, type ApprovalServer, startApprovalServer } from "./support.js"

const DAY_MS = 86_400_000
const ZONE = "Europe/Berlin"
let s: ApprovalServer
let browser: Browser
let page: Page
let cookie = ""
const violations: Array<string> = []
const dialogs: Array<string> = []
const ids: Record<string, string> = {}
const now = Date.now()
const yesterday = dayBefore(dayIn(ZONE, now))

const at = <A, E>(ms: number, effect: Effect.Effect<A, E, Stores>) =>
  s.run(Effect.gen(function*() {
    yield* TestClock.setTime(ms)
    return yield* effect
  }).pipe(Effect.provide(TestContext.TestContext)) as Effect.Effect<A, E, Stores>)
const propose = async (ms: number, line: string) =>
  (await at(ms, Effect.map(intake(quoting(line), { grantId: s.feeder, channel: "api", requestId: null }), (r) => r.created))).ref.replace(/^rule\/|@\d+$/g, "")
const get = async (path: string) => {
  const r = await fetch(`${s.url}${path}`, { headers: { cookie }, redirect: "manual" })
  return { status: r.status, text: await r.text() }
}
const textOf = (html: string): string =>
  html.replace(/<[^>]*>/g, " ").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, "\"").replace(/&#39;/g, "'").replace(/&amp;/g, "&").replace(/\s+/g, " ")

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true })
  s = await startApprovalServer({ configure: { ...approvalOf("classified"), recheck_after_days: 30 } })
  const old = now - 40 * DAY_MS
  await at(old, storeSource(internalMail(), s.feeder))
  ids.oldAuto = await propose(old, PLAIN[0])
  ids.confirmed = await propose(old + 60_000, EXCEPTION_LINES.doubt)
  await at(old + 120_000, decide(ids.confirmed, { decision: "confirm", version: 1 }, { grantId: "person:1", identity: "anna@example.com" }))
  ids.recentAuto = await propose(now - 60_000, PLAIN[1])
  ids.waiting = await propose(now - 60_000, EXCEPTION_LINES.payment)
  const login = await fetch(`${s.url}/approval/login`, {
    method: "POST", body: `token=${APPROVAL_TOKEN}`, headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" }, redirect: "manual"
  })
  cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] ?? ""
  browser = await chromium.launch({ executablePath: CHROMIUM })
  page = await watchedPage(browser, violations, dialogs)
}, 120_000)
afterAll(async () => {
  await browser.close()
  await s.cleanup()
})

describe("the digest and recheck pages over HTTP", () => {
  it("the digest lists per scope what was adopted since the day, what waits and what is due for recheck, oldest first", async () => {
    const r = await get(`/approval/digest?since=${yesterday}`)
    expect(r.status).toBe(200)
    const text = textOf(r.text)
    expect(text).toContain(`Digest since ${yesterday}`)
    expect(text).toContain("sales 1 adoption 1 rule proposal waiting 0 structure changes waiting 2 due for recheck")
    expect(text).toContain(`${PLAIN[1]} confirmed auto-adopted in force, retractable until a person confirms it adopted ${dayIn(ZONE, now - 60_000)}, today`)
    expect(text).not.toContain(`${PLAIN[0]} confirmed auto-adopted in force`)
    expect(text).toContain("1 rule proposal and no structure change waits for a person.")
    expect(r.text.indexOf(`id="r-${ids.oldAuto}"`)).toBeLessThan(r.text.indexOf(`id="r-${ids.confirmed}"`))
    expect(text).toContain("last reviewed 40 days ago")
    expect(text).toContain("ops 0 adoptions 0 rule proposals waiting 0 structure changes waiting 0 due for recheck")
    // an earlier day takes in the older adoption too
    expect(textOf((await get(`/approval/digest?since=${dayIn(ZONE, now - 41 * DAY_MS)}`)).text)).toContain("sales 2 adoptions")
  })

  it("a missing or bad since is a 400 page naming it", async () => {
    for (const q of ["", "?since=2026-02-30", "?since=yesterday", `?since=${yesterday}&scope=sales`]) {
      const r = await get(`/approval/digest${q}`)
      expect(r.status, q).toBe(400)
      expect(textOf(r.text), q).toContain(q.includes("scope=") ? "scope" : "since")
      expect(r.text).toContain("validation-failed")
    }
  })

  it("the index links the digest since yesterday and the recheck page with each scope's count", async () => {
    const r = await get("/approval")
    expect(r.text).toContain(`href="/approval/digest?since=${yesterday}"`)
    expect(r.text).toContain(`<a href="/approval/recheck?scope=sales">2 due for recheck</a>`)
    const recheck = await get("/approval/recheck?scope=sales")
    expect(recheck.status).toBe(200)
    expect(textOf(recheck.text)).toContain("2 rules due for recheck")
    expect((await get("/approval/recheck?scope=nope")).status).toBe(403)
  })
})

describe("the pages in a browser", () => {
  it("a person reads the digest, marks the oldest rule reviewed with one click; it leaves the recheck list", async () => {
    await page.goto(`${s.url}/approval`)
    await submitToken(page, s.url)
    await shot(page, "d0-index-with-digest-links")
    await Promise.all([page.waitForURL(`**/approval/digest?since=${yesterday}`), page.click("#digest-links a >> nth=0")])
    expect(await page.textContent("h1")).toBe(`Digest since ${yesterday}`)
    expect(await page.textContent("ol.adopted")).toContain(PLAIN[1])
    expect(await page.locator("ol.recheck li").count()).toBe(2)
    expectInert(await inspectDom(page), s.url, new RegExp(`${DECISION_ACTIONS.source}|^/approval/digest$`))
    await shot(page, "d1-digest")
    await page.setViewportSize({ width: 390, height: 844 })
    const overflow = await page.evaluate("document.documentElement.scrollWidth > document.documentElement.clientWidth")
    expect(overflow).toBe(false)
    await page.setViewportSize({ width: 1280, height: 900 })

    // another day through the form (GET, no script)
    await page.fill("#since", dayIn(ZONE, now - 41 * DAY_MS))
    await Promise.all([page.waitForURL("**/approval/digest?since=*"), page.click("text=Show the digest")])
    expect(await page.locator("ol.adopted li").count()).toBe(2)

    await page.goto(`${s.url}/approval/recheck`)
    expect(await page.textContent("h1")).toBe("2 rules due for recheck")
    await shot(page, "d2-recheck")
    const status = await submit(page, `#r-${ids.oldAuto} button[type=submit]`)
    expect(status).toBe(303)
    expect(page.url()).toContain(`/approval/rules/${ids.oldAuto}?done=review`)
    expect(await page.textContent("#outcome h2")).toBe("Marked as reviewed.")
    await page.goto(`${s.url}/approval/recheck`)
    expect(await page.textContent("h1")).toBe("1 rule due for recheck")
    expect(await page.locator(`#r-${ids.oldAuto}`).count()).toBe(0)
    expectInert(await inspectDom(page), s.url, DECISION_ACTIONS)
    await shot(page, "d3-recheck-after-review")
    expect(violations).toEqual([])
    expect(dialogs).toEqual([])
  }, 120_000)
})
