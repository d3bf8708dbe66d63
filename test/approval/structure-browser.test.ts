/**
 * The structure page in a real browser (graph.md §12): a person confirms an agent's new entity
 * and rejects a proposed link through the forms; injections in entity names, aliases, reasons,
 * evidence and link reasons render inert. Screenshots go to test-output/screenshots/.
 */
import { mkdirSync } from "node:fs"
import { Effect } from "effect"
import { type Browser, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createEntity } from "../../src/graph/entities.js"
import { proposeLink } from "../../src/graph/links.js"
import { propose } from "../../src/domain/proposals.js"
import { storeSource } from "../../src/domain/sources.js"
import { sqlOf } from "../support/run.js"
import { mailProposal, mailSource } from "../support/fixtures.js"
import { CHROMIUM, DECISION_ACTIONS, expectInert, inspectDom, SCREENSHOTS, shot, signIn, submit, watchedPage, XSS } from "./browser-support.js"
import { type ApprovalServer, startApprovalServer } from "./support.js"

let s: ApprovalServer
let browser: Browser
let page: Page
const violations: Array<string> = []
const dialogs: Array<string> = []
const agent = () => ({ grantId: s.feeder, channel: "mcp" as const })

let project = ""
let linkId = ""
let ruleId = ""

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true })
  s = await startApprovalServer()
  await s.run(storeSource(mailSource(), s.feeder))
  const org = await s.run(Effect.map(createEntity({ scope: "sales", type: "organisation", name: "Acme", parent_id: null }, agent()), (e) => e.id))
  project = await s.run(Effect.map(createEntity({ scope: "sales", type: "project", name: "Hakenleisten 2026", parent_id: org, evidence: "source/mail:<order-rule@example.com>" }, agent()), (e) => e.id))
  ruleId = await s.run(Effect.map(propose(mailProposal(), { grantId: s.feeder, channel: "api" }), (c) => c.ref.replace(/^rule\/|@\d+$/g, "")))
  linkId = await s.run(Effect.map(proposeLink({ scope: "sales", from_ref: `rule/${ruleId}`, to_ref: `entity/${project}`, type: "concerns", confidence: 0.55, reason: "mentions hook rails" }, { grantId: s.feeder }), (r) => r.link.id ?? ""))
  browser = await chromium.launch({ executablePath: CHROMIUM })
  page = await watchedPage(browser, violations, dialogs)
  await signIn(page, s.url)
}, 60_000)
afterAll(async () => {
  await browser.close()
  await s.cleanup()
})

const reviews = () => s.run(Effect.flatMap(sqlOf("sales"), (sql) => sql<{ target: string; verdict: string; reason: string | null }>`SELECT target, verdict, reason FROM review ORDER BY seq`))

describe("structure changes in the browser", () => {
  it("the index shows the section; the structure page confirms an agent's new entity", async () => {
    await page.goto(`${s.url}/approval`)
    await shot(page, "12-index-structure")
    await Promise.all([page.waitForURL("**/approval/structure?scope=sales"), page.click("text=All structure changes in sales")])
    await shot(page, "13-structure")
    const item = page.locator(`li#${project}`)
    expect(await item.textContent()).toContain("New project Hakenleisten 2026")
    expect(await submit(page, `li#${project} >> text=Confirm new entity`)).toBe(303)
    expect(await page.textContent("#outcome h2")).toBe("Confirmed.")
    expect(await page.locator(`li#${project}`).count()).toBe(0)
    expect(await reviews()).toEqual([{ target: `entity/${project}@1`, verdict: "confirm", reason: null }])
    await shot(page, "14-structure-confirmed")
  })
  it("rejects a proposed link with a reason (on the rule page, where it lands back)", async () => {
    await page.goto(`${s.url}/approval/rules/${ruleId}`)
    expect(await page.textContent("#links-h")).toBe("Proposed: concerns")
    await page.fill(`#rj-${linkId}`, "the rule is about all products")
    expect(await submit(page, `li#${linkId} >> text=Reject link`)).toBe(303)
    expect(new URL(page.url()).pathname).toBe(`/approval/rules/${ruleId}`)
    expect(await page.textContent("#outcome h2")).toBe("Link rejected.")
    expect(await page.locator("#links-h").count()).toBe(0)
    expect((await reviews())[1]).toEqual({ target: `link/${linkId}`, verdict: "reject", reason: "the rule is about all products" })
  })
  it("injections in names, aliases, reasons, evidence and link reasons render inert", async () => {
    const parent = await s.run(Effect.map(createEntity({ scope: "sales", type: "topic", name: XSS[0] ?? "x", parent_id: null, aliases: XSS.slice(1, 4), evidence: XSS[5] ?? "" }, agent()), (e) => e.id))
    for (const [i, x] of XSS.slice(1).entries()) {
      const child = await s.run(Effect.map(createEntity({ scope: "sales", type: "topic", name: `${i} ${x}`.slice(0, 200), parent_id: parent, reason: x, force: true, evidence: x }, agent()), (e) => e.id))
      await s.run(proposeLink({ scope: "sales", from_ref: `rule/${ruleId}`, to_ref: `entity/${child}`, type: "mentions", confidence: 0.3, reason: x, evidence: x }, { grantId: s.feeder }))
    }
    for (const path of ["/approval", "/approval/structure?scope=sales", `/approval/rules/${ruleId}`]) {
      await page.goto(`${s.url}${path}`)
      expectInert(await inspectDom(page), s.url, DECISION_ACTIONS)
    }
    await page.goto(`${s.url}/approval/structure?scope=sales`)
    const text = (await inspectDom(page)).text
    for (const x of XSS) expect(text).toContain(x)
    await shot(page, "15-structure-injection")
    expect(violations).toEqual([])
    expect(dialogs).toEqual([])
  })
})
