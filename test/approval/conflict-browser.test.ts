/**
 * The conflict view in a real browser (Debian chromium through playwright-core, gaps.md §13): a
 * person sees on the index that a proposal nearly repeats a confirmed rule, opens it, sees both
 * statements and both quotes in two columns at 1280 px and one above the other at 390 px, and
 * clicks "replace": the proposal is confirmed and the old rule superseded. Screenshots go to
 * test-output/screenshots/ (desktop and phone width).
 */
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import { type Browser, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { applyDecision } from "../../src/decision/decide.js"
import { intake } from "../../src/domain/intake.js"
import { storeSource } from "../../src/domain/sources.js"
import { internalMail, PLAIN, quoting } from "../support/approval.js"
import { sqlOf } from "../support/run.js"
import { CHROMIUM, DECISION_ACTIONS, expectInert, inPage, inspectDom, SCREENSHOTS, shot, submit, submitToken, watchedPage } from "./browser-support.js"
import { type ApprovalServer, DEV_EMAIL, startApprovalServer } from "./support.js"

let s: ApprovalServer
let browser: Browser
let page: Page
const violations: Array<string> = []
const dialogs: Array<string> = []

const OLD = "Pallets are always stored in the left courtyard of hall 3"
const NEW = "Pallets are stored in the left courtyard of hall 3, always"

const idOf = (ref: string) => ref.replace(/^rule\/|@\d+$/g, "")
const propose = (statement: string, line: string) =>
  s.run(Effect.map(intake(quoting(line, { statement }), { grantId: s.feeder, channel: "api", requestId: null }), (r) => idOf(r.created.ref)))
const statusOf = (id: string) =>
  s.run(Effect.flatMap(sqlOf("sales"), (sql) =>
    Effect.map(sql<{ status: string; supersedes: string | null; superseded_by: string | null }>`
      SELECT status, supersedes, superseded_by FROM current_version WHERE rule_id = ${id}`, (rows) => rows[0])))

/** The boxes of the proposal's and the confirmed rule's column. */
const BOXES = `(() => {
  const box = (sel) => { const r = document.querySelector(sel).getBoundingClientRect(); return { left: r.left, top: r.top, bottom: r.bottom, width: r.width } }
  return { fresh: box(".side .new"), old: box(".side .old"), page: document.documentElement.scrollWidth, view: window.innerWidth }
})()`
interface Box { readonly left: number; readonly top: number; readonly bottom: number; readonly width: number }

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true })
  s = await startApprovalServer()
  await s.run(storeSource(internalMail(), s.feeder))
  browser = await chromium.launch({ executablePath: CHROMIUM })
  page = await watchedPage(browser, violations, dialogs)
}, 60_000)
afterAll(async () => {
  await browser.close()
  await s.cleanup()
})

describe("a proposal beside the confirmed rule it nearly repeats", () => {
  it("is marked on the index, shown side by side at 1280 px and stacked at 390 px, and replace supersedes the old rule", async () => {
    const old = await propose(OLD, PLAIN[1])
    await s.run(applyDecision(old, { decision: "confirm", version: 1 }, { grantId: "person:1", identity: DEV_EMAIL }))
    const fresh = await propose(NEW, PLAIN[4])

    await page.goto(`${s.url}/approval`)
    await submitToken(page, s.url)
    const note = await page.textContent(`li#p-${fresh} .conflictnote`)
    expect(note).toContain(`says nearly the same as the confirmed rule ${OLD}`)
    expectInert(await inspectDom(page), s.url, DECISION_ACTIONS)
    await shot(page, "c1-index-conflict")

    await Promise.all([page.waitForURL(`**/approval/rules/${fresh}#conflict-h`), page.click(`li#p-${fresh} .conflictnote a[href$="#conflict-h"]`)])
    expect(await page.textContent("#conflict-h")).toBe("Conflicts with a confirmed rule")
    expect(await page.textContent(".side .new .statement")).toBe(NEW)
    expect(await page.textContent(".side .new blockquote")).toBe(PLAIN[4])
    expect(await page.textContent(".side .old .statement")).toBe(OLD)
    expect(await page.textContent(".side .old blockquote")).toBe(PLAIN[1])
    // (the mail's own link leads to the fixture's mail host, so only the forms are checked here)
    for (const a of (await inspectDom(page)).actions) expect(a).toMatch(DECISION_ACTIONS)

    const wide = await inPage<{ fresh: Box; old: Box; page: number; view: number }>(page, BOXES)
    expect(wide.old.left).toBeGreaterThan(wide.fresh.left + wide.fresh.width - 1)
    expect(Math.abs(wide.old.top - wide.fresh.top)).toBeLessThan(2)
    expect(wide.page).toBeLessThanOrEqual(wide.view)
    await page.setViewportSize({ width: 390, height: 844 })
    const narrow = await inPage<{ fresh: Box; old: Box; page: number; view: number }>(page, BOXES)
    expect(narrow.old.top).toBeGreaterThanOrEqual(narrow.fresh.bottom)
    expect(Math.abs(narrow.old.left - narrow.fresh.left)).toBeLessThan(2)
    expect(narrow.page).toBeLessThanOrEqual(narrow.view)
    await page.locator("section.conflicts").screenshot({ path: join(SCREENSHOTS, "c2-conflict-section-phone.png") })
    await page.setViewportSize({ width: 1280, height: 900 })
    await page.locator("section.conflicts").screenshot({ path: join(SCREENSHOTS, "c2-conflict-section-desktop.png") })
    await shot(page, "c2-rule-conflict-side-by-side")

    const status = await submit(page, `text=Replace ${old} with this proposal`)
    expect(status).toBe(303)
    expect(await page.textContent("#outcome h2")).toBe("Confirmed.")
    expect(await page.textContent("main")).toContain(`Replaces ${old}: ${OLD} (superseded)`)
    expect(await page.locator("#conflict-h").count()).toBe(0)
    await shot(page, "c3-rule-replaced")
    expect(await statusOf(fresh)).toEqual({ status: "confirmed", supersedes: old, superseded_by: null })
    expect(await statusOf(old)).toEqual({ status: "superseded", supersedes: null, superseded_by: fresh })
    expect(violations).toEqual([])
    expect(dialogs).toEqual([])
  }, 120_000)
})
