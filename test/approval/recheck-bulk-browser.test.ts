/**
 * Bulk review of the rules due for recheck (gaps.md §13) in a real browser (Debian chromium
 * through playwright-core), no JavaScript: on the recheck page a person selects several due rules
 * and marks them reviewed with one click, each its own review decision, landing back on the
 * recheck page with how many were saved; an empty selection and a selection holding a rule
 * revoked meanwhile are refused naming the selection or that rule, the rest kept selected and
 * nothing written. The digest's recheck list carries the same form. Screenshots at 1280 and
 * 390 px go to test-output/screenshots/.
 */
import { Effect, TestClock, TestContext } from "effect"
import { type Browser, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { dayBefore, dayIn } from "../../src/contracts/time.js"
import { decide } from "../../src/decision/decide.js"
import { intake } from "../../src/domain/intake.js"
import { storeSource } from "../../src/domain/sources.js"
import { approvalOf, internalMail, PLAIN, quoting } from "../support/approval.js"
import { type Stores, sqlOf } from "../support/run.js"
import { CHROMIUM, DECISION_ACTIONS, expectInert, inspectDom, shot, signIn, submit, watchedPage } from "./browser-support.js"
import { type ApprovalServer, startApprovalServer } from "./support.js"

const DAY_MS = 86_400_000
const ZONE = "Europe/Berlin"
let s: ApprovalServer
let browser: Browser
let page: Page
const violations: Array<string> = []
const dialogs: Array<string> = []
const due: Array<string> = []
const now = Date.now()

const at = <A, E>(ms: number, effect: Effect.Effect<A, E, Stores>) =>
  s.run(Effect.gen(function*() {
    yield* TestClock.setTime(ms)
    return yield* effect
  }).pipe(Effect.provide(TestContext.TestContext)) as Effect.Effect<A, E, Stores>)

const decisions = () =>
  s.run(Effect.flatMap(sqlOf("sales"), (sql) => Effect.map(
    sql<{ kind: string; n: number }>`SELECT kind, count(*) AS n FROM decision GROUP BY kind ORDER BY kind`,
    (rows) => Object.fromEntries(rows.map((r) => [r.kind, r.n]))
  )))

const overflows = async () => {
  await page.setViewportSize({ width: 390, height: 844 })
  const wide = await page.evaluate("document.documentElement.scrollWidth > document.documentElement.clientWidth")
  await page.setViewportSize({ width: 1280, height: 900 })
  return wide
}

beforeAll(async () => {
  s = await startApprovalServer({ configure: { ...approvalOf("classified"), recheck_after_days: 30 } })
  const old = now - 40 * DAY_MS
  await at(old, storeSource(internalMail(), s.feeder))
  // four plain lines, adopted by the policy 40 days ago: every one is due for recheck
  for (const [i, line] of PLAIN.slice(0, 4).entries()) {
    const created = await at(old + i * 60_000, intake(quoting(line), { grantId: s.feeder, channel: "api", requestId: null }))
    due.push(created.created.ref.replace(/^rule\/|@\d+$/g, ""))
  }
  browser = await chromium.launch({ executablePath: CHROMIUM })
  page = await watchedPage(browser, violations, dialogs)
  await signIn(page, s.url)
}, 120_000)
afterAll(async () => {
  await browser.close()
  await s.cleanup()
})

describe("bulk review of the rules due for recheck", () => {
  it("an empty selection is refused naming the selection; nothing is written", async () => {
    await page.goto(`${s.url}/approval/recheck?scope=sales`)
    expect(await page.textContent("h1")).toBe("4 rules due for recheck")
    expect(await page.locator(`input[type=checkbox][form="recheck-form-sales"]`).count()).toBe(4)
    await shot(page, "r0-recheck-bulk")
    expect(await overflows()).toBe(false)
    const before = await decisions()
    expect(await submit(page, "#recheck-form-sales button[value=review]")).toBe(400)
    const notice = await page.locator("#outcome").innerText()
    expect(notice).toContain("Selection")
    expect(notice).toContain("select at least one rule")
    expect(await decisions()).toEqual(before)
    expect(await page.textContent("h1")).toBe("4 rules due for recheck")
  })

  it("a selected rule revoked meanwhile refuses the whole post, named on the page; the other stays selected, nothing is written", async () => {
    await page.goto(`${s.url}/approval/recheck?scope=sales`)
    await page.check(`input[name="item:${due[0]}"]`)
    await page.check(`input[name="item:${due[1]}"]`)
    await page.fill("#recheck-reason-sales", "checked with the warehouse")
    // somebody revokes the second one while the page is open
    const seen = Number(await page.getAttribute(`input[name="item:${due[1]}"]`, "value"))
    await s.run(decide(due[1] ?? "", { decision: "revoke", version: seen, reason: "no longer done", valid_until: dayBefore(dayIn(ZONE, now)) }, { grantId: "person:2", identity: "bo@example.com" }))
    const before = await decisions()
    const status = await submit(page, "#recheck-form-sales button[value=review]")
    expect(status).toBeGreaterThanOrEqual(400)
    await shot(page, "r1-recheck-bulk-refused")
    const notice = await page.locator("#outcome").innerText()
    expect(notice).toContain(`Rule ${due[1]}`)
    expect(await decisions()).toEqual(before)
    // the revoked rule is no longer due; the other is still selected, the note kept
    expect(await page.locator(`li#r-${due[1]}`).count()).toBe(0)
    expect(await page.isChecked(`input[name="item:${due[0]}"]`)).toBe(true)
    expect(await page.inputValue("#recheck-reason-sales")).toBe("checked with the warehouse")
    expect(await page.textContent("h1")).toBe("3 rules due for recheck")
  })

  it("marks the selected rules reviewed with one click: each its own review, back on the recheck page with how many", async () => {
    await page.goto(`${s.url}/approval/recheck?scope=sales`)
    await page.check(`input[name="item:${due[0]}"]`)
    await page.check(`input[name="item:${due[2]}"]`)
    const before = await decisions()
    expect(await submit(page, "#recheck-form-sales button[value=review]")).toBe(303)
    expect(page.url()).toBe(`${s.url}/approval/recheck?scope=sales&done=review&n=2#outcome`)
    expect(await page.locator("#outcome").innerText()).toContain("Marked as reviewed: 2 rules.")
    expectInert(await inspectDom(page), s.url, DECISION_ACTIONS)
    await shot(page, "r2-recheck-bulk-done")
    expect(await overflows()).toBe(false)
    expect(((await decisions()).review ?? 0) - (before.review ?? 0)).toBe(2)
    expect(await page.textContent("h1")).toBe("1 rule due for recheck")
    expect(await page.locator(`li#r-${due[3]}`).count()).toBe(1)
  })

  it("the digest's recheck list carries the same form and lands on the recheck page", async () => {
    await page.goto(`${s.url}/approval/digest?since=${dayBefore(dayIn(ZONE, now))}`)
    await page.check(`input[name="item:${due[3]}"]`)
    expect(await submit(page, "#recheck-form-sales button[value=review]")).toBe(303)
    expect(page.url()).toBe(`${s.url}/approval/recheck?scope=sales&done=review&n=1#outcome`)
    expect(await page.textContent("h1")).toBe("Nothing is due for recheck")
    expect(violations).toEqual([])
    expect(dialogs).toEqual([])
  })
})
