/**
 * The rule page after a redaction, in Chromium (gaps.md §12): a person whose grant may decide (or
 * redact) reads "Text redacted on <day>: <reason>" for every redaction that touched the rule's
 * versions, decisions or source — the day in the config's zone, like every time on the pages — and
 * the rule keeps its status and its history. A person who may only read does not see the note;
 * a rule nothing touched has none.
 */
import { Effect } from "effect"
import { type Browser, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { decide } from "../../src/decision/decide.js"
import { propose } from "../../src/domain/proposals.js"
import { storeSource } from "../../src/domain/sources.js"
import { mailProposal, mailSource, manualProposal } from "../support/fixtures.js"
import { redactRows } from "../support/redaction.js"
import { sqlOf } from "../support/run.js"
import { CHROMIUM, DECISION_ACTIONS, expectInert, inspectDom, shot, submitToken, watch } from "./browser-support.js"
import { type ApprovalServer, startApprovalServer } from "./support.js"

const MAIL_ID = "mail:<order-rule@example.com>"
let browser: Browser
const violations: Array<string> = []
const dialogs: Array<string> = []

beforeAll(async () => {
  browser = await chromium.launch({ executablePath: CHROMIUM })
}, 60_000)
afterAll(async () => {
  await browser.close()
})

/** A server whose person holds `rights`, with sales-0001 (quoting the mail, redacted twice) and sales-0002 (untouched). */
const seeded = async (rights: ReadonlyArray<"read" | "propose" | "decide">): Promise<ApprovalServer> => {
  const s = await startApprovalServer({ rights })
  await s.run(Effect.gen(function*() {
    yield* storeSource(mailSource(), s.feeder)
    const by = { grantId: s.feeder, channel: "api" as const }
    yield* propose(mailProposal(), by)
    yield* decide("sales-0001", { decision: "confirm", version: 1 }, { grantId: "person:9", identity: "p@example.com" })
    yield* propose(manualProposal("The warehouse counts the black hook rails every Friday", { relations: [] }), by)
    const sql = yield* sqlOf("sales")
    // 23:30 UTC on 1 December is 2 December in Europe/Berlin, the config's zone
    yield* redactRows(sql, "sales", "Maria", [
      { table: "source", key: { id: MAIL_ID }, columns: ["excerpt"] },
      { table: "rule_version", key: { rule_id: "sales-0001", version: 1 }, columns: ["speaker"] },
      { table: "rule_version", key: { rule_id: "sales-0001", version: 2 }, columns: ["speaker"] }
    ], { reason: "Erasure request DSR-2026-17", at: "2026-12-01T23:30:00Z" })
    yield* redactRows(sql, "sales", "Lieferanten", [{ table: "source", key: { id: MAIL_ID }, columns: ["excerpt"] }],
      { reason: "Supplier asked to be forgotten <b>now</b>", at: "2026-12-03T08:00:00Z" })
  }))
  return s
}

const signedIn = async (s: ApprovalServer): Promise<Page> => {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage()
  watch(page, violations, dialogs)
  await page.goto(`${s.url}/approval`)
  await submitToken(page, s.url)
  return page
}

const notes = (page: Page) => page.locator("p.notice.redaction").allTextContents()

describe("the rule page names the redactions to a person who may decide", () => {
  let s: ApprovalServer
  beforeAll(async () => {
    s = await seeded(["read", "propose", "decide"])
  }, 60_000)
  afterAll(async () => {
    await s.cleanup()
  })

  it("says \"Text redacted on <day>: <reason>\" once per redaction, the day in the config's zone; the rule stays confirmed", async () => {
    const page = await signedIn(s)
    await page.goto(`${s.url}/approval/rules/sales-0001`)
    expect(await notes(page)).toEqual([
      "Text redacted on 2026-12-02: Erasure request DSR-2026-17",
      "Text redacted on 2026-12-03: Supplier asked to be forgotten <b>now</b>"
    ])
    expect(await page.locator("p.notice.redaction time").first().getAttribute("datetime")).toBe("2026-12-01T23:30:00Z")
    const text = await page.textContent("main") ?? ""
    expect(text).not.toContain("Maria")
    expect(text).toContain("[redacted]")
    // status and history stay: still confirmed, both versions listed
    expect(await page.locator(".meta .badge").first().textContent()).toBe("confirmed")
    expect(await page.locator("ol.versions > li").count()).toBe(2)
    const dom = await inspectDom(page)
    expectInert(dom, s.url, DECISION_ACTIONS)
    await shot(page, "r1-rule-redacted")

    await page.goto(`${s.url}/approval/rules/sales-0002`)
    expect(await notes(page)).toEqual([])
    expect(violations).toEqual([])
    expect(dialogs).toEqual([])
  })
})

describe("a person who may only read", () => {
  let s: ApprovalServer
  beforeAll(async () => {
    s = await seeded(["read"])
  }, 60_000)
  afterAll(async () => {
    await s.cleanup()
  })

  it("sees the redacted text but no note of who redacted and why", async () => {
    const page = await signedIn(s)
    await page.goto(`${s.url}/approval/rules/sales-0001`)
    expect(await page.textContent("h1")).toBe("Ask the supplier for the delivery time before ordering black hook rails")
    expect(await notes(page)).toEqual([])
    expect(await page.textContent("main") ?? "").not.toContain("Erasure request")
  })
})
