/**
 * The noted changes as the carriers take them (stamp-cache.ts CarriedChanges): every carrier of a
 * cache gets the same token sets of the chain, made once, and they are the notes' tokens — the
 * touched ones of every change, and each rewritten row before the first change and after the last.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { ScopeStore } from "../../../src/db/scope-store.js"
import {
  cachePart,
  type CarriedChanges,
  carryPart,
  type IndexChange,
  noteIndexChange,
  readIndexStamp,
  refreshStampCache
} from "../../../src/search/lexical/stamp-cache.js"
import { tempDir } from "../../support/env.js"
import { run, sqlOf } from "../../support/run.js"
import { lexConfig } from "./support.js"

let dir: string
let cleanup: () => void
beforeEach(() => {
  ;({ dir, cleanup } = tempDir())
})
afterEach(() => cleanup())

/** What each of two carriers was handed, by carrier. */
const handed: Record<"a" | "b", Array<CarriedChanges>> = { a: [], b: [] }
for (const name of ["a", "b"] as const) {
  carryPart(`test-${name}`, (part, carried) => {
    handed[name].push(carried)
    // both ask for the sets, as the vocabulary and the phrase rows do
    carried.touched()
    carried.rows()
    return part
  })
}

/** A write that moves the index stamp (a lex_doc row of `seq`), noted with `change`. */
const noted = (sql: SqlClient, seq: number, change: IndexChange) =>
  Effect.gen(function*() {
    const from = yield* readIndexStamp(sql)
    yield* sql`INSERT OR REPLACE INTO lex_doc (seq, rule_id, version, status, valid_from, valid_until)
      VALUES (${seq}, ${`sales-${seq}`}, 1, 'confirmed', '2026-01-01', NULL)`.raw
    const to = yield* readIndexStamp(sql)
    if (from === undefined || to === undefined) throw new Error("no index stamp")
    noteIndexChange(from, to, change)
  })

describe("the changes handed to the carriers", () => {
  it("are one object for every carrier, its token sets made once: the touched tokens and each row before and after", async () => {
    await run(lexConfig(dir), Effect.gen(function*() {
      yield* Effect.flatMap(ScopeStore, (s) => s.create("sales"))
      const sql = yield* sqlOf("sales")
      const keep = () => {
        cachePart(sql, "test-a", () => ({}))
        cachePart(sql, "test-b", () => ({}))
      }
      yield* refreshStampCache(sql)
      keep()

      // two writes of row 7 before the next read: a chain of two notes
      yield* noted(sql, 7, { words: ["preis", "rabatt"], stems: ["preis", "_rabatt"], seqs: [7], docs: 1, row: { words: "02", stems: "12" } })
      yield* noted(sql, 7, { words: ["rabatt", "skonto"], stems: ["skonto"], seqs: [7], docs: 0, row: { words: "21", stems: "1" } })
      yield* refreshStampCache(sql)
      expect(handed.a).toHaveLength(1)
      expect(handed.b).toHaveLength(1)
      const chain = handed.a[0] as CarriedChanges
      expect(handed.b[0]).toBe(chain)
      expect(chain.touched()).toBe(chain.touched())
      expect(chain.rows()).toBe(chain.rows())
      expect(chain.changes.map((c) => c.words)).toEqual([["preis", "rabatt"], ["rabatt", "skonto"]])
      expect([...chain.touched().lex_word]).toEqual(["preis", "rabatt", "skonto"])
      expect([...chain.touched().lex_stem]).toEqual(["preis", "_rabatt", "skonto"])
      const row = chain.rows()
      expect([...row?.lex_word.get(7)?.before ?? []]).toEqual(["preis", "rabatt"])
      expect([...row?.lex_word.get(7)?.after ?? []]).toEqual(["rabatt", "skonto"])
      expect([...row?.lex_stem.get(7)?.before ?? []]).toEqual(["_rabatt"])
      expect([...row?.lex_stem.get(7)?.after ?? []]).toEqual(["skonto"])

      // one note: its own sets, the same for every carrier
      yield* noted(sql, 8, { words: ["frist"], stems: ["frist"], seqs: [8], docs: 1, row: { words: "1", stems: "1" } })
      yield* refreshStampCache(sql)
      const one = handed.a[1] as CarriedChanges
      expect(handed.b[1]).toBe(one)
      expect([...one.touched().lex_word]).toEqual(["frist"])
      expect([...one.rows()?.lex_stem.get(8)?.after ?? []]).toEqual(["frist"])

      // a note that does not tell its row: no rows for the chain
      yield* noted(sql, 9, { words: ["muster"], stems: [], seqs: [9], docs: 1 })
      yield* refreshStampCache(sql)
      const unknown = handed.a[2] as CarriedChanges
      expect(unknown.rows()).toBeUndefined()
      expect([...unknown.touched().lex_word]).toEqual(["muster"])
    }))
  })
})
