/**
 * Where the browser lands, in a real browser (Debian chromium through playwright-core): signing in
 * from a rule page's address comes back to that rule page, a hostile `next` lands on /approval,
 * the bare address opens /approval, and a sign-in at another address than public_url shows a
 * page naming it. Screenshots go to test-output/screenshots/.
 */
import { mkdirSync } from "node:fs"
import { Effect } from "effect"
import { type Browser, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { propose } from "../../src/domain/proposals.js"
import { storeSource } from "../../src/domain/sources.js"
import { mailProposal, mailSource } from "../support/fixtures.js"
import { CHROMIUM, SCREENSHOTS, shot, submitToken, watch } from "./browser-support.js"
import { APPROVAL_TOKEN, type ApprovalServer, startApprovalServer } from "./support.js"

let s: ApprovalServer
let browser: Browser
let page: Page
const violations: Array<string> = []
const dialogs: Array<string> = []
let id = ""

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true })
  s = await startApprovalServer()
  await s.run(storeSource(mailSource(), s.feeder))
  id = await s.run(Effect.map(propose(mailProposal({ statement: "Ask the supplier for the delivery time before ordering black hook rails" }), { grantId: s.feeder, channel: "api" }),
    (c) => c.ref.replace(/^rule\/|@\d+$/g, "")))
  browser = await chromium.launch({ executablePath: CHROMIUM })
  page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage()
  watch(page, violations, dialogs)
}, 60_000)
afterAll(async () => {
  await browser.close()
  await s.cleanup()
})

describe("the browser lands where the person meant to go", () => {
  it("opening a rule's approval_url without a session: sign in, and the rule page opens", async () => {
    await page.goto(`${s.url}/approval/rules/${id}`)
    expect(new URL(page.url()).pathname).toBe("/approval/login")
    await submitToken(page, s.url, `/approval/rules/${id}`)
    expect(await page.textContent("h1")).toBe("Ask the supplier for the delivery time before ordering black hook rails")
    expect(violations).toEqual([])
    expect(dialogs).toEqual([])
  }, 60_000)

  it("a hostile next on the login page lands on /approval, not off-site", async () => {
    const fresh = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage()
    for (const next of ["//evil.example/approval", "/\\evil.example/approval", "https://evil.example/approval"]) {
      await fresh.context().clearCookies()
      await fresh.goto(`${s.url}/approval/login?next=${encodeURIComponent(next)}`)
      await submitToken(fresh, s.url)
      expect(new URL(fresh.url()).origin).toBe(s.url)
    }
    await shot(fresh, "login-return-index")
  }, 60_000)

  it("the service's bare address opens the approval pages", async () => {
    await page.goto(`${s.url}/`)
    expect(new URL(page.url()).pathname).toBe("/approval")
  }, 60_000)

  it("signing in at another address than public_url (localhost for 127.0.0.1) shows a page that names public_url", async () => {
    const fresh = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage()
    const other = s.url.replace("127.0.0.1", "localhost")
    await fresh.goto(`${other}/approval/login`)
    await fresh.fill("#token", APPROVAL_TOKEN)
    const [response] = await Promise.all([fresh.waitForNavigation(), fresh.click("button[type=submit]")])
    expect(response?.status()).toBe(403)
    expect(await fresh.textContent("h1")).toBe("Sign-in refused: not sent from this service's address")
    expect(await fresh.textContent("main")).toContain(`at ${s.url} (its public_url)`)
    expect(await fresh.getAttribute(`main a[href="${s.url}/approval/login"]`, "href")).toBe(`${s.url}/approval/login`)
    await shot(fresh, "login-refused-other-origin")
  }, 60_000)
})
