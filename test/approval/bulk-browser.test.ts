/**
 * The bulk forms in a real browser (gaps.md §13), no JavaScript: on the approval index a person
 * selects proposals and confirms them with one click; a refused bulk names the item, keeps the
 * selection and writes nothing; Enter in the reason field submits nothing. On the structure page
 * the checkboxes sit in the items (each has its own forms) and belong to the one bulk form.
 * Screenshots at 1280 and 390 px go to test-output/screenshots/.
 */
import { Effect } from "effect"
import { type Browser, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createEntity } from "../../src/graph/entities.js"
import { proposeLink } from "../../src/graph/links.js"
import { propose } from "../../src/domain/proposals.js"
import { storeSource } from "../../src/domain/sources.js"
import { sqlOf } from "../support/run.js"
import { mailProposal, mailSource } from "../support/fixtures.js"
import { CHROMIUM, DECISION_ACTIONS, expectInert, inspectDom, shot, signIn, submit, watchedPage } from "./browser-support.js"
import { type ApprovalServer, startApprovalServer } from "./support.js"

let s: ApprovalServer
let browser: Browser
let page: Page
const violations: Array<string> = []
const dialogs: Array<string> = []
const agent = () => ({ grantId: s.feeder, channel: "mcp" as const })
const rules: Array<string> = []
let entities: Array<string> = []
let linkId = ""

const STATEMENTS = [
  "Ask the supplier for the delivery time before ordering black hook rails",
  "Invoices above 5000 euros need a second signature from finance",
  "Customers in Austria get the price list in German only",
  "Returned goods are checked by the warehouse within two working days"
]

const counts = () =>
  s.run(Effect.flatMap(sqlOf("sales"), (sql) => Effect.map(
    sql<{ t: string; n: number }>`SELECT 'decision' AS t, count(*) AS n FROM decision UNION ALL SELECT 'review', count(*) FROM review UNION ALL SELECT 'rule_version', count(*) FROM rule_version`,
    (rows) => Object.fromEntries(rows.map((r) => [r.t, r.n]))
  )))

beforeAll(async () => {
  s = await startApprovalServer()
  await s.run(storeSource(mailSource(), s.feeder))
  for (const statement of STATEMENTS) {
    rules.push(await s.run(Effect.map(propose(mailProposal({ statement }), { grantId: s.feeder, channel: "api" }), (c) => c.ref.replace(/^rule\/|@\d+$/g, ""))))
  }
  const org = await s.run(Effect.map(createEntity({ scope: "sales", type: "organisation", name: "Acme", parent_id: null }, agent()), (e) => e.id))
  entities = [org]
  for (const name of ["Purchasing", "Warehouse"]) {
    entities.push(await s.run(Effect.map(createEntity({ scope: "sales", type: "department", name, parent_id: org }, agent()), (e) => e.id)))
  }
  linkId = await s.run(Effect.map(proposeLink({ scope: "sales", from_ref: `rule/${rules[0]}`, to_ref: `entity/${entities[1]}`, type: "concerns", confidence: 0.7, reason: "purchasing orders the rails" }, { grantId: s.feeder }), (r) => r.link.id ?? ""))
  browser = await chromium.launch({ executablePath: CHROMIUM })
  page = await watchedPage(browser, violations, dialogs)
  await signIn(page, s.url)
}, 60_000)
afterAll(async () => {
  await browser.close()
  await s.cleanup()
})

/** The page's markup as loaded, in a fresh tab (the browser's form-state restore marks the used tab's inputs). */
const expectInertPage = async (url: string) => {
  const fresh = await page.context().newPage()
  try {
    await fresh.goto(url)
    expectInert(await inspectDom(fresh), s.url, DECISION_ACTIONS)
  } finally {
    await fresh.close()
  }
}

describe("the bulk form of the approval index", () => {
  it("Enter in the reason field submits nothing; a reject without a reason is refused naming the proposal, the selection kept, nothing written", async () => {
    await page.goto(`${s.url}/approval`)
    await page.check(`input[name="item:${rules[1]}"]`)
    await page.check(`input[name="item:${rules[2]}"]`)
    await shot(page, "40-bulk-index-selected")
    const before = await counts()
    await page.fill("#bulk-reason-sales", "looks fine")
    await page.press("#bulk-reason-sales", "Enter")
    await page.waitForTimeout(300)
    expect(page.url()).toBe(`${s.url}/approval`)
    expect(await counts()).toEqual(before)
    await page.fill("#bulk-reason-sales", "")
    expect(await submit(page, "#bulk-sales button[value=reject]")).toBe(400)
    await shot(page, "41-bulk-index-refused")
    const notice = await page.locator("#outcome").innerText()
    expect(notice).toContain("Not saved: a reason is needed")
    expect(notice).toContain(`Proposal ${rules[2]}`)
    expect(await page.locator(`li#p-${rules[2]}.refused`).innerText()).toContain("Not saved because of this one")
    expect(await page.isChecked(`input[name="item:${rules[1]}"]`)).toBe(true)
    expect(await page.isChecked(`input[name="item:${rules[2]}"]`)).toBe(true)
    expect(await counts()).toEqual(before)
  })

  it("confirms the selected proposals with one click: each its own decision; the index says how many", async () => {
    await page.goto(`${s.url}/approval`)
    await page.check(`input[name="item:${rules[1]}"]`)
    await page.check(`input[name="item:${rules[2]}"]`)
    await page.check(`input[name="item:${rules[3]}"]`)
    const before = await counts()
    expect(await submit(page, "#bulk-sales button[value=confirm]")).toBe(303)
    expect(page.url()).toBe(`${s.url}/approval?scope=sales&done=confirm&n=3#outcome`)
    expect(await page.locator("#outcome").innerText()).toContain("Confirmed 3 proposals.")
    await shot(page, "42-bulk-index-done")
    const after = await counts()
    expect((after.decision ?? 0) - (before.decision ?? 0)).toBe(3)
    expect(await page.locator(`li#p-${rules[0]}`).count()).toBe(1)
    expect(await page.locator(`li#p-${rules[1]}`).count()).toBe(0)
    await expectInertPage(`${s.url}/approval`)
  })
})

describe("the bulk form of the structure page", () => {
  it("selects entity changes and a link across their own forms and confirms them in one post", async () => {
    await page.goto(`${s.url}/approval/structure?scope=sales`)
    await page.check(`input[name="item:entity/${entities[0]}@1"]`)
    await page.check(`input[name="item:entity/${entities[1]}@1"]`)
    await page.check(`input[name="item:link/${linkId}"]`)
    await shot(page, "43-bulk-structure-selected")
    const before = await counts()
    expect(await submit(page, "#bulk-structure button[value=confirm]")).toBe(303)
    expect(await page.locator("#outcome").innerText()).toContain("Confirmed 3 structure changes.")
    await shot(page, "44-bulk-structure-done")
    expect(((await counts()).review ?? 0) - (before.review ?? 0)).toBe(3)
    // the one left is still listed with its own forms and its checkbox
    expect(await page.locator(`input[name="item:entity/${entities[2]}@1"]`).count()).toBe(1)
    await expectInertPage(`${s.url}/approval/structure?scope=sales`)
    expect(violations).toEqual([])
    expect(dialogs).toEqual([])
  })
})
