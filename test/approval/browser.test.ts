/**
 * The approval pages in a real browser (Debian chromium driven by playwright-core), served by
 * the real server: a person signs in with the dev token and confirms, rejects and revokes
 * through the forms; refusals (another origin, no token, a cookie kept past logout, a stale version) write
 * nothing; an injection corpus renders inert. Screenshots of every page go to
 * test-output/screenshots/ for a person to look at.
 */
import { mkdirSync } from "node:fs"
import { createServer, type Server } from "node:http"
import { Effect } from "effect"
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { propose } from "../../src/domain/proposals.js"
import type { ProposalRequest } from "../../src/domain/proposal-schemas.js"
import { storeSource } from "../../src/domain/sources.js"
import { counts, sqlOf } from "../support/run.js"
import { jamieSource, mailProposal, mailSource } from "../support/fixtures.js"
import { CHROMIUM, DECISION_ACTIONS, expectInert, inPage, inspectDom, SCREENSHOTS, shot, signIn, submit, submitToken, watch, XSS } from "./browser-support.js"
import { type ApprovalServer, DEV_API, freePort, startApprovalServer } from "./support.js"

let s: ApprovalServer
let browser: Browser
let context: BrowserContext
let page: Page
/** console messages and securitypolicyviolation events of every page of the file */
const violations: Array<string> = []
const dialogs: Array<string> = []

const scopeCounts = (scope: string) => s.run(Effect.flatMap(sqlOf(scope), counts))
const proposeRule = (over: Partial<ProposalRequest>) =>
  s.run(Effect.map(propose(mailProposal(over), { grantId: s.feeder, channel: "api" }), (c) => c.ref.replace(/^rule\/|@\d+$/g, "")))

/** Opens a page in the shared context, with the watchers. */
const open = async () => {
  const p = await context.newPage()
  watch(p, violations, dialogs)
  return p
}

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true })
  s = await startApprovalServer()
  await s.run(storeSource(mailSource(), s.feeder))
  await s.run(storeSource(jamieSource(), s.feeder))
  browser = await chromium.launch({ executablePath: CHROMIUM })
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  page = await open()
}, 60_000)
afterAll(async () => {
  await browser.close()
  await s.cleanup()
})

describe("a person decides in the browser", () => {
  it("signs in with the dev token, opens a proposal, confirms it with a changed keyword and sees it confirmed; search finds it", async () => {
    const id = await proposeRule({ statement: "Ask the supplier for the delivery time before ordering black hook rails" })
    await proposeRule({
      statement: "Always ask for the delivery time first in the meeting",
      source: { kind: "jamie", id: "jamie:meeting-2026-03-12", quote: "we always ask the supplier for the delivery time before ordering", timestamp_s: 100, link: "https://jamie.example.com/m/7?t=100" }
    })
    await page.goto(`${s.url}/approval`)
    expect(new URL(page.url()).pathname).toBe("/approval/login")
    await shot(page, "01-login")
    await submitToken(page, s.url)
    expect(await page.textContent("h1")).toBe("2 open proposals")
    await shot(page, "02-index")
    await Promise.all([page.waitForURL(`**/approval/rules/${id}`), page.click(`a[href="/approval/rules/${id}"]`)])
    expect(await page.textContent("mark")).toContain("Vor jeder Bestellung schwarzer Hakenleisten")
    await shot(page, "03-rule-mail")
    await page.fill("#c-keywords", "Lieferzeit, Hakenleiste, Rückfrageschleife")
    const status = await submit(page, "text=Confirm version 1")
    expect(status).toBe(303)
    expect(page.url()).toBe(`${s.url}/approval/rules/${id}?done=confirm&v=2#outcome`)
    expect(await page.textContent("#outcome h2")).toBe("Confirmed.")
    expect(await page.textContent(".meta .badge")).toBe("confirmed")
    await shot(page, "04-rule-confirmed")
    const search = await fetch(`${s.url}/v1/search`, {
      method: "POST", headers: { authorization: `Bearer ${DEV_API}`, "content-type": "application/json" },
      body: JSON.stringify({ scopes: ["sales"], text: "Rückfrageschleife" })
    })
    const found = await search.json() as { bundles: Array<{ head: { ref: string; status: string } }> }
    expect(found.bundles.map((b) => b.head.ref)).toContain(`rule/${id}@2`)
    expect(found.bundles[0]?.head.status).toBe("confirmed")
  })
  it("opens the jamie proposal (window with timestamps) and rejects it with a reason", async () => {
    await page.goto(`${s.url}/approval`)
    await Promise.all([page.waitForURL("**/approval/rules/*"), page.click("text=Always ask for the delivery time first in the meeting")])
    expect(await page.locator(".window .ts").first().textContent()).toBe("[0:00]")
    await shot(page, "05-rule-jamie")
    await page.fill("#r-reason", "The meeting only discussed it, nobody decided")
    const status = await submit(page, "text=Reject version 1")
    expect(status).toBe(303)
    expect(await page.textContent("#outcome h2")).toBe("Rejected.")
    expect(await page.textContent(".meta .badge")).toBe("rejected")
    await page.goto(`${s.url}/approval/rejected?scope=sales`)
    expect(await page.textContent("main")).toContain("The meeting only discussed it, nobody decided")
    await shot(page, "06-rejected")
  })
  it("revokes a confirmed rule with valid_until", async () => {
    const id = await proposeRule({ statement: "Invoices of Müller GmbH are paid within 30 days" })
    await page.goto(`${s.url}/approval/rules/${id}`)
    expect(await submit(page, "text=Confirm version 1")).toBe(303)
    await page.fill("#k-valid-until", "2026-12-31")
    await page.fill("#k-reason", "The payment terms changed")
    expect(await submit(page, "text=Revoke version 2")).toBe(303)
    expect(await page.textContent("#outcome h2")).toBe("Revoked.")
    expect(await page.textContent(".meta .badge")).toBe("superseded")
    expect(await page.textContent("#v3")).toContain("2026-12-31")
    await shot(page, "07-rule-revoked")
  })
  it("a stale version → 303 to the rule page (not left on the POST address) with what changed and the current version; nothing written", async () => {
    const id = await proposeRule({ statement: "Two people look at this proposal at the same time" })
    const mine = await open()
    const theirs = await open()
    await mine.goto(`${s.url}/approval/rules/${id}`)
    await theirs.goto(`${s.url}/approval/rules/${id}`)
    await theirs.fill("#c-keywords", "Lieferzeit, Gleichzeitig")
    expect(await submit(theirs, "text=Confirm version 1")).toBe(303)
    const before = await scopeCounts("sales")
    await mine.fill("#r-reason", "I think this is wrong")
    expect(await submit(mine, "text=Reject version 1")).toBe(303)
    expect(new URL(mine.url()).pathname).toBe(`/approval/rules/${id}`)
    expect(await mine.textContent("#outcome h2")).toBe("Not saved: somebody decided first")
    expect(await mine.textContent("#outcome")).toContain("version-outdated")
    expect(await mine.textContent("#outcome")).toContain(`rule/${id}@2`)
    expect(await mine.textContent("#outcome table")).toContain("Lieferzeit, Gleichzeitig")
    expect(await mine.inputValue("form.decide input[name=version]")).toBe("2")
    await shot(mine, "08-rule-409")
    expect(await scopeCounts("sales")).toEqual(before)
    await mine.close()
    await theirs.close()
  })
})

describe("refusals write nothing", () => {
  let attacker: Server
  let attackerUrl = ""
  beforeAll(async () => {
    const port = await freePort()
    attacker = createServer((req, res) => {
      const target = new URL(req.url ?? "/", "http://x").searchParams.get("target") ?? ""
      const token = new URL(req.url ?? "/", "http://x").searchParams.get("csrf") ?? ""
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
      res.end(`<!doctype html><form method="post" action="${target}"><input type="hidden" name="decision" value="confirm"><input type="hidden" name="version" value="1"><input type="hidden" name="csrf" value="${token}"><button id="go">go</button></form>`)
    })
    await new Promise<void>((resolve) => attacker.listen(port, "127.0.0.1", resolve))
    attackerUrl = `http://127.0.0.1:${port}`
  })
  afterAll(() => new Promise<void>((resolve) => attacker.close(() => resolve())))

  it("a decision form replayed from another origin (with the right token and the session cookie) → 403", async () => {
    const id = await proposeRule({ statement: "Another site must not decide this proposal" })
    await page.goto(`${s.url}/approval/rules/${id}`)
    const csrf = await page.inputValue("form.decide input[name=csrf]")
    const before = await scopeCounts("sales")
    const p = await open()
    await p.goto(`${attackerUrl}/?target=${encodeURIComponent(`${s.url}/v1/rules/${id}/decision`)}&csrf=${encodeURIComponent(csrf)}`)
    expect(await submit(p, "#go")).toBe(403)
    expect(await p.textContent("main")).toContain("csrf-failed")
    expect(await scopeCounts("sales")).toEqual(before)
    await p.close()
  })
  it("the form without its token → 403", async () => {
    const id = await proposeRule({ statement: "A form without the csrf token is refused" })
    await page.goto(`${s.url}/approval/rules/${id}`)
    await inPage(page, `for (const el of document.querySelectorAll("input[name=csrf]")) el.remove()`)
    const before = await scopeCounts("sales")
    expect(await submit(page, "text=Confirm version 1")).toBe(403)
    expect(await page.textContent("main")).toContain("csrf-failed")
    expect(await scopeCounts("sales")).toEqual(before)
  })
  it("after logout the replayed form with a kept copy of the cookie → 403 (the session has ended); nothing written", async () => {
    const id = await proposeRule({ statement: "After signing out nothing can be decided" })
    const other = await open()
    await other.goto(`${s.url}/approval/rules/${id}`)
    const kept = (await context.cookies()).filter((c) => c.name === "gn_session")
    expect(kept).toHaveLength(1)
    await page.goto(`${s.url}/approval`)
    await Promise.all([page.waitForURL("**/approval/login"), page.click("text=Sign out")])
    expect((await context.cookies()).filter((c) => c.name === "gn_session")).toEqual([])
    // the cookie copied before logout is put back: logout ended its session on the server
    await context.addCookies(kept)
    const before = await scopeCounts("sales")
    expect(await submit(other, "text=Confirm version 1")).toBe(403)
    expect(await other.textContent("main")).toContain("csrf-failed")
    expect(await scopeCounts("sales")).toEqual(before)
    await other.goto(`${s.url}/approval`)
    expect(new URL(other.url()).pathname).toBe("/approval/login")
    await other.close()
    // sign in again for the rest of the file
    await submitToken(page, s.url)
  })
})

describe("an injection corpus renders inert", () => {
  it("in statements, quotes, speakers, relations, keywords, mail subjects, senders, attachments and transcript names", async () => {
    const xssPage = await open()
    await xssPage.addInitScript(`document.addEventListener("securitypolicyviolation", (e) => console.error("Refused to " + e.violatedDirective + ": " + e.blockedURI))`)
    const mailText = [`Subject line ${XSS.join(" ")}`, ...XSS.map((x, i) => `Zeile ${i}: ${x} bitte beachten und weiterleiten`)].join("\n")
    await s.run(storeSource({
      scope: "sales",
      source: { kind: "mail", id: "mail:<xss@example.com>", title: XSS.join(" "), occurred_at: "2026-03-12T09:15:00Z", sender: XSS[1] ?? "", thread: null, link: "https://mail.example.com/m/xss" },
      text: mailText,
      attachments: [{ filename: XSS[0] ?? "x", media_type: "text/html", size: 10, external: XSS[3] ?? null, text: XSS.join("\n"), text_origin: "ocr" }]
    }, s.feeder))
    await s.run(storeSource(jamieSource({
      source: { kind: "jamie", id: "jamie:xss-meeting", title: XSS[2] ?? "", occurred_at: "2026-03-12T10:00:00Z", sender: null, link: "https://jamie.example.com/m/xss" },
      segments: XSS.map((x, i) => ({ start_s: i * 10, speaker: x.slice(0, 200), text: `${x} gesagt in der Besprechung am Montag` }))
    }), s.feeder))
    const ids: Array<string> = []
    for (const [i, x] of XSS.entries()) {
      ids.push(await proposeRule({
        statement: `Rule ${i} ${x}`.slice(0, 500).padEnd(10, "."),
        source: { kind: "mail", id: "mail:<xss@example.com>", quote: `Zeile ${i}: ${x} bitte beachten`, link: null },
        speaker: x.slice(0, 200),
        relations: [{ kind: "customer", name: x.slice(0, 200), ref: x.slice(0, 200) }],
        keywords: [x.slice(0, 100), "Sicherheit"]
      }))
    }
    const jamie = await proposeRule({
      statement: `Transcript ${XSS[4] ?? ""}`,
      source: { kind: "jamie", id: "jamie:xss-meeting", quote: `${XSS[5] ?? ""} gesagt in der Besprechung`, timestamp_s: 50, link: "https://jamie.example.com/m/xss?t=50" }
    })
    // one rejected, so the rejected page and "previously rejected similar" carry payloads too
    const rejectedId = ids[0] ?? ""
    await xssPage.goto(`${s.url}/approval/rules/${rejectedId}`)
    await xssPage.fill("#r-reason", XSS.join(" "))
    expect(await submit(xssPage, "text=Reject version 1")).toBe(303)
    const pages = ["/approval", ...ids.map((id) => `/approval/rules/${id}`), `/approval/rules/${jamie}`, "/approval/rejected?scope=sales"]
    for (const path of pages) {
      await xssPage.goto(`${s.url}${path}`)
      // a refusal re-renders what was sent: the 400 page carries the payloads as well
      const dom = await inspectDom(xssPage)
      expectInert(dom, s.url, DECISION_ACTIONS)
    }
    await xssPage.goto(`${s.url}/approval/rules/${ids[1] ?? ""}`)
    expect((await inspectDom(xssPage)).text).toContain(XSS[1])
    await shot(xssPage, "09-rule-injection")
    await xssPage.fill("#c-keywords", `${XSS.join(", ")}, x`)
    expect(await submit(xssPage, "text=Confirm version 1")).toBe(400)
    expectInert(await inspectDom(xssPage), s.url, DECISION_ACTIONS)
    const index = await inspectDom(xssPage)
    expect(index.text).toContain("Not saved")
    await xssPage.goto(`${s.url}/approval/rules/${jamie}`)
    const text = (await inspectDom(xssPage)).text
    for (const x of XSS.slice(0, 6)) expect(text).toContain(x)
    expect(dialogs).toEqual([])
    await xssPage.close()
  })
})

describe("look", () => {
  it("readable on a phone: the index and a rule page at 390 px without horizontal scrolling", async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true })
    const p = await phone.newPage()
    watch(p, violations, dialogs)
    await signIn(p, s.url)
    await shot(p, "10-phone-index")
    const wide = () => inPage<boolean>(p, "document.documentElement.scrollWidth <= window.innerWidth")
    expect(await wide()).toBe(true)
    await Promise.all([p.waitForURL("**/approval/rules/*"), p.locator(".list .statement a").first().click()])
    expect(await wide()).toBe(true)
    await shot(p, "11-phone-rule")
    await phone.close()
  }, 90_000)
  it("the forms are reachable by keyboard: Tab reaches the confirm button, Enter submits", async () => {
    const id = await proposeRule({ statement: "Reach the confirm button with the keyboard alone" })
    await page.goto(`${s.url}/approval/rules/${id}`)
    let reached = false
    for (let i = 0; i < 60 && !reached; i++) {
      await page.keyboard.press("Tab")
      reached = await inPage<boolean>(page, `document.activeElement !== null && document.activeElement.textContent === "Confirm version 1"`)
    }
    expect(reached).toBe(true)
    const [response] = await Promise.all([page.waitForNavigation(), page.keyboard.press("Enter")])
    expect(response?.url()).toContain(`/approval/rules/${id}?done=confirm`)
  })
  it("no page of this file reported a CSP violation or opened a dialog", () => {
    expect(violations).toEqual([])
    expect(dialogs).toEqual([])
  })
})
