/**
 * The closure table (graph.md §3.2): maintained by closure.ts on every create and move, equal to
 * the WITH RECURSIVE recomputation after every step of 1,000 random creates and moves; no move
 * can make a cycle (the code refuses first, the trigger is the backstop).
 */
import { SqlError } from "@effect/sql/SqlError"
import { Effect, Exit } from "effect"
import fc from "fast-check"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { triggerMessage } from "../../src/db/errors.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { computeClosure, rebuildClosure, storedClosure } from "../../src/graph/closure.js"
import type { GraphRefusal } from "../../src/contracts/errors.js"
import { tempDir, testConfig } from "../support/env.js"
import { run, sqlOf } from "../support/run.js"
import { create, move } from "./entity-helpers.js"

let cleanup: () => void
let config: ReturnType<typeof testConfig>

beforeEach(async () => {
  const t = tempDir()
  cleanup = t.cleanup
  config = testConfig(t.dir)
  await run(config, Effect.flatMap(ScopeStore, (s) => s.create("sales")))
})
afterEach(() => cleanup())

/** A distinct name of six letters per index (few shared trigrams, so resolve stays cheap). */
const nameOf = (i: number): string => {
  let n = (i * 7_919_021 + 104_729) % 308_915_776
  let out = ""
  for (let k = 0; k < 6; k++) {
    out += String.fromCharCode(97 + (n % 26))
    n = Math.floor(n / 26)
  }
  return out
}

type Op = { readonly kind: "create"; readonly parent: number } | { readonly kind: "move"; readonly x: number; readonly parent: number }

// one create to three moves: the tree keeps about 250 nodes, so each step's comparison stays cheap
const op: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant("create" as const), parent: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant("move" as const), x: fc.nat(), parent: fc.nat() }), weight: 3 }
)

describe("closure equals the recomputation", () => {
  it("after every step of 1,000 random creates and moves (refused steps included)", async () => {
    const outcomes: Record<string, number> = {}
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1000, maxLength: 1000 }), async (ops) => {
        // a fresh scope per run, so that shrinking replays start from an empty tree
        const t = tempDir()
        const cfg = testConfig(t.dir, { graph: { max_depth: 6 } })
        await run(cfg, Effect.gen(function*() {
          yield* Effect.flatMap(ScopeStore, (s) => s.create("sales"))
          const sql = yield* sqlOf("sales")
          const ids: Array<string> = []
          // parent index ids.length (mod ids.length + 1) means the top level
          const pick = (n: number) => (ids.length === 0 ? null : ids[n % (ids.length + 1)] ?? null)
          for (const [i, o] of ops.entries()) {
            let outcome: string
            if (o.kind === "create") {
              const exit = yield* Effect.exit(create({ name: nameOf(i), parent_id: pick(o.parent), force: true, reason: "property test" }))
              if (Exit.isSuccess(exit)) ids.push(exit.value.id)
              outcome = Exit.isSuccess(exit) ? "created" : codeOf(exit)
            } else {
              if (ids.length === 0) continue
              const x = ids[o.x % ids.length]!
              const exit = yield* Effect.exit(move(x, pick(o.parent)))
              outcome = Exit.isSuccess(exit) ? (exit.value.moved ? "moved" : "unmoved") : codeOf(exit)
            }
            outcomes[outcome] = (outcomes[outcome] ?? 0) + 1
            const [stored, expected] = yield* Effect.all([storedClosure(sql), computeClosure(sql)])
            if (JSON.stringify(stored) !== JSON.stringify(expected)) {
              return yield* Effect.dieMessage(`closure differs after step ${i} (${JSON.stringify(o)})`)
            }
          }
        })).finally(t.cleanup)
      }),
      // no shrinking of 1,000 steps: the failure names the step, fast-check the seed
      { numRuns: 1, endOnFailure: true, seed: 20261130 }
    )
    // the walk really exercised creates, moves and the refusals
    expect(outcomes.created ?? 0).toBeGreaterThan(150)
    expect(outcomes.moved ?? 0).toBeGreaterThan(300)
    expect(outcomes.cycle ?? 0).toBeGreaterThan(0)
    expect(outcomes["depth-limit"] ?? 0).toBeGreaterThan(0)
    expect(Object.keys(outcomes).every((k) => ["created", "moved", "unmoved", "cycle", "depth-limit"].includes(k))).toBe(true)
  }, 60_000)

  it("rebuildClosure repairs a damaged table", async () => {
    const rows = await run(config, Effect.gen(function*() {
      const sql = yield* sqlOf("sales")
      const a = yield* create({ name: "Acme" })
      const b = yield* create({ name: "Vertrieb", parent_id: a.id })
      yield* create({ name: "Nord", parent_id: b.id })
      const before = yield* storedClosure(sql)
      yield* sql`DELETE FROM entity_closure WHERE depth = 2`
      yield* sql`INSERT INTO entity_closure VALUES ('sales-e0003', 'sales-e0001', 7)`
      yield* sql.withTransaction(rebuildClosure(sql))
      return { before, after: yield* storedClosure(sql), expected: yield* computeClosure(sql) }
    }))
    expect(rows.before).toHaveLength(6)
    expect(rows.after).toEqual(rows.before)
    expect(rows.after).toEqual(rows.expected)
  })
})

const codeOf = (exit: Exit.Exit<unknown, unknown>): string => {
  if (Exit.isSuccess(exit) || exit.cause._tag !== "Fail") throw new Error(`unexpected ${String(exit)}`)
  return (exit.cause.error as GraphRefusal).errorCode
}

describe("no move makes a cycle", () => {
  it("the trigger refuses a version whose parent is the entity itself or a descendant (raw SQL backstop)", async () => {
    const out = await run(config, Effect.gen(function*() {
      const sql = yield* sqlOf("sales")
      const a = yield* create({ name: "Acme" })
      const b = yield* create({ name: "Vertrieb", parent_id: a.id })
      const c = yield* create({ name: "Nord", parent_id: b.id })
      const insert = (parent: string) =>
        sql`INSERT INTO entity_version (id, version, type, name, aliases, parent_id, status, valid_from, change, channel, changed_by, changed_at, reason)
          VALUES (${a.id}, 2, 'department', 'Acme', '[]', ${parent}, 'unconfirmed', '2026-03-12', 'move', 'api', 'service:1', '2026-03-12T10:00:00Z', 'x')`
      const underChild = yield* Effect.flip(insert(c.id))
      const underItself = yield* Effect.flip(insert(a.id))
      const versions = yield* sql<{ n: number }>`SELECT count(*) AS n FROM entity_version WHERE id = ${a.id}`
      return { underChild, underItself, versions: versions[0]?.n }
    }))
    expect(out.underChild).toBeInstanceOf(SqlError)
    expect(triggerMessage(out.underChild)).toBe("cycle")
    // parent_id = id fails the row CHECK first
    expect(out.underItself).toBeInstanceOf(SqlError)
    expect(out.versions).toBe(1)
  })

  it("every refused move into the own subtree names both paths, and nothing moves", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat(), { minLength: 12, maxLength: 12 }), fc.nat(), fc.nat(), async (parents, xi, ti) => {
        const t = tempDir()
        const cfg = testConfig(t.dir)
        try {
          await run(cfg, Effect.gen(function*() {
            yield* Effect.flatMap(ScopeStore, (s) => s.create("sales"))
            const sql = yield* sqlOf("sales")
            const ids: Array<string> = []
            for (const [i, p] of parents.entries()) {
              const parent = ids.length === 0 ? null : ids[p % (ids.length + 1)] ?? null
              ids.push((yield* create({ name: `n${i}`, parent_id: parent, force: true, reason: "t" })).id)
            }
            const x = ids[xi % ids.length]!
            const below = (yield* sql<{ d: string }>`SELECT descendant_id AS d FROM entity_closure WHERE ancestor_id = ${x} ORDER BY depth, d`).map((r) => r.d)
            const target = below[ti % below.length]!
            const before = yield* storedClosure(sql)
            const exit = yield* Effect.exit(move(x, target))
            if (Exit.isSuccess(exit) || exit.cause._tag !== "Fail") return yield* Effect.dieMessage("a move into the own subtree was not refused")
            const e = exit.cause.error as GraphRefusal
            if (e.errorCode !== "cycle") return yield* Effect.dieMessage(`refused with ${e.errorCode}`)
            if (e.paths?.entity.at(-1)?.id !== x || e.paths.target.at(-1)?.id !== target) return yield* Effect.dieMessage("paths do not name both ends")
            if (JSON.stringify(yield* storedClosure(sql)) !== JSON.stringify(before)) return yield* Effect.dieMessage("closure changed")
          }))
        } finally {
          t.cleanup()
        }
      }),
      { numRuns: 10 }
    )
  }, 60_000)
})
