/**
 * Over real HTTP: the approval pages in plain words for a business person. The
 * main view carries no `@1`, grant id, "proposed via mcp" or "text: ocr" (they stay on the details
 * line); a reject says "Rejected" and nothing about a current version; days are YYYY-MM-DD text
 * fields (no locale date picker) and instants the zone's local time; relations are edited as
 * rows of kind and name and the server parses the rows (refusals name the row, nothing is
 * written); the index marks proposals that are near duplicates of each other; the structure
 * page says what Confirm, Revert, Archive and Reject do and names people before ids.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { csrfToken } from "../../src/auth/csrf.js"
import { propose } from "../../src/domain/proposals.js"
import { storeSource } from "../../src/domain/sources.js"
import { createEntity } from "../../src/graph/entities.js"
import { counts, sqlOf } from "../support/run.js"
import { mailProposal, mailSource } from "../support/fixtures.js"
import { APPROVAL_TOKEN, type ApprovalServer, DEV_API, DEV_EMAIL, SESSION_SECRET, startApprovalServer } from "./support.js"

const csrf = csrfToken(SESSION_SECRET, DEV_EMAIL)
let s: ApprovalServer
let cookie = ""

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
/** The main view: the page's text without its details lines. */
const mainText = (page: string): string => textOf(page.replace(/<p class="details">[\s\S]*?<\/p>/g, " "))
/** Only the details lines. */
const detailsText = (page: string): string => textOf([...page.matchAll(/<p class="details">([\s\S]*?)<\/p>/g)].map((m) => m[1]).join(" | "))

const TECHNICAL = [/@\d/, /\bperson:\d/, /\bservice:\d/, /proposed via/, /text: ocr/, /policy@/]
const expectPlain = (page: string) => {
  const main = mainText(page)
  for (const t of TECHNICAL) expect(main, String(t)).not.toMatch(t)
}

const scopeCounts = (scope: string) => s.run(Effect.flatMap(sqlOf(scope), counts))
const proposeAs = (channel: "mcp" | "api", over: Parameters<typeof mailProposal>[0] = {}) =>
  s.run(Effect.map(propose(mailProposal(over), { grantId: s.feeder, channel }), (c) => c.ref.replace(/^rule\/|@\d+$/g, "")))
const readRule = async (id: string) => {
  const r = await fetch(`${s.url}/v1/rules/${id}?include_proposals=true`, { headers: { authorization: `Bearer ${DEV_API}` } })
  return (await r.json()) as { head: { ref: string; relations: Array<{ kind: string; name: string; ref: string | null }> } }
}

beforeAll(async () => {
  s = await startApprovalServer()
  await s.run(storeSource(mailSource(), s.feeder))
  await s.run(storeSource(mailSource({ scope: "ops" }), s.feeder))
  const login = await fetch(`${s.url}/approval/login`, {
    method: "POST", body: `token=${APPROVAL_TOKEN}`, headers: { "content-type": "application/x-www-form-urlencoded", origin: s.url }, redirect: "manual"
  })
  cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] ?? ""
})
afterAll(async () => {
  await s.cleanup()
})

describe("the main view in plain words", () => {
  it("rule page, index and rejected page: no @1, grant id, 'proposed via mcp' or 'text: ocr' outside the details line", async () => {
    const id = await proposeAs("mcp", { statement: "Plain words: the supplier is asked for the delivery time first" })
    const proposed = await get(`/approval/rules/${id}`)
    expectPlain(proposed.text)
    expect(mainText(proposed.text)).toContain("Proposed by an agent")
    expect(mainText(proposed.text)).toContain("read from the scan (OCR)")
    expect(mainText(proposed.text)).toContain("PDF")
    // the technical words are still there, on the details line
    const details = detailsText(proposed.text)
    expect(details).toContain(`${id} · version 1`)
    expect(details).toContain("proposed via mcp")
    expect(details).toContain("text: ocr")
    expect(details).toContain("application/pdf")

    expect((await postForm(`/v1/rules/${id}/decision`, { decision: "confirm", version: "1", csrf })).status).toBe(303)
    const confirmed = await get(`/approval/rules/${id}`)
    expectPlain(confirmed.text)
    expect(mainText(confirmed.text)).toMatch(/confirmed dev@example\.com/)
    expect(detailsText(confirmed.text)).toContain("person:1 · saw version 1 → 2")

    const index = await get("/approval")
    expectPlain(index.text)
    const rejectMe = await proposeAs("api", { statement: "Plain words: a rule that a person turns down later" })
    expect((await postForm(`/v1/rules/${rejectMe}/decision`, { decision: "reject", version: "1", csrf, reason: "not a rule" })).status).toBe(303)
    const rejected = await get("/approval/rejected?scope=sales")
    expectPlain(rejected.text)
    expect(detailsText(rejected.text)).toContain(`${rejectMe} · version 2`)
  })

  it("after a reject: 'Rejected.' and nothing about a current version", async () => {
    const id = await proposeAs("api", { statement: "Plain words: reject this proposal with a reason" })
    const r = await postForm(`/v1/rules/${id}/decision`, { decision: "reject", version: "1", csrf, reason: "duplicate of another rule" })
    expect(r.status).toBe(303)
    const page = await get(r.headers.get("location") ?? "")
    const outcome = textOf(/<div class="notice ok"[\s\S]*?<\/div>/.exec(page.text)?.[0] ?? "")
    expect(outcome).toContain("Rejected.")
    expect(outcome).not.toMatch(/version|current/i)
  })
})

describe("one date format", () => {
  it("days are YYYY-MM-DD text fields, instants the zone's local time; never a date picker or mm/dd/yyyy", async () => {
    const id = await proposeAs("api", { statement: "Plain words: dates in one format only on this page" })
    const page = await get(`/approval/rules/${id}`)
    expect(page.text).not.toContain(`type="date"`)
    expect(page.text).toContain(`<input id="c-valid-from" type="text" name="valid_from" required inputmode="numeric" pattern="[0-9]{4}-[0-9]{2}-[0-9]{2}" placeholder="YYYY-MM-DD" value="2026-03-12">`)
    // said_at 09:15Z is 10:15 in Europe/Berlin (the test config's zone)
    expect(mainText(page.text)).toContain("Said at 2026-03-12 10:15")
    expect(mainText(page.text)).not.toContain("2026-03-12T09:15:00Z")
    // no field shows a UTC instant: said_at is edited in the zone's local time, the zone named on the page
    expect(page.text).not.toMatch(/value="\d{4}-\d{2}-\d{2}T[^"]*Z"/)
    expect(page.text).toContain(`<input id="c-said-at" type="text" name="said_at_local" value="2026-03-12 10:15">`)
    expect(textOf(page.text)).toContain("Times in Europe/Berlin")
    // unchanged, said_at stays as it was; changed, the local time is read in the zone
    expect((await postForm(`/v1/rules/${id}/decision`, { decision: "confirm", version: "1", csrf, said_at_local: "2026-03-12 11:30", said_at_shown: "2026-03-12 10:15" })).status).toBe(303)
    expect(((await readRule(id)).head as unknown as { date: string }).date).toBe("2026-03-12T10:30:00Z")
    for (const p of [page, await get("/approval"), await get("/approval/structure?scope=sales"), await get("/approval/rejected?scope=sales")]) {
      expect(textOf(p.text)).not.toMatch(/\b\d{1,2}\/\d{1,2}\/\d{2,4}\b/)
    }
    // a confirmed rule's revoke form: the same text field
    expect((await postForm(`/v1/rules/${id}/decision`, { decision: "confirm", version: "1", csrf })).status).toBe(303)
    const confirmed = await get(`/approval/rules/${id}`)
    // pre-filled with today in the zone: a revoke ends the rule from today unless the person says otherwise
    expect(confirmed.text).toMatch(/<input id="k-valid-until" type="text" name="valid_until" required inputmode="numeric" pattern="\[0-9\]\{4\}-\[0-9\]\{2\}-\[0-9\]\{2\}" placeholder="YYYY-MM-DD" value="\d{4}-\d{2}-\d{2}">/)
  })
})

describe("relations as rows", () => {
  it("the confirm form shows one row per relation (kind + name) and blank rows; no JSON field", async () => {
    const id = await proposeAs("api", { statement: "Plain words: relations are rows of kind and name here" })
    const page = await get(`/approval/rules/${id}`)
    expect(page.text).not.toMatch(/name="relations"/)
    expect(page.text).toContain(`<input type="hidden" name="relations_rows" value="1">`)
    expect(page.text).toMatch(/<select name="relation_kind_0" aria-label="Relation 1: kind">.*<option value="product" selected>product<\/option>/)
    expect(page.text).toContain(`<input type="text" name="relation_name_0" aria-label="Relation 1: name" maxlength="200" value="Hakenleiste schwarz">`)
    expect(page.text).toContain(`name="relation_name_2"`)
    expect(page.text).not.toContain(`name="relation_name_3"`)
  })

  it("posted rows become the new version's relations: a row added, a row emptied is removed, a reference kept", async () => {
    const id = await proposeAs("api", {
      statement: "Plain words: the rows decide the relations of the version",
      relations: [{ kind: "supplier", name: "Müller GmbH", ref: "crm:42" }, { kind: "product", name: "Hakenleiste schwarz", ref: null }]
    })
    const page = await get(`/approval/rules/${id}`)
    expect(page.text).toContain(`<input type="hidden" name="relation_ref_0" value="crm:42">`)
    const r = await postForm(`/v1/rules/${id}/decision`, {
      decision: "confirm", version: "1", csrf, relations_rows: "1",
      relation_kind_0: "supplier", relation_name_0: "Müller GmbH", relation_ref_0: "crm:42",
      relation_kind_1: "", relation_name_1: "",
      relation_kind_2: "customer", relation_name_2: "  Baumarkt Nord  ",
      relation_kind_3: "", relation_name_3: ""
    })
    expect(r.status).toBe(303)
    expect((await readRule(id)).head.relations).toEqual([
      { kind: "supplier", name: "Müller GmbH", ref: "crm:42" },
      { kind: "customer", name: "Baumarkt Nord", ref: null }
    ])
  })

  it("a row with a kind but no name, or an unknown kind: 400 naming the row, the rows shown as sent, nothing written", async () => {
    const id = await proposeAs("api", { statement: "Plain words: a half-filled relation row is refused" })
    const before = await scopeCounts("sales")
    const r = await postForm(`/v1/rules/${id}/decision`, {
      decision: "confirm", version: "1", csrf, relations_rows: "1",
      relation_kind_0: "product", relation_name_0: "Hakenleiste schwarz",
      relation_kind_1: "customer", relation_name_1: ""
    })
    expect(r.status).toBe(400)
    const text = textOf(r.text)
    expect(text).toContain("Details: validation-failed")
    expect(text).toContain("Relations, row 2: name : is empty: fill it in")
    expect(text).toContain("Relations product: Hakenleiste schwarz; customer: (no name)")
    // the form shows the rows as the person left them
    expect(r.text).toMatch(/<select name="relation_kind_1" aria-label="Relation 2: kind">.*<option value="customer" selected>customer<\/option>/)
    const unknown = await postForm(`/v1/rules/${id}/decision`, {
      decision: "confirm", version: "1", csrf, relations_rows: "1", relation_kind_0: "partner", relation_name_0: "Acme"
    })
    expect(unknown.status).toBe(400)
    expect(textOf(unknown.text)).toContain("Relations, row 1: kind : pick customer, product or supplier")
    expect(unknown.text).toContain(`<option value="partner" selected>partner</option>`)
    expect(await scopeCounts("sales")).toEqual(before)
    // fixed: saved
    const fixed = await postForm(`/v1/rules/${id}/decision`, {
      decision: "confirm", version: "1", csrf, relations_rows: "1", relation_kind_0: "customer", relation_name_0: "Acme"
    })
    expect(fixed.status).toBe(303)
    expect((await readRule(id)).head.relations).toEqual([{ kind: "customer", name: "Acme", ref: null }])
  })
})

describe("the index marks near duplicates of each other, never unrelated rules, and never advises a reject", () => {
  it("two proposals saying the same are marked and link to each other; an unrelated one is not", async () => {
    const a = await proposeAs("api", { scope: "ops", statement: "Pallets are always stored in the left courtyard of hall 3", keywords: ["Paletten", "Hof"] })
    const b = await proposeAs("mcp", { scope: "ops", statement: "Pallets are stored in the left courtyard of hall 3, always", keywords: ["Paletten", "Hof"] })
    const c = await proposeAs("api", { scope: "ops", statement: "Invoices from abroad are checked by accounting within a week", keywords: ["Rechnung"] })
    const page = await get("/approval?scope=ops")
    const item = (id: string) => new RegExp(`<li id="p-${id}"[^>]*>[\\s\\S]*?</li>`).exec(page.text)?.[0] ?? ""
    expect(item(a)).toContain(`class="dup"`)
    expect(item(a)).toContain(`near duplicate</span> says nearly the same as <a href="#p-${b}">`)
    expect(item(b)).toContain(`near duplicate</span> says nearly the same as <a href="#p-${a}">`)
    expect(item(c)).not.toContain("near duplicate")
    expect(textOf(page.text)).toContain("2 proposals marked near duplicate say nearly the same as another one here.")
    expect(textOf(page.text)).toContain("compare them before you decide")
    expect(textOf(page.text)).not.toMatch(/\breject (the|one|them|it|all)\b/i)
  })

  it("proposals that only share words (order, customer, supplier) are not marked; on the rule page they are only similar", async () => {
    const samples = await proposeAs("api", { scope: "sales", statement: "Samples go out only after the customer confirmed the order", keywords: ["order", "samples"] })
    const supplier = await proposeAs("api", { scope: "sales", statement: "Ask the supplier for the delivery time before the order of black hook rails (RAL 9005)", keywords: ["order", "delivery time"] })
    const page = await get("/approval?scope=sales")
    const item = (id: string) => new RegExp(`<li id="p-${id}"[^>]*>[\\s\\S]*?</li>`).exec(page.text)?.[0] ?? ""
    expect(item(samples)).toContain("Samples go out only after the customer confirmed the order")
    expect(item(samples)).not.toContain(`class="dup"`)
    expect(item(supplier)).not.toContain(`class="dup"`)
    const rule = await get(`/approval/rules/${samples}`)
    const similar = textOf(rule.text.slice(rule.text.indexOf(`id="dups-h"`), rule.text.indexOf(`id="rej-h"`)))
    expect(similar).toContain("Similar rules")
    expect(similar).toContain("Ask the supplier for the delivery time")
    expect(similar).not.toContain("near duplicate proposed")
  })
})

describe("the structure page", () => {
  it("explains Confirm, Revert, Archive and Reject in one sentence each and names who before any id", async () => {
    await s.run(createEntity({ scope: "sales", type: "organisation", name: "Plain Words GmbH", parent_id: null }, { grantId: s.feeder, channel: "mcp" }))
    const page = await get("/approval/structure?scope=sales")
    const text = mainText(page.text)
    expect(text).toContain("Revert undoes the agent's change: a new entity is archived, a move or rename goes back to the last confirmed state.")
    expect(text).toContain("Archive retires an entity for good: it leaves the tree and search, its history stays, and its children must be archived first.")
    expect(text).toContain("Reject deletes a proposed link; the two things it connected stay as they are.")
    expect(text).toContain("Confirm keeps the agent's change as it is and marks it checked by you.")
    expect(text).toContain("By feeder via an agent (MCP)")
    expectPlain(page.text)
    expect(detailsText(page.text)).toMatch(/entity\/sales-e\d+@1 · by service:2 · channel mcp/)
  })
})
