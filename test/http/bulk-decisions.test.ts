/**
 * Bulk decisions over real HTTP (gaps.md §13): POST /v1/decisions `{items}` and POST /v1/reviews
 * `{items}` on the approval channel (a person's session, same origin and the csrf token), and the
 * bulk forms of the approval index and the structure page. Each item its own decision or review
 * row, one transaction: a refused item refuses the whole request with the single decision's code
 * and the item named, and the scope file (read by another connection) holds no new row; one bulk
 * POST counts as one decision against decisions_per_minute.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { csrfToken } from "../../src/auth/csrf.js"
import { scopeFile } from "../../src/db/scope-store.js"
import { propose } from "../../src/domain/proposals.js"
import { storeSource } from "../../src/domain/sources.js"
import { createEntity } from "../../src/graph/entities.js"
import { proposeLink } from "../../src/graph/links.js"
import { APPROVAL_TOKEN, type ApprovalServer, DEV_EMAIL, SESSION_SECRET, startApprovalServer } from "../approval/support.js"
import { mailProposal, mailSource } from "../support/fixtures.js"
import { Database } from "../support/other-connection.js"

const csrf = csrfToken(SESSION_SECRET, DEV_EMAIL)

interface Client {
  readonly s: ApprovalServer
  readonly cookie: string
}

const signIn = async (s: ApprovalServer): Promise<Client> => {
  const login = await fetch(`${s.url}/approval/login`, {
    method: "POST", body: `token=${APPROVAL_TOKEN}`, redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" }
  })
  return { s, cookie: (login.headers.get("set-cookie") ?? "").split(";")[0] ?? "" }
}

const postJson = async (c: Client, path: string, body: unknown) => {
  const r = await fetch(`${c.s.url}${path}`, {
    method: "POST", body: JSON.stringify(body), redirect: "manual",
    headers: { cookie: c.cookie, origin: c.s.url, csrf, "content-type": "application/json" }
  })
  return { status: r.status, headers: r.headers, json: JSON.parse(await r.text()) as Record<string, unknown> }
}

const postForm = async (c: Client, path: string, fields: ReadonlyArray<readonly [string, string]>) => {
  const r = await fetch(`${c.s.url}${path}`, {
    method: "POST", redirect: "manual", body: new URLSearchParams([...fields, ["csrf", csrf]] as Array<[string, string]>).toString(),
    headers: { cookie: c.cookie, origin: c.s.url, "content-type": "application/x-www-form-urlencoded" }
  })
  return { status: r.status, headers: r.headers, text: await r.text() }
}

const getPage = async (c: Client, path: string) => {
  const r = await fetch(`${c.s.url}${path}`, { headers: { cookie: c.cookie }, redirect: "manual" })
  return { status: r.status, text: await r.text() }
}

const textOf = (page: string): string =>
  page.replace(/<[^>]*>/g, " ").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, "\"").replace(/&#39;/g, "'").replace(/&amp;/g, "&").replace(/\s+/g, " ")

/** Counts of the written tables, read from the scope's file by another connection (not the service's). */
const fileCounts = (s: ApprovalServer, scope: string) => {
  const db = new Database(scopeFile(s.config.env.dataDir, scope))
  try {
    const one = (sql: string) => (db.prepare(sql).get() as { n: number }).n
    return {
      decision: one("SELECT count(*) AS n FROM decision"),
      rule_version: one("SELECT count(*) AS n FROM rule_version"),
      review: one("SELECT count(*) AS n FROM review"),
      entity_version: one("SELECT count(*) AS n FROM entity_version")
    }
  } finally {
    db.close()
  }
}

const proposeRules = (s: ApprovalServer, scope: string, n: number, tag: string) =>
  s.run(Effect.forEach(Array.from({ length: n }, (_, i) => i), (i) =>
    Effect.map(
      propose(mailProposal({ scope, statement: `${tag} rule number ${i} asks the supplier for the delivery time first` }), { grantId: s.feeder, channel: "api" }),
      (c) => c.ref.replace(/^rule\/|@\d+$/g, "")
    )))

const agent = (s: ApprovalServer) => ({ grantId: s.feeder, channel: "mcp" as const })

let a: Client
let ruleIds: Array<string> = []

beforeAll(async () => {
  const s = await startApprovalServer({ configure: { limits: { requests_per_minute: 100_000, decisions_per_minute: 1000 } } })
  await s.run(storeSource(mailSource(), s.feeder))
  await s.run(storeSource(mailSource({ scope: "ops" }), s.feeder))
  a = await signIn(s)
  ruleIds = await proposeRules(s, "sales", 12, "Bulk")
}, 60_000)
afterAll(async () => {
  await a.s.cleanup()
})

describe("POST /v1/decisions", () => {
  it("confirms several rules in one POST: each its own decision row by the person, the current versions answered in order", async () => {
    const picked = ruleIds.slice(0, 3)
    const before = fileCounts(a.s, "sales")
    const r = await postJson(a, "/v1/decisions", { items: picked.map((id, i) => ({ rule_id: id, decision: "confirm", version: 1, ...(i === 0 ? { reason: "checked with Maria" } : {}) })) })
    expect(r.status).toBe(200)
    expect(r.json).toEqual({ decided: 3, current: picked.map((id) => `rule/${id}@2`) })
    const after = fileCounts(a.s, "sales")
    expect(after.decision - before.decision).toBe(3)
    expect(after.rule_version - before.rule_version).toBe(3)
    const db = new Database(scopeFile(a.s.config.env.dataDir, "sales"))
    try {
      const rows = picked.map((id) => db.prepare(`SELECT kind, version, origin, decided_by_identity AS who, reason, new_version FROM decision WHERE rule_id = '${id}'`).get())
      expect(rows).toEqual([
        { kind: "confirm", version: 1, origin: "grant", who: DEV_EMAIL, reason: "checked with Maria", new_version: 2 },
        { kind: "confirm", version: 1, origin: "grant", who: DEV_EMAIL, reason: null, new_version: 2 },
        { kind: "confirm", version: 1, origin: "grant", who: DEV_EMAIL, reason: null, new_version: 2 }
      ])
    } finally {
      db.close()
    }
  })

  it("one stale version refuses the whole POST: 409 version-outdated naming that item and its current version; no row written", async () => {
    // ruleIds[0] is at version 2 since the bulk above
    const items = [ruleIds[3], ruleIds[0], ruleIds[4]].map((id) => ({ rule_id: id, decision: "confirm", version: 1 }))
    const before = fileCounts(a.s, "sales")
    const r = await postJson(a, "/v1/decisions", { items })
    expect(r.status).toBe(409)
    expect(r.json).toMatchObject({ error: "version-outdated", current: `rule/${ruleIds[0]}@2` })
    expect(r.json.message).toBe(`items[1] (rule/${ruleIds[0]}@1): version 1 is not the current version 2`)
    expect(r.json.issues).toEqual([{ path: "items[1]", message: "version 1 is not the current version 2" }])
    expect(fileCounts(a.s, "sales")).toEqual(before)
    // the first item was not confirmed: its own decision still works
    expect((await postJson(a, "/v1/decisions", { items: [items[0]] })).status).toBe(200)
  })

  it("keeps the single decision's codes, naming the first refused item; nothing written", async () => {
    const before = fileCounts(a.s, "sales")
    const [p, q] = [ruleIds[5] ?? "", ruleIds[6] ?? ""]
    const cases: Array<[unknown, number, string, string]> = [
      [{ items: [{ rule_id: p, decision: "reject", version: 1, reason: "no" }, { rule_id: q, decision: "reject", version: 1 }] }, 400, "reason-missing", "items[1]"],
      [{ items: [{ rule_id: p, decision: "confirm", version: 1 }, { rule_id: q, decision: "confirm", version: 1, change: { quote: "x" } }] }, 400, "source-immutable", "items[1]"],
      [{ items: [{ rule_id: p, decision: "confirm", version: 0 }] }, 400, "validation-failed", "items[0].version"],
      [{ items: [{ rule_id: p, decision: "confirm", version: 1 }, { rule_id: "sales-9999", decision: "confirm", version: 1 }] }, 404, "not-found", "items[1]"],
      [{ items: [{ rule_id: p, decision: "confirm", version: 1 }, { rule_id: ruleIds[1], decision: "reject", version: 2, reason: "wrong" }] }, 409, "already-decided", "items[1]"],
      [{ items: [{ rule_id: p, decision: "confirm", version: 1 }, { rule_id: p, decision: "confirm", version: 1 }] }, 400, "validation-failed", "items[1].rule_id"],
      [{ items: [{ rule_id: p, decision: "confirm", version: 1, change: { supersedes: "sales-9999" } }] }, 422, "reference-unknown", "items[0]"],
      [{ items: [] }, 400, "validation-failed", "items"],
      [{ items: [{ rule_id: p, decision: "confirm", version: 1 }], extra: 1 }, 400, "validation-failed", "extra"]
    ]
    for (const [body, status, code, path] of cases) {
      const r = await postJson(a, "/v1/decisions", body)
      expect({ status: r.status, code: r.json.error, path: (r.json.issues as Array<{ path: string }>)[0]?.path }).toEqual({ status, code, path })
    }
    expect(fileCounts(a.s, "sales")).toEqual(before)
  })

  it(`bounds a POST at 200 items (400 validation-failed above it) and refuses rules of two scopes (400 multiple-scopes-without-flag)`, async () => {
    const many = Array.from({ length: 201 }, (_, i) => ({ rule_id: `sales-${String(i + 1000).padStart(4, "0")}`, decision: "confirm", version: 1 }))
    const over = await postJson(a, "/v1/decisions", { items: many })
    expect(over.status).toBe(400)
    expect(over.json).toMatchObject({ error: "validation-failed", issues: [{ path: "items", message: expect.stringContaining("at most 200 items") }] })
    const [opsRule] = await proposeRules(a.s, "ops", 1, "Ops")
    const two = await postJson(a, "/v1/decisions", { items: [{ rule_id: ruleIds[7], decision: "confirm", version: 1 }, { rule_id: opsRule, decision: "confirm", version: 1 }] })
    expect(two.status).toBe(400)
    expect(two.json.error).toBe("multiple-scopes-without-flag")
  })

  it("a long unknown key or target is named cut short: the refusal stays a few KB", async () => {
    const key = "x".repeat(20_000)
    const decisions = await postJson(a, "/v1/decisions", { items: [{ rule_id: ruleIds[8], decision: "confirm", version: 1 }], [key]: 1 })
    expect(decisions.status).toBe(400)
    expect(JSON.stringify(decisions.json).length).toBeLessThan(2_000)
    const reviews = await postJson(a, "/v1/reviews", { items: [{ target: `entity/${"y".repeat(20_000)}@1`, verdict: "confirm" }], [key]: 1 })
    expect(reviews.status).toBe(400)
    expect(JSON.stringify(reviews.json).length).toBeLessThan(2_000)
    const target = await postJson(a, "/v1/reviews", { items: [{ target: `entity/${"y".repeat(20_000)}@1`, verdict: "confirm" }] })
    expect(target.status).toBe(400)
    expect(JSON.stringify(target.json).length).toBeLessThan(4_000)
  })

  it("needs the csrf token and a person's session (the api channel's bearer cannot decide)", async () => {
    const before = fileCounts(a.s, "sales")
    const body = JSON.stringify({ items: [{ rule_id: ruleIds[8], decision: "confirm", version: 1 }] })
    const noCsrf = await fetch(`${a.s.url}/v1/decisions`, { method: "POST", body, headers: { cookie: a.cookie, origin: a.s.url, "content-type": "application/json" } })
    expect(noCsrf.status).toBe(403)
    expect((await noCsrf.json() as { error: string }).error).toBe("csrf-failed")
    const bearer = await fetch(`${a.s.url}/v1/decisions`, { method: "POST", body, headers: { authorization: `Bearer ${"p".repeat(40)}`, "content-type": "application/json" } })
    expect([401, 403]).toContain(bearer.status)
    expect(fileCounts(a.s, "sales")).toEqual(before)
  })
})

describe("one bulk POST is one decision against decisions_per_minute", () => {
  it("with decisions_per_minute 2: two bulk POSTs of 4 rules each pass, the third is 429 and writes nothing", async () => {
    const s = await startApprovalServer({ configure: { limits: { requests_per_minute: 100_000, decisions_per_minute: 2 } } })
    try {
      await s.run(storeSource(mailSource(), s.feeder))
      const c = await signIn(s)
      const ids = await proposeRules(s, "sales", 12, "Limited")
      const bulk = (part: Array<string>) => postJson(c, "/v1/decisions", { items: part.map((id) => ({ rule_id: id, decision: "confirm", version: 1 })) })
      expect((await bulk(ids.slice(0, 4))).json).toMatchObject({ decided: 4 })
      expect((await bulk(ids.slice(4, 8))).json).toMatchObject({ decided: 4 })
      const before = fileCounts(s, "sales")
      const third = await bulk(ids.slice(8, 12))
      expect(third.status).toBe(429)
      expect(third.headers.get("retry-after")).not.toBeNull()
      expect(fileCounts(s, "sales")).toEqual(before)
    } finally {
      await s.cleanup()
    }
  })
})

describe("POST /v1/reviews with items", () => {
  let entities: Array<string> = []
  let link = ""
  beforeAll(async () => {
    const s = a.s
    const root = await s.run(Effect.map(createEntity({ scope: "sales", type: "organisation", name: "Acme Bulk", parent_id: null }, agent(s)), (e) => e.id))
    entities = [root]
    for (const name of ["Logistics", "Purchasing", "Finance", "Customer Care"]) {
      entities.push(await s.run(Effect.map(createEntity({ scope: "sales", type: "department", name, parent_id: root }, agent(s)), (e) => e.id)))
    }
    link = await s.run(Effect.map(proposeLink({ scope: "sales", from_ref: `rule/${ruleIds[9]}`, to_ref: `entity/${root}`, type: "concerns", confidence: 0.8, reason: "about Acme" }, { grantId: s.feeder }), (r) => r.link.id ?? ""))
  })

  it("reviews several entity versions and a link in one POST: each its own review row; the single form still works", async () => {
    const before = fileCounts(a.s, "sales")
    const items = [
      { target: `entity/${entities[0]}@1`, verdict: "confirm" },
      { target: `entity/${entities[1]}@1`, verdict: "confirm", reason: "right" },
      { target: `link/${link}`, verdict: "confirm" }
    ]
    const r = await postJson(a, "/v1/reviews", { items })
    expect(r.status).toBe(200)
    expect(r.json).toEqual({ reviewed: 3, current: [`entity/${entities[0]}@2`, `entity/${entities[1]}@2`, `link/${link}`] })
    const after = fileCounts(a.s, "sales")
    expect(after.review - before.review).toBe(3)
    expect(after.entity_version - before.entity_version).toBe(2)
    const single = await postJson(a, "/v1/reviews", { target: `entity/${entities[2]}@1`, verdict: "confirm" })
    expect(single.status).toBe(200)
    expect(single.json).toMatchObject({ review: { target: `entity/${entities[2]}@1`, verdict: "confirm" }, current: `entity/${entities[2]}@2`, status: "active" })
  })

  it("a reviewed item refuses the whole POST: 409 naming it, the graph envelope kept; nothing written", async () => {
    const before = fileCounts(a.s, "sales")
    const r = await postJson(a, "/v1/reviews", { items: [{ target: `entity/${entities[3]}@1`, verdict: "confirm" }, { target: `entity/${entities[1]}@1`, verdict: "confirm" }] })
    expect(r.status).toBe(409)
    expect(r.json).toMatchObject({ error: "already-decided", issues: [{ path: "items[1]" }], remedy: expect.any(String), next: [] })
    expect(r.json.message).toMatch(new RegExp(`^items\\[1\\] \\(entity/${entities[1]}@1\\): `))
    const noReason = await postJson(a, "/v1/reviews", { items: [{ target: `entity/${entities[3]}@1`, verdict: "revert" }] })
    expect(noReason.status).toBe(400)
    expect(noReason.json).toMatchObject({ error: "reason-missing", issues: [{ path: "items[0]" }] })
    expect(fileCounts(a.s, "sales")).toEqual(before)
  })
})

describe("the bulk forms", () => {
  it("the index's form confirms the selected proposals → 303 to the index saying how many; a stale one → 409 index naming it, nothing written", async () => {
    const page = await getPage(a, "/approval?scope=sales")
    expect(page.text).toContain(`<form method="post" action="/v1/decisions" class="bulk" id="bulk-sales"`)
    expect(page.text).toContain(`name="item:${ruleIds[10]}" value="1" aria-label="Select: Bulk rule number 10`)
    const stale = await postForm(a, "/v1/decisions", [["scope", "sales"], ["page", "1"], [`item:${ruleIds[10]}`, "1"], [`item:${ruleIds[1]}`, "1"], ["decision", "confirm"]])
    expect(stale.status).toBe(409)
    const text = textOf(stale.text)
    expect(text).toContain("Not saved: somebody decided first")
    expect(text).toMatch(new RegExp(`Proposal ${ruleIds[1]} ?: version 1 is not the current version 2`))
    expect(text).toContain(`Selected ${ruleIds[10]}, ${ruleIds[1]}`)
    // a refused item still listed is marked on the list, with why
    const noReason = await postForm(a, "/v1/decisions", [["scope", "sales"], ["page", "1"], [`item:${ruleIds[10]}`, "1"], ["decision", "reject"]])
    expect(noReason.status).toBe(400)
    expect(noReason.text).toMatch(new RegExp(`<li id="p-${ruleIds[10]}" class="(?:[a-z]+ )*refused">`))
    expect(textOf(noReason.text)).toContain("Not saved because of this one: a reject needs a non-blank reason")
    expect(stale.text).toMatch(new RegExp(`<li id="p-${ruleIds[10]}"(?: class="[a-z ]+")?>\\s*<label class="pick"><input type="checkbox" name="item:${ruleIds[10]}" value="1" aria-label="Select: [^"]*" checked>`))
    const before = fileCounts(a.s, "sales")
    expect(before.decision).toBe(fileCounts(a.s, "sales").decision)
    const ok = await postForm(a, "/v1/decisions", [["scope", "sales"], ["page", "1"], [`item:${ruleIds[10]}`, "1"], [`item:${ruleIds[11]}`, "1"], ["decision", "reject"], ["reason", "said twice"]])
    expect(ok.status).toBe(303)
    expect(ok.headers.get("location")).toBe("/approval?scope=sales&done=reject&n=2#outcome")
    expect(fileCounts(a.s, "sales").decision - before.decision).toBe(2)
    expect(textOf((await getPage(a, "/approval?scope=sales&done=reject&n=2")).text)).toContain("Rejected 2 proposals.")
  })

  it("a bulk form post may review confirmed rules (still valid): 303 saying how many were marked as reviewed", async () => {
    const before = fileCounts(a.s, "sales")
    const r = await postForm(a, "/v1/decisions", [["scope", "sales"], [`item:${ruleIds[2]}`, "2"], [`item:${ruleIds[3]}`, "2"], ["decision", "review"]])
    expect(r.status).toBe(303)
    expect(r.headers.get("location")).toBe("/approval?scope=sales&done=review&n=2#outcome")
    expect(fileCounts(a.s, "sales").decision - before.decision).toBe(2)
    expect(textOf((await getPage(a, "/approval?scope=sales&done=review&n=2")).text)).toContain("Marked as reviewed: 2 rules.")
  })

  it("the structure page's form confirms or reverts the selected changes; a link selected with revert is rejected", async () => {
    const page = await getPage(a, "/approval/structure?scope=sales")
    expect(page.text).toContain(`<form method="post" action="/v1/reviews" id="bulk-structure"`)
    const boxes = [...page.text.matchAll(/name="item:(entity\/[a-z0-9-]+@\d+|link\/[a-z0-9-]+)"/g)].map((m) => m[1] ?? "")
    expect(boxes.length).toBeGreaterThanOrEqual(2)
    const before = fileCounts(a.s, "sales")
    const none = await postForm(a, "/v1/reviews", [["bulk", "1"], ["scope", "sales"], ["verdict", "confirm"]])
    expect(none.status).toBe(400)
    expect(textOf(none.text)).toMatch(/Selection ?: select at least one change/)
    expect(fileCounts(a.s, "sales")).toEqual(before)
    // revert one entity change and reject one link in one post
    const [entity, ...rest] = boxes
    const link = await a.s.run(Effect.map(proposeLink({ scope: "sales", from_ref: `rule/${ruleIds[9]}`, to_ref: `entity/${ruleIds.length > 0 ? (entity ?? "").replace(/^entity\/|@\d+$/g, "") : ""}`, type: "concerns", confidence: 0.5, reason: "maybe" }, { grantId: a.s.feeder }), (r) => r.link.id ?? ""))
    const undone = await postForm(a, "/v1/reviews", [["bulk", "1"], ["scope", "sales"], [`item:link/${link}`, "1"], [`item:${rest[0] ?? ""}`, "1"], ["verdict", "revert"], ["reason", "not our structure"]])
    expect(undone.status).toBe(303)
    expect(undone.headers.get("location")).toBe("/approval/structure?scope=sales&done=structure-revert&n=2#outcome")
    const verdicts = new Database(scopeFile(a.s.config.env.dataDir, "sales"))
    try {
      expect(verdicts.prepare(`SELECT verdict, reason FROM review WHERE target = 'link/${link}'`).get()).toEqual({ verdict: "reject", reason: "not our structure" })
      expect(verdicts.prepare(`SELECT verdict FROM review WHERE target = '${rest[0] ?? ""}'`).get()).toEqual({ verdict: "revert" })
    } finally {
      verdicts.close()
    }
    const done = await postForm(a, "/v1/reviews", [["bulk", "1"], ["scope", "sales"], [`item:${entity ?? ""}`, "1"], ["verdict", "confirm"]])
    expect(done.status).toBe(303)
    expect(done.headers.get("location")).toBe("/approval/structure?scope=sales&done=structure-confirm&n=1#outcome")
    expect(fileCounts(a.s, "sales").review - before.review).toBe(3)
    expect(textOf((await getPage(a, "/approval/structure?scope=sales&done=structure-revert&n=2")).text)).toContain("Rejected or reverted 2 structure changes.")
  })
})
