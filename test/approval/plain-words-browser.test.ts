/**
 * Plain words and relation rows in real Chromium: a person edits a rule's relations as rows (picks a
 * kind, types a name, empties a row), meets a refusal that names the row and keeps what they
 * typed, fixes it and confirms; the date fields take the contract's YYYY-MM-DD as typed (no
 * locale date picker); the index marks possible duplicates and the mark jumps to the twin.
 * Screenshots of every page at desktop and phone width go to test-output/screenshots/.
 */
import { Effect } from "effect"
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { propose } from "../../src/domain/proposals.js"
import type { ProposalRequest } from "../../src/domain/proposal-schemas.js"
import { storeSource } from "../../src/domain/sources.js"
import { createEntity } from "../../src/graph/entities.js"
import { proposeLink } from "../../src/graph/links.js"
import { jamieSource, mailProposal, mailSource } from "../support/fixtures.js"
import { CHROMIUM, DECISION_ACTIONS, expectInert, inPage, inspectDom, shot, submit, submitToken, watch } from "./browser-support.js"
import { type ApprovalServer, DEV_API, startApprovalServer } from "./support.js"

let s: ApprovalServer
let browser: Browser
let context: BrowserContext
let page: Page
const violations: Array<string> = []
const dialogs: Array<string> = []

const proposeRule = (over: Partial<ProposalRequest>) =>
  s.run(Effect.map(propose(mailProposal(over), { grantId: s.feeder, channel: "mcp" }), (c) => c.ref.replace(/^rule\/|@\d+$/g, "")))
/** The main view as a person reads it: the text of <main> without its details lines. */
const mainText = (p: Page) =>
  inPage<string>(p, `(() => { const m = document.querySelector("main").cloneNode(true); m.querySelectorAll(".details").forEach((d) => d.remove()); document.body.appendChild(m); const t = m.innerText; m.remove(); return t })()`)
const relationsOf = async (id: string) => {
  const r = await fetch(`${s.url}/v1/rules/${id}`, { headers: { authorization: `Bearer ${DEV_API}` } })
  return ((await r.json()) as { head: { relations: unknown } }).head.relations
}

beforeAll(async () => {
  s = await startApprovalServer()
  await s.run(storeSource(mailSource(), s.feeder))
  await s.run(storeSource(jamieSource(), s.feeder))
  browser = await chromium.launch({ executablePath: CHROMIUM })
  // a German locale: a date picker would show dd.mm.yyyy, an English one mm/dd/yyyy
  context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: "en-US", timezoneId: "America/New_York" })
  page = await context.newPage()
  watch(page, violations, dialogs)
  await page.goto(`${s.url}/approval/login`)
  await shot(page, "p0-login")
  await submitToken(page, s.url)
}, 60_000)
afterAll(async () => {
  await browser.close()
  await s.cleanup()
})

describe("plain words in the browser", () => {
  it("the index marks two proposals that say the same; the mark leads to the twin", async () => {
    const a = await proposeRule({ statement: "Ask the supplier for the delivery time before ordering black hook rails" })
    const b = await proposeRule({ statement: "Before ordering black hook rails, always ask the supplier for the delivery time" })
    await proposeRule({
      statement: "Always ask for the delivery time first in the meeting",
      source: { kind: "jamie", id: "jamie:meeting-2026-03-12", quote: "we always ask the supplier for the delivery time before ordering", timestamp_s: 100, link: "https://jamie.example.com/m/7?t=100" }
    })
    await page.goto(`${s.url}/approval`)
    expect(await page.getAttribute(`li#p-${b}`, "class")).toBe("dup")
    await page.click(`li#p-${b} .dupnote a[href="#p-${a}"]`)
    expect(new URL(page.url()).hash).toBe(`#p-${a}`)
    const main = await mainText(page)
    expect(main).not.toMatch(/@\d|person:\d|service:\d|proposed via/)
    await shot(page, "p1-index-duplicates")
  })

  it("edits relations as rows: a refusal names the row and keeps the rows; fixed, it is confirmed", async () => {
    const id = await proposeRule({
      statement: "Invoices of Müller GmbH for hook rails are checked against the price list",
      relations: [{ kind: "supplier", name: "Müller GmbH", ref: "crm:42" }, { kind: "product", name: "Hakenleiste schwarz", ref: null }]
    })
    await page.goto(`${s.url}/approval/rules/${id}`)
    await shot(page, "p2-rule-proposed")
    expect(await mainText(page)).not.toMatch(/@\d|person:\d|service:\d|proposed via|text: ocr/)
    // the valid-from field is a text field with the contract's day, whatever the browser's locale
    expect(await page.getAttribute("#c-valid-from", "type")).toBe("text")
    expect(await page.inputValue("#c-valid-from")).toBe("2026-03-12")
    await page.click("text=More fields")
    // empty the product row, pick a kind for a blank row but forget its name
    await page.selectOption("select[name=relation_kind_1]", "")
    await page.fill("input[name=relation_name_1]", "")
    await page.selectOption("select[name=relation_kind_2]", "customer")
    expect(await submit(page, "text=Confirm version 1")).toBe(400)
    expect(await page.textContent("#outcome")).toContain("Relations, row 3: name")
    await shot(page, "p3-rule-relations-refused")
    // the rows are as the person left them: fill in the name and confirm
    expect(await page.inputValue("select[name=relation_kind_2]")).toBe("customer")
    expect(await page.inputValue("input[name=relation_name_0]")).toBe("Müller GmbH")
    await page.fill("input[name=relation_name_2]", "Baumarkt Nord")
    expect(await submit(page, "text=Confirm version 1")).toBe(303)
    expect(await page.textContent("#outcome h2")).toBe("Confirmed.")
    expect(await relationsOf(id)).toEqual([
      { kind: "supplier", name: "Müller GmbH", ref: "crm:42" },
      { kind: "customer", name: "Baumarkt Nord", ref: null }
    ])
    const versions = await page.textContent("#v2")
    expect(versions).toContain("supplier: Müller GmbH (crm:42); customer: Baumarkt Nord")
    // (before the screenshots: taking them leaves empty style attributes behind)
    const dom = await inspectDom(page)
    expectInert(dom, s.url, DECISION_ACTIONS)
    await shot(page, "p4-rule-confirmed")
  })

  it("revokes with a typed day (no date picker) and rejects: 'Rejected.' without a version", async () => {
    const id = await proposeRule({ statement: "Hook rails are ordered in packs of ten only from now on" })
    await page.goto(`${s.url}/approval/rules/${id}`)
    expect(await submit(page, "text=Confirm version 1")).toBe(303)
    expect(await page.getAttribute("#k-valid-until", "type")).toBe("text")
    await page.fill("#k-valid-until", "12/31/2026")
    await page.fill("#k-reason", "packs of ten are gone")
    // the browser refuses the US format before anything is sent
    const valid = await inPage<boolean>(page, `document.querySelector("#k-valid-until").checkValidity()`)
    expect(valid).toBe(false)
    await page.fill("#k-valid-until", "2026-12-31")
    expect(await submit(page, "text=Revoke version 2")).toBe(303)
    expect(await page.textContent("#outcome")).toContain("Revoked.")
    expect(await mainText(page)).toMatch(/Valid until\s+2026-12-31/)

    const other = await proposeRule({ statement: "Hook rails in white are never ordered for stock" })
    await page.goto(`${s.url}/approval/rules/${other}`)
    await page.fill("#r-reason", "we keep white ones in stock")
    expect(await submit(page, "text=Reject version 1")).toBe(303)
    const outcome = await page.textContent("#outcome") ?? ""
    expect(outcome).toContain("Rejected.")
    expect(outcome).not.toMatch(/version|current/i)
    await shot(page, "p5-rule-rejected")
    await page.goto(`${s.url}/approval/rejected?scope=sales`)
    await shot(page, "p6-rejected-list")
  })

  it("the structure page explains the buttons; every other page is captured too", async () => {
    const by = { grantId: s.feeder, channel: "mcp" as const }
    const org = await s.run(createEntity({ scope: "sales", type: "organisation", name: "Acme GmbH", parent_id: null, evidence: "https://wiki.example.com/acme" }, by))
    const dept = await s.run(createEntity({ scope: "sales", type: "department", name: "Vertrieb Nord", parent_id: org.id, aliases: ["VN"] }, by))
    const rule = await proposeRule({ statement: "Vertrieb Nord confirms every order of hook rails in writing" })
    await s.run(proposeLink({ scope: "sales", from_ref: `rule/${rule}`, to_ref: `entity/${dept.id}`, type: "concerns", confidence: 0.8, reason: "the rule names Vertrieb Nord" }, { grantId: s.feeder }))
    await page.goto(`${s.url}/approval/structure?scope=sales`)
    const text = await mainText(page)
    for (const b of ["Confirm", "Revert", "Archive", "Reject"]) expect(text).toContain(b)
    expect(text).toContain("retires an entity for good")
    expect(text).not.toMatch(/@\d|service:\d/)
    await shot(page, "p7-structure")
    await page.goto(`${s.url}/approval/rules/${rule}`)
    await shot(page, "p8-rule-with-link")
    const jamie = await proposeRule({
      statement: "The delivery time is asked before every order",
      source: { kind: "jamie", id: "jamie:meeting-2026-03-12", quote: "we always ask the supplier for the delivery time before ordering", timestamp_s: 100, link: "https://jamie.example.com/m/7?t=100" }
    })
    await page.goto(`${s.url}/approval/rules/${jamie}`)
    await shot(page, "p9-rule-meeting")
    await page.goto(`${s.url}/approval/rules/sales-9999`)
    await shot(page, "p10-not-found")
    expect(violations).toEqual([])
    expect(dialogs).toEqual([])
  })
})
