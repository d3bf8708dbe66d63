/**
 * The approval pages in the approval modes (gaps.md §10) over real HTTP: the index shows per
 * scope the rules the policy adopted today (with why, and whether still retractable) and the
 * proposals waiting with their mandatory exceptions and reasons; the rule page shows who adopted
 * it and the classification; a person confirms an auto-adopted rule (which ends retractability),
 * revokes it or rejects it through the forms.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { csrfToken } from "../../src/auth/csrf.js"
import { retract } from "../../src/decision/policy/retract.js"
import { intake } from "../../src/domain/intake.js"
import { storeSource } from "../../src/domain/sources.js"
import { approvalOf, EXCEPTION_LINES, internalMail, PLAIN, quoting } from "../support/approval.js"
import { sqlOf } from "../support/run.js"
import { APPROVAL_TOKEN, type ApprovalServer, DEV_EMAIL, SESSION_SECRET, startApprovalServer } from "./support.js"

const csrf = csrfToken(SESSION_SECRET, DEV_EMAIL)
let s: ApprovalServer
let cookie = ""

const get = async (path: string) => {
  const r = await fetch(`${s.url}${path}`, { headers: { cookie }, redirect: "manual" })
  return { status: r.status, text: await r.text() }
}
const postForm = async (path: string, fields: Record<string, string>) => {
  const r = await fetch(`${s.url}${path}`, {
    method: "POST", redirect: "manual", body: new URLSearchParams({ csrf, ...fields }).toString(),
    headers: { cookie, origin: s.url, "content-type": "application/x-www-form-urlencoded" }
  })
  return { status: r.status, location: r.headers.get("location"), text: await r.text() }
}
const textOf = (page: string): string =>
  page.replace(/<[^>]*>/g, " ").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, "\"").replace(/&#39;/g, "'").replace(/&amp;/g, "&").replace(/\s+/g, " ")
const propose = (line: string, over: Parameters<typeof quoting>[1] = {}) =>
  s.run(Effect.map(intake(quoting(line, over), { grantId: s.feeder, channel: "api", requestId: null }), (r) => r.created))
const idOf = (ref: string) => ref.replace(/^rule\/|@\d+$/g, "")

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

describe("the index in mode B", () => {
  it("lists the rules adopted today with their reasons and the proposals waiting with their exceptions and reasons", async () => {
    const adopted = await propose(PLAIN[1])
    const waiting = await propose(EXCEPTION_LINES.payment)
    const external = await propose(EXCEPTION_LINES.external)
    expect([adopted.status, waiting.status, external.status]).toEqual(["confirmed", "proposed", "proposed"])
    const page = await get("/approval")
    expect(page.status).toBe(200)
    const text = textOf(page.text)
    expect(text).toContain("2 open proposals")
    expect(text).toContain("Adopted today without a person")
    expect(text).toContain(`${PLAIN[1]} confirmed auto-adopted in force, retractable until a person confirms it adopted today`)
    expect(text).toContain(`Details: ${idOf(adopted.ref)} · version 2 · classified mode · class general`)
    expect(text).toContain("Adopted automatically (classified mode, class general, no mandatory exception, ruleset gn-1)")
    // the payment proposal waits with its exception badge and the reasons in plain words
    expect(page.text).toContain(`<span class="badge exception">payment</span>`)
    expect(text).toContain("Payment: rules about money always wait for a person, in every mode.")
    expect(text).toContain("Classified mode adopts only general proposals; this one is external.")
  })
})

describe("the rule page of an auto-adopted rule", () => {
  it("shows who adopted it and the classification, and offers confirm, reject, review and revoke", async () => {
    const created = await propose(PLAIN[2])
    const id = idOf(created.ref)
    const page = await get(`/approval/rules/${id}`)
    const text = textOf(page.text)
    expect(text).toContain("The approval policy (ruleset gn-1) adopted this rule without a person. It stays retractable until a person confirms or reviews it")
    expect(text).toContain("Class general Mode classified Outcome adopted by the policy")
    expect(text).toContain("the approval policy Details: policy@gn-1 · classified mode")
    for (const button of ["Confirm version 2", "Reject version 2", "Still valid: mark reviewed", "Revoke version 2"]) expect(text).toContain(button)
  })

  it("a person's confirm makes version 3 the person's: no longer retractable, no more confirm or reject form", async () => {
    const id = idOf((await propose(PLAIN[3])).ref)
    const r = await postForm(`/v1/rules/${id}/decision`, { decision: "confirm", version: "2" })
    expect(r.status).toBe(303)
    expect(r.location).toBe(`/approval/rules/${id}?done=confirm&v=3#outcome`)
    const page = textOf((await get(`/approval/rules/${id}`)).text)
    expect(page).toContain("Confirmed by a person.")
    expect(page).not.toContain("Reject version")
    expect(page).toContain("Revoke version 3")
    const e = await s.run(Effect.flip(retract(id, "too late", { grantId: s.feeder, identity: "feeder" })))
    expect(e).toMatchObject({ code: "already-decided" })
  })

  it("reject takes the adoption back; revoke ends it from a day; both through the forms", async () => {
    const rejected = idOf((await propose(PLAIN[4])).ref)
    expect((await postForm(`/v1/rules/${rejected}/decision`, { decision: "reject", version: "2", reason: "not a rule" })).status).toBe(303)
    const revoked = idOf((await propose(PLAIN[5])).ref)
    expect((await postForm(`/v1/rules/${revoked}/decision`, { decision: "revoke", version: "2", reason: "ended", valid_until: "2026-02-01" })).status).toBe(303)
    const rows = await s.run(Effect.flatMap(sqlOf("sales"), (sql) =>
      sql<{ rule_id: string; status: string }>`SELECT rule_id, status FROM current_version WHERE rule_id IN (${rejected}, ${revoked}) ORDER BY rule_id`))
    expect(rows).toEqual([{ rule_id: rejected, status: "rejected" }, { rule_id: revoked, status: "superseded" }])
    const index = textOf((await get("/approval")).text)
    expect(index).toContain(`${PLAIN[4]} rejected rejected by a person`)
    expect(index).toContain(`Details: ${rejected} · version 3`)
    expect(index).toContain(`${PLAIN[5]} superseded revoked by a person`)
    expect(index).toContain(`Details: ${revoked} · version 3`)
  })

  it("a proposal that waits shows its exceptions; a retracted rule says so on the index", async () => {
    const waiting = idOf((await propose(EXCEPTION_LINES.doubt)).ref)
    const page = textOf((await get(`/approval/rules/${waiting}`)).text)
    expect(page).toContain("It waits for a person.")
    expect(page).toContain("Doubt: it sounds uncertain")
    const id = idOf((await propose(PLAIN[6])).ref)
    await s.run(retract(id, "moved", { grantId: s.feeder, identity: "feeder" }))
    expect(textOf((await get("/approval")).text)).toContain(`${PLAIN[6]} superseded retracted`)
  })
})
