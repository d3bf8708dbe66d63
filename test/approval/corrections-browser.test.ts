/**
 * A person's structure corrections in a real browser (gaps.md §13): the four forms of the
 * structure page (create an entity, create a link, close a link, unarchive an entity), a refusal
 * that names the field and keeps what was typed, at 1280 and 390 px. Screenshots go to
 * test-output/screenshots/.
 */
import { Effect } from "effect"
import { type Browser, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createEntity } from "../../src/graph/entities.js"
import { sqlOf } from "../support/run.js"
import { CHROMIUM, DECISION_ACTIONS, expectInert, inspectDom, shot, signIn, submit, watchedPage, WIDTHS } from "./browser-support.js"
import { type ApprovalServer, startApprovalServer } from "./support.js"

let s: ApprovalServer
let browser: Browser
let page: Page
const violations: Array<string> = []
const dialogs: Array<string> = []
const agent = () => ({ grantId: s.feeder, channel: "mcp" as const })

let org = ""
let nord = ""
let old = ""

beforeAll(async () => {
  s = await startApprovalServer()
  org = await s.run(Effect.map(createEntity({ scope: "sales", type: "organisation", name: "Acme", parent_id: null }, agent()), (e) => e.id))
  nord = await s.run(Effect.map(createEntity({ scope: "sales", type: "department", name: "Vertrieb Nord", parent_id: org }, agent()), (e) => e.id))
  old = await s.run(Effect.map(createEntity({ scope: "sales", type: "department", name: "Altes Lager", parent_id: org }, agent()), (e) => e.id))
  browser = await chromium.launch({ executablePath: CHROMIUM })
  page = await watchedPage(browser, violations, dialogs)
  await signIn(page, s.url)
}, 60_000)
afterAll(async () => {
  await browser.close()
  await s.cleanup()
})

const rows = <T extends object>(query: string) => s.run(Effect.flatMap(sqlOf("sales"), (sql) => sql.unsafe<T>(query)))

describe("structure corrections in the browser", () => {
  it("creates an entity; a duplicate is refused with the field named and the typed values kept", async () => {
    await page.goto(`${s.url}/approval/structure?scope=sales`)
    await shot(page, "40-structure-corrections")
    await page.selectOption("#ce-type", "department")
    await page.fill("#ce-name", "vertrieb nord")
    await page.selectOption("#ce-parent", org)
    await page.fill("#ce-reason", "from the org chart")
    expect(await submit(page, "form[aria-label='Create an entity'] >> button")).toBe(409)
    expect(await page.textContent("#outcome h2")).toBe("Not saved: a similar entity exists")
    expect(await page.textContent("#outcome li")).toContain("Name:")
    expect(await page.inputValue("#ce-name")).toBe("vertrieb nord")
    expect(await page.inputValue("#ce-reason")).toBe("from the org chart")
    await shot(page, "41-structure-create-refused")
    await page.fill("#ce-name", "Vertrieb Ost")
    expect(await submit(page, "form[aria-label='Create an entity'] >> button")).toBe(303)
    expect(await page.textContent("#outcome h2")).toBe("Entity created.")
    const [row] = await rows<{ created_by: string; status: string; channel: string }>(
      "SELECT e.created_by, v.status, v.channel FROM entity e JOIN entity_current v ON v.id = e.id WHERE v.name = 'Vertrieb Ost'")
    expect(row).toEqual({ created_by: "human", status: "active", channel: "approval" })
  })
  it("creates a link, then closes it", async () => {
    await page.goto(`${s.url}/approval/structure?scope=sales`)
    await page.fill("#cl-from", `entity/${nord}`)
    await page.selectOption("#cl-type", "belongs_to")
    await page.fill("#cl-to", `entity/${org}`)
    await page.fill("#cl-reason", "the north reports to Acme")
    expect(await submit(page, "form[aria-label='Create a link'] >> button")).toBe(303)
    expect(await page.textContent("#outcome h2")).toBe("Link created.")
    const [link] = await rows<{ id: string; origin: string }>("SELECT id, origin FROM link")
    expect(link?.origin).toBe("human")
    const id = link?.id ?? ""
    await page.click(`li#close-${id} summary`)
    await page.fill(`#cx-${id}`, "reorganised")
    await shot(page, "42-structure-close-open")
    expect(await submit(page, `li#close-${id} >> text=Close link`)).toBe(303)
    expect(await page.textContent("#outcome h2")).toBe("Link closed.")
    expect(await page.locator(`li#close-${id}`).count()).toBe(0)
    expect(await rows<{ verdict: string }>(`SELECT verdict FROM review WHERE target = 'link/${id}' ORDER BY seq`)).toEqual([{ verdict: "confirm" }, { verdict: "close" }])
  })
  it("unarchives an archived entity", async () => {
    await page.goto(`${s.url}/approval/structure?scope=sales`)
    await page.click(`details:has(form[aria-label='Archive ${old}']) summary`)
    expect(await submit(page, `form[aria-label='Archive ${old}'] >> button`)).toBe(303)
    await page.click(`li#unarchive-${old} summary`)
    await page.fill(`#ua-${old}`, "still in use")
    expect(await submit(page, `li#unarchive-${old} >> button`)).toBe(303)
    expect(await page.textContent("#outcome h2")).toBe("Unarchived.")
    const [v] = await rows<{ change: string; status: string }>(`SELECT change, status FROM entity_current WHERE id = '${old}'`)
    expect(v).toEqual({ change: "unarchive", status: "active" })
    await shot(page, "43-structure-unarchived")
  })
  it("fits both widths without sideways scrolling; only the page's own form actions", async () => {
    await page.goto(`${s.url}/approval/structure?scope=sales`)
    for (const w of WIDTHS) {
      await page.setViewportSize({ width: w.width, height: w.height })
      const overflow = await page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
      expect(overflow, w.name).toBeLessThanOrEqual(0)
    }
    await page.setViewportSize({ width: 1280, height: 900 })
    expectInert(await inspectDom(page), s.url, DECISION_ACTIONS)
    expect(violations).toEqual([])
    expect(dialogs).toEqual([])
  })
})
