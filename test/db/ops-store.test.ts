import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { SqlError } from "@effect/sql/SqlError"
import { Effect, Exit, Option } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { triggerMessage } from "../../src/db/errors.js"
import { BEARER_RE, hashBearer, OpsStore } from "../../src/db/ops-store.js"
import { tempDir, testConfig } from "../support/env.js"
import { run, runFail } from "../support/run.js"

let dir: string
let cleanup: () => void
let config: ReturnType<typeof testConfig>
beforeEach(() => {
  ;({ dir, cleanup } = tempDir())
  config = testConfig(dir)
})
afterEach(() => cleanup())

const ops = OpsStore
const ROOT = fileURLToPath(new URL("../..", import.meta.url))

describe("grants", () => {
  it("creates a person grant with a lowercased e-mail and canonical rights", async () => {
    const g = await run(config, Effect.flatMap(ops, (o) =>
      o.createGrant({ kind: "person", auth: "email", identity: "Anna@Example.com", scopes: ["sales", "ops", "sales"], rights: ["decide", "read"] })))
    expect(g).toMatchObject({
      id: "person:1", kind: "person", auth: "email", identity: "anna@example.com", fingerprint: null,
      scopes: ["ops", "sales"], rights: ["read", "decide"], label: null, active: true, disabled_at: null
    })
    expect(g).not.toHaveProperty("token")
  })

  it("keeps redact as its own right, last in the canonical order; decide does not bring it", async () => {
    const g = await run(config, Effect.flatMap(ops, (o) => Effect.all([
      o.createGrant({ kind: "person", auth: "email", identity: "dpo@example.com", scopes: ["sales"], rights: ["redact", "read", "decide"] }),
      o.createGrant({ kind: "person", auth: "email", identity: "approver@example.com", scopes: ["sales"], rights: ["decide", "read"] })
    ])))
    expect(g.map((x) => x.rights)).toEqual([["read", "decide", "redact"], ["read", "decide"]])
    const found = await run(config, Effect.flatMap(ops, (o) => o.findActiveGrant("email", "approver@example.com")))
    expect(Option.getOrThrow(found).rights).not.toContain("redact")
  })

  it("creates a bearer grant: gn_ + 43 base64url chars, shown once, stored only as SHA-256 hex", async () => {
    const g = await run(config, Effect.flatMap(ops, (o) =>
      o.createGrant({ kind: "service", auth: "bearer", scopes: ["sales"], rights: ["read", "propose"], label: "feeder" })))
    if (!("token" in g)) throw new Error("no token")
    expect(g.token).toMatch(BEARER_RE)
    expect(g.token.length).toBe(46)
    expect(g).toMatchObject({ id: "service:1", identity: null, fingerprint: `sha256:${hashBearer(g.token).slice(0, 12)}` })
    const listed = await run(config, Effect.flatMap(ops, (o) => o.listGrants()))
    expect(listed[0]).not.toHaveProperty("token")
    const found = await run(config, Effect.flatMap(ops, (o) => o.findActiveGrant("bearer", hashBearer(g.token))))
    expect(Option.getOrThrow(found)).toMatchObject({ id: "service:1", rights: ["read", "propose"] })
    for (const f of ["ops.sqlite", "ops.sqlite-wal"]) {
      const bytes = (() => { try { return readFileSync(join(dir, f)).toString("latin1") } catch { return "" } })()
      expect(bytes).not.toContain(g.token)
      expect(bytes).not.toContain(g.token.slice(3))
    }
  })

  it("numbers grants <kind>:<seq> across kinds", async () => {
    const ids = await run(config, Effect.flatMap(ops, (o) => Effect.all([
      o.createGrant({ kind: "person", auth: "email", identity: "a@x.com", scopes: ["sales"], rights: ["read"] }),
      o.createGrant({ kind: "service", auth: "access-service", identity: "feeder.access", scopes: ["sales"], rights: ["propose"] }),
      o.createGrant({ kind: "person", auth: "email", identity: "b@x.com", scopes: ["sales"], rights: ["read"] })
    ]).pipe(Effect.map((gs) => gs.map((g) => g.id)))))
    expect(ids).toEqual(["person:1", "service:2", "person:3"])
  })

  const refusals: ReadonlyArray<[string, Parameters<OpsStore["createGrant"]>[0]]> = [
    ["a service with decide", { kind: "service", auth: "bearer", scopes: ["sales"], rights: ["read", "decide"] }],
    ["a service with redact", { kind: "service", auth: "bearer", scopes: ["sales"], rights: ["read", "redact"] }],
    ["an Access service with redact", { kind: "service", auth: "access-service", identity: "feeder.access", scopes: ["sales"], rights: ["redact"] }],
    ["a person with a bearer", { kind: "person", auth: "bearer", scopes: ["sales"], rights: ["read"] }],
    ["a service with auth email", { kind: "service", auth: "email", identity: "a@x.com", scopes: ["sales"], rights: ["read"] }],
    ["an unconfigured scope", { kind: "person", auth: "email", identity: "a@x.com", scopes: ["nowhere"], rights: ["read"] }],
    ["a bearer with an identity", { kind: "service", auth: "bearer", identity: "x", scopes: ["sales"], rights: ["read"] }],
    ["a person without an identity", { kind: "person", auth: "email", scopes: ["sales"], rights: ["read"] }],
    ["a non-ASCII e-mail", { kind: "person", auth: "email", identity: "änna@x.com", scopes: ["sales"], rights: ["read"] }]
  ]
  for (const [name, input] of refusals) {
    it(`refuses ${name} with validation-failed and writes nothing`, async () => {
      const e = await runFail(config, Effect.flatMap(ops, (o) => o.createGrant(input)))
      expect(e._tag).toBe("ValidationFailed")
      expect(await run(config, Effect.flatMap(ops, (o) => o.listGrants()))).toEqual([])
    })
  }

  it("refuses a second active grant for the same identity; after disabling it a new one is allowed", async () => {
    const input = { kind: "person" as const, auth: "email" as const, identity: "a@x.com", scopes: ["sales"], rights: ["read" as const] }
    await run(config, Effect.flatMap(ops, (o) => o.createGrant(input)))
    expect((await runFail(config, Effect.flatMap(ops, (o) => o.createGrant({ ...input, identity: "A@X.com" }))))._tag).toBe("GrantExists")
    const disabled = await run(config, Effect.flatMap(ops, (o) => o.disableGrant("person:1")))
    expect(disabled).toMatchObject({ active: false })
    expect(disabled.disabled_at).not.toBeNull()
    const again = await run(config, Effect.flatMap(ops, (o) => o.disableGrant("person:1")))
    expect(again.disabled_at).toBe(disabled.disabled_at)
    expect((await run(config, Effect.flatMap(ops, (o) => o.createGrant(input)))).id).toBe("person:2")
    expect(Option.isNone(await run(config, Effect.flatMap(ops, (o) => o.findActiveGrant("email", "nobody@x.com"))))).toBe(true)
  })

  it("renames by disabling the row and inserting a copy with the new label", async () => {
    const g = await run(config, Effect.flatMap(ops, (o) =>
      o.createGrant({ kind: "service", auth: "bearer", scopes: ["sales"], rights: ["propose"], label: "old" })))
    const renamed = await run(config, Effect.flatMap(ops, (o) => o.renameGrant("service:1", "new name")))
    expect(renamed).toMatchObject({ id: "service:2", label: "new name", active: true, fingerprint: g.fingerprint })
    const all = await run(config, Effect.flatMap(ops, (o) => o.listGrants()))
    expect(all.map((x) => [x.id, x.active, x.label])).toEqual([["service:1", false, "old"], ["service:2", true, "new name"]])
    expect((await runFail(config, Effect.flatMap(ops, (o) => o.renameGrant("service:1", "x"))))._tag).toBe("NotFound")
    expect((await runFail(config, Effect.flatMap(ops, (o) => o.disableGrant("service:9"))))._tag).toBe("NotFound")
  })
})

describe("two processes writing ops.sqlite (the CLI beside the server)", () => {
  it("grant writes that read before they write never fail while another process commits in between", async () => {
    await run(config, Effect.flatMap(ops, (o) => o.listGrants()))
    const file = join(dir, "ops.sqlite")
    // the other process commits as fast as it can until told to stop; it waits for the lock when it is taken
    const script = `const Database = require("better-sqlite3"); const db = new Database(${JSON.stringify(file)});
      db.pragma("busy_timeout = 5000"); db.exec("CREATE TABLE IF NOT EXISTS _other_process (x)");
      const add = db.prepare("INSERT INTO _other_process VALUES (1)"); let n = 0; let stop = false;
      process.stdin.on("data", () => { stop = true }); process.stdout.write("ready\\n");
      const loop = () => { const end = Date.now() + 20; while (Date.now() < end) { add.run(); n++ }
        if (stop) { process.stdout.write(n + "\\n"); db.close(); process.exit(0) } setImmediate(loop) }; loop()`
    const child = spawn(process.execPath, ["-e", script], { cwd: ROOT, stdio: ["pipe", "pipe", "inherit"] })
    const lines: Array<string> = []
    const line = () => new Promise<string>((resolve) => {
      const check = () => (lines.length > 0 ? resolve(lines.shift() as string) : setTimeout(check, 5))
      check()
    })
    child.stdout.on("data", (b: Buffer) => lines.push(...b.toString().split("\n").filter((l) => l !== "")))
    let committed: number
    let outcomes: Array<string>
    try {
      expect(await line()).toBe("ready")
      outcomes = await run(config, Effect.flatMap(ops, (o) => Effect.forEach(Array.from({ length: 40 }, (_, i) => i), (i) =>
        Effect.either(Effect.gen(function*() {
          const g = yield* o.createGrant({ kind: "service", auth: "bearer", scopes: ["sales"], rights: ["read"], label: `feeder ${i}` })
          yield* o.renameGrant(g.id, `feeder ${i} renamed`)
          return yield* o.disableGrant(g.id)
        })).pipe(Effect.map((e) => (e._tag === "Right" ? "ok" : String((e.left as { cause?: unknown }).cause ?? e.left)))))))
      child.stdin.end("stop\n")
      committed = Number(await line())
    } finally {
      child.kill()
    }
    // the other process did commit meanwhile, and every grant write still went through
    expect(committed).toBeGreaterThan(0)
    expect(outcomes.filter((o) => o !== "ok")).toEqual([])
  })
})

describe("backup_state", () => {
  it("raises version_count and never lowers it", async () => {
    const counts = await run(config, Effect.flatMap(ops, (o) => Effect.gen(function*() {
      yield* o.ensureBackupState("sales")
      yield* o.raiseVersionCount("sales", 5)
      yield* o.raiseVersionCount("sales", 3)
      yield* o.ensureBackupState("sales")
      return Option.map(yield* o.getBackupState("sales"), (s) => s.version_count)
    })))
    expect(counts).toEqual(Option.some(5))
  })
})

describe("ended approval sessions (logout, architecture.md §5.3)", () => {
  const sidA = "A".repeat(21) + "a"
  const sidB = "B".repeat(21) + "b"
  const inAnHour = () => Math.floor(Date.now() / 1000) + 3600

  it("endSession records the sid until its exp; sessionEnded sees it, also after the file is opened again", async () => {
    const exp = inAnHour()
    const seen = await run(config, Effect.flatMap(ops, (o) => Effect.gen(function*() {
      const before = yield* o.sessionEnded(sidA)
      yield* o.endSession(sidA, exp)
      return { before, a: yield* o.sessionEnded(sidA), b: yield* o.sessionEnded(sidB) }
    })))
    expect(seen).toEqual({ before: false, a: true, b: false })
    // a new layer on the same data dir: the restarted service still knows the session is over
    const reopened = await run(config, Effect.flatMap(ops, (o) => Effect.all([o.sessionEnded(sidA), o.sessionEnded(sidB)])))
    expect(reopened).toEqual([true, false])
    const rows = await run(config, Effect.flatMap(ops, (o) => o.sql<{ sid: string; exp: number; ended_at: string }>`SELECT * FROM ended_session`))
    expect(rows).toEqual([{ sid: sidA, exp, ended_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/) }])
  })

  it("ending a session twice keeps the first row", async () => {
    const exp = inAnHour()
    const rows = await run(config, Effect.flatMap(ops, (o) => Effect.gen(function*() {
      yield* o.endSession(sidA, exp)
      const first = yield* o.sql<{ ended_at: string }>`SELECT ended_at FROM ended_session`
      yield* Effect.sleep("5 millis")
      yield* o.endSession(sidA, exp + 10)
      return { first, after: yield* o.sql<{ exp: number; ended_at: string }>`SELECT exp, ended_at FROM ended_session` }
    })))
    expect(rows.after).toEqual([{ exp, ended_at: rows.first[0]?.ended_at }])
  })

  it("rows are never updated and a row is deleted only after its exp: the next logout prunes expired rows", async () => {
    const past = Math.floor(Date.now() / 1000) - 60
    const result = await run(config, Effect.flatMap(ops, (o) => Effect.gen(function*() {
      yield* o.endSession(sidA, inAnHour())
      yield* o.sql`INSERT INTO ended_session (sid, exp, ended_at) VALUES (${sidB}, ${past}, '2026-01-01T00:00:00.000Z')`.raw
      const update = yield* Effect.exit(o.sql`UPDATE ended_session SET exp = 1 WHERE sid = ${sidA}`.raw)
      const deleteLive = yield* Effect.exit(o.sql`DELETE FROM ended_session WHERE sid = ${sidA}`.raw)
      const badSid = yield* Effect.exit(o.endSession("short", inAnHour()))
      const before = yield* o.sql<{ sid: string }>`SELECT sid FROM ended_session ORDER BY sid`
      yield* o.endSession("C".repeat(22), inAnHour())
      const after = yield* o.sql<{ sid: string }>`SELECT sid FROM ended_session ORDER BY sid`
      return { update, deleteLive, badSid, before, after, stillEnded: yield* o.sessionEnded(sidA) }
    })))
    const refusedBy = (exit: Exit.Exit<unknown, unknown>) => {
      if (Exit.isSuccess(exit) || exit.cause._tag !== "Fail" || !(exit.cause.error instanceof SqlError)) return "not refused"
      return triggerMessage(exit.cause.error) ?? String((exit.cause.error.cause as { code?: unknown } | undefined)?.code)
    }
    expect(refusedBy(result.update)).toBe("append-only")
    expect(refusedBy(result.deleteLive)).toBe("append-only")
    expect(refusedBy(result.badSid)).toBe("SQLITE_CONSTRAINT_CHECK")
    expect(result.before.map((r) => r.sid)).toEqual([sidA, sidB])
    expect(result.after.map((r) => r.sid)).toEqual([sidA, "C".repeat(22)])
    expect(result.stillEnded).toBe(true)
  })
})

describe("the redaction ledger (ops migration 0008)", () => {
  const entry = (seq: number) => ({
    scope: "sales", seq, id: `sales-x${String(seq).padStart(4, "0")}`, term_sha256: "a".repeat(64), places: 2,
    requested_by: "person:2", decided_by: "anna@example.com", reason: "erasure request 17", at: "2026-03-12T09:15:00Z",
    place_list: [{ table: "source", key: ["mail:<1@example.com>"], column: "excerpt", ranges: [[4, 15], [30, 41]] as const }]
  })

  it("appends a redaction once, lists it by scope and seq, and never changes or deletes a row", async () => {
    const out = await run(config, Effect.gen(function*() {
      const o = yield* ops
      const first = yield* o.appendLedger(entry(2))
      const again = yield* o.appendLedger({ ...entry(2), reason: "another reason" })
      yield* o.appendLedger(entry(1))
      const listed = yield* o.listLedger("sales")
      const other = yield* o.listLedger("ops")
      const update = yield* Effect.exit(o.sql`UPDATE redaction_ledger SET reason = 'x'`.raw)
      const del = yield* Effect.exit(o.sql`DELETE FROM redaction_ledger`.raw)
      return { first, again, listed, other, update, del }
    }))
    expect(out.first).toBe(true)
    expect(out.again).toBe(false)
    expect(out.listed.map((r) => [r.seq, r.id, r.reason])).toEqual([[1, "sales-x0001", "erasure request 17"], [2, "sales-x0002", "erasure request 17"]])
    expect(out.listed[0]?.place_list).toEqual(entry(1).place_list)
    expect(out.other).toEqual([])
    for (const exit of [out.update, out.del]) {
      expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" && exit.cause.error instanceof SqlError
        ? triggerMessage(exit.cause.error) : "not refused").toBe("append-only")
    }
  })

  it("refuses an id that is not the scope's id of its seq, and an empty place list", async () => {
    const out = await run(config, Effect.gen(function*() {
      const o = yield* ops
      const wrongId = yield* Effect.exit(o.appendLedger({ ...entry(1), id: "ops-x0001" }))
      const noPlaces = yield* Effect.exit(o.appendLedger({ ...entry(1), place_list: [] }))
      return { wrongId, noPlaces, listed: yield* o.listLedger("sales") }
    }))
    expect(Exit.isFailure(out.wrongId)).toBe(true)
    expect(Exit.isFailure(out.noPlaces)).toBe(true)
    expect(out.listed).toEqual([])
  })
})
