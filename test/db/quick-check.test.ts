/**
 * quickCheck (src/db/quick-check.ts): PRAGMA quick_check of a file on a thread of its own, on
 * real SQLite files — a sound file answers ["ok"], a damaged page is reported, a file that is not
 * a database fails with SQLite's message.
 */
import { closeSync, openSync, statSync, writeFileSync, writeSync } from "node:fs"
import { join } from "node:path"
import { Effect, Either } from "effect"
import { openConnection } from "../../src/db/connection.js"
import { createPrivateFile } from "../../src/db/files.js"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { quickCheck } from "../../src/db/quick-check.js"
import { tempDir } from "../support/env.js"

let dir: string
let cleanup: () => void
beforeEach(() => {
  ;({ dir, cleanup } = tempDir())
})
afterEach(() => cleanup())

/** A database of 2,000 rows with an index (a few hundred pages), closed (its WAL checkpointed). */
const makeFile = async (name: string) => {
  const file = join(dir, name)
  createPrivateFile(file)
  await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const sql = yield* openConnection(file)
    yield* sql`CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)`
    yield* sql`CREATE INDEX t_body ON t (body)`
    yield* sql.withTransaction(Effect.forEach(Array.from({ length: 2000 }, (_, i) => i), (i) =>
      sql`INSERT INTO t (body) VALUES (${`row ${i} ${"x".repeat(200)} ${i}`})`, { discard: true }))
  })))
  return file
}

describe("quickCheck", () => {
  it("answers [\"ok\"] for a sound file", async () => {
    expect(await Effect.runPromise(quickCheck(await makeFile("sound.sqlite")))).toEqual(["ok"])
  })

  it("reports a damaged page (rows other than ok, or SQLite's error)", async () => {
    const file = await makeFile("damaged.sqlite")
    const size = statSync(file).size
    const fd = openSync(file, "r+")
    // the last page: a leaf of the table or its index, not the schema on page 1
    writeSync(fd, Buffer.alloc(4096, 0x5a), 0, 4096, size - 4096)
    closeSync(fd)
    const out = await Effect.runPromise(Effect.either(quickCheck(file)))
    if (Either.isRight(out)) expect(out.right).not.toEqual(["ok"])
    else expect(out.left.message.length).toBeGreaterThan(0)
  })

  it("fails with SQLite's message for a file that is not a database", async () => {
    const file = join(dir, "text.sqlite")
    writeFileSync(file, "this is not a database at all".repeat(200))
    const out = await Effect.runPromise(Effect.either(quickCheck(file)))
    expect(Either.isLeft(out) && out.left.message).toContain("not a database")
  })
})
