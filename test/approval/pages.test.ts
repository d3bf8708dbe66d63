/**
 * The approval pages over real HTTP (architecture.md §5.3, §6.4, §10; graph.md §12): headers on
 * every page, the rule page's evidence, versions and decisions, form posts that land back on the
 * page with the outcome, refusals as pages, and the identity e-mail only here.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { csrfToken } from "../../src/auth/csrf.js"
import { propose } from "../../src/domain/proposals.js"
import { storeSource } from "../../src/domain/sources.js"
import { counts, sqlOf } from "../support/run.js"
import { jamieSource, mailProposal, mailSource, manualProposal } from "../support/fixtures.js"
import { APPROVAL_TOKEN, type ApprovalServer, DEV_API, DEV_EMAIL, SESSION_SECRET, startApprovalServer } from "./support.js"

const CSP = "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
const csrf = csrfToken(SESSION_SECRET, DEV_EMAIL)

let s: ApprovalServer
let cookie = ""

const get = async (path: string, headers: Record<string, string> = { cookie }) => {
  // The server runs in this process: after seconds of synchronous seeding, its keep-alive timer may
  // have closed a pooled socket before fetch's own timer noticed; a GET is retried once on a fresh one.
  const r = await fetch(`${s.url}${path}`, { headers, redirect: "manual" }).catch((e: unknown) => {
    if ((e as { cause?: { code?: unknown } }).cause?.code !== "ECONNRESET") throw e
    return fetch(`${s.url}${path}`, { headers, redirect: "manual" })
  })
  return { status: r.status, headers: r.headers, text: await r.text() }
}
const postForm = async (path: string, fields: Record<string, string>, headers: Record<string, string> = {}) => {
  const r = await fetch(`${s.url}${path}`, {
    method: "POST", redirect: "manual", body: new URLSearchParams(fields).toString(),
    headers: { cookie, origin: s.url, "content-type": "application/x-www-form-urlencoded", ...headers }
  })
  return { status: r.status, headers: r.headers, text: await r.text() }
}
const scopeCounts = (scope: string) => s.run(Effect.flatMap(sqlOf(scope), counts))
const proposeMail = (statement: string, over: Parameters<typeof mailProposal>[0] = {}) =>
  s.run(Effect.map(propose(mailProposal({ statement, ...over }), { grantId: s.feeder, channel: "api" }), (c) => c.ref.replace(/^rule\/|@\d+$/g, "")))

/** Text of the page without tags (entities of the escaper decoded). */
const textOf = (page: string): string =>
  page.replace(/<[^>]*>/g, " ").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, "\"").replace(/&#39;/g, "'").replace(/&amp;/g, "&").replace(/\s+/g, " ")

beforeAll(async () => {
  s = await startApprovalServer()
  await s.run(storeSource(mailSource(), s.feeder))
  await s.run(storeSource(jamieSource(), s.feeder))
  const login = await fetch(`${s.url}/approval/login`, {
    method: "POST", body: `token=${APPROVAL_TOKEN}`, headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" }, redirect: "manual"
  })
  cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] ?? ""
})
afterAll(async () => {
  await s.cleanup()
})

const expectPageHeaders = (h: Headers) => {
  expect(h.get("content-security-policy")).toBe(CSP)
  expect(h.get("x-content-type-options")).toBe("nosniff")
}

describe("every page", () => {
  it("has the CSP and nosniff of §5.3, one stylesheet from 'self', no script and no inline style", async () => {
    const id = await proposeMail("Every page carries the security headers here")
    const pages = [
      await get("/approval"), await get(`/approval/rules/${id}`), await get("/approval/rejected?scope=sales"),
      await get("/approval/rules/sales-9999"), await get("/approval/rejected?scope=nope"), await get("/approval/login", {}),
      await get("/approval/nope/deeper", {})
    ]
    expect(pages.map((p) => p.status)).toEqual([200, 200, 200, 404, 403, 200, 404])
    for (const p of pages) {
      expectPageHeaders(p.headers)
      expect(p.headers.get("content-type")).toBe("text/html; charset=utf-8")
      expect(p.text.match(/<link rel="stylesheet" href="\/approval\/style\.css\?v=[0-9a-f]{12}">/g)?.length).toBe(1)
      expect(p.text).not.toMatch(/<script|<style|\sstyle=|\son[a-z]+=|javascript:/i)
    }
    const css = await get("/approval/style.css", {})
    expect(css.status).toBe(200)
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8")
    expect(css.headers.get("x-content-type-options")).toBe("nosniff")
  })
  it("without a session: a page sends the person to the login page; the refusal itself carries the headers", async () => {
    const r = await get("/approval", {})
    expect(r.status).toBe(303)
    expect(r.headers.get("location")).toBe("/approval/login")
    expectPageHeaders(r.headers)
    const forged = await get("/approval", { cookie: "gn_session=eyJzdWIiOiJ4In0.AAAA" })
    expect(forged.status).toBe(303)
  })
  it("a signed-in person opening the login page goes to the proposals", async () => {
    const r = await get("/approval/login")
    expect(r.status).toBe(303)
    expect(r.headers.get("location")).toBe("/approval")
  })
  it("a scope outside the grant is 403 as a page, the same for an unknown scope", async () => {
    const a = await get("/approval/rejected?scope=hr")
    const b = await get("/approval/rules/hr-0001")
    expect([a.status, b.status]).toEqual([403, 403])
    expect(textOf(a.text)).toContain("scope-not-allowed")
    expect(textOf(b.text)).toContain("scope-not-allowed")
  })
})

describe("GET /approval", () => {
  it("lists open proposals per scope newest first with statement, quote, source, speaker and age", async () => {
    const older = await proposeMail("The older of two proposals in the list")
    const newer = await proposeMail("The newer of two proposals in the list", { speaker: "Jonas" })
    const page = await get("/approval")
    const text = textOf(page.text)
    expect(text.indexOf("The newer of two proposals")).toBeLessThan(text.indexOf("The older of two proposals"))
    expect(page.text).toContain(`href="/approval/rules/${newer}"`)
    expect(page.text).toContain(`href="/approval/rules/${older}"`)
    expect(text).toContain("Vor jeder Bestellung schwarzer Hakenleisten")
    expect(text).toContain("Mail: Bestellungen Hakenleisten")
    expect(text).toContain("said by Jonas")
    expect(text).toContain("proposed today")
    expect(text).toMatch(/ops .*0 open proposals/)
  })
  it("a scope of the grant without a file is named with its notice; the other scopes still show", async () => {
    const part = await startApprovalServer({ scopes: ["sales", "hr"], created: ["sales"] })
    try {
      const login = await fetch(`${part.url}/approval/login`, { method: "POST", body: `token=${APPROVAL_TOKEN}`, headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" }, redirect: "manual" })
      const c = (login.headers.get("set-cookie") ?? "").split(";")[0] ?? ""
      const page = await fetch(`${part.url}/approval`, { headers: { cookie: c } })
      const text = textOf(await page.text())
      expect(page.status).toBe(200)
      expect(text).toContain("hr this scope has no file yet")
      expect(text).toContain("sales only this scope")
      expect((await fetch(`${part.url}/approval?scope=hr`, { headers: { cookie: c } })).status).toBe(503)
    } finally {
      await part.cleanup()
    }
  })
  it("pages a scope at 100 proposals: ?scope=&page=2 shows the older ones", async () => {
    const before = (await scopeCounts("ops")).rule ?? 0
    await s.run(storeSource(mailSource({ scope: "ops" }), s.feeder))
    for (let i = 0; i < 101 - before; i++) {
      await s.run(propose(mailProposal({ scope: "ops", statement: `Ops proposal number ${String(i).padStart(3, "0")} of the page` }), { grantId: s.feeder, channel: "api" }))
    }
    const first = await get("/approval?scope=ops")
    expect(first.text.match(/<li id="p-[a-z0-9-]+"(?: class="dup")?>\s*(?:<label class="pick">.*?<\/label>\s*)?<div class="statement">/g)?.length).toBe(100)
    expect(textOf(first.text)).toContain("Older (1 more)")
    // a hundred proposals that differ only in a number: the newest ones are checked and marked with their twins on the page
    const marked = first.text.match(/<li id="p-[a-z0-9-]+" class="dup">/g)?.length ?? 0
    expect(marked).toBeGreaterThanOrEqual(20)
    expect(first.text).toMatch(/<span class="badge exception">near duplicate<\/span> says nearly the same as <a href="#p-ops-\d+">Ops proposal number/)
    const second = await get("/approval?scope=ops&page=2")
    expect(second.text.match(/<li id="p-[a-z0-9-]+"(?: class="dup")?>\s*(?:<label class="pick">.*?<\/label>\s*)?<div class="statement">/g)?.length).toBe(1)
    expect(textOf(second.text)).toContain("Ops proposal number 000")
    expect((await get("/approval?scope=ops&page=0")).status).toBe(400)
  })
})

describe("GET /approval/rules/:id", () => {
  it("shows the mail text with the quote highlighted, attachments, and the forms for the version seen", async () => {
    const id = await proposeMail("Show the mail evidence with the highlighted quote")
    const page = await get(`/approval/rules/${id}`)
    expect(page.status).toBe(200)
    const mark = /<mark id="quote">([\s\S]*?)<\/mark>/.exec(page.text)?.[1] ?? ""
    expect(mark.startsWith("Vor jeder Bestellung schwarzer Hakenleisten (RAL 9005)")).toBe(true)
    expect(textOf(page.text)).toContain("preisliste.pdf")
    expect(textOf(page.text)).toContain("No text (unread).")
    for (const decision of ["confirm", "reject"]) {
      expect(page.text).toContain(`<input type="hidden" name="decision" value="${decision}"><input type="hidden" name="version" value="1"><input type="hidden" name="csrf" value="${csrf}">`)
    }
    expect(page.text).toContain(`action="/v1/rules/${id}/decision"`)
  })
  it("shows the jamie window with timestamps and speakers, the quote marked across two segments", async () => {
    const created = await s.run(propose(mailProposal({
      statement: "Ask for the delivery time before ordering rails",
      source: { kind: "jamie", id: "jamie:meeting-2026-03-12", quote: "always ask the supplier for the delivery time before ordering", timestamp_s: 100, link: "https://jamie.example.com/m/7?t=100" }
    }), { grantId: s.feeder, channel: "api" }))
    const id = created.ref.replace(/^rule\/|@\d+$/g, "")
    const page = await get(`/approval/rules/${id}`)
    const text = textOf(page.text)
    expect(text).toContain("[0:00] Tom: Good morning everyone")
    expect(text).toContain("[3:40] Maria:")
    expect(text).not.toContain("Müller GmbH")
    expect([...page.text.matchAll(/<mark(?: id="quote")?>([\s\S]*?)<\/mark>/g)].map((m) => m[1])).toEqual([
      "always ask the supplier for the delivery time", "before ordering"
    ])
    expect(page.text).toContain(`href="https://jamie.example.com/m/7?t=100"`)
  })
  it("a proposal in own words (manual source) says its quote is not checked and shows no source window", async () => {
    const created = await s.run(propose(manualProposal("Samples go out only with a signed delivery note"), { grantId: s.feeder, channel: "api" }))
    const page = await get(`/approval/rules/${created.ref.replace(/^rule\/|@\d+$/g, "")}`)
    expect(page.status).toBe(200)
    const text = textOf(page.text)
    expect(text).toContain("Source Own words")
    expect(text).toContain("not checked (own words, no stored source)")
    expect(page.text).not.toContain("class=\"window\"")
  })
  it("every version and every decision with who (grant and e-mail) and when; the e-mail never on /v1", async () => {
    const id = await proposeMail("Confirm me and then review me with new keywords")
    expect((await postForm(`/v1/rules/${id}/decision`, { decision: "confirm", version: "1", csrf, keywords: "Lieferzeit, Neu" })).status).toBe(303)
    expect((await postForm(`/v1/rules/${id}/decision`, { decision: "review", version: "2", csrf, keywords: "Lieferzeit, Neu, Dritte", reason: "checked" })).status).toBe(303)
    const page = await get(`/approval/rules/${id}`)
    const text = textOf(page.text)
    for (const v of [1, 2, 3]) expect(page.text).toContain(`<li id="v${v}">`)
    // the person by e-mail; the grant id and the versions on the details line
    expect(text).toContain("confirmed dev@example.com Details: person:1 · saw version 1 → 2")
    expect(text).toContain("reviewed dev@example.com Details: person:1 · saw version 2 → 3 checked")
    expect(text).toContain("changed: keywords")
    const versions = await fetch(`${s.url}/v1/rules/${id}/versions`, { headers: { authorization: `Bearer ${DEV_API}` } })
    const body = await versions.text()
    expect(versions.status).toBe(200)
    expect(body).toContain("person:1")
    expect(body).not.toContain(DEV_EMAIL)
  })
  it("similar rules (a near duplicate marked) and the previously rejected similar rule", async () => {
    const gone = await proposeMail("Pallets for Spedition Maier must be wrapped twice")
    expect((await postForm(`/v1/rules/${gone}/decision`, { decision: "reject", version: "1", csrf, reason: "wrong customer" })).status).toBe(303)
    const twin = await proposeMail("Pallets for Spedition Maier are wrapped twice always")
    const dup = await proposeMail("Pallets for Spedition Maier are wrapped twice, always")
    const page = textOf((await get(`/approval/rules/${dup}`)).text)
    const dups = page.slice(page.indexOf("Similar rules"), page.indexOf("Previously rejected similar"))
    expect(dups).toContain(twin)
    expect(dups).toContain("near duplicate")
    const rejected = page.slice(page.indexOf("Previously rejected similar"), page.indexOf("Decide"))
    expect(rejected).toContain(gone)
    expect(rejected).toContain("Reason: wrong customer")
    expect(rejected).toContain(`by ${DEV_EMAIL}`)
  })
  it("a grant without decide reads the page without forms", async () => {
    const ro = await startApprovalServer({ rights: ["read"] })
    try {
      await ro.run(storeSource(mailSource(), ro.feeder))
      await ro.run(propose(mailProposal(), { grantId: ro.feeder, channel: "api" }))
      const login = await fetch(`${ro.url}/approval/login`, { method: "POST", body: `token=${APPROVAL_TOKEN}`, headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" }, redirect: "manual" })
      const c = (login.headers.get("set-cookie") ?? "").split(";")[0] ?? ""
      const page = await fetch(`${ro.url}/approval/rules/sales-0001`, { headers: { cookie: c } })
      const text = await page.text()
      expect(page.status).toBe(200)
      expect(text).not.toContain("name=\"decision\"")
      expect(textOf(text)).toContain("can read this scope but not decide")
      expect((await fetch(`${ro.url}/approval/rejected?scope=sales`, { headers: { cookie: c } })).status).toBe(403)
    } finally {
      await ro.cleanup()
    }
  })
})

describe("form posts land back on the page", () => {
  it("confirm with a changed keyword → 303 to the page, which says so; the new version has the keyword", async () => {
    const id = await proposeMail("Confirm this one with a changed keyword")
    const r = await postForm(`/v1/rules/${id}/decision`, {
      decision: "confirm", version: "1", csrf, statement: "Confirm this one with a changed keyword", keywords: "Lieferzeit, Hakenleiste schwarz",
      valid_from: "2026-03-12", kind: "rule", relations: JSON.stringify([{ kind: "product", name: "Hakenleiste schwarz", ref: null }]), said_at: "2026-03-12T09:15:00Z", speaker: "", supersedes: "", reason: ""
    })
    expect(r.status).toBe(303)
    expect(r.headers.get("location")).toBe(`/approval/rules/${id}?done=confirm&v=2#outcome`)
    expectPageHeaders(r.headers)
    const page = await get(r.headers.get("location") ?? "")
    const text = textOf(page.text)
    expect(text).toContain("Confirmed. Saved. The rule is in force and agents find it. Details: version 2")
    expect(text).not.toContain("is now current")
    expect(text).toMatch(/Keywords Lieferzeit, Hakenleiste schwarz/)
    expect(page.text).toContain(`<input type="hidden" name="decision" value="revoke"><input type="hidden" name="version" value="2">`)
  })
  it("a stale version → 303 to the rule page, which says somebody decided first, names the current version and what changed; nothing written", async () => {
    const id = await proposeMail("Somebody else confirms this one first")
    expect((await postForm(`/v1/rules/${id}/decision`, { decision: "confirm", version: "1", csrf, keywords: "Lieferzeit, Anders" })).status).toBe(303)
    const before = await scopeCounts("sales")
    const r = await postForm(`/v1/rules/${id}/decision`, { decision: "reject", version: "1", csrf, reason: "I only saw version 1" })
    expect(r.status).toBe(303)
    expectPageHeaders(r.headers)
    expect(r.headers.get("location")).toBe(`/approval/rules/${id}?stale=1&tried=reject#outcome`)
    const page = await get(`/approval/rules/${id}?stale=1&tried=reject`)
    expect(page.status).toBe(200)
    const text = textOf(page.text)
    expect(text).toContain("Not saved: somebody decided first")
    expect(text).toContain("You decided on version 1; somebody decided before you, so your reject was not saved.")
    expect(text).toContain("Details: version-outdated")
    expect(text).toContain(`current rule/${id}@2`)
    expect(text).toContain("What changed since version 1")
    expect(text).toContain(`Last decision: confirmed by ${DEV_EMAIL}`)
    expect(text).toMatch(/Keywords Lieferzeit, Hakenleiste Lieferzeit, Anders/)
    expect(page.text).toContain(`<input type="hidden" name="decision" value="revoke"><input type="hidden" name="version" value="2">`)
    expect(await scopeCounts("sales")).toEqual(before)
  })
  it("version-outdated on a confirmed rule: a revoke of version 1 when 2 is current → 303; the page offers the forms for version 2", async () => {
    const id = await proposeMail("Review the version that is no longer current")
    expect((await postForm(`/v1/rules/${id}/decision`, { decision: "confirm", version: "1", csrf })).status).toBe(303)
    const before = await scopeCounts("sales")
    const r = await postForm(`/v1/rules/${id}/decision`, { decision: "revoke", version: "1", csrf, reason: "old", valid_until: "2026-12-31" })
    expect(r.status).toBe(303)
    expect(r.headers.get("location")).toBe(`/approval/rules/${id}?stale=1&tried=revoke#outcome`)
    const page = await get(`/approval/rules/${id}?stale=1&tried=revoke`)
    expect(textOf(page.text)).toContain("Details: version-outdated")
    expect(textOf(page.text)).toContain(`current rule/${id}@2`)
    expect(page.text).toContain(`<input type="hidden" name="decision" value="revoke"><input type="hidden" name="version" value="2">`)
    expect(await scopeCounts("sales")).toEqual(before)
  })
  it("a reject without a reason → 400 reason-missing on the page; a bad keyword → 400 with the field; nothing written", async () => {
    const id = await proposeMail("Reject me without giving any reason")
    const before = await scopeCounts("sales")
    const r = await postForm(`/v1/rules/${id}/decision`, { decision: "reject", version: "1", csrf, reason: "   " })
    expect(r.status).toBe(400)
    expect(textOf(r.text)).toContain("Details: reason-missing")
    const k = await postForm(`/v1/rules/${id}/decision`, { decision: "confirm", version: "1", csrf, keywords: "x, Lieferzeit" })
    expect(k.status).toBe(400)
    expect(textOf(k.text)).toContain("Details: validation-failed")
    expect(k.text).toContain("value=\"x, Lieferzeit\"")
    const j = await postForm(`/v1/rules/${id}/decision`, { decision: "confirm", version: "1", csrf, relations: "[{broken" })
    expect(j.status).toBe(400)
    expect(await scopeCounts("sales")).toEqual(before)
  })
  it("revoke with valid_until supersedes the rule from that day", async () => {
    const id = await proposeMail("Revoke this rule at the end of the year")
    expect((await postForm(`/v1/rules/${id}/decision`, { decision: "confirm", version: "1", csrf })).status).toBe(303)
    const r = await postForm(`/v1/rules/${id}/decision`, { decision: "revoke", version: "2", csrf, reason: "no longer applies", valid_until: "2026-12-31" })
    expect(r.headers.get("location")).toBe(`/approval/rules/${id}?done=revoke&v=3#outcome`)
    const text = textOf((await get(`/approval/rules/${id}`)).text)
    expect(text).toContain("Valid until 2026-12-31")
    expect(text).toContain("nothing left to decide")
  })
  it("a form post without session, from another origin or without the token is refused as a page, nothing written", async () => {
    const id = await proposeMail("Nobody may decide this from elsewhere")
    const before = await scopeCounts("sales")
    const fields = { decision: "confirm", version: "1", csrf }
    const noSession = await postForm(`/v1/rules/${id}/decision`, fields, { cookie: "" })
    expect(noSession.status).toBe(401)
    expect(textOf(noSession.text)).toContain("Nothing was saved")
    const foreign = await postForm(`/v1/rules/${id}/decision`, fields, { origin: "http://evil.example" })
    expect(foreign.status).toBe(403)
    expect(textOf(foreign.text)).toContain("csrf-failed")
    expectPageHeaders(foreign.headers)
    expect((await postForm(`/v1/rules/${id}/decision`, { decision: "confirm", version: "1" })).status).toBe(403)
    expect((await postForm(`/v1/rules/${id}/decision`, { ...fields, csrf: csrfToken(SESSION_SECRET, "other@example.com") })).status).toBe(403)
    expect(await scopeCounts("sales")).toEqual(before)
  })
})

describe("GET /approval/rejected", () => {
  it("lists rejected rules with when, who and why; the page needs decide and a scope", async () => {
    const id = await proposeMail("This proposal will be rejected for the list")
    expect((await postForm(`/v1/rules/${id}/decision`, { decision: "reject", version: "1", csrf, reason: "not a rule" })).status).toBe(303)
    const page = await get("/approval/rejected?scope=sales")
    const text = textOf(page.text)
    expect(text).toContain("This proposal will be rejected for the list")
    expect(text).toContain("Reason: not a rule")
    expect(text).toContain(`by ${DEV_EMAIL}`)
    expect((await get("/approval/rejected")).status).toBe(400)
    expect((await get(`/approval/rules/${id}`)).status).toBe(200)
    expect((await fetch(`${s.url}/v1/rules/${id}`, { headers: { authorization: `Bearer ${DEV_API}` } })).status).toBe(404)
  })
})
