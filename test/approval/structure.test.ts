/**
 * The structure side of the approval pages over real HTTP (graph.md §12): GET
 * /approval/structure?scope= with every pending change, the index section, the rule page's
 * pending concerns links, and the form posts of POST /v1/reviews and POST
 * /v1/entities/:id/archive that land back on the page (refusals: the page with the status).
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { csrfToken } from "../../src/auth/csrf.js"
import { createEntity, moveEntity, updateEntity } from "../../src/graph/entities.js"
import { proposeLink } from "../../src/graph/links.js"
import { propose } from "../../src/domain/proposals.js"
import { storeSource } from "../../src/domain/sources.js"
import { sqlOf } from "../support/run.js"
import { mailProposal, mailSource } from "../support/fixtures.js"
import { APPROVAL_TOKEN, type ApprovalServer, DEV_EMAIL, SESSION_SECRET, startApprovalServer } from "./support.js"

const csrf = csrfToken(SESSION_SECRET, DEV_EMAIL)
let s: ApprovalServer
let cookie = ""
const agent = () => ({ grantId: s.feeder, channel: "mcp" as const })

const get = async (path: string) => {
  const r = await fetch(`${s.url}${path}`, { headers: { cookie }, redirect: "manual" })
  return { status: r.status, headers: r.headers, text: await r.text() }
}
const postForm = async (path: string, fields: Record<string, string>) => {
  const r = await fetch(`${s.url}${path}`, {
    method: "POST", redirect: "manual", body: new URLSearchParams(fields).toString(),
    headers: { cookie, origin: s.url, "content-type": "application/x-www-form-urlencoded" }
  })
  return { status: r.status, headers: r.headers, text: await r.text() }
}
const textOf = (page: string): string =>
  page.replace(/<[^>]*>/g, " ").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, "\"").replace(/&#39;/g, "'").replace(/&amp;/g, "&").replace(/\s+/g, " ")
const graphCounts = () =>
  s.run(Effect.flatMap(sqlOf("sales"), (sql) => Effect.map(
    sql<{ t: string; n: number }>`SELECT 'entity_version' AS t, count(*) AS n FROM entity_version UNION ALL SELECT 'review', count(*) FROM review UNION ALL SELECT 'link', count(*) FROM link`,
    (rows) => Object.fromEntries(rows.map((r) => [r.t, r.n]))
  )))
const create = (name: string, parent: string | null, over: Record<string, unknown> = {}) =>
  s.run(Effect.map(createEntity({ scope: "sales", type: "department", name, parent_id: parent, ...over }, agent()), (e) => e.id))

let root = ""
let nord = ""
let sued = ""
let team = ""
let forced = ""
let ruleId = ""
let linkId = ""
let sourceLink = ""

beforeAll(async () => {
  s = await startApprovalServer()
  await s.run(storeSource(mailSource(), s.feeder))
  const login = await fetch(`${s.url}/approval/login`, { method: "POST", body: `token=${APPROVAL_TOKEN}`, headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" }, redirect: "manual" })
  cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] ?? ""
  root = await s.run(Effect.map(createEntity({ scope: "sales", type: "organisation", name: "Acme", parent_id: null, evidence: "https://wiki.example.com/acme" }, agent()), (e) => e.id))
  nord = await create("Vertrieb Nord", root, { aliases: ["VN"] })
  sued = await create("Vertrieb Süd", root)
  team = await create("Team Hamburg", nord)
  forced = await create("Vetrieb Nord", root, { force: true, reason: "the agent says it is a separate unit" })
  await s.run(moveEntity(team, { scope: "sales", parent_id: sued, reason: "Hamburg belongs to the south now" }, agent()))
  await s.run(updateEntity(sued, { scope: "sales", name: "Vertrieb Süd-West", aliases_add: ["VSW"] }, agent()))
  ruleId = await s.run(Effect.map(propose(mailProposal(), { grantId: s.feeder, channel: "api" }), (c) => c.ref.replace(/^rule\/|@\d+$/g, "")))
  linkId = await s.run(Effect.map(proposeLink({ scope: "sales", from_ref: `rule/${ruleId}`, to_ref: `entity/${nord}`, type: "concerns", confidence: 0.7, reason: "the mail is about the north" }, { grantId: s.feeder }), (r) => r.link.id ?? ""))
  sourceLink = await s.run(Effect.map(proposeLink({ scope: "sales", from_ref: "source/mail:<order-rule@example.com>", to_ref: `entity/${root}`, type: "belongs_to", confidence: 0.4, reason: "sent to everyone", evidence: "source/mail:<order-rule@example.com>" }, { grantId: s.feeder }), (r) => r.link.id ?? ""))
})
afterAll(async () => {
  await s.cleanup()
})

describe("GET /approval/structure", () => {
  it("lists every pending change newest first: create, move with subtree, update, links with both ends", async () => {
    const page = await get("/approval/structure?scope=sales")
    expect(page.status).toBe(200)
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'")
    const text = textOf(page.text)
    expect(text).toContain("Structure changes in sales")
    expect(text).toMatch(/5 entities with 7 pending versions/)
    expect(text).toContain("2 proposed links")
    // newest first: the links were proposed last, the root created first
    const order = [sourceLink, linkId, `entity/${sued}@2`, `entity/${team}@2`, `entity/${root}@1`].map((r) => page.text.indexOf(r))
    expect(order.every((at) => at > 0)).toBe(true)
    expect([...order].sort((a, b) => a - b)).toEqual(order)
    expect(text).toContain("New department Vertrieb Nord under Acme")
    expect(text).toContain("Moved Team Hamburg")
    expect(text).toMatch(/Before Acme › Vertrieb Nord › Team Hamburg After Acme › Vertrieb Süd(-West)? › Team Hamburg/)
    expect(text).toContain("Changed Vertrieb Süd → Vertrieb Süd-West")
    expect(text).toContain("Aliases added: VSW")
    expect(text).toContain("Reason Hamburg belongs to the south now")
    // names first; the grant id on the details line
    expect(text).toContain("By feeder via an agent (MCP)")
    expect(text).toContain("by service:2")
    expect(page.text).toContain(`<a href="https://wiki.example.com/acme" rel="noreferrer noopener">`)
    expect(text).toMatch(/Link concerns ?: rule/)
    expect(text).toContain("Ask the supplier for the delivery time before ordering black hook rails → entity Acme › Vertrieb Nord")
    expect(text).toMatch(/Link belongs_to ?: mail Bestellungen Hakenleisten → entity Acme/)
    expect(text).toContain("confidence 0.70")
    // the create that was forced past a similar entity names it
    const forcedItem = text.slice(text.indexOf("New department Vetrieb Nord"))
    expect(page.text).toContain(`id="${forced}"`)
    expect(forcedItem).toMatch(/Similar entities .*Acme › Vertrieb Nord \(department, unconfirmed\) ?Details: sales-e\d+ · typo/)
    // the older entity was created first: its check found nothing to override
    const older = text.slice(text.indexOf("New department Vertrieb Nord"), text.indexOf("New organisation Acme"))
    expect(older).not.toContain("Similar entities")
  })
  it("forms carry the current version as target, the csrf token, and the version for archive", async () => {
    const page = await get("/approval/structure?scope=sales")
    expect(page.text).toContain(`<input type="hidden" name="target" value="entity/${team}@2"><input type="hidden" name="verdict" value="confirm"><input type="hidden" name="csrf" value="${csrf}">`)
    expect(page.text).toContain(`<input type="hidden" name="target" value="link/${linkId}"><input type="hidden" name="verdict" value="reject">`)
    expect(page.text).toContain(`action="/v1/entities/${team}/archive"`)
    expect(page.text).toContain(`<input type="hidden" name="version" value="2"><input type="hidden" name="csrf" value="${csrf}">`)
    expect(page.text).toContain(`id="${team}"`)
    expect(page.text).toContain(`id="${linkId}"`)
  })
  it("the index shows the section per scope: counts, the newest five, the link to the page", async () => {
    const text = textOf((await get("/approval")).text)
    const section = text.slice(text.lastIndexOf("Structure changes"))
    expect(section).toContain("5 entities, 7 versions")
    expect(section).toContain("2 links")
    expect((await get("/approval")).text).toContain(`href="/approval/structure?scope=sales#${sourceLink}"`)
    expect(section).toContain("All structure changes in sales (9)")
  })
})

describe("form posts of the structure page", () => {
  it("a stale target → 409 page with the current version and what changed; nothing written", async () => {
    const before = await graphCounts()
    const r = await postForm("/v1/reviews", { target: `entity/${team}@1`, verdict: "confirm", csrf })
    expect(r.status).toBe(409)
    const text = textOf(r.text)
    expect(text).toContain("Details: version-outdated")
    expect(text).toContain(`current entity/${team}@2`)
    expect(text).toContain("What changed since version 1")
    expect(text).toMatch(/2 unconfirmed move Acme › Vertrieb Süd-West › Team Hamburg feeder \(service:2\) \(mcp\)/)
    expect(await graphCounts()).toEqual(before)
  })
  it("confirm an agent's move → 303 back to the page with the outcome; the item is gone", async () => {
    const r = await postForm("/v1/reviews", { target: `entity/${team}@2`, verdict: "confirm", csrf })
    expect(r.status).toBe(303)
    const location = r.headers.get("location") ?? ""
    expect(location).toBe(`/approval/structure?scope=sales&done=structure-confirm&target=${encodeURIComponent(`entity/${team}@3`)}#${team}`)
    const text = textOf((await get(location)).text)
    expect(text).toContain(`Confirmed. Saved. Details: entity/${team}@3`)
    expect(text).not.toContain("Moved Team Hamburg")
  })
  it("a reject without a reason → 400 reason-missing on the page, the typed target kept; nothing written", async () => {
    const before = await graphCounts()
    const r = await postForm("/v1/reviews", { target: `link/${sourceLink}`, verdict: "reject", reason: " ", csrf })
    expect(r.status).toBe(400)
    expect(textOf(r.text)).toContain("Details: reason-missing")
    expect(await graphCounts()).toEqual(before)
  })
  it("archive with a live child → 409 has-children with the remedy; archive bottom-up works", async () => {
    const before = await graphCounts()
    const r = await postForm(`/v1/entities/${sued}/archive`, { version: "2", csrf, reason: "closed" })
    expect(r.status).toBe(409)
    expect(textOf(r.text)).toContain("Details: has-children")
    expect(textOf(r.text)).toContain(`archive or move the children first (${team})`)
    expect(await graphCounts()).toEqual(before)
    const child = await postForm(`/v1/entities/${team}/archive`, { version: "3", csrf })
    expect(child.status).toBe(303)
    expect(child.headers.get("location")).toContain("done=archive")
  })
  it("a malformed target or an unknown entity is refused as a page", async () => {
    const bad = await postForm("/v1/reviews", { target: "entity/nope", verdict: "confirm", csrf })
    expect(bad.status).toBe(400)
    expect(bad.headers.get("content-type")).toBe("text/html; charset=utf-8")
    const unknown = await postForm("/v1/reviews", { target: "entity/sales-e0999@1", verdict: "confirm", csrf })
    expect(unknown.status).toBe(404)
    expect(textOf(unknown.text)).toContain("Details: not-found")
  })
})

describe("the rule page's pending concerns links", () => {
  it("are listed with their own forms; confirming one lands back on the rule page", async () => {
    const page = await get(`/approval/rules/${ruleId}`)
    const text = textOf(page.text)
    expect(text).toContain("Proposed: concerns")
    expect(text).toContain("Concerns Acme › Vertrieb Nord")
    expect(page.text).toContain(`<input type="hidden" name="target" value="link/${linkId}"><input type="hidden" name="verdict" value="confirm"><input type="hidden" name="back" value="/approval/rules/${ruleId}">`)
    const r = await postForm("/v1/reviews", { target: `link/${linkId}`, verdict: "confirm", back: `/approval/rules/${ruleId}`, csrf })
    expect(r.status).toBe(303)
    expect(r.headers.get("location")).toBe(`/approval/rules/${ruleId}?done=structure-confirm&target=${encodeURIComponent(`link/${linkId}`)}#${linkId}`)
    const after = textOf((await get(r.headers.get("location") ?? "")).text)
    expect(after).toContain(`Confirmed. Saved. Details: link/${linkId}`)
    expect(after).not.toContain("Proposed: concerns")
  })
  it("a back address that is not a rule page is ignored: the post lands on the structure page", async () => {
    const r = await postForm("/v1/reviews", { target: `link/${sourceLink}`, verdict: "confirm", back: "https://evil.example/x", csrf })
    expect(r.status).toBe(303)
    expect(r.headers.get("location")).toMatch(/^\/approval\/structure\?scope=sales&done=structure-confirm/)
  })
})

describe("the duplicate candidates a forced create overrode (graph.md §12)", () => {
  it("are the ones stored when it happened: a later rename or a new look-alike does not change what the page shows", async () => {
    const west = await create("Lager West", root)
    const mitte = await create("Halle Mitte", root)
    const forcedLager = await create("Lager Wesd", root, { force: true, reason: "a second warehouse, the person says" })
    const stored = await s.run(Effect.flatMap(sqlOf("sales"), (sql) =>
      sql<{ candidate_id: string; name: string; path: string; match: string }>`SELECT candidate_id, name, path, match FROM entity_override WHERE id = ${forcedLager} AND version = 1 ORDER BY n`))
    expect(stored.map((r) => [r.candidate_id, r.name, JSON.parse(r.path) as unknown])).toEqual([[west, "Lager West", ["Acme", "Lager West"]]])
    // afterwards: the overridden one is renamed away, an older entity is renamed to look alike, a new look-alike is created
    await s.run(updateEntity(west, { scope: "sales", name: "Zentrallager" }, agent()))
    const unforced = await s.run(Effect.flip(updateEntity(mitte, { scope: "sales", name: "Lager Wesk" }, agent())))
    expect(unforced).toMatchObject({ code: "duplicate-candidate" })
    await s.run(updateEntity(mitte, { scope: "sales", name: "Lager Wesk", force: true, reason: "renamed by the site team" }, agent()))
    await create("Lager Wesdt", root, { force: true, reason: "a third one" })
    const page = await get("/approval/structure?scope=sales")
    const text = textOf(page.text)
    const from = text.indexOf("New department Lager Wesd ")
    const item = text.slice(from, text.indexOf("New department", from + 1))
    expect(item).toMatch(/Similar entities The agent created it although these looked alike then \(forced with its reason\): Acme › Lager West \(department, unconfirmed\) ?Details: sales-e\d+ · typo/)
    expect(item).not.toContain("Zentrallager")
    expect(item).not.toContain("Lager Wesk")
    expect(item).not.toContain("Lager Wesdt")
    // the forced rename stored what it overrode too, and the page shows it with the update
    const renamed = text.slice(text.indexOf("Changed Halle Mitte → Lager Wesk"))
    expect(renamed.slice(0, renamed.indexOf("Details: entity/"))).toMatch(/The agent changed it although these looked alike then .*Acme › Lager Wesd/)
  })
})
