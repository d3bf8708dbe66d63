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
import { APPROVAL_TOKEN, type ApprovalServer, DEV_API, DEV_EMAIL, SESSION_SECRET, startApprovalServer } from "./support.js"

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
const postJson = async (path: string, body: unknown) => {
  const r = await fetch(`${s.url}${path}`, {
    method: "POST", redirect: "manual", body: JSON.stringify(body),
    headers: { cookie, csrf, origin: s.url, "content-type": "application/json" }
  })
  return { status: r.status, text: await r.text() }
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
  it("shows who adopted it and the classification, and offers confirm, review and revoke (never reject)", async () => {
    const created = await propose(PLAIN[2])
    const id = idOf(created.ref)
    const page = await get(`/approval/rules/${id}`)
    const text = textOf(page.text)
    expect(text).toContain("The approval policy (ruleset gn-1) adopted this rule without a person. It stays retractable until a person confirms or reviews it")
    expect(text).toContain("Class general Mode classified Outcome adopted by the policy")
    expect(text).toContain("the approval policy Details: policy@gn-1 · classified mode")
    for (const button of ["Confirm version 2", "Still valid: mark reviewed", "Revoke version 2"]) expect(text).toContain(button)
    expect(text).not.toContain("Reject version")
  })

  it("a person's confirm makes version 3 the person's: no longer retractable, no more confirm or reject form", async () => {
    const id = idOf((await propose(PLAIN[3])).ref)
    const r = await postForm(`/v1/rules/${id}/decision`, { decision: "confirm", version: "2" })
    expect(r.status).toBe(303)
    expect(r.location).toBe(`/approval/rules/${id}?done=confirm&v=3#outcome`)
    const page = textOf((await get(`/approval/rules/${id}`)).text)
    expect(page).toContain(`Confirmed by ${DEV_EMAIL} on`)
    expect(page).not.toContain("Reject version")
    expect(page).toContain("Revoke version 3")
    const e = await s.run(Effect.flip(retract(id, "too late", { grantId: s.feeder, identity: "feeder" })))
    expect(e).toMatchObject({ code: "already-decided" })
  })

  it("a reject of an auto-adopted rule is refused (409 already-decided, nothing stored): a confirmed rule is revoked, not rejected", async () => {
    const id = idOf((await propose(PLAIN[4])).ref)
    const before = await s.run(Effect.flatMap(sqlOf("sales"), (sql) =>
      sql<{ n: number }>`SELECT (SELECT count(*) FROM rule_version WHERE rule_id = ${id}) + (SELECT count(*) FROM decision WHERE rule_id = ${id}) AS n`))
    const json = await postJson(`/v1/rules/${id}/decision`, { decision: "reject", version: 2, reason: "not a rule" })
    expect(json.status).toBe(409)
    const body = JSON.parse(json.text) as { error: string; current: string; remedy?: string }
    expect(body).toMatchObject({ error: "already-decided", current: `rule/${id}@2` })
    expect(body.remedy).toContain("revoke")
    const form = await postForm(`/v1/rules/${id}/decision`, { decision: "reject", version: "2", reason: "not a rule" })
    expect(form.status).toBe(409)
    expect(textOf(form.text)).toContain("Not saved: it was already decided")
    const after = await s.run(Effect.flatMap(sqlOf("sales"), (sql) =>
      sql<{ n: number }>`SELECT (SELECT count(*) FROM rule_version WHERE rule_id = ${id}) + (SELECT count(*) FROM decision WHERE rule_id = ${id}) AS n`))
    expect(after).toEqual(before)
    const page = textOf((await get(`/approval/rules/${id}`)).text)
    expect(page).not.toContain("Reject version")
    expect(page).toContain("Revoke version 2")
  })

  it("a person's revoke ends an auto-adopted rule from a day; as_of reads and searches of a day before still show it, marked auto-adopted", async () => {
    const id = idOf((await propose(PLAIN[5])).ref)
    const today = new Date().toISOString().slice(0, 10)
    const r = await postForm(`/v1/rules/${id}/decision`, { decision: "revoke", version: "2", reason: "ended", valid_until: today })
    expect(r.status).toBe(303)
    const rows = await s.run(Effect.flatMap(sqlOf("sales"), (sql) =>
      sql<{ status: string; valid_until: string }>`SELECT status, valid_until FROM current_version WHERE rule_id = ${id}`))
    expect(rows).toEqual([{ status: "superseded", valid_until: today }])
    const api = { authorization: `Bearer ${DEV_API}`, "content-type": "application/json" }
    const read = await fetch(`${s.url}/v1/rules/${id}?as_of=2026-06-01`, { headers: api })
    expect(read.status).toBe(200)
    const bundle = await read.json() as { head: { ref: string; adoption: { kind: string }; valid_until: string | null; line: string } }
    expect(bundle.head).toMatchObject({ ref: `rule/${id}@3`, adoption: { kind: "auto" }, valid_until: today })
    const found = await fetch(`${s.url}/v1/search`, { method: "POST", headers: api, body: JSON.stringify({ scopes: ["sales"], text: PLAIN[5], as_of: "2026-06-01" }) })
    const result = await found.json() as { bundles: Array<{ head: { ref: string; adoption: { kind: string } } }> }
    expect(result.bundles.map((b) => b.head.ref)).toContain(`rule/${id}@3`)
    expect(result.bundles.find((b) => b.head.ref === `rule/${id}@3`)?.head.adoption).toEqual({ kind: "auto", ruleset: "gn-1" })
    const index = textOf((await get("/approval")).text)
    expect(index).toContain(`${PLAIN[5]} superseded revoked by a person`)
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
