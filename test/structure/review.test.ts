/**
 * Person reviews (graph.md §10, §12): confirm / revert of entity versions, confirm / reject of
 * proposed links, every refusal with nothing written.
 */
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { ScopeStore } from "../../src/db/scope-store.js"
import { todayIn } from "../../src/contracts/time.js"
import { computeClosure, storedClosure } from "../../src/graph/closure.js"
import { countedLinksOf } from "../../src/graph/counted.js"
import type { GraphRefusal } from "../../src/contracts/errors.js"
import { proposeLink } from "../../src/graph/links.js"
import { pathOf } from "../../src/graph/paths.js"
import { review } from "../../src/structure/review.js"
import { tempDir, testConfig } from "../support/env.js"
import { run, runFail, sqlOf } from "../support/run.js"
import { agentChange, graphCounts, insertLinkRow, MAIL_REF, seedEntities, seedSourcesAndRules } from "../graph/link-fixtures.js"

let cleanup: () => void
let config: ReturnType<typeof testConfig>
let ids: ReadonlyArray<string> = []
const person = { grantId: "person:1", identity: "dev@example.com" }

beforeEach(async () => {
  const t = tempDir()
  cleanup = t.cleanup
  config = testConfig(t.dir)
  ids = await run(config, Effect.gen(function*() {
    yield* Effect.flatMap(ScopeStore, (s) => s.create("sales"))
    yield* seedSourcesAndRules
    return yield* seedEntities([
      { name: "Vertrieb", type: "department", status: "active" }, // 0: v1 create, v2 confirm
      { name: "Einkauf", type: "department", status: "active" }, // 1
      (ids) => ({ name: "Projekt Nord", parent: ids[0] ?? null }), // 2: v1 create (unconfirmed)
      (ids) => ({ name: "Team Nord", type: "topic", parent: ids[2] ?? null }) // 3: under 2
    ])
  }))
})
afterEach(() => cleanup())

const versions = (id: string) =>
  run(config, Effect.flatMap(sqlOf("sales"), (sql) => sql<{ version: number; change: string; status: string; channel: string; parent_id: string | null; name: string; changed_by: string; valid_to: string | null }>`
    SELECT version, change, status, channel, parent_id, name, changed_by, valid_to FROM entity_version WHERE id = ${id} ORDER BY version`))
const reviews = () => run(config, Effect.flatMap(sqlOf("sales"), (sql) => sql`SELECT * FROM review ORDER BY seq`))

/** A review that must be refused, with every graph table as it was. */
const refused = async (raw: unknown) => {
  const before = await run(config, graphCounts())
  const e = await runFail(config, review(raw, person)) as GraphRefusal
  expect(await run(config, graphCounts())).toEqual(before)
  return e
}

describe("confirm an entity version", () => {
  it("an unconfirmed create: a confirm version (active, approval, the person) and the review row", async () => {
    const id = ids[2] ?? ""
    const r = await run(config, review({ target: `entity/${id}@1`, verdict: "confirm" }, person))
    expect(r).toMatchObject({ current: `entity/${id}@2`, status: "active" })
    expect(r.review).toMatchObject({ id: "sales-r0001", target: `entity/${id}@1`, verdict: "confirm", by: "person:1", reason: null, new_version: 2 })
    expect(r.path.map((p) => p.name)).toEqual(["Vertrieb", "Projekt Nord"])
    expect((await versions(id)).at(-1)).toMatchObject({ version: 2, change: "confirm", status: "active", channel: "approval", changed_by: "person:1" })
    expect(await reviews()).toEqual([expect.objectContaining({ decided_by: "person:1", decided_by_identity: "dev@example.com", new_version: 2 })])
  })

  it("an agent move of an active entity: only the review row (decided: no confirm version on an active entity)", async () => {
    const id = ids[1] ?? ""
    const v = await run(config, agentChange(id, { parent: ids[0] ?? null }))
    expect(v).toBe(3)
    const r = await run(config, review({ target: `entity/${id}@3`, verdict: "confirm", reason: "right place" }, person))
    expect(r).toMatchObject({ current: `entity/${id}@3`, status: "active" })
    expect(r.review.new_version).toBeNull()
    expect(await versions(id)).toHaveLength(3)
  })

  it("a second review of the same target → already-decided, nothing written", async () => {
    const id = ids[2] ?? ""
    await run(config, review({ target: `entity/${id}@1`, verdict: "confirm" }, person))
    const e = await refused({ target: `entity/${id}@1`, verdict: "confirm" })
    expect(e.code).toBe("already-decided")
    expect(e.current).toBe(`entity/${id}@2`)
    // also when the review wrote no version
    const other = ids[1] ?? ""
    await run(config, agentChange(other, { name: "Einkauf Süd" }))
    await run(config, review({ target: `entity/${other}@3`, verdict: "confirm" }, person))
    expect((await refused({ target: `entity/${other}@3`, verdict: "revert", reason: "no" })).code).toBe("already-decided")
  })

  it("a target that is not the current version → version-outdated with current", async () => {
    const id = ids[2] ?? ""
    await run(config, agentChange(id, { name: "Projekt Nordost" }))
    const e = await refused({ target: `entity/${id}@1`, verdict: "confirm" })
    expect(e.code).toBe("version-outdated")
    expect(e.current).toBe(`entity/${id}@2`)
    expect((await refused({ target: `entity/${id}@7`, verdict: "confirm" })).code).toBe("version-outdated")
  })

  it("the current version is a person's → already-decided", async () => {
    const e = await refused({ target: `entity/${ids[0]}@2`, verdict: "confirm" })
    expect(e.code).toBe("already-decided")
    expect(e.current).toBe(`entity/${ids[0]}@2`)
  })
})

describe("request checks", () => {
  it("reject and revert need a reason → reason-missing (before the schema)", async () => {
    expect((await refused({ target: `entity/${ids[2]}@1`, verdict: "revert" })).code).toBe("reason-missing")
    expect((await refused({ target: "link/sales-l0001", verdict: "reject", reason: "  " })).code).toBe("reason-missing")
    expect((await refused({ target: "link/sales-l0001", verdict: "reject", extra: 1 })).code).toBe("reason-missing")
  })

  it("a reject of an entity, a revert of a link, a target without version, an unknown key → validation-failed", async () => {
    expect((await refused({ target: `entity/${ids[2]}@1`, verdict: "reject", reason: "x" })).code).toBe("validation-failed")
    expect((await refused({ target: "link/sales-l0001", verdict: "revert", reason: "x" })).code).toBe("validation-failed")
    expect((await refused({ target: `entity/${ids[2]}`, verdict: "confirm" })).code).toBe("validation-failed")
    expect((await refused({ target: `entity/${ids[2]}@1`, verdict: "confirm", extra: true })).code).toBe("validation-failed")
    expect((await refused({ target: `entity/${ids[2]}@1`, verdict: "approve" })).code).toBe("validation-failed")
  })

  it("an unknown entity or link → not-found", async () => {
    expect((await refused({ target: "entity/sales-e0099@1", verdict: "confirm" })).code).toBe("not-found")
    expect((await refused({ target: "link/sales-l0099", verdict: "confirm" })).code).toBe("not-found")
    expect((await refused({ target: "entity/nowhere-e0001@1", verdict: "confirm" })).code).toBe("not-found")
  })
})

describe("revert an entity version", () => {
  it("an agent move: a revert version restoring the reviewed parent; the closure follows", async () => {
    const id = ids[1] ?? ""
    await run(config, agentChange(id, { parent: ids[2] ?? null }))
    const r = await run(config, review({ target: `entity/${id}@3`, verdict: "revert", reason: "stays at the top" }, person))
    expect(r).toMatchObject({ current: `entity/${id}@4`, status: "active" })
    expect(r.review.new_version).toBe(4)
    expect((await versions(id)).at(-1)).toMatchObject({ version: 4, change: "revert", status: "active", channel: "approval", parent_id: null })
    await run(config, Effect.gen(function*() {
      const sql = yield* sqlOf("sales")
      expect(yield* storedClosure(sql)).toEqual(yield* computeClosure(sql))
      expect((yield* pathOf(sql, id)).map((p) => p.name)).toEqual(["Einkauf"])
    }))
  })

  it("a subtree moves back with its children", async () => {
    const id = ids[2] ?? ""
    // confirm first, then the agent moves the project with its team under Einkauf
    await run(config, review({ target: `entity/${id}@1`, verdict: "confirm" }, person))
    await run(config, agentChange(id, { parent: ids[1] ?? null }))
    await run(config, review({ target: `entity/${id}@3`, verdict: "revert", reason: "belongs to sales" }, person))
    await run(config, Effect.gen(function*() {
      const sql = yield* sqlOf("sales")
      expect(yield* storedClosure(sql)).toEqual(yield* computeClosure(sql))
      expect((yield* pathOf(sql, ids[3] ?? "")).map((p) => p.name)).toEqual(["Vertrieb", "Projekt Nord", "Team Nord"])
    }))
  })

  it("a rename: the reviewed name comes back, in entity_fts too", async () => {
    const id = ids[1] ?? ""
    await run(config, agentChange(id, { name: "Beschaffung" }))
    await run(config, review({ target: `entity/${id}@3`, verdict: "revert", reason: "wrong name" }, person))
    expect((await versions(id)).at(-1)).toMatchObject({ name: "Einkauf", change: "revert" })
    const fts = await run(config, Effect.flatMap(sqlOf("sales"), (sql) => sql<{ name: string }>`SELECT name FROM entity_fts WHERE rowid = 2`))
    expect(fts).toEqual([{ name: "einkauf" }])
  })

  it("a create no person has reviewed: the revert archives it (valid_to today)", async () => {
    const id = ids[3] ?? ""
    const r = await run(config, review({ target: `entity/${id}@1`, verdict: "revert", reason: "not needed" }, person))
    const today = await run(config, todayIn("Europe/Berlin"))
    expect(r).toMatchObject({ status: "archived", current: `entity/${id}@2` })
    expect((await versions(id)).at(-1)).toMatchObject({ change: "revert", status: "archived", valid_to: today })
  })

  it("create and move never reviewed: the revert undoes both (archives); with a live child → has-children", async () => {
    const id = ids[2] ?? ""
    await run(config, agentChange(id, { parent: ids[1] ?? null }))
    const e = await refused({ target: `entity/${id}@2`, verdict: "revert", reason: "no" })
    expect(e.code).toBe("has-children")
    expect(e.remedy).toContain(ids[3] ?? "")
    await run(config, review({ target: `entity/${ids[3]}@1`, verdict: "revert", reason: "no" }, person))
    const r = await run(config, review({ target: `entity/${id}@2`, verdict: "revert", reason: "no" }, person))
    expect(r.status).toBe("archived")
  })

  it("the reviewed parent is archived now → parent-archived; it lies in the subtree now → cycle with both paths", async () => {
    const team = ids[3] ?? ""
    // team confirmed under the project, then the agent moves it to the top
    await run(config, review({ target: `entity/${team}@1`, verdict: "confirm" }, person))
    await run(config, agentChange(team, { parent: null }))
    // the agent moves the project under the team: restoring the team under the project would be a cycle
    await run(config, agentChange(ids[2] ?? "", { parent: team }))
    const cycle = await refused({ target: `entity/${team}@3`, verdict: "revert", reason: "back" })
    expect(cycle.code).toBe("cycle")
    expect(cycle.paths?.entity.map((p) => p.id)).toEqual([team])
    expect(cycle.paths?.target.map((p) => p.id)).toEqual([team, ids[2]])

    // a reviewed parent archived since: the child was confirmed under it, then moved to the top by the agent
    const [parent, child] = await run(config, seedEntities([{ name: "Alt", status: "active" }, (x) => ({ name: "Kind", parent: x[0] ?? null, status: "active" })]))
    await run(config, agentChange(child ?? "", { parent: null }))
    await run(config, Effect.flatMap(ScopeStore, (s) => s.write("sales", ({ sql }) =>
      sql`INSERT INTO entity_version (id, version, type, name, aliases, parent_id, status, valid_from, valid_to, change, channel, changed_by, changed_at, reason)
        SELECT id, version + 1, type, name, aliases, parent_id, 'archived', valid_from, '2026-01-09', 'archive', 'approval', 'person:1', '2026-01-09T10:00:00.000Z', 'gone'
        FROM entity_current WHERE id = ${parent ?? ""}`)))
    const archivedParent = await refused({ target: `entity/${child}@3`, verdict: "revert", reason: "back" })
    expect(archivedParent.code).toBe("parent-archived")
  })
})

describe("links", () => {
  const propose = () => run(config, proposeLink({
    scope: "sales", from_ref: MAIL_REF, to_ref: `entity/${ids[2]}`, type: "concerns", confidence: 0.6, reason: "names the project"
  }, { grantId: "person:1" }))

  it("confirm: the review row only; the link counts from then on (G5)", async () => {
    const { link } = await propose()
    const counted = () => run(config, Effect.flatMap(sqlOf("sales"), (sql) =>
      countedLinksOf(sql, [`entity/${ids[2]}`], "2099-01-01", { zone: "Europe/Berlin", minConfidence: null })))
    expect(await counted()).toEqual([])
    const before = await run(config, graphCounts())
    const r = await run(config, review({ target: `link/${link.id}`, verdict: "confirm" }, person))
    expect(r).toMatchObject({ current: `link/${link.id}`, status: "confirmed" })
    expect(r.review.new_version).toBeNull()
    expect(r.path.map((p) => p.name)).toEqual(["Vertrieb", "Projekt Nord"])
    expect(await run(config, graphCounts())).toEqual({ ...before, review: (before.review ?? 0) + 1 })
    expect((await counted()).map((l) => [l.id, l.status, l.proposed])).toEqual([[link.id, "confirmed", false]])
  })

  it("reject with a reason; a second review → already-decided; a human link is not reviewable", async () => {
    const { link } = await propose()
    const r = await run(config, review({ target: `link/${link.id}`, verdict: "reject", reason: "wrong project" }, person))
    expect(r.status).toBe("rejected")
    expect(r.review.reason).toBe("wrong project")
    const again = await refused({ target: `link/${link.id}`, verdict: "confirm" })
    expect(again.code).toBe("already-decided")
    expect(again.current).toBe(`link/${link.id}`)
    const human = await run(config, insertLinkRow("sales", { from_ref: "rule/sales-0002", to_ref: `entity/${ids[0]}`, type: "concerns" }))
    expect((await refused({ target: `link/${human}`, verdict: "confirm" })).code).toBe("already-decided")
  })
})
