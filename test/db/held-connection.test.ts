import { join } from "node:path"
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect, Either, Tracer } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { openConnection, writeTransaction } from "../../src/db/connection.js"
import { createPrivateFile } from "../../src/db/files.js"
import { rowsOf, runOf, valuesOf } from "../../src/db/held-connection.js"
import { tempDir } from "../support/env.js"
import { Database } from "../support/other-connection.js"

let dir: string
let cleanup: () => void
const fileOf = (name: string): string => {
  const file = join(dir, name)
  createPrivateFile(file)
  const db = new Database(file)
  db.pragma("journal_mode = WAL")
  db.exec(`CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2)`)
  db.close()
  return file
}
beforeEach(() => {
  ;({ dir, cleanup } = tempDir())
})
afterEach(() => cleanup())

/** The names of the spans `effect` opened (a tracer that only records them). */
const spansOf = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<{ value: A; spans: Array<string> }, E> => {
  const spans: Array<string> = []
  const tracer = Tracer.make({
    span: (name, parent, context, links, startTime, kind) => {
      spans.push(name)
      const span: Tracer.Span = {
        _tag: "Span", name, spanId: String(spans.length), traceId: "t", parent, context, status: { _tag: "Started", startTime },
        attributes: new Map(), links, sampled: true, kind,
        end: (endTime, exit) => {
          ;(span as { status: Tracer.SpanStatus }).status = { _tag: "Ended", startTime, endTime, exit }
        },
        attribute: () => undefined, event: () => undefined, addLinks: () => undefined
      }
      return span
    },
    context: (f) => f()
  })
  return Effect.map(Effect.withTracer(effect, tracer), (value) => ({ value, spans }))
}

const xs = (sql: SqlClient) => rowsOf(sql, sql<{ x: number }>`SELECT x FROM t ORDER BY x`)

describe("statements on the connection a transaction holds", () => {
  it("inside this fiber's transaction run on its connection without the statement's span; outside it, as the client runs them", async () => {
    const file = fileOf("a.sqlite")
    const out = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const sql = yield* openConnection(file)
      const outside = yield* spansOf(xs(sql))
      const inside = yield* spansOf(writeTransaction(sql)(Effect.gen(function*() {
        yield* runOf(sql, sql`INSERT INTO t VALUES (${3})`)
        const rows = yield* xs(sql)
        const values = yield* valuesOf(sql, sql.unsafe("SELECT count(*), max(x) FROM t"))
        return { rows, values }
      })))
      return { outside, inside, after: yield* sql<{ x: number }>`SELECT x FROM t ORDER BY x` }
    })))
    expect(out.outside.value).toEqual([{ x: 1 }, { x: 2 }])
    expect(out.outside.spans).toEqual(["sql.execute"])
    // the insert is seen by the transaction's own reads, and committed with it
    expect(out.inside.value.rows).toEqual([{ x: 1 }, { x: 2 }, { x: 3 }])
    expect(out.inside.value.values).toEqual([[3, 3]])
    expect(out.inside.spans.filter((s) => s === "sql.execute")).toEqual([])
    expect(out.after).toEqual([{ x: 1 }, { x: 2 }, { x: 3 }])
  })

  it("a write through the transaction's connection is rolled back with it", async () => {
    const file = fileOf("a.sqlite")
    const out = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const sql = yield* openConnection(file)
      const failed = yield* Effect.either(writeTransaction(sql)(Effect.gen(function*() {
        yield* runOf(sql, sql`INSERT INTO t VALUES (${3})`)
        return yield* Effect.fail("refused" as const)
      })))
      return { failed, after: yield* xs(sql) }
    })))
    expect(out.failed).toEqual(Either.left("refused"))
    expect(out.after).toEqual([{ x: 1 }, { x: 2 }])
  })

  it("inside a transaction of another client's connection, a statement takes the client's own path", async () => {
    const a = fileOf("a.sqlite")
    const b = fileOf("b.sqlite")
    const out = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const sqlA = yield* openConnection(a)
      const sqlB = yield* openConnection(b)
      return yield* spansOf(writeTransaction(sqlA)(Effect.gen(function*() {
        yield* runOf(sqlA, sqlA`INSERT INTO t VALUES (${7})`)
        // what the client itself does here, and what rowsOf does
        const direct = yield* sqlB<{ x: number }>`SELECT x FROM t ORDER BY x`
        const viaRowsOf = yield* xs(sqlB)
        return { direct, viaRowsOf }
      })))
    })))
    expect(out.value.viaRowsOf).toEqual(out.value.direct)
    expect(out.spans.filter((s) => s === "sql.execute")).toHaveLength(2)
  })

  it("a failing statement is the same SqlError on both paths", async () => {
    const file = fileOf("a.sqlite")
    const out = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const sql = yield* openConnection(file)
      const bad = () => rowsOf(sql, sql.unsafe("SELECT nope FROM t"))
      const outside = yield* Effect.flip(bad())
      const inside = yield* Effect.flip(writeTransaction(sql)(bad()))
      return { outside, inside }
    })))
    expect(out.outside._tag).toBe("SqlError")
    expect(out.inside._tag).toBe("SqlError")
    expect(String(out.inside.cause)).toMatch(/no such column: nope/)
  })
})
