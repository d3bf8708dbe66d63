/**
 * The structure page in a real browser with the approval policy on (gaps.md §13): an agent's
 * adopted entity and link are not in the pending list but under "Adopted by the policy", marked
 * "adopted by the policy"; a doubtful one still waits. Screenshots at 1280 and 390 px go to
 * test-output/screenshots/.
 */
import { mkdirSync } from "node:fs"
import { Effect } from "effect"
import { type Browser, chromium } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createEntity } from "../../src/graph/entities.js"
import { proposeLink } from "../../src/graph/links.js"
import { approvalOf } from "../support/approval.js"
import { CHROMIUM, inPage, inspectDom, SCREENSHOTS, shot, signIn, WIDTHS } from "./browser-support.js"
import { type ApprovalServer, startApprovalServer } from "./support.js"

let s: ApprovalServer
let browser: Browser
let adopted = ""
let waiting = ""

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true })
  s = await startApprovalServer({ configure: approvalOf("autonomous") })
  const agent = { grantId: s.feeder, channel: "mcp" as const }
  adopted = await s.run(Effect.map(createEntity({ scope: "sales", type: "department", name: "Vertrieb Nord", parent_id: null }, agent), (e) => e.id))
  waiting = await s.run(Effect.map(createEntity({ scope: "sales", type: "department", name: "Einkauf", parent_id: null, reason: "Vielleicht gehört das zum Lager?" }, agent), (e) => e.id))
  await s.run(proposeLink({ scope: "sales", from_ref: `entity/${waiting}`, to_ref: `entity/${adopted}`, type: "belongs_to", confidence: 0.9, reason: "berichtet an Nord" }, { grantId: s.feeder, channel: "mcp" }))
  browser = await chromium.launch({ executablePath: CHROMIUM })
}, 60_000)
afterAll(async () => {
  await browser.close()
  await s.cleanup()
})

describe("adopted structure on the structure page", () => {
  for (const w of WIDTHS) {
    it(`${w.name}: adopted changes under "Adopted by the policy", the doubtful one pending`, async () => {
      const page = await (await browser.newContext({ viewport: { width: w.width, height: w.height } })).newPage()
      await signIn(page, s.url)
      await page.goto(`${s.url}/approval/structure?scope=sales`)
      expect(await page.textContent("#adopted-h")).toBe("Adopted by the policy")
      const section = await page.locator("section[aria-labelledby=adopted-h]").textContent() ?? ""
      expect(section).toContain("Vertrieb Nord")
      expect(section).toContain("adopted by the policy")
      expect(section).toContain("belongs_to")
      // the adopted link's ends in words (their paths), as on the pending list, never as raw refs
      const linkLine = (await page.locator("section[aria-labelledby=adopted-h] li", { hasText: "belongs_to" }).locator("div").first().textContent() ?? "").replace(/\s+/g, " ")
      expect(linkLine).toMatch(/^Link belongs_to: entity .*Einkauf.* → entity .*Vertrieb Nord/)
      expect(linkLine).not.toMatch(/entity\/sales-e/)
      expect(await page.locator(`li#${waiting}`).count()).toBe(1)
      expect(await page.locator(`li#${adopted}`).count()).toBe(0)
      const dom = await inspectDom(page)
      expect(dom.tags).not.toContain("script")
      expect(await inPage<boolean>(page, "document.documentElement.scrollWidth <= window.innerWidth")).toBe(true)
      // shot() takes both widths itself
      if (w.name === "desktop") await shot(page, "40-structure-adopted")
    })
  }
})
