/**
 * The redaction ledger on real files (gaps.md §12 "Nothing comes back"): what brings a file level
 * with it, a redaction the ledger missed added as the scope opens, a ledger the file cannot take
 * locking the scope with nothing written, and doctor's facts of a file behind its ledger.
 */
import { copyFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { Effect, Either, Exit } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import type { LedgerRedaction } from "../../src/db/ops-store.js"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore, scopeFile } from "../../src/db/scope-store.js"
import { planLevel } from "../../src/redaction/ledger.js"
import { readLedgerFacts } from "../../src/redaction/ledger-facts.js"
import { countIn } from "../backup/support.js"
import { tempDir, testConfig } from "../support/env.js"
import { run } from "../support/run.js"
import { redactTerm, seedNamed, TERM } from "./ledger-support.js"

let dir: string
let cleanup: () => void
let config: ReturnType<typeof testConfig>
beforeEach(() => {
  ;({ dir, cleanup } = tempDir("gn-ledger-"))
  config = testConfig(dir)
})
afterEach(() => cleanup())

const entry = (seq: number, over: Partial<LedgerRedaction> = {}): LedgerRedaction => ({
  scope: "sales", seq, id: `sales-x${String(seq).padStart(4, "0")}`, term_sha256: "b".repeat(64), places: 1,
  requested_by: "person:1", decided_by: "dpo@example.com", reason: "erasure request 2026-17", at: "2026-03-12T09:15:00Z",
  place_list: [{ table: "source", key: ["mail:<nowhere@example.com>"], column: "excerpt", ranges: [[0, 5]] }],
  ...over
})

describe("planLevel", () => {
  it("applies the ledger's redactions after the file's last, records the file's the ledger lacks", () => {
    const plan = Effect.runSync(planLevel([entry(1), entry(2)], [entry(1), entry(3), entry(4)]))
    expect(plan.replay.map((r) => r.id)).toEqual(["sales-x0003", "sales-x0004"])
    expect(plan.record.map((r) => r.id)).toEqual(["sales-x0002"])
    expect(Effect.runSync(planLevel([entry(1)], [entry(1)]))).toEqual({ replay: [], record: [] })
  })

  it("refuses a ledger with a gap after the file's last and a redaction that is not the file's", () => {
    const gap = Effect.runSync(Effect.either(planLevel([entry(1)], [entry(1), entry(3)])))
    expect(Either.isLeft(gap) && gap.left.reason).toBe("the ledger holds sales-x0003 but neither it nor the file holds sales-x0002: sales-x0003 cannot be applied again")
    const other = Effect.runSync(Effect.either(planLevel([entry(1)], [entry(1, { term_sha256: "c".repeat(64) })])))
    expect(Either.isLeft(other) && other.left.reason).toContain("is not the ledger's sales-x0001")
  })
})

describe("a scope file as it opens", () => {
  it("adds a redaction the ledger lacks (the process stopped between the scope's commit and the ledger write)", async () => {
    await run(config, seedNamed())
    const applied = await run(config, redactTerm(TERM, "sales", false))
    expect(await run(config, Effect.flatMap(OpsStore, (o) => o.listLedger("sales")))).toEqual([])
    const ledger = await run(config, Effect.gen(function*() {
      yield* (yield* ScopeStore).use("sales")
      return yield* (yield* OpsStore).listLedger("sales")
    }))
    expect(ledger.map((r) => [r.id, r.term_sha256, r.places])).toEqual([["sales-x0001", applied.redaction.term_sha256, applied.redaction.places]])
    expect([...ledger[0]!.place_list].sort((a, b) => a.column.localeCompare(b.column)))
      .toEqual([...applied.places].sort((a, b) => a.column.localeCompare(b.column)))
  })

  it("locks the scope when the ledger holds a redaction the file cannot take, and writes nothing", async () => {
    await run(config, seedNamed())
    await run(config, Effect.flatMap(OpsStore, (o) => o.appendLedger(entry(1))))
    const out = await run(config, Effect.gen(function*() {
      const store = yield* ScopeStore
      const opened = yield* Effect.exit(store.use("sales"))
      return { opened, states: yield* store.states }
    }))
    expect(Exit.isFailure(out.opened) && out.opened.cause._tag === "Fail" && out.opened.cause.error._tag).toBe("ScopeLocked")
    expect(out.states.find((s) => s.scope === "sales")?.lock_reason).toBe(
      "redaction ledger: the ledger's sales-x0001 cannot be applied to this file: no row [\"mail:<nowhere@example.com>\"] in source")
    const file = scopeFile(dir, "sales")
    expect(await countIn(file, "redaction")).toBe(0)
    expect(await countIn(file, "redaction_place")).toBe(0)
  })

  it("doctor's facts: a file put back from before a redaction is behind its ledger until the scope opens", async () => {
    await run(config, seedNamed())
    const live = scopeFile(dir, "sales")
    const old = join(dir, "before.sqlite")
    copyFileSync(live, old)
    await run(config, redactTerm(TERM))
    expect(await Effect.runPromise(readLedgerFacts(dir, ["sales", "ops"])))
      .toEqual({ read: true, scopes: [{ scope: "sales", behind: [], unrecorded: [], held: 1 }] })
    for (const f of [`${live}-wal`, `${live}-shm`]) rmSync(f, { force: true })
    copyFileSync(old, live)
    expect(await Effect.runPromise(readLedgerFacts(dir, ["sales"])))
      .toEqual({ read: true, scopes: [{ scope: "sales", behind: ["sales-x0001"], unrecorded: [], held: 0 }] })
    await run(config, Effect.flatMap(ScopeStore, (s) => s.use("sales")))
    expect(await Effect.runPromise(readLedgerFacts(dir, ["sales"])))
      .toEqual({ read: true, scopes: [{ scope: "sales", behind: [], unrecorded: [], held: 1 }] })
    expect(await Effect.runPromise(readLedgerFacts(join(dir, "nowhere"), ["sales"])))
      .toEqual({ read: false, why: `there is no ${join(dir, "nowhere", "ops.sqlite")}` })
  })
})
