/**
 * Archive (graph.md §3.2 G3, §10): bottom-up, has-children, version-outdated, already-decided;
 * afterwards no child under it and no new link to it.
 */
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { ScopeStore } from "../../src/db/scope-store.js"
import { todayIn } from "../../src/contracts/time.js"
import type { GraphRefusal } from "../../src/contracts/errors.js"
import { proposeLink } from "../../src/graph/links.js"
import { archiveEntity, parseArchive } from "../../src/structure/archive.js"
import { tempDir, testConfig } from "../support/env.js"
import { run, runFail, sqlOf } from "../support/run.js"
import { agentChange, graphCounts, MAIL_REF, seedEntities, seedSourcesAndRules } from "../graph/link-fixtures.js"

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
      { name: "Vertrieb", type: "department", status: "active" }, // 0 @2
      (ids) => ({ name: "Nord", parent: ids[0] ?? null, status: "active" }), // 1 @2
      (ids) => ({ name: "Kunde Meier", type: "customer", parent: ids[1] ?? null }) // 2 @1
    ])
  }))
})
afterEach(() => cleanup())

const archive = (i: number, version: number, reason?: string) =>
  run(config, archiveEntity(ids[i] ?? "", { version, ...(reason === undefined ? {} : { reason }) }, person))
const refused = async (id: string, version: number) => {
  const before = await run(config, graphCounts())
  const e = await runFail(config, archiveEntity(id, { version }, person)) as GraphRefusal
  expect(await run(config, graphCounts())).toEqual(before)
  return e
}

describe("archive", () => {
  it("a leaf: version change archive, status archived, valid_to today, by the person on the approval channel", async () => {
    const r = await archive(2, 1, "customer left")
    const today = await run(config, todayIn("Europe/Berlin"))
    expect(r).toMatchObject({ archived: true, id: ids[2], version: 2, current: `entity/${ids[2]}@2`, valid_to: today })
    expect(r.path.map((p) => p.name)).toEqual(["Vertrieb", "Nord", "Kunde Meier"])
    const rows = await run(config, Effect.flatMap(sqlOf("sales"), (sql) => sql`SELECT * FROM entity_version WHERE id = ${ids[2] ?? ""} ORDER BY version`))
    expect(rows.at(-1)).toMatchObject({
      change: "archive", status: "archived", valid_to: today, channel: "approval", changed_by: "person:1", reason: "customer left", name: "Kunde Meier"
    })
  })

  it("bottom-up: a parent with a live child → has-children naming it; after the child, the parent", async () => {
    const e = await refused(ids[1] ?? "", 2)
    expect(e.code).toBe("has-children")
    expect(e.remedy).toContain(ids[2] ?? "")
    await archive(2, 1)
    await archive(1, 2)
    const top = await archive(0, 2)
    expect(top.version).toBe(3)
  })

  it("an agent moving the child away also frees the parent", async () => {
    await run(config, agentChange(ids[2] ?? "", { parent: ids[0] ?? null }))
    expect((await archive(1, 2)).archived).toBe(true)
  })

  it("archived already → already-decided; another version → version-outdated with current; unknown → not-found", async () => {
    await archive(2, 1)
    const again = await refused(ids[2] ?? "", 2)
    expect(again.code).toBe("already-decided")
    expect(again.current).toBe(`entity/${ids[2]}@2`)
    const outdated = await refused(ids[1] ?? "", 1)
    expect(outdated.code).toBe("version-outdated")
    expect(outdated.current).toBe(`entity/${ids[1]}@2`)
    expect((await refused("sales-e0099", 1)).code).toBe("not-found")
    expect((await refused("nowhere-e0001", 1)).code).toBe("not-found")
    expect((await refused("not an id", 1)).code).toBe("not-found")
  })

  it("after the archive: no child under it (parent-archived) and no new link to it", async () => {
    await archive(2, 1)
    const e = await runFail(config, proposeLink({
      scope: "sales", from_ref: MAIL_REF, to_ref: `entity/${ids[2]}`, type: "concerns", confidence: 0.9, reason: "x"
    }, { grantId: "person:1" })) as GraphRefusal
    expect(e.code).toBe("reference-unknown")
    expect(e.remedy).toMatch(/archived/)
    // the trigger keeps every writer from putting a child under it
    const child = await run(config, seedEntities([{ name: "Neu" }]))
    const moved = await run(config, agentChange(child[0] ?? "", { parent: ids[2] ?? null }).pipe(Effect.flip))
    expect(String((moved.cause as Error).message)).toBe("parent-archived")
  })

  it("the request: version required, reason optional, nothing else", async () => {
    const bad = await run(config, Effect.either(parseArchive({ version: 0, extra: 1 })))
    expect(bad._tag).toBe("Left")
    if (bad._tag === "Left") expect((bad.left.issues ?? []).map((i) => i.path).sort()).toEqual(["extra", "version"])
    const ok = await run(config, parseArchive({ version: 2, reason: "gone" }))
    expect(ok).toEqual({ version: 2, reason: "gone" })
  })
})
