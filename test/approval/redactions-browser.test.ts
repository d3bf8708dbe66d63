/**
 * /approval/redactions in a real browser (gaps.md §12, R4): a person with `redact` follows the link
 * from the index, asks for the preview of a name (every place with table, column, row and count,
 * the rule it touches as a link), confirms with a reason and lands on the list of past
 * redactions, which says when, who, why and how many places — never the term. A confirmation
 * without a reason, without the csrf token, with a term under 3 characters or against a stale
 * preview is refused as a page with its status, and none changes a byte of the scope file. A
 * person without `redact` sees no link and gets 403. A confirmation while another process reads
 * the file (as Litestream does) lands on a list that says the text is still in the write-ahead log. Screenshots go to test-output/screenshots/.
 */
import { existsSync, mkdirSync } from "node:fs"
import { Effect } from "effect"
import { type Browser, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OpsStore } from "../../src/db/ops-store.js"
import { scopeFile } from "../../src/db/scope-store.js"
import { propose } from "../../src/domain/proposals.js"
import { storeSource } from "../../src/domain/sources.js"
import { allRows } from "../support/approval.js"
import { mailProposal, mailSource } from "../support/fixtures.js"
import { otherConnection } from "../support/other-connection.js"
import { fileHash, sqlOf } from "../support/run.js"
import { CHROMIUM, expectInert, inPage, inspectDom, SCREENSHOTS, shot, signIn, submit, watchedPage } from "./browser-support.js"
import { type ApprovalServer, DEV_EMAIL, startApprovalServer } from "./support.js"

const NAME = "Petra Müller"
const REASON = "Löschantrag DSR-2026-017"
const MAIL_ID = "mail:<offer-petra@example.com>"
const QUOTE = "ab sofort gibt Petra Müller jeden Rabatt über zehn Prozent frei"
const ACTIONS = /^\/(v1\/redactions(\/preview)?|approval\/logout)$/

let s: ApprovalServer
let browser: Browser
let page: Page
let feederToken = ""
const violations: Array<string> = []
const dialogs: Array<string> = []

/** Every row of the scope file and its bytes (file and WAL). */
const snapshot = async () => {
  const rows = await s.run(Effect.flatMap(sqlOf("sales"), allRows))
  const files: Record<string, string> = {}
  const file = scopeFile(s.config.env.dataDir, "sales")
  for (const f of [file, `${file}-wal`]) if (existsSync(f)) files[f] = fileHash(f)
  return { rows, files }
}

const mentioning = (id: string, title: string) => mailSource({
  source: { kind: "mail", id, title, occurred_at: "2026-03-13T09:15:00Z", sender: "tom@example.com", thread: null, link: null },
  text: "Kurze Rückfrage.", attachments: []
})

/** Fills the term form and asks for the preview. */
const previewOf = async (term: string): Promise<number> => {
  await page.goto(`${s.url}/approval/redactions?scope=sales`)
  await page.fill("#r-term", term)
  await page.selectOption("#r-scope", "sales")
  return submit(page, "#preview-form button[type=submit]")
}

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true })
  s = await startApprovalServer({ rights: ["read", "propose", "decide", "redact"] })
  feederToken = await s.run(Effect.gen(function*() {
    const ops = yield* OpsStore
    const reader = yield* ops.createGrant({ kind: "service", auth: "bearer", scopes: ["sales"], rights: ["read"], label: "reader" })
    yield* storeSource(mailSource({
      source: { kind: "mail", id: MAIL_ID, title: `Angebot von ${NAME}`, occurred_at: "2026-03-12T09:15:00Z", sender: `${NAME} <petra.mueller@example.com>`, thread: null, link: null },
      text: `Hallo zusammen,\r\n\r\n${QUOTE}.\r\n\r\nViele Grüße`, attachments: []
    }), s.feeder)
    yield* propose(mailProposal({
      statement: `${NAME} approves every discount above ten percent`,
      source: { kind: "mail", id: MAIL_ID, quote: QUOTE, link: null }, speaker: NAME, keywords: ["Rabatt"]
    }), { grantId: s.feeder, channel: "api" })
    return "token" in reader ? reader.token : ""
  }))
  browser = await chromium.launch({ executablePath: CHROMIUM })
  page = await watchedPage(browser, violations, dialogs)
  await signIn(page, s.url)
}, 60_000)
afterAll(async () => {
  await browser.close()
  await s.cleanup()
})

describe("erasing a term on the approval pages", () => {
  it("the index links the redaction page for a person with redact; the page has the term form and no past redaction", async () => {
    await page.goto(`${s.url}/approval`)
    await Promise.all([page.waitForURL("**/approval/redactions"), page.click("#redactions-link")])
    expect(await page.textContent("h1")).toBe("Erase personal data")
    expect(await page.locator("#r-term").getAttribute("minlength")).toBe("3")
    expect(await page.textContent("#past-sales + *")).toContain("No redaction yet.")
    expectInert(await inspectDom(page), s.url, ACTIONS)
    await shot(page, "30-redactions")
  })

  it("the preview lists every place (table, column, row, count) and links the touched rule; nothing is written", async () => {
    const before = await snapshot()
    expect(await previewOf("petra mueller")).toBe(200)
    expect(new URL(page.url()).pathname).toBe("/v1/redactions/preview")
    expect(new URL(page.url()).search).toBe("")
    const rows = await inPage<Array<Array<string>>>(page, `[...document.querySelectorAll("table.places tbody tr")].map((r) => [...r.cells].map((c) => c.textContent.trim()))`)
    const where = rows.map((r) => `${r[1]}.${r[2]} ${r[3]}`)
    expect(where).toEqual(expect.arrayContaining([
      `source.title ${MAIL_ID}`, `source.sender ${MAIL_ID}`, "rule_version.statement sales-0001/1", "rule_version.quote sales-0001/1", "rule_version.speaker sales-0001/1"
    ]))
    expect(rows.every((r) => Number(r[4]) >= 1)).toBe(true)
    expect(await page.getAttribute("#rules-h + p + ul a", "href")).toBe("/approval/rules/sales-0001")
    expect(await page.textContent("h1")).toMatch(/^Erase \d+ occurrences in \d+ places\?$/)
    expect(await page.locator("#r-reason").getAttribute("required")).not.toBeNull()
    expectInert(await inspectDom(page), s.url, ACTIONS)
    await shot(page, "31-redaction-preview")
    expect(await snapshot()).toEqual(before)
  })

  it("a term under 3 characters → 400 page, nothing written", async () => {
    const before = await snapshot()
    await page.goto(`${s.url}/approval/redactions?scope=sales`)
    await page.evaluate(`document.querySelector("#r-term").removeAttribute("minlength")`)
    await page.fill("#r-term", "Pe")
    expect(await submit(page, "#preview-form button[type=submit]")).toBe(400)
    expect(await page.textContent("#outcome h2")).toBe("Nothing erased: a field needs correcting")
    expect(await snapshot()).toEqual(before)
  })

  it("the confirmation needs a reason: sent without one (past the browser's check) → 400 with the preview again, nothing written", async () => {
    expect(await previewOf(NAME)).toBe(200)
    const before = await snapshot()
    await page.evaluate(`document.querySelector("#r-reason").removeAttribute("required")`)
    expect(await submit(page, "#confirm-form button[type=submit]")).toBe(400)
    expect(await page.textContent("#outcome h2")).toBe("Nothing erased: a field needs correcting")
    expect(await page.locator("#confirm-form").count()).toBe(1)
    expect(await snapshot()).toEqual(before)
  })

  it("without the csrf token → 403 page, nothing written", async () => {
    expect(await previewOf(NAME)).toBe(200)
    await page.fill("#r-reason", REASON)
    await page.evaluate(`document.querySelector("#confirm-form input[name=csrf]").value = ""`)
    const before = await snapshot()
    expect(await submit(page, "#confirm-form button[type=submit]")).toBe(403)
    expect(await page.textContent("body")).toContain("csrf-failed")
    expect(await snapshot()).toEqual(before)
  })

  it("a stale preview (a mail naming her arrived meanwhile) → 409 with the preview as it stands now; nothing written", async () => {
    expect(await previewOf(NAME)).toBe(200)
    const placesSeen = await page.locator("table.places tbody tr").count()
    await s.run(storeSource(mentioning("mail:<again@example.com>", `Rückfrage an ${NAME}`), s.feeder))
    await page.fill("#r-reason", REASON)
    const before = await snapshot()
    expect(await submit(page, "#confirm-form button[type=submit]")).toBe(409)
    expect(await page.textContent("#outcome h2")).toBe("Nothing erased: the places changed since your preview")
    expect(await page.locator("table.places tbody tr").count()).toBe(placesSeen + 1)
    expect(await page.inputValue("#r-reason")).toBe(REASON)
    await shot(page, "32-redaction-stale")
    expect(await snapshot()).toEqual(before)
  })

  it("confirmed with a reason: 303 to the list, which says when, who, why and how many places — never the term", async () => {
    expect(await previewOf(NAME)).toBe(200)
    const places = await page.locator("table.places tbody tr").count()
    await page.fill("#r-reason", REASON)
    expect(await submit(page, "#confirm-form button[type=submit]")).toBe(303)
    expect(new URL(page.url()).pathname).toBe("/approval/redactions")
    expect(new URL(page.url()).searchParams.get("done")).toBe("sales-x0001")
    expect(await page.textContent("#outcome h2")).toBe("Erased.")
    const row = await inPage<Array<string>>(page, `[...document.querySelectorAll("tr#sales-x0001 td")].map((c) => c.textContent.trim())`)
    expect(row[0]).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}/)
    expect(row[1]).toBe(DEV_EMAIL)
    expect(row[2]).toBe(REASON)
    expect(row[3]).toBe(`${places}sales-x0001`)
    const text = (await inspectDom(page)).text.toLowerCase()
    for (const t of ["petra", "müller", "mueller"]) expect(text).not.toContain(t)
    expect(await page.inputValue("#r-term")).toBe("")
    expectInert(await inspectDom(page), s.url, ACTIONS)
    await shot(page, "33-redaction-done")
    // the rule page shows the marker where her name stood
    await page.goto(`${s.url}/approval/rules/sales-0001`)
    expect(await page.textContent("body")).toContain("[redacted] approves every discount above ten percent")
    expect((await page.textContent("body"))?.toLowerCase()).not.toContain("petra")
    expect(violations).toEqual([])
    expect(dialogs).toEqual([])
  })

  it("confirmed while another process (as Litestream) reads the file: the list says the erased text is still in the write-ahead log and what to do", async () => {
    const reader = otherConnection(scopeFile(s.config.env.dataDir, "sales"))
    try {
      reader.exec("BEGIN")
      reader.prepare("SELECT count(*) AS n FROM redaction").get()
      expect(await previewOf("Rückfrage")).toBe(200)
      await page.fill("#r-reason", REASON)
      expect(await submit(page, "#confirm-form button[type=submit]")).toBe(303)
    } finally {
      reader.close()
    }
    expect(new URL(page.url()).searchParams.get("done")).toBe("sales-x0002")
    expect(await page.getAttribute("#outcome", "class")).toBe("notice warn")
    expect(await page.textContent("#outcome h2")).toBe("Erased — but the old text is still in the file's write-ahead log")
    const said = (await page.textContent("#wal-held")) ?? ""
    expect(said).toContain("Another process (usually Litestream) holds the scope's file open")
    expect(said).toContain("Stop Litestream now; the service finishes the checkpoint at the next redaction or when it restarts.")
    expect(said).toContain("run groundnote backup run")
    expectInert(await inspectDom(page), s.url, ACTIONS)
    await shot(page, "34-redaction-wal-held")
    expect(violations).toEqual([])
  })

  it("a service bearer is refused the page (403) and the routes; a person without redact sees no link and gets 403", async () => {
    const bearer = await page.request.get(`${s.url}/approval/redactions`, { headers: { authorization: `Bearer ${feederToken}` } })
    expect(bearer.status()).toBe(403)
    const post = await page.request.post(`${s.url}/v1/redactions/preview`, { headers: { authorization: `Bearer ${feederToken}`, origin: s.url }, data: { scope: "sales", term: "Tom" } })
    expect(post.status()).toBe(403)
    expect(await post.json()).toMatchObject({ error: "channel-not-allowed" })
    await s.run(Effect.gen(function*() {
      const ops = yield* OpsStore
      const mine = (yield* ops.listGrants()).find((g) => g.identity === DEV_EMAIL && g.active)
      if (mine !== undefined) yield* ops.disableGrant(mine.id)
      yield* ops.createGrant({ kind: "person", auth: "email", identity: DEV_EMAIL, scopes: ["sales", "ops"], rights: ["read", "propose", "decide"] })
    }))
    await page.goto(`${s.url}/approval`)
    expect(await page.locator("#redactions-link").count()).toBe(0)
    const r = await page.goto(`${s.url}/approval/redactions`)
    expect(r?.status()).toBe(403)
    expect(await page.textContent("h1")).toBe("Not allowed here")
  })
})
