/**
 * A person without a grant, as the user met it: a person signs in with the valid dev approval token, but
 * no active grant names their address (never created, or disabled). Chromium used to bounce
 * between /approval and /approval/login until ERR_TOO_MANY_REDIRECTS; now every approval page
 * ends on one page that says there is no active grant for that address and what the operator
 * runs to create one. Once the grant exists, a reload shows the proposals.
 */
import { Effect } from "effect"
import { type Browser, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OpsStore } from "../../src/db/ops-store.js"
import { CHROMIUM, expectInert, inspectDom, shot, watch } from "./browser-support.js"
import { APPROVAL_TOKEN, type ApprovalServer, DEV_EMAIL, startApprovalServer } from "./support.js"

let browser: Browser
const violations: Array<string> = []
const dialogs: Array<string> = []

beforeAll(async () => {
  browser = await chromium.launch({ executablePath: CHROMIUM })
}, 60_000)
afterAll(async () => {
  await browser.close()
})

/** Signs in through the login form as the user did; returns every navigation status on the way. */
const signIn = async (page: Page, url: string) => {
  const statuses: Array<string> = []
  page.on("response", (r) => {
    if (r.request().isNavigationRequest()) statuses.push(`${r.status()} ${new URL(r.url()).pathname}`)
  })
  await page.goto(`${url}/approval`)
  expect(new URL(page.url()).pathname).toBe("/approval/login")
  await page.fill("#token", APPROVAL_TOKEN)
  // the navigation must settle: a redirect loop makes this reject with ERR_TOO_MANY_REDIRECTS
  await Promise.all([page.waitForNavigation(), page.click("button[type=submit]")])
  return statuses
}

const COMMAND = `npx groundnote grants create --kind person --auth email --identity ${DEV_EMAIL} --scope sales --scope ops --right read --right decide`

describe("a valid login without an active grant", () => {
  let s: ApprovalServer
  beforeAll(async () => {
    s = await startApprovalServer({ personGrant: false })
  }, 60_000)
  afterAll(async () => {
    await s.cleanup()
  })

  it("ends on a page that names the address and the command that creates the grant; no redirect loop", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    const page = await context.newPage()
    watch(page, violations, dialogs)
    const statuses = await signIn(page, s.url)
    expect(new URL(page.url()).pathname).toBe("/approval")
    // login 303 → /approval answers the page itself, once
    expect(statuses.slice(-2)).toEqual(["303 /approval/login", "401 /approval"])
    expect(await page.textContent("h1")).toBe(`No active grant for ${DEV_EMAIL}`)
    expect(await page.textContent("pre.command")).toBe(COMMAND)
    const text = await page.textContent("main") ?? ""
    expect(text).toContain("there is no active grant for that address")
    expect(text).toContain("npx groundnote grants list")
    const dom = await inspectDom(page)
    expectInert(dom, s.url, /^\/approval\/logout$/)
    await shot(page, "n1-no-active-grant")

    // the login page and every other page end there too, never bouncing back
    for (const path of ["/approval/login", "/approval/structure?scope=sales", "/approval/rules/sales-0001"]) {
      const r = await page.goto(`${s.url}${path}`)
      expect(r?.status(), path).toBe(401)
      expect(await page.textContent("h1"), path).toBe(`No active grant for ${DEV_EMAIL}`)
    }

    // the operator creates the grant as the page says; a reload shows the proposals
    await s.run(Effect.flatMap(OpsStore, (ops) =>
      ops.createGrant({ kind: "person", auth: "email", identity: DEV_EMAIL, scopes: ["sales", "ops"], rights: ["read", "decide"] })))
    const again = await page.goto(`${s.url}/approval`)
    expect(again?.status()).toBe(200)
    expect(await page.textContent("h1")).toBe("Nothing waits for you")

    expect(violations).toEqual([])
    expect(dialogs).toEqual([])
    await context.close()
  })

  it("a disabled grant ends on the same page; signing out from it returns to the login form", async () => {
    const t = await startApprovalServer()
    try {
      await t.run(Effect.gen(function*() {
        const ops = yield* OpsStore
        const grants = yield* ops.listGrants()
        for (const g of grants) if (g.kind === "person") yield* ops.disableGrant(g.id)
      }))
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
      const page = await context.newPage()
      await signIn(page, t.url)
      expect(await page.textContent("h1")).toBe(`No active grant for ${DEV_EMAIL}`)
      await Promise.all([page.waitForURL(`${t.url}/approval/login`), page.click("header button")])
      expect(await page.textContent("h1")).toBe("Sign in")
      await context.close()
    } finally {
      await t.cleanup()
    }
  })

  it("without any sign-in the pages still go to the login form", async () => {
    const r = await fetch(`${s.url}/approval`, { redirect: "manual" })
    expect(r.status).toBe(303)
    expect(r.headers.get("location")).toBe("/approval/login")
  })
})
