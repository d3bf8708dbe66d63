/**
 * The approval modes in a real browser (Debian chromium through playwright-core, gaps.md §10):
 * a person signs in and sees on the index the rule the policy adopted today and the proposals
 * waiting for a person, each with its reasons; opens the adopted rule, sees who adopted it and its
 * classification, and confirms it, which ends retractability. Screenshots go to
 * test-output/screenshots/ (desktop and phone width).
 */
import { mkdirSync } from "node:fs"
import { Effect } from "effect"
import { type Browser, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { intake } from "../../src/domain/intake.js"
import { storeSource } from "../../src/domain/sources.js"
import { approvalOf, EXCEPTION_LINES, internalMail, PLAIN, quoting } from "../support/approval.js"
import { CHROMIUM, DECISION_ACTIONS, expectInert, inspectDom, SCREENSHOTS, shot, submit, submitToken, watchedPage } from "./browser-support.js"
import { type ApprovalServer, startApprovalServer } from "./support.js"

let s: ApprovalServer
let browser: Browser
let page: Page
const violations: Array<string> = []
const dialogs: Array<string> = []

const propose = (line: string) =>
  s.run(Effect.map(intake(quoting(line), { grantId: s.feeder, channel: "api", requestId: null }), (r) => r.created))
const idOf = (ref: string) => ref.replace(/^rule\/|@\d+$/g, "")

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true })
  s = await startApprovalServer({ configure: approvalOf("classified") })
  await s.run(storeSource(internalMail(), s.feeder))
  browser = await chromium.launch({ executablePath: CHROMIUM })
  page = await watchedPage(browser, violations, dialogs)
}, 60_000)
afterAll(async () => {
  await browser.close()
  await s.cleanup()
})

describe("a person sees what the policy adopted and what waits", () => {
  it("the index lists the adopted rule and the waiting ones with their reasons; the rule page says who adopted it; confirm ends retractability", async () => {
    const adopted = await propose(PLAIN[1])
    const payment = await propose(EXCEPTION_LINES.payment)
    const doubt = await propose(EXCEPTION_LINES.doubt)
    expect([adopted.status, payment.status, doubt.status]).toEqual(["confirmed", "proposed", "proposed"])
    await page.goto(`${s.url}/approval`)
    await submitToken(page, s.url)
    expect(await page.textContent("h1")).toBe("2 open proposals")
    const adoptedList = await page.textContent("ol.adopted")
    expect(adoptedList).toContain(PLAIN[1])
    expect(adoptedList).toContain("auto-adopted")
    expect(adoptedList).toContain("in force, retractable until a person confirms it")
    expect(adoptedList).toContain("Adopted automatically (classified mode, class general")
    const body = await page.textContent("main")
    expect(body).toContain("Payment: rules about money always wait for a person, in every mode.")
    expect(body).toContain("Doubt: it sounds uncertain")
    expect(await page.locator(".badge.exception").allTextContents()).toEqual(expect.arrayContaining(["payment", "doubt"]))
    expectInert(await inspectDom(page), s.url, DECISION_ACTIONS)
    await shot(page, "a1-index-adopted-and-waiting")

    const id = idOf(adopted.ref)
    await Promise.all([page.waitForURL(`**/approval/rules/${id}`), page.click(`ol.adopted a[href="/approval/rules/${id}"]`)])
    expect(await page.textContent("#class-h + p")).toContain("The approval policy (ruleset gn-1) adopted this rule without a person.")
    expect(await page.textContent("main")).toContain("the approval policyDetails: policy@gn-1 · classified mode")
    await shot(page, "a2-rule-auto-adopted")
    const status = await submit(page, "text=Confirm version 2")
    expect(status).toBe(303)
    expect(await page.textContent("#outcome h2")).toBe("Confirmed.")
    expect(await page.textContent("#class-h + p")).toMatch(/^Confirmed by dev@example\.com on \d{4}-\d{2}-\d{2} \d{2}:\d{2}/)
    expect(await page.locator("text=Reject version").count()).toBe(0)
    await shot(page, "a3-rule-confirmed-by-person")
    expect(violations).toEqual([])
    expect(dialogs).toEqual([])
  }, 120_000)
})
