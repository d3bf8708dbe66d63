/**
 * Stored duplicate marks and the conflict view (gaps.md §13 "Conflict view"): the marks are
 * written with the proposal in its own transaction (a refused proposal leaves none, a failing
 * mark write refuses the proposal); the index marks a proposal that nearly repeats or contradicts
 * a confirmed rule; its rule page shows both side by side with "replace" (confirm with
 * supersedes), "keep both" (confirm) and "reject", each through the decision writer over real
 * HTTP (session and csrf), bad input refused with the field named and nothing written.
 */
import { Effect, Exit } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { csrfToken } from "../../src/auth/csrf.js"
import { intake } from "../../src/domain/intake.js"
import type { ProposalRequest } from "../../src/domain/proposal-schemas.js"
import { storeSource } from "../../src/domain/sources.js"
import { proposeLink } from "../../src/graph/links.js"
import { internalMail, PLAIN, quoting } from "../support/approval.js"
import { counts, sqlOf } from "../support/run.js"
import { APPROVAL_TOKEN, type ApprovalServer, DEV_EMAIL, SESSION_SECRET, startApprovalServer } from "./support.js"

const csrf = csrfToken(SESSION_SECRET, DEV_EMAIL)
let s: ApprovalServer
let cookie = ""

const idOf = (ref: string) => ref.replace(/^rule\/|@\d+$/g, "")
const propose = (req: ProposalRequest) =>
  s.run(Effect.map(intake(req, { grantId: s.feeder, channel: "api", requestId: null }), (r) => idOf(r.created.ref)))
const proposeExit = (req: ProposalRequest) => s.run(Effect.exit(intake(req, { grantId: s.feeder, channel: "api", requestId: null })))
const query = <A extends object>(text: string, ...params: Array<string | number>) =>
  s.run(Effect.flatMap(sqlOf("sales"), (sql) => sql.unsafe<A>(text, params)))
const marksOf = (id: string) =>
  query<{ version: number; rank: number; ref: string; other_id: string; coverage: number; near: number }>(
    "SELECT version, rank, ref, other_id, coverage, near FROM proposal_neighbour WHERE rule_id = ? ORDER BY rank", id)
const statusOf = async (id: string) =>
  (await query<{ status: string; supersedes: string | null; superseded_by: string | null; valid_until: string | null }>(
    "SELECT status, supersedes, superseded_by, valid_until FROM current_version WHERE rule_id = ?", id))[0]
const snapshot = () =>
  s.run(Effect.flatMap(sqlOf("sales"), (sql) =>
    Effect.zip(counts(sql), sql<{ n: number }>`SELECT count(*) AS n FROM proposal_neighbour`)))

const get = async (path: string) => {
  const r = await fetch(`${s.url}${path}`, { headers: { cookie }, redirect: "manual" })
  return { status: r.status, headers: r.headers, text: await r.text() }
}
const postForm = async (path: string, fields: Record<string, string>, headers: Record<string, string> = {}) => {
  const r = await fetch(`${s.url}${path}`, {
    method: "POST", redirect: "manual", body: new URLSearchParams(fields).toString(),
    headers: { cookie, origin: s.url, "content-type": "application/x-www-form-urlencoded", ...headers }
  })
  return { status: r.status, headers: r.headers, text: await r.text() }
}
const confirm = async (id: string) => {
  const r = await fetch(`${s.url}/v1/rules/${id}/decision`, {
    method: "POST", body: JSON.stringify({ decision: "confirm", version: 1 }),
    headers: { cookie, csrf, origin: s.url, "content-type": "application/json" }
  })
  expect(r.status, await r.text()).toBe(200)
}
const textOf = (page: string): string =>
  page.replace(/<[^>]*>/g, " ").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, "\"").replace(/&#39;/g, "'").replace(/&amp;/g, "&").replace(/\s+/g, " ")
/** The form of the conflict view that carries `conflict=<action>`, as its fields. */
const formFields = (page: string, action: string): Record<string, string> => {
  const form = [...page.matchAll(/<form [^>]*>[\s\S]*?<\/form>/g)].map((m) => m[0]).find((f) => f.includes(`name="conflict" value="${action}"`))
  expect(form, `a form with conflict=${action}`).toBeDefined()
  const out: Record<string, string> = {}
  for (const m of (form ?? "").matchAll(/<input [^>]*name="([^"]+)"[^>]*value="([^"]*)"/g)) out[m[1] ?? ""] = (m[2] ?? "").replace(/&amp;/g, "&")
  return out
}

const OLD = "Pallets are always stored in the left courtyard of hall 3"
const TWIN = "Pallets are stored in the left courtyard of hall 3, always"
const OTHER = "Invoices from abroad are checked by accounting within a week"

beforeAll(async () => {
  s = await startApprovalServer()
  await s.run(storeSource(internalMail(), s.feeder))
  const login = await fetch(`${s.url}/approval/login`, {
    method: "POST", body: `token=${APPROVAL_TOKEN}`, headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" }, redirect: "manual"
  })
  cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] ?? ""
}, 60_000)
afterAll(async () => {
  await s.cleanup()
})

describe("duplicate marks are stored with the proposal", () => {
  it("a proposal's possible duplicates are stored in its transaction with coverage and the near mark; an unrelated one is not near", async () => {
    const first = await propose(quoting(PLAIN[1], { statement: "Crates of hall 5 are always counted on Mondays by the night shift" }))
    expect(await marksOf(first)).toEqual([])
    const twin = await propose(quoting(PLAIN[1], { statement: "Crates of hall 5 are counted on Mondays by the night shift, always" }))
    const marks = await marksOf(twin)
    expect(marks[0]).toMatchObject({ version: 1, rank: 1, ref: `rule/${first}@1`, other_id: first, near: 1 })
    expect(marks[0]?.coverage).toBeGreaterThan(0)
    expect(marks[0]?.coverage).toBeLessThanOrEqual(1)
    const unrelated = await propose(quoting(PLAIN[2], { statement: "Special colours are only painted in hall 3 by the paint shop" }))
    expect((await marksOf(unrelated)).filter((m) => m.near === 1)).toEqual([])
  })

  it("a refused proposal (quote not found, unknown supersedes) leaves no mark and nothing else", async () => {
    const before = await snapshot()
    const badQuote = await proposeExit(quoting(PLAIN[1], { statement: "Crates of hall 5 are counted on Mondays, always", source: { kind: "mail", id: "mail:<lager-2026@acme.example>", quote: "This line is not in the mail at all, never.", link: null } }))
    expect(Exit.isFailure(badQuote)).toBe(true)
    const badSupersedes = await proposeExit(quoting(PLAIN[1], { statement: "Crates of hall 5 are counted on Mondays, always", supersedes: "sales-9999" }))
    expect(Exit.isFailure(badSupersedes)).toBe(true)
    expect(await snapshot()).toEqual(before)
  })

  it("the marks are part of the proposal's transaction: when writing them fails, no rule is stored either", async () => {
    await propose(quoting(PLAIN[3], { statement: "Minutes are filed in the team folder the next day at the latest" }))
    await query("CREATE TEMP TRIGGER refuse_marks BEFORE INSERT ON proposal_neighbour BEGIN SELECT RAISE(ABORT, 'marks refused'); END")
    try {
      const before = await snapshot()
      const exit = await proposeExit(quoting(PLAIN[3], { statement: "Minutes are filed in the team folder on the next day at the latest" }))
      expect(Exit.isFailure(exit)).toBe(true)
      expect(await snapshot()).toEqual(before)
    } finally {
      await query("DROP TRIGGER refuse_marks")
    }
  })
})

describe("the conflict view", () => {
  let old = ""
  let twin = ""
  let contra = ""
  let third = ""

  beforeAll(async () => {
    old = await propose(quoting(PLAIN[0], { statement: OLD, valid_from: "2026-01-14" }))
    await confirm(old)
    twin = await propose(quoting(PLAIN[4], { statement: TWIN, valid_from: "2026-01-14" }))
    contra = await propose(quoting(PLAIN[5], { statement: OTHER, valid_from: "2026-01-14" }))
    third = await propose(quoting(PLAIN[6], { statement: "Pallets are always stored in the left courtyard of hall 3 only", valid_from: "2026-01-14" }))
    await s.run(proposeLink({ scope: "sales", from_ref: `rule/${contra}`, to_ref: `rule/${old}`, type: "contradicts", confidence: 0.8, reason: "they say the opposite" }, { grantId: s.feeder }))
  }, 60_000)

  it("the index marks a proposal that nearly repeats a confirmed rule and one linked to it by contradicts", async () => {
    const page = await get("/approval?scope=sales")
    expect(page.status).toBe(200)
    // a proposal's item runs to the next proposal's or the end of the list (its reasons hold a list of their own)
    const item = (id: string) => new RegExp(`<li id="p-${id}"[^>]*>[\\s\\S]*?(?=<li id="p-|</ol>)`).exec(page.text)?.[0] ?? ""
    expect(item(twin)).toMatch(/class="[^"]*conflict/)
    expect(textOf(item(twin))).toContain(`conflict says nearly the same as the confirmed rule ${OLD}`)
    expect(item(twin)).toContain(`<a href="/approval/rules/${twin}#conflict-h">compare them side by side</a>`)
    expect(textOf(item(contra))).toContain(`conflict contradicts the confirmed rule ${OLD}`)
    expect(textOf(item(third))).toContain(`conflict says nearly the same as the confirmed rule ${OLD}`)
    expect(textOf(page.text)).toContain("3 proposals marked conflict")
  })

  it("the rule page shows both statements and both quotes side by side, with replace, keep both and reject", async () => {
    const page = await get(`/approval/rules/${twin}`)
    expect(page.status).toBe(200)
    const section = page.text.slice(page.text.indexOf(`id="conflict-h"`), page.text.indexOf("</section>", page.text.indexOf(`id="conflict-h"`)))
    const text = textOf(section)
    expect(text).toContain("Conflicts with a confirmed rule")
    expect(text).toContain(`This proposal ${TWIN} ${PLAIN[4]}`)
    expect(text).toContain(`Confirmed rule ${old} It says nearly the same. ${OLD} ${PLAIN[0]}`)
    expect(text).toContain(`Replace ${old} with this proposal`)
    expect(text).toContain("Keep both")
    expect(text).toContain("Reject this proposal")
    expect(section).toContain(`action="/v1/rules/${twin}/decision"`)
    const contraPage = await get(`/approval/rules/${contra}`)
    expect(textOf(contraPage.text)).toContain("It is linked to this proposal as contradicting it.")
    // a confirmed rule has no conflict view
    expect((await get(`/approval/rules/${old}`)).text).not.toContain(`id="conflict-h"`)
  })

  it("bad input is refused with the field named and nothing written: no csrf, a blank reject reason, a day before the old rule's", async () => {
    const page = (await get(`/approval/rules/${twin}`)).text
    const before = await snapshot()
    const noCsrf = await postForm(`/v1/rules/${twin}/decision`, { ...formFields(page, `replace-${old}`), csrf: "" })
    expect(noCsrf.status).toBe(403)
    const reject = await postForm(`/v1/rules/${twin}/decision`, { ...formFields(page, "reject"), reason: " " })
    expect(reject.status).toBe(400)
    expect(reject.text).toContain("reason-missing")
    expect(textOf(reject.text)).toContain("a reject needs a non-blank reason")
    expect(reject.text).toContain(`id="conflict-h"`)
    const early = await postForm(`/v1/rules/${twin}/decision`, { ...formFields(page, `replace-${old}`), valid_from: "2025-12-01" })
    expect(early.status).toBe(400)
    expect(early.text).toContain("validation-failed")
    expect(textOf(early.text)).toContain("valid_from")
    // the refused day is shown back in the replace form, not in the confirm form
    expect(early.text).toMatch(new RegExp(`id="x-from-${old}"[^>]*value="2025-12-01"`))
    expect(early.text).toMatch(/id="c-valid-from"[^>]*value="2026-01-14"/)
    expect(await snapshot()).toEqual(before)
    expect(await statusOf(twin)).toMatchObject({ status: "proposed" })
    expect(await statusOf(old)).toMatchObject({ status: "confirmed" })
  })

  it("reject rejects the proposal with the reason given and leaves the confirmed rule in force", async () => {
    const page = (await get(`/approval/rules/${third}`)).text
    const r = await postForm(`/v1/rules/${third}/decision`, { ...formFields(page, "reject"), reason: "says what the confirmed rule says already" })
    expect(r.status).toBe(303)
    expect(await statusOf(third)).toMatchObject({ status: "rejected" })
    expect(await statusOf(old)).toMatchObject({ status: "confirmed" })
    const decided = await query<{ kind: string; reason: string }>("SELECT kind, reason FROM decision WHERE rule_id = ? ORDER BY id", third)
    expect(decided).toEqual([{ kind: "reject", reason: "says what the confirmed rule says already" }])
  })

  it("keep both confirms the proposal and leaves the confirmed rule in force", async () => {
    const page = (await get(`/approval/rules/${contra}`)).text
    const r = await postForm(`/v1/rules/${contra}/decision`, formFields(page, "keep"))
    expect(r.status).toBe(303)
    expect(await statusOf(contra)).toMatchObject({ status: "confirmed", supersedes: null })
    expect(await statusOf(old)).toMatchObject({ status: "confirmed", superseded_by: null })
  })

  it("replace confirms the proposal with supersedes, and the confirmed rule is superseded from that day", async () => {
    const page = (await get(`/approval/rules/${twin}`)).text
    const r = await postForm(`/v1/rules/${twin}/decision`, formFields(page, `replace-${old}`))
    expect(r.status).toBe(303)
    expect(r.headers.get("location")).toBe(`/approval/rules/${twin}?done=confirm&v=2#outcome`)
    expect(await statusOf(twin)).toEqual({ status: "confirmed", supersedes: old, superseded_by: null, valid_until: null })
    expect(await statusOf(old)).toEqual({ status: "superseded", supersedes: null, superseded_by: twin, valid_until: "2026-01-14" })
    const decided = await query<{ kind: string; decided_by_identity: string }>("SELECT kind, decided_by_identity FROM decision WHERE rule_id = ? ORDER BY id", twin)
    expect(decided).toEqual([{ kind: "confirm", decided_by_identity: DEV_EMAIL }])
    expect(textOf((await get(`/approval/rules/${twin}`)).text)).toContain(`Replaces ${old}: ${OLD} (superseded)`)
  })
})
