/**
 * A person's structure corrections over real HTTP (gaps.md §13, graph.md §15 Q2/Q3): create an
 * entity or a link (born confirmed), close a confirmed link, unarchive an entity, from the forms
 * of the structure page and as JSON on the approval channel. A refused form names the field, and
 * the scope file read after it holds exactly what it held before.
 */
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { csrfToken } from "../../src/auth/csrf.js"
import { createEntity } from "../../src/graph/entities.js"
import { proposeLink } from "../../src/graph/links.js"
import { Database } from "../support/other-connection.js"
import { APPROVAL_TOKEN, type ApprovalServer, DEV_API, DEV_EMAIL, SESSION_SECRET, startApprovalServer } from "./support.js"

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
    method: "POST", redirect: "manual", body: new URLSearchParams({ csrf, ...fields }).toString(),
    headers: { cookie, origin: s.url, "content-type": "application/x-www-form-urlencoded" }
  })
  return { status: r.status, headers: r.headers, text: await r.text() }
}
const postJson = async (path: string, body: unknown, headers: Record<string, string> = { cookie, origin: s.url, csrf }) => {
  const r = await fetch(`${s.url}${path}`, { method: "POST", body: JSON.stringify(body), headers: { ...headers, "content-type": "application/json" } })
  return { status: r.status, body: await r.json() as Record<string, unknown> }
}
const textOf = (page: string): string =>
  page.replace(/<[^>]*>/g, " ").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, "\"").replace(/&#39;/g, "'").replace(/&amp;/g, "&").replace(/\s+/g, " ")

/** Reads the scope file itself (another connection, as an operator's sqlite3 would). */
const fileRows = <T>(query: string): Array<T> => {
  const db = new Database(join(s.config.env.dataDir, "scopes", "sales.sqlite")) as unknown as { prepare(q: string): { all(): Array<T> }; close(): void }
  try {
    return db.prepare(query).all()
  } finally {
    db.close()
  }
}
const snapshot = () =>
  JSON.stringify(fileRows(`SELECT (SELECT count(*) FROM entity) AS e, (SELECT count(*) FROM entity_version) AS v, (SELECT count(*) FROM link) AS l,
    (SELECT count(*) FROM review) AS r, (SELECT count(*) FROM link WHERE valid_to IS NOT NULL) AS closed`))

/** A refused form post: the structure page with the status, the field named, nothing written. */
const refused = async (path: string, fields: Record<string, string>, status: number, field: string) => {
  const before = snapshot()
  const r = await postForm(path, fields)
  expect(r.status, textOf(r.text).slice(0, 600)).toBe(status)
  const text = textOf(r.text)
  expect(text).toContain("Not saved")
  expect(text).toMatch(new RegExp(`${field} ?:`))
  expect(text).toContain("Correct the structure")
  expect(snapshot()).toBe(before)
  return text
}

const create = (name: string, parent: string | null, type = "department") =>
  s.run(Effect.map(createEntity({ scope: "sales", type, name, parent_id: parent, force: true, reason: "a unit of its own" }, agent()), (e) => e.id))

let root = ""
let nord = ""

beforeAll(async () => {
  s = await startApprovalServer()
  const login = await fetch(`${s.url}/approval/login`, { method: "POST", body: `token=${APPROVAL_TOKEN}`, headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": "same-origin" }, redirect: "manual" })
  cookie = (login.headers.get("set-cookie") ?? "").split(";")[0] ?? ""
  root = await create("Acme", null, "organisation")
  nord = await create("Vertrieb Nord", root)
})
afterAll(async () => {
  await s.cleanup()
})

describe("create an entity on the structure page", () => {
  it("is born confirmed: created_by human, version 1 create, active, approval, the person, the reason", async () => {
    const r = await postForm("/v1/structure/entities", { scope: "sales", type: "department", name: "Vertrieb Ost", parent_id: root, aliases: "VO, Ost", reason: "the east opened in May" })
    expect(r.status).toBe(303)
    expect(r.headers.get("location")).toMatch(/^\/approval\/structure\?scope=sales&done=entity-created&target=entity%2Fsales-e\d+%401#corrections$/)
    const [row] = fileRows<Record<string, unknown>>(`SELECT e.created_by, v.* FROM entity e JOIN entity_version v ON v.id = e.id WHERE v.name = 'Vertrieb Ost'`)
    expect(row).toMatchObject({
      created_by: "human", version: 1, change: "create", status: "active", channel: "approval", parent_id: root,
      reason: "the east opened in May", aliases: JSON.stringify(["VO", "Ost"]), valid_to: null
    })
    expect(String(row?.changed_by)).toMatch(/^person:\d+$/)
    const page = await get(r.headers.get("location") ?? "")
    const text = textOf(page.text)
    expect(text).toContain("Entity created.")
    // nothing waits for a person: it is not among the pending changes
    expect(text).not.toContain("New department Vertrieb Ost")
  })
  it("refuses bad input with the field named and nothing written", async () => {
    await refused("/v1/structure/entities", { scope: "sales", type: "department", name: "", parent_id: root, reason: "x" }, 400, "Name")
    await refused("/v1/structure/entities", { scope: "sales", type: "planet", name: "Mars", parent_id: root, reason: "x" }, 400, "Type")
    await refused("/v1/structure/entities", { scope: "sales", type: "department", name: "Vertrieb West", parent_id: root, reason: " " }, 400, "Reason")
    await refused("/v1/structure/entities", { scope: "sales", type: "department", name: "Vertrieb West", parent_id: "sales-e9999", reason: "x" }, 422, "Parent")
    // the literal duplicate: force does not override it
    const text = await refused("/v1/structure/entities", { scope: "sales", type: "department", name: "vertrieb nord", parent_id: root, force: "true", reason: "x" }, 409, "Name")
    expect(text).toContain("a similar entity exists")
    // a similar one needs the checkbox (force) with the reason; what was typed stays in the form
    const similar = await refused("/v1/structure/entities", { scope: "sales", type: "department", name: "Vertrieb Nordd", parent_id: "", reason: "a unit of its own" }, 409, "Different from similar ones")
    expect(similar).toContain("similar department")
    const again = await postForm("/v1/structure/entities", { scope: "sales", type: "department", name: "Vertrieb Nordd", parent_id: "", reason: "a unit of its own" })
    expect(again.text).toContain(`id="ce-name" type="text" name="name" maxlength="200" value="Vertrieb Nordd"`)
    const forced = await postForm("/v1/structure/entities", { scope: "sales", type: "department", name: "Vertrieb Nordd", parent_id: "", force: "true", reason: "a unit of its own" })
    expect(forced.status).toBe(303)
  })
  it("refuses a parent that is archived and the depth limit", async () => {
    const old = await create("Altbestand", root)
    const cur = fileRows<{ version: number }>(`SELECT max(version) AS version FROM entity_version WHERE id = '${old}'`)[0]?.version ?? 1
    expect((await postForm(`/v1/entities/${old}/archive`, { version: String(cur), reason: "closed" })).status).toBe(303)
    await refused("/v1/structure/entities", { scope: "sales", type: "department", name: "Unter Alt", parent_id: old, reason: "x" }, 422, "Parent")
    let parent = nord
    for (let level = 3; level <= s.config.file.graph.max_depth; level++) parent = await create(`Ebene ${level}`, parent)
    await refused("/v1/structure/entities", { scope: "sales", type: "department", name: "Zu tief", parent_id: parent, reason: "x" }, 422, "Parent")
  })
  it("as JSON on the approval channel: 201 with the entity; the API channel cannot reach it", async () => {
    const r = await postJson("/v1/structure/entities", { scope: "sales", type: "department", name: "Vertrieb Mitte", parent_id: root, reason: "from the org chart" })
    expect(r.status).toBe(201)
    expect(r.body).toMatchObject({ created: true, status: "active", name: "Vertrieb Mitte", pending: false })
    const missing = await postJson("/v1/structure/entities", { scope: "sales", type: "department", name: "Ohne Grund", parent_id: root })
    expect(missing.status).toBe(400)
    expect(JSON.stringify(missing.body)).toContain("reason")
    const before = snapshot()
    const bearer = await postJson("/v1/structure/entities", { scope: "sales", type: "department", name: "Per API", parent_id: root, reason: "x" }, { authorization: `Bearer ${DEV_API}` })
    expect(bearer.status).toBe(401)
    const noCsrf = await postJson("/v1/structure/entities", { scope: "sales", type: "department", name: "Ohne Token", parent_id: root, reason: "x" }, { cookie, origin: s.url })
    expect(noCsrf.status).toBe(403)
    expect(snapshot()).toBe(before)
  })
})

describe("create a link on the structure page", () => {
  it("is born confirmed: origin human, created_by the person, a confirm review row by the person", async () => {
    const r = await postForm("/v1/structure/links", { scope: "sales", from_ref: `entity/${nord}`, type: "same_as", to_ref: `entity/${root}`, reason: "one unit in practice" })
    expect(r.status).toBe(303)
    expect(r.headers.get("location")).toMatch(/done=link-created&target=link%2Fsales-l\d+#corrections$/)
    const [link] = fileRows<Record<string, unknown>>(`SELECT * FROM link WHERE reason = 'one unit in practice'`)
    expect(link).toMatchObject({ origin: "human", confidence: null, valid_to: null, type: "same_as" })
    expect(String(link?.created_by)).toMatch(/^person:\d+$/)
    const [review] = fileRows<Record<string, unknown>>(`SELECT * FROM review WHERE target = 'link/${String(link?.id)}'`)
    expect(review).toMatchObject({ verdict: "confirm", origin: "grant", decided_by: link?.created_by, decided_by_identity: DEV_EMAIL, reason: "one unit in practice" })
    const page = await get(r.headers.get("location") ?? "")
    expect(textOf(page.text)).toContain("Link created.")
    // it is listed to be closed
    expect(page.text).toContain(`action="/v1/links/${String(link?.id)}/close"`)
  })
  it("refuses bad input with the field named and nothing written", async () => {
    await refused("/v1/structure/links", { scope: "sales", from_ref: `entity/${nord}`, type: "same_as", to_ref: "entity/sales-e9999", reason: "x" }, 422, "To")
    await refused("/v1/structure/links", { scope: "sales", from_ref: "nothing", type: "same_as", to_ref: `entity/${root}`, reason: "x" }, 400, "From")
    await refused("/v1/structure/links", { scope: "sales", from_ref: `entity/${nord}`, type: "same_as", to_ref: `entity/${root}`, reason: "" }, 400, "Reason")
    await refused("/v1/structure/links", { scope: "sales", from_ref: `entity/${nord}`, type: "thread", to_ref: `entity/${root}`, reason: "x" }, 400, "Type")
    // the same open link exists already
    await refused("/v1/structure/links", { scope: "sales", from_ref: `entity/${root}`, type: "same_as", to_ref: `entity/${nord}`, reason: "x" }, 409, "Type")
  })
})

describe("close a confirmed link", () => {
  it("sets valid_to once and writes a review row close with the reason; a second close is refused", async () => {
    const kiel = await create("Lager Kiel", null, "organisation")
    const made = await postJson("/v1/structure/links", { scope: "sales", from_ref: `entity/${kiel}`, type: "belongs_to", to_ref: `entity/${root}`, reason: "for a while" })
    expect(made.status).toBe(201)
    const id = String((made.body.link as { id: string }).id)
    const r = await postForm(`/v1/links/${id}/close`, { reason: "no longer true" })
    expect(r.status).toBe(303)
    expect(r.headers.get("location")).toContain("done=link-closed")
    const [link] = fileRows<{ valid_to: string | null }>(`SELECT valid_to FROM link WHERE id = '${id}'`)
    expect(link?.valid_to).toMatch(/^\d{4}-\d\d-\d\dT/)
    const reviews = fileRows<Record<string, unknown>>(`SELECT verdict, origin, reason FROM review WHERE target = 'link/${id}' ORDER BY seq`)
    expect(reviews).toEqual([{ verdict: "confirm", origin: "grant", reason: "for a while" }, { verdict: "close", origin: "grant", reason: "no longer true" }])
    await refused(`/v1/links/${id}/close`, { reason: "again" }, 409, "Link")
  })
  it("refuses a proposed (unconfirmed) link, a missing reason and an unknown link, naming the field", async () => {
    const fuhrpark = await create("Fuhrpark", null, "organisation")
    const proposed = await s.run(Effect.map(proposeLink({ scope: "sales", from_ref: `entity/${fuhrpark}`, to_ref: `entity/${root}`, type: "same_as", confidence: 0.5, reason: "maybe" }, { grantId: s.feeder }), (p) => p.link.id ?? ""))
    const text = await refused(`/v1/links/${proposed}/close`, { reason: "wrong" }, 400, "Link")
    expect(text).toContain("is not a confirmed link")
    const made = await postJson("/v1/structure/links", { scope: "sales", from_ref: `entity/${fuhrpark}`, type: "belongs_to", to_ref: `entity/${root}`, reason: "x" })
    expect(made.status).toBe(201)
    await refused(`/v1/links/${String((made.body.link as { id: string }).id)}/close`, { reason: "" }, 400, "Reason")
    await refused("/v1/links/sales-l9999/close", { reason: "x" }, 404, "Link")
    const json = await postJson(`/v1/links/${proposed}/close`, { reason: "wrong" })
    expect(json.status).toBe(400)
    expect(json.body.issues).toEqual([{ path: "link", message: "is not a confirmed link: reject it in the list instead" }])
  })
})

describe("unarchive an entity", () => {
  it("writes a version unarchive: active, valid_to NULL, approval, nothing else changed", async () => {
    const id = await create("Vertrieb Süd", root)
    expect((await postForm(`/v1/entities/${id}/archive`, { version: "1", reason: "merged" })).status).toBe(303)
    const page = await get("/approval/structure?scope=sales")
    expect(page.text).toContain(`action="/v1/entities/${id}/unarchive"`)
    const r = await postForm(`/v1/entities/${id}/unarchive`, { version: "2", reason: "the merger was undone" })
    expect(r.status).toBe(303)
    expect(r.headers.get("location")).toContain(`done=unarchive&target=entity%2F${id}%403`)
    const rows = fileRows<Record<string, unknown>>(`SELECT * FROM entity_version WHERE id = '${id}' ORDER BY version`)
    expect(rows.map((v) => [v.change, v.status, v.valid_to === null])).toEqual([["create", "unconfirmed", true], ["archive", "archived", false], ["unarchive", "active", true]])
    const [, archived, back] = rows
    expect(back).toMatchObject({ status: "active", channel: "approval", reason: "the merger was undone", valid_to: null })
    for (const k of ["type", "name", "aliases", "parent_id", "valid_from", "evidence"]) expect(back?.[k]).toEqual(archived?.[k])
    // the resolver finds it again
    const found = await fetch(`${s.url}/v1/entities/resolve?scope=sales&q=${encodeURIComponent("Vertrieb Süd")}`, { headers: { authorization: `Bearer ${DEV_API}` } })
    expect(JSON.stringify(await found.json())).toContain(id)
  })
  it("refuses an entity that is not archived, a stale version and an archived parent, naming the entity", async () => {
    await refused(`/v1/entities/${nord}/unarchive`, { version: "1", reason: "x" }, 409, "Entity")
    const parent = await create("Werk Alt", root)
    const child = await create("Halle 1", parent)
    expect((await postForm(`/v1/entities/${child}/archive`, { version: "1", reason: "closed" })).status).toBe(303)
    expect((await postForm(`/v1/entities/${parent}/archive`, { version: "1", reason: "closed" })).status).toBe(303)
    const text = await refused(`/v1/entities/${child}/unarchive`, { version: "2", reason: "reopened" }, 422, "Entity")
    expect(text).toContain(`its parent ${parent} is archived`)
    await refused(`/v1/entities/${child}/unarchive`, { version: "1", reason: "reopened" }, 409, "Entity")
    await refused(`/v1/entities/${parent}/unarchive`, { version: "2", reason: "" }, 400, "Reason")
    expect((await postForm(`/v1/entities/${parent}/unarchive`, { version: "2", reason: "reopened" })).status).toBe(303)
    expect((await postForm(`/v1/entities/${child}/unarchive`, { version: "2", reason: "reopened" })).status).toBe(303)
  })
})
