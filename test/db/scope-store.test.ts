import { closeSync, copyFileSync, existsSync, openSync, rmSync, statSync, writeFileSync, writeSync } from "node:fs"
import { join } from "node:path"
import { Deferred, Effect, Fiber, Option } from "effect"
import { holdingConnection } from "../../src/db/connection.js"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore, scopeFile } from "../../src/db/scope-store.js"
import { writeSearchLog } from "../../src/db/search-log.js"
import { decide } from "../../src/decision/decide.js"
import { propose } from "../../src/domain/proposals.js"
import { storeSource } from "../../src/domain/sources.js"
import { tempDir, testConfig } from "../support/env.js"
import { otherConnection, tryCommit } from "../support/other-connection.js"
import { mailProposal, mailSource, manualProposal } from "../support/fixtures.js"
import { captureLogs } from "../support/logs.js"
import { fileHash, run, runFail } from "../support/run.js"
import { latestVersion } from "../../src/db/migrate.js"
import { SCOPE_MIGRATIONS } from "../../src/db/migrations/scope/index.js"

let dir: string
let cleanup: () => void
let config: ReturnType<typeof testConfig>
const agent = { grantId: "person:1", channel: "mcp" as const }
const person = { grantId: "person:2", identity: "anna@example.com" }
const use = (scope: string) => Effect.flatMap(ScopeStore, (s) => s.use(scope))
const versionCount = (scope: string) =>
  Effect.flatMap(OpsStore, (o) => Effect.map(o.getBackupState(scope), Option.map((s) => s.version_count)))

beforeEach(() => {
  ;({ dir, cleanup } = tempDir())
  config = testConfig(dir)
})
afterEach(() => cleanup())

describe("creating a scope", () => {
  it("creates scopes/ (0700) and the file (0600) at the latest schema, with its backup_state row", async () => {
    await run(config, Effect.flatMap(ScopeStore, (s) => s.create("sales")))
    expect(statSync(join(dir, "scopes")).mode & 0o777).toBe(0o700)
    expect(statSync(scopeFile(dir, "sales")).mode & 0o777).toBe(0o600)
    expect(statSync(dir).mode & 0o777).toBe(0o700)
    expect(statSync(join(dir, "ops.sqlite")).mode & 0o777).toBe(0o600)
    const [meta, count] = await run(config, Effect.all([
      Effect.flatMap(use("sales"), ({ sql }) => sql<{ scope: string; schema_version: number }>`SELECT scope, schema_version FROM meta`),
      versionCount("sales")
    ]))
    expect(meta).toEqual([{ scope: "sales", schema_version: latestVersion(SCOPE_MIGRATIONS) }])
    expect(count).toEqual(Option.some(0))
  })

  it("refuses an existing file, an unconfigured scope, and a lost file that ops.sqlite remembers", async () => {
    await run(config, Effect.flatMap(ScopeStore, (s) => s.create("sales")))
    expect((await runFail(config, Effect.flatMap(ScopeStore, (s) => s.create("sales"))))._tag).toBe("ScopeExists")
    expect((await runFail(config, Effect.flatMap(ScopeStore, (s) => s.create("nowhere"))))._tag).toBe("ValidationFailed")
    await run(config, Effect.gen(function*() {
      yield* storeSource(mailSource(), "service:1")
      yield* propose(mailProposal(), agent)
    }))
    cleanupScopeFile("sales")
    const e = await runFail(config, Effect.flatMap(ScopeStore, (s) => s.create("sales")))
    expect(e).toMatchObject({ _tag: "ScopeExists" })
    expect(e.message).toContain("restore")
  })

  it("raises backup_state.version_count after every committed write", async () => {
    const counts = await run(config, Effect.gen(function*() {
      yield* Effect.flatMap(ScopeStore, (s) => s.create("sales"))
      yield* storeSource(mailSource(), "service:1")
      const a = yield* versionCount("sales")
      yield* propose(mailProposal(), agent)
      const b = yield* versionCount("sales")
      yield* decide("sales-0001", { decision: "confirm", version: 1 }, person)
      const c = yield* versionCount("sales")
      return [a, b, c]
    }))
    expect(counts).toEqual([Option.some(0), Option.some(1), Option.some(2)])
  })
})

describe("work in the background (log rows written after a long write)", () => {
  it("is waited for when the store closes: the rows that waited for a write are in the file though the service stopped right after the write", async () => {
    await run(config, Effect.flatMap(ScopeStore, (s) => s.create("sales")))
    // the rows of the searches answered during the write (hundreds in a redaction's apply)
    const rows = Array.from({ length: 300 }, (_, i) => ({
      id: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`, at: "2026-12-01T16:00:00.000Z", grantId: "service:1", channel: "api" as const,
      operation: "search" as const, outcome: 200, crossScope: false, refs: [], terms: [], variants: {}, stages: {}, inputSha256: null
    }))
    await run(config, Effect.gen(function*() {
      const store = yield* ScopeStore
      const { sql } = yield* store.use("sales")
      // a long write holds the connection (a redaction's apply); the row waits for it in the background
      const release = yield* Deferred.make<void>()
      const holding = yield* Effect.fork(holdingConnection(sql, Deferred.await(release)))
      yield* Effect.yieldNow()
      // (each row yields a moment first, as rows behind other work do)
      yield* store.inBackground(Effect.orDie(Effect.forEach(rows, (row) =>
        Effect.zipRight(Effect.sleep("1 millis"), store.append("sales", (h) => writeSearchLog(h.sql, row))), { discard: true })))
      yield* Effect.sleep("20 millis")
      expect((yield* sql<{ n: number }>`SELECT count(*) AS n FROM search_log`.pipe(Effect.timeoutOption("1 millis")))._tag).toBe("None")
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(holding)
      // the services close here, at once
    }))
    const ids = await run(config, Effect.flatMap(use("sales"), ({ sql }) => sql<{ id: string }>`SELECT id FROM search_log ORDER BY id`))
    expect(ids.map((r) => r.id)).toEqual(rows.map((r) => r.id))
  })
})

describe("append (one log row outside a transaction)", () => {
  it("commits the row at once, leaves backup_state as it was, and waits for a write in progress instead of joining it", async () => {
    const rows = await run(config, Effect.gen(function*() {
      const store = yield* ScopeStore
      yield* store.create("sales")
      yield* storeSource(mailSource(), "service:1")
      yield* propose(mailProposal(), agent)
      const before = yield* versionCount("sales")
      const entry = (id: string) => ({
        id, at: "2026-12-01T16:00:00.000Z", grantId: "service:1", channel: "api" as const, operation: "search" as const,
        outcome: 200, crossScope: false, refs: [], terms: [], variants: {}, stages: {}, inputSha256: null
      })
      yield* store.append("sales", ({ sql }) => writeSearchLog(sql, entry("00000000-0000-4000-8000-00000000000a")))
      expect(yield* versionCount("sales")).toEqual(before)
      // a write that fails after the append started waiting: its rollback must not take the row along
      const latch = yield* Effect.makeLatch(false)
      const failing = yield* Effect.fork(Effect.either(store.write("sales", ({ sql }) =>
        Effect.gen(function*() {
          yield* writeSearchLog(sql, entry("00000000-0000-4000-8000-00000000000b"))
          yield* latch.await
          return yield* Effect.fail("rolled back")
        }))))
      yield* Effect.yieldNow()
      const appended = yield* Effect.fork(store.append("sales", ({ sql }) => writeSearchLog(sql, entry("00000000-0000-4000-8000-00000000000c"))))
      yield* Effect.yieldNow()
      // it waits for the write's transaction (a row in it would go with the rollback)
      expect((yield* Fiber.status(appended))._tag).toBe("Suspended")
      yield* latch.open
      yield* Fiber.join(failing)
      yield* Fiber.join(appended)
      const { sql } = yield* store.use("sales")
      return (yield* sql<{ id: string }>`SELECT id FROM search_log ORDER BY id`).map((r) => r.id)
    }))
    expect(rows).toEqual(["00000000-0000-4000-8000-00000000000a", "00000000-0000-4000-8000-00000000000c"])
  })
})

describe("write holds the file's write lock from its start", () => {
  it("a commit by another connection (Litestream, a CLI) between a write's read and its first write cannot fail it", async () => {
    await run(config, Effect.flatMap(ScopeStore, (s) => s.create("sales")))
    // another process's connection; it never waits for a lock
    const other = otherConnection(scopeFile(dir, "sales"))
    const attempts: Array<string> = []
    const rows = await run(config, Effect.gen(function*() {
      const store = yield* ScopeStore
      yield* store.write("sales", ({ sql }) => Effect.gen(function*() {
        // the transaction's first read (as decide reads the rule), then another connection commits, then it writes
        yield* sql`SELECT count(*) AS n FROM search_log`
        attempts.push(tryCommit(other, "CREATE TABLE IF NOT EXISTS _other_process (x)"))
        yield* writeSearchLog(sql, {
          id: "00000000-0000-4000-8000-00000000000a", at: "2026-12-01T16:00:00.000Z", grantId: "service:1", channel: "api",
          operation: "search", outcome: 200, crossScope: false, refs: [], terms: [], variants: {}, stages: {}, inputSha256: null
        })
      }))
      const { sql } = yield* store.use("sales")
      return (yield* sql<{ id: string }>`SELECT id FROM search_log`).map((r) => r.id)
    }))
    other.close()
    // the other connection found the lock taken (it would wait its busy_timeout); the write committed
    expect(attempts).toEqual(["SQLITE_BUSY"])
    expect(rows).toEqual(["00000000-0000-4000-8000-00000000000a"])
  })
})

const cleanupScopeFile = (scope: string) => {
  for (const suffix of ["", "-wal", "-shm"]) {
    const f = scopeFile(dir, scope) + suffix
    if (existsSync(f)) rmSync(f)
  }
}

describe("the open check locks a scope (§4.3)", () => {
  beforeEach(async () => {
    await run(config, Effect.gen(function*() {
      const s = yield* ScopeStore
      yield* s.create("sales")
      yield* storeSource(mailSource(), "service:1")
      yield* propose(mailProposal(), agent)
    }))
  })

  it("a configured scope without a file answers scope-locked until it is created", async () => {
    await run(config, Effect.gen(function*() {
      const missing = yield* Effect.flip(use("ops"))
      expect(missing).toMatchObject({ _tag: "ScopeLocked", scope: "ops" })
      yield* Effect.flatMap(ScopeStore, (s) => s.create("ops"))
      const h = yield* use("ops")
      expect(h.scope).toBe("ops")
    }))
  })

  it("a lost file that ops.sqlite remembers rule versions of is locked from the start: error line, status, 503", async () => {
    cleanupScopeFile("sales")
    const logs = captureLogs()
    await run(config, Effect.gen(function*() {
      const states = yield* Effect.flatMap(ScopeStore, (s) => s.states)
      expect(states.find((x) => x.scope === "sales")).toEqual({
        scope: "sales", created: false, locked: true,
        lock_reason: "file missing: ops.sqlite remembers 1 rule versions; restore the file (groundnote restore, docs/backup.md)"
      })
      const e = yield* Effect.flip(use("sales"))
      expect(e).toMatchObject({ _tag: "ScopeLocked", scope: "sales" })
      expect(e.message).toBe("this scope is locked; an operator must check its file (see the process log)")
      // a scope never written is not lost: it waits for `scope create`
      expect(states.find((x) => x.scope === "ops")).toEqual({ scope: "ops", created: false, locked: false, lock_reason: null })
      expect((yield* Effect.flip(use("ops"))).message).toContain("groundnote scope create")
    }), logs.layer)
    const locked = logs.lines.filter((l) => l.message === "scope locked")
    expect(locked.map((l) => [l.level, l.annotations.scope])).toEqual([["ERROR", "sales"]])
    expect(existsSync(scopeFile(dir, "sales"))).toBe(false)
  })

  it("a file lost while the service runs, before its first use, locks the scope on that use", async () => {
    const logs = captureLogs()
    await run(config, Effect.gen(function*() {
      cleanupScopeFile("sales")
      expect(yield* Effect.flip(use("sales"))).toMatchObject({ _tag: "ScopeLocked", message: "this scope is locked; an operator must check its file (see the process log)" })
      const states = yield* Effect.flatMap(ScopeStore, (s) => s.states)
      expect(states.find((x) => x.scope === "sales")).toMatchObject({ created: false, locked: true })
    }), logs.layer)
    expect(logs.lines.filter((l) => l.message === "scope locked").map((l) => l.annotations.scope)).toEqual(["sales"])
  })

  it("a file copied back from an older state locks the scope until restart", async () => {
    const old = join(dir, "old.sqlite")
    copyFileSync(scopeFile(dir, "sales"), old)
    await run(config, Effect.gen(function*() {
      yield* decide("sales-0001", { decision: "confirm", version: 1 }, person)
      yield* propose(manualProposal("A second rule in the scope now"), agent)
    }))
    const good = join(dir, "good.sqlite")
    copyFileSync(scopeFile(dir, "sales"), good)
    copyFileSync(old, scopeFile(dir, "sales"))
    const logs = captureLogs()
    await run(config, Effect.gen(function*() {
      const e = yield* Effect.flip(use("sales"))
      expect(e).toMatchObject({ _tag: "ScopeLocked", scope: "sales" })
      expect(e.message).not.toContain("rule versions")
      // Still locked in this process after the good file is back: only a restart clears it.
      copyFileSync(good, scopeFile(dir, "sales"))
      expect((yield* Effect.flip(use("sales")))._tag).toBe("ScopeLocked")
      const states = yield* Effect.flatMap(ScopeStore, (s) => s.states)
      expect(states.find((x) => x.scope === "sales")).toMatchObject({ locked: true, created: true })
    }).pipe(Effect.provide(logs.layer)))
    const line = logs.lines.find((l) => l.message === "scope locked")
    expect(line?.level).toBe("ERROR")
    expect(String(line?.annotations.reason)).toContain("fewer rule versions (1) than ops.sqlite remembers (3)")
    const h = await run(config, Effect.map(use("sales"), (x) => x.scope))
    expect(h).toBe("sales")
  })

  it("a foreign file renamed into scopes/ is refused by meta.scope", async () => {
    copyFileSync(scopeFile(dir, "sales"), scopeFile(dir, "ops"))
    const logs = captureLogs()
    const e = await runFail(config, use("ops").pipe(Effect.provide(logs.layer)))
    expect(e._tag).toBe("ScopeLocked")
    expect(String(logs.lines.find((l) => l.message === "scope locked")?.annotations.reason)).toContain("meta.scope is \"sales\"")
  })

  it("an unknown higher schema_version locks the scope and changes nothing", async () => {
    await run(config, Effect.flatMap(use("sales"), ({ sql }) => sql`UPDATE meta SET schema_version = 99`.raw))
    const before = fileHash(scopeFile(dir, "sales"))
    const logs = captureLogs()
    expect((await runFail(config, use("sales").pipe(Effect.provide(logs.layer))))._tag).toBe("ScopeLocked")
    expect(String(logs.lines.find((l) => l.message === "scope locked")?.annotations.reason)).toContain("unknown schema_version 99")
    expect(fileHash(scopeFile(dir, "sales"))).toBe(before)
  })

  it("a corrupt file fails quick_check and locks the scope", async () => {
    const file = scopeFile(dir, "sales")
    const size = statSync(file).size
    const fd = openSync(file, "r+")
    const garbage = Buffer.alloc(4096, 0x5a)
    for (let off = 4096; off < size; off += 8192) writeSync(fd, garbage, 0, Math.min(4096, size - off), off)
    closeSync(fd)
    expect((await runFail(config, use("sales")))._tag).toBe("ScopeLocked")
  })

  it("runs quick_check on a thread of its own: this thread keeps serving while a scope opens", async () => {
    const ticks = await run(config, Effect.gen(function*() {
      let n = 0
      const timer = setInterval(() => n++, 1)
      const h = yield* Effect.ensuring(use("sales"), Effect.sync(() => clearInterval(timer)))
      expect(h.scope).toBe("sales")
      return n
    }))
    // on this thread the whole open check is one synchronous run: no timer could fire
    expect(ticks).toBeGreaterThan(0)
  })

  it("a file that is not SQLite locks the scope", async () => {
    writeFileSync(scopeFile(dir, "sales"), "this is not a database at all".repeat(100))
    expect((await runFail(config, use("sales")))._tag).toBe("ScopeLocked")
  })

  it("ignores files of unconfigured scopes with a warning", async () => {
    copyFileSync(scopeFile(dir, "sales"), join(dir, "scopes", "stray.sqlite"))
    const logs = captureLogs()
    await run(config, Effect.flatMap(ScopeStore, (s) => s.states), logs.layer)
    expect(logs.lines).toContainEqual(expect.objectContaining({ level: "WARN", message: "scope file ignored: not a configured scope", annotations: { file: "stray.sqlite" } }))
  })
})
