import { join } from "node:path"
import { Effect, Either } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { openConnection, writeTransaction } from "../../src/db/connection.js"
import { createPrivateFile } from "../../src/db/files.js"
import { tempDir } from "../support/env.js"
import { Database, type OtherConnection, otherConnection, tryCommit } from "../support/other-connection.js"

let dir: string
let cleanup: () => void
let file: string
beforeEach(() => {
  ;({ dir, cleanup } = tempDir())
  file = join(dir, "t.sqlite")
  createPrivateFile(file)
  const db = new Database(file)
  db.pragma("journal_mode = WAL")
  db.exec("CREATE TABLE t (x INTEGER)")
  db.close()
})
afterEach(() => cleanup())

/** A second connection to the file, as Litestream or a CLI process would hold; it never waits for a lock. */
const other = () => otherConnection(file)
const tryWrite = (db: OtherConnection): string => tryCommit(db, "INSERT INTO t VALUES (100)")

describe("writeTransaction (BEGIN IMMEDIATE)", () => {
  it("holds the write lock from its start: a commit by another connection between its read and its write cannot fail it", async () => {
    const db = other()
    const out = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const sql = yield* openConnection(file)
      const attempt = yield* writeTransaction(sql)(Effect.gen(function*() {
        const before = yield* sql<{ n: number }>`SELECT count(*) AS n FROM t`
        const attempt = tryWrite(db)
        yield* sql`INSERT INTO t VALUES (${(before[0]?.n ?? 0) + 1})`.raw
        return attempt
      }))
      return { attempt, rows: yield* sql<{ x: number }>`SELECT x FROM t ORDER BY x` }
    })))
    db.close()
    // the other connection waited its turn (busy_timeout 0: refused), and this transaction committed
    expect(out).toEqual({ attempt: "SQLITE_BUSY", rows: [{ x: 1 }] })
  })

  it("nests as a savepoint: an inner failure rolls back only the inner part", async () => {
    const rows = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const sql = yield* openConnection(file)
      const tx = writeTransaction(sql)
      yield* tx(Effect.gen(function*() {
        yield* sql`INSERT INTO t VALUES (1)`.raw
        yield* Effect.either(tx(Effect.zipRight(sql`INSERT INTO t VALUES (2)`.raw, Effect.fail("inner"))))
        yield* sql.withTransaction(sql`INSERT INTO t VALUES (3)`.raw)
      }))
      return yield* sql<{ x: number }>`SELECT x FROM t ORDER BY x`
    })))
    expect(rows).toEqual([{ x: 1 }, { x: 3 }])
  })

  it("a lock held past busy_timeout fails the transaction with SQLITE_BUSY as a SqlError, and writes nothing", async () => {
    const db = other()
    db.exec("BEGIN IMMEDIATE")
    const out = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const sql = yield* openConnection(file)
      yield* sql`PRAGMA busy_timeout = 50`.raw
      return yield* Effect.either(writeTransaction(sql)(sql`INSERT INTO t VALUES (1)`.raw))
    })))
    db.exec("ROLLBACK")
    expect(Either.isLeft(out) && out.left._tag).toBe("SqlError")
    expect(Either.isLeft(out) && String((out.left as { cause?: unknown }).cause)).toMatch(/locked|busy/i)
    expect(db.prepare("SELECT count(*) AS n FROM t").get()).toEqual({ n: 0 })
    db.close()
  })
})
