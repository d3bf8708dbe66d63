/**
 * Signing in comes back to the page asked for (an approval_url sent by an agent, a bookmark),
 * over real HTTP: a page without a session redirects to the login page with `next`, the form
 * carries it, and the login answers 303 to it. Only an approval path of this service counts: an
 * absolute URL, `//host`, a backslash, a scheme, control characters or dot segments out of
 * /approval land on /approval, never off-site.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { propose } from "../../src/domain/proposals.js"
import { storeSource } from "../../src/domain/sources.js"
import { mailProposal, mailSource } from "../support/fixtures.js"
import { APPROVAL_TOKEN, type ApprovalServer, startApprovalServer } from "./support.js"

let s: ApprovalServer
let id = ""

const login = (fields: Record<string, string>, headers: Record<string, string> = {}) =>
  fetch(`${s.url}/approval/login`, {
    method: "POST", redirect: "manual", body: new URLSearchParams({ token: APPROVAL_TOKEN, ...fields }).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin", ...headers }
  })

/** Off-site and other tricks a `next` may carry. */
export const HOSTILE_NEXT = [
  "https://evil.example/approval", "//evil.example/approval", "///evil.example/approval", "/\\evil.example/approval", "\\\\evil.example/approval",
  "/\\/evil.example", "javascript:alert(1)", "http:/evil.example", "/approval\\@evil.example", "/approval@evil.example",
  "/approval/../../evil", "/approval/..%2f..%2fevil", "/%2f%2fevil.example", "/approval/rules/x\r\nset-cookie: a=b", " /approval/rules/x",
  "/v1/export/sales", "/approval/login", "approval/rules/x", "/approvalx"
]

beforeAll(async () => {
  // every hostile next is one sign-in of its own: more than the default five a minute
  s = await startApprovalServer({ configure: { limits: { login_attempts_per_minute: 1000 } } })
  await s.run(storeSource(mailSource(), s.feeder))
  id = await s.run(Effect.map(propose(mailProposal({}), { grantId: s.feeder, channel: "api" }), (c) => c.ref.replace(/^rule\/|@\d+$/g, "")))
})
afterAll(async () => {
  await s.cleanup()
})

describe("the login comes back to the page asked for", () => {
  it("a rule page without a session → the login page with next → the form carries it → 303 to the rule page", async () => {
    const page = await fetch(`${s.url}/approval/rules/${id}`, { redirect: "manual" })
    expect(page.status).toBe(303)
    const location = page.headers.get("location") ?? ""
    expect(location).toBe(`/approval/login?next=${encodeURIComponent(`/approval/rules/${id}`)}`)
    const form = await (await fetch(`${s.url}${location}`)).text()
    expect(form).toContain(`<input type="hidden" name="next" value="/approval/rules/${id}">`)
    const r = await login({ next: `/approval/rules/${id}` })
    expect(r.status).toBe(303)
    expect(r.headers.get("location")).toBe(`/approval/rules/${id}`)
    const cookie = (r.headers.get("set-cookie") ?? "").split(";")[0] ?? ""
    expect((await fetch(`${s.url}/approval/rules/${id}`, { headers: { cookie } })).status).toBe(200)
    // a query is kept; a signed-in person opening the login page goes to next at once
    const structure = "/approval/structure?scope=sales"
    expect((await login({ next: structure })).headers.get("location")).toBe(structure)
    const again = await fetch(`${s.url}/approval/login?next=${encodeURIComponent(structure)}`, { headers: { cookie }, redirect: "manual" })
    expect([again.status, again.headers.get("location")]).toEqual([303, structure])
  })

  it("a wrong token keeps next on the form that comes back", async () => {
    const r = await login({ token: "wrong", next: `/approval/rules/${id}` })
    expect(r.status).toBe(401)
    expect(await r.text()).toContain(`<input type="hidden" name="next" value="/approval/rules/${id}">`)
  })

  it("no next, or one that is not an approval path of this service, lands on /approval; never off-site", async () => {
    expect((await login({})).headers.get("location")).toBe("/approval")
    for (const next of HOSTILE_NEXT) {
      const r = await login({ next })
      expect([next, r.status, r.headers.get("location")]).toEqual([next, 303, "/approval"])
      const cookie = (r.headers.get("set-cookie") ?? "").split(";")[0] ?? ""
      const signedIn = await fetch(`${s.url}/approval/login?next=${encodeURIComponent(next)}`, { headers: { cookie }, redirect: "manual" })
      expect([next, signedIn.headers.get("location")]).toEqual([next, "/approval"])
      const form = await (await fetch(`${s.url}/approval/login?next=${encodeURIComponent(next)}`)).text()
      expect(form).not.toContain(`name="next"`)
    }
  })
})

describe("the service's address and a refused sign-in, as pages", () => {
  it("GET / redirects to the approval pages", async () => {
    const r = await fetch(`${s.url}/`, { redirect: "manual" })
    expect([r.status, r.headers.get("location")]).toEqual([303, "/approval"])
  })

  it("a sign-in from another origin (e.g. localhost for 127.0.0.1) is a 403 page naming public_url and what to do, not JSON", async () => {
    const other = s.url.replace("127.0.0.1", "localhost")
    const r = await fetch(`${s.url}/approval/login`, {
      method: "POST", redirect: "manual", body: `token=${APPROVAL_TOKEN}`,
      headers: { "content-type": "application/x-www-form-urlencoded", origin: other }
    })
    expect(r.status).toBe(403)
    expect(r.headers.get("content-type")).toBe("text/html; charset=utf-8")
    expect(r.headers.get("set-cookie")).toBeNull()
    const text = (await r.text()).replace(/<[^>]*>/g, "").replace(/\s+/g, " ")
    expect(text).toContain(`This service accepts forms only from its own pages at ${s.url} (its public_url)`)
    expect(text).toContain(`Open ${s.url}/approval/login exactly as written`)
    expect(text).toContain("403 csrf-failed")
  })
})
