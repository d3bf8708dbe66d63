/**
 * The rule page tells the truth for every status, over real HTTP: the header's status line and
 * details line and the Adoption box name who brought the rule in force (a person, or the
 * approval policy) and who ended it and how (rejected, revoked, retracted, superseded by a
 * successor) — never "Confirmed by a person" for a rule no person confirmed, never the proposer
 * as the one who decided.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { csrfToken } from "../../src/auth/csrf.js"
import { retract } from "../../src/decision/policy/retract.js"
import { intake } from "../../src/domain/intake.js"
import { storeSource } from "../../src/domain/sources.js"
import { approvalOf, EXCEPTION_LINES, internalMail, PLAIN, quoting } from "../support/approval.js"
import { APPROVAL_TOKEN, type ApprovalServer, DEV_EMAIL, SESSION_SECRET, startApprovalServer } from "./support.js"

const csrf = csrfToken(SESSION_SECRET, DEV_EMAIL)
let s: ApprovalServer
let cookie = ""

const textOf = (page: string): string =>
  page.replace(/<[^>]*>/g, " ").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, "\"").replace(/&#39;/g, "'").replace(/&amp;/g, "&").replace(/\s+/g, " ")
/** The text of one section of the page: from its heading to the next section. */
const section = (page: string, id: string): string => {
  const at = page.indexOf(`id="${id}"`)
  const end = page.indexOf("</section>", at)
  return textOf(page.slice(at, end))
}
const header = (page: string): string => textOf(page.slice(page.indexOf("<h1>"), page.indexOf(`<div class="grid">`)))
const page = async (id: string) => (await fetch(`${s.url}/approval/rules/${id}`, { headers: { cookie } })).text()
const decide = async (id: string, fields: Record<string, string>) => {
  const r = await fetch(`${s.url}/v1/rules/${id}/decision`, {
    method: "POST", redirect: "manual", body: new URLSearchParams({ csrf, ...fields }).toString(),
    headers: { cookie, origin: s.url, "content-type": "application/x-www-form-urlencoded" }
  })
  expect(r.status).toBe(303)
}
const propose = async (line: string, over: Parameters<typeof quoting>[1] = {}) => {
  const created = await s.run(Effect.map(intake(quoting(line, over), { grantId: s.feeder, channel: "api", requestId: null }), (r) => r.created))
  return created.ref.replace(/^rule\/|@\d+$/g, "")
}

beforeAll(async () => {
  s = await startApprovalServer({ configure: approvalOf("classified") })
  await s.run(storeSource(internalMail(), s.feeder))
  const login = await fetch(`${s.url}/approval/login`, {
    method: "POST", body: `token=${APPROVAL_TOKEN}`, headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" }, redirect: "manual"
  })
  cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] ?? ""
})
afterAll(async () => {
  await s.cleanup()
})

describe("the rule page's header and Adoption box for every status", () => {
  it("proposed: it waits for a person; the header names the proposer only as proposer", async () => {
    const id = await propose(EXCEPTION_LINES.doubt)
    const p = await page(id)
    expect(section(p, "class-h")).toContain("It waits for a person.")
    expect(header(p)).toMatch(/proposed today ?, not confirmed/)
    expect(header(p)).toContain(`Details: ${id} · version 1 · proposed by ${s.feeder}`)
  })

  it("confirmed by a person: names the person and the day", async () => {
    const id = await propose(EXCEPTION_LINES.payment)
    await decide(id, { decision: "confirm", version: "1" })
    const p = await page(id)
    const box = section(p, "class-h")
    expect(box).toContain(`Confirmed by ${DEV_EMAIL} on`)
    expect(header(p)).toContain(`Details: ${id} · version 2 · proposed by ${s.feeder} · confirmed by person:`)
  })

  it("auto-adopted: the approval policy, not a person", async () => {
    const id = await propose(PLAIN[0])
    const p = await page(id)
    const box = section(p, "class-h")
    expect(box).toContain("The approval policy (ruleset gn-1) adopted this rule without a person.")
    expect(box).not.toContain("by a person")
    expect(header(p)).toContain("confirmed by policy@gn-1")
  })

  it("rejected: who rejected it, when and why; never \"Confirmed by a person\"; the header does not credit the proposer", async () => {
    const id = await propose(EXCEPTION_LINES.external)
    await decide(id, { decision: "reject", version: "1", reason: "not our rule" })
    const p = await page(id)
    const box = section(p, "class-h")
    expect(box).not.toContain("Confirmed by a person")
    expect(box).toContain(`Rejected by ${DEV_EMAIL} on`)
    expect(box).toContain("not our rule")
    expect(box).toContain("It never appears outside these pages.")
    const top = header(p)
    expect(top).toContain(`rejected by ${DEV_EMAIL}`)
    expect(top).toContain(`Details: ${id} · version 2 · proposed by ${s.feeder} · rejected by person:`)
    expect(top).not.toMatch(new RegExp(`version 2 · by ${s.feeder}`))
  })

  it("revoked: who adopted it, who revoked it and from which day; earlier days still show it", async () => {
    const id = await propose(PLAIN[1])
    await decide(id, { decision: "revoke", version: "2", reason: "moved to the new hall", valid_until: "2026-02-01" })
    const p = await page(id)
    const box = section(p, "class-h")
    expect(box).toContain("The approval policy (ruleset gn-1) adopted it on")
    expect(box).toContain(`Revoked by ${DEV_EMAIL} on`)
    expect(box).toContain("It applied until 2026-02-01 (not on that day); reads and searches of earlier days still show it.")
    expect(box).toContain("moved to the new hall")
    expect(header(p)).toContain("no longer in force from 2026-02-01")
    expect(header(p)).toContain("revoked by person:")
  })

  it("retracted: the policy's adoption taken back, by whom", async () => {
    const id = await propose(PLAIN[2])
    await s.run(retract(id, "adopted too early", { grantId: s.feeder, identity: "feeder" }))
    const box = section(await page(id), "class-h")
    expect(box).toContain("The approval policy (ruleset gn-1) adopted it on")
    expect(box).toContain("Retracted by feeder on")
    expect(box).toContain("adopted too early")
    expect(box).not.toContain("by a person.")
  })

  it("superseded by a successor: names the successor and the day it took over", async () => {
    const old = await propose(EXCEPTION_LINES.payment, { statement: "Rechnungen sammeln wir im Lager in der blauen Mappe." })
    await decide(old, { decision: "confirm", version: "1" })
    const successor = await propose(EXCEPTION_LINES.payment, { statement: "Rechnungen sammeln wir ab März in der roten Mappe.", supersedes: old, valid_from: "2026-03-01" })
    await decide(successor, { decision: "confirm", version: "1" })
    const p = await page(old)
    const box = section(p, "class-h")
    expect(box).toContain(`Confirmed by ${DEV_EMAIL} on`)
    expect(box).toContain(`Superseded by ${successor} from 2026-03-01`)
    expect(header(p)).toContain("no longer in force from 2026-03-01")
  })
})
