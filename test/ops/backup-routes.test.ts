/**
 * The backup routes of the ops socket (architecture.md §11, 11.1, 11.2, "Backup verify";
 * gaps.md §3): POST /ops/backup/run, /ops/backup/probe and /ops/backup/verify over the real
 * Unix socket, with an optional {scope}; the one BackupLock (409 backup-running, and
 * GET /ops/status names what runs); refusals from the one error vocabulary; the reranker's
 * month in GET /ops/status.
 */
import { chmodSync, rmSync } from "node:fs"
import { join } from "node:path"
import { Deferred, Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { BackupLock } from "../../src/backup/lock.js"
import { OpsStore } from "../../src/db/ops-store.js"
import { reserveRerankerSpend } from "../../src/db/reranker-usage.js"
import { type BackupEnv, backupEnv, seedScope } from "../backup/support.js"
import { captureLogs } from "../support/logs.js"
import { type Answer, call, type Started, startListener } from "./support.js"

type Json = Record<string, unknown> & { error?: string; message?: string }
const json = (a: Answer): Json => a.json as Json

describe("ops backup routes", { timeout: 120_000 }, () => {
  let env: BackupEnv
  let listener: Started
  const logs = captureLogs()

  beforeAll(async () => {
    env = backupEnv({ exportDir: true })
    listener = await startListener(env.config, logs.layer)
    await listener.run(Effect.gen(function*() {
      yield* seedScope("sales", 3)
      yield* seedScope("ops", 2)
    }))
  })
  afterAll(async () => {
    await listener.stop()
    env.cleanup()
  })

  it("POST /ops/backup/run copies ops.sqlite and every scope; status shows the run and the copies", async () => {
    const a = await call(listener.socket, "POST", "/ops/backup/run")
    expect(a.status).toBe(200)
    expect(json(a)).toMatchObject({ ok: true, kind: "copy", ran: true, ops: { ok: true, file: join(env.backupDir, "ops.sqlite") } })
    expect((json(a).scopes as Array<{ scope: string; ok: boolean }>).map((s) => [s.scope, s.ok])).toEqual([["sales", true], ["ops", true]])
    // an empty JSON object is the same request
    expect((await call(listener.socket, "POST", "/ops/backup/run", { body: {} })).status).toBe(200)
    const status = json(await call(listener.socket, "GET", "/ops/status"))
    const backup = status.backup as Record<string, unknown>
    expect(backup.running).toBeNull()
    expect(backup.ops_backup_at).toEqual(expect.any(String))
    expect(backup.last_run).toMatchObject({ kind: "run", ok: true })
    for (const s of status.scopes as Array<Record<string, unknown>>) expect(s.last_backup_at).toEqual(expect.any(String))
  })

  it("POST /ops/backup/probe proves every scope and writes the nightly export; {scope} probes only that one", async () => {
    const all = await call(listener.socket, "POST", "/ops/backup/probe")
    expect(all.status).toBe(200)
    expect(json(all)).toMatchObject({ ok: true, kind: "copy", ops: { ok: true } })
    const scopes = json(all).scopes as Array<{ scope: string; ok: boolean; export: { file: string } | null }>
    expect(scopes.map((s) => [s.scope, s.ok])).toEqual([["sales", true], ["ops", true]])
    expect(scopes[0]?.export?.file.startsWith(join(env.exportDir, "sales", "sales-export-"))).toBe(true)
    const one = await call(listener.socket, "POST", "/ops/backup/probe", { body: { scope: "ops" } })
    expect(json(one).scopes).toEqual([expect.objectContaining({ scope: "ops", ok: true })])
    const status = json(await call(listener.socket, "GET", "/ops/status"))
    expect((status.backup as Record<string, unknown>).last_probe).toMatchObject({ kind: "probe", ok: true })
    for (const s of status.scopes as Array<Record<string, unknown>>) expect(s).toMatchObject({ probe_ok: true, exported_at: expect.any(String) })
  })

  it("POST /ops/backup/verify checks live and the backup; {scope} verifies only that one", async () => {
    const a = await call(listener.socket, "POST", "/ops/backup/verify", { body: { scope: "sales" } })
    expect(a.status).toBe(200)
    expect(json(a)).toMatchObject({ ok: true, kind: "copy", scopes: [{ scope: "sales", ok: true }] })
    const status = json(await call(listener.socket, "GET", "/ops/status"))
    expect((status.scopes as Array<Record<string, unknown>>).map((s) => [s.scope, s.verify_ok])).toEqual([["sales", true], ["ops", null]])
  })

  it("a failed check is a 200 answer with ok: false naming it (the CLI exits 3 on it)", async () => {
    rmSync(join(env.backupDir, "scopes", "ops.sqlite"))
    const a = await call(listener.socket, "POST", "/ops/backup/verify", { body: { scope: "ops" } })
    expect(a.status).toBe(200)
    const scope = (json(a).scopes as Array<{ ok: boolean; checks: Array<{ check: string; ok: boolean }> }>)[0]
    expect(json(a).ok).toBe(false)
    expect(scope?.checks.find((c) => !c.ok)?.check).toBe("fetch-copy")
    // the next run copies it again
    expect(json(await call(listener.socket, "POST", "/ops/backup/run")).ok).toBe(true)
  })

  it("run, probe and verify share one lock: 409 backup-running while one holds it, and status names it", async () => {
    const release = await listener.run(Deferred.make<void>())
    const held = listener.run(Effect.flatMap(BackupLock, (lock) => lock.withLock("probe")(Deferred.await(release))))
    try {
      // the lock is taken as soon as the fiber runs
      for (let i = 0; i < 50; i++) {
        const s = json(await call(listener.socket, "GET", "/ops/status"))
        if ((s.backup as Record<string, unknown>).running === "probe") break
        await new Promise((r) => setTimeout(r, 20))
      }
      expect((json(await call(listener.socket, "GET", "/ops/status")).backup as Record<string, unknown>).running).toBe("probe")
      for (const path of ["/ops/backup/run", "/ops/backup/probe", "/ops/backup/verify"]) {
        const a = await call(listener.socket, "POST", path)
        expect(a.status, path).toBe(409)
        expect(json(a)).toEqual({ error: "backup-running", message: "a backup probe is running; try again when it has finished" })
      }
    } finally {
      await listener.run(Deferred.succeed(release, undefined))
      await held
    }
    expect((json(await call(listener.socket, "GET", "/ops/status")).backup as Record<string, unknown>).running).toBeNull()
    expect((await call(listener.socket, "POST", "/ops/backup/verify")).status).toBe(200)
  })

  it("refuses a bad body with 400 validation-failed naming the path, before anything runs", async () => {
    const cases: Array<[string, Parameters<typeof call>[3], string]> = [
      ["/ops/backup/probe", { body: { scope: "nope" } }, "scope"],
      ["/ops/backup/verify", { body: { scope: "Not A Scope" } }, "scope"],
      ["/ops/backup/probe", { body: { scopes: ["sales"] } }, "scopes"],
      ["/ops/backup/run", { body: { scope: "sales" } }, "scope"],
      ["/ops/backup/run", { raw: "[1,2]" }, "(root)"],
      ["/ops/backup/probe", { raw: "not json" }, "(root)"]
    ]
    for (const [path, options, issue] of cases) {
      const a = await call(listener.socket, "POST", path, options)
      expect(a.status, `${path} ${JSON.stringify(options)}`).toBe(400)
      expect(json(a).error).toBe("validation-failed")
      expect((json(a).issues as Array<{ path: string }>).map((i) => i.path)).toContain(issue)
    }
  })

  it("an unfit backup directory is 409 backup-directory-invalid naming the reason; nothing is copied", async () => {
    chmodSync(env.backupDir, 0o750)
    try {
      const a = await call(listener.socket, "POST", "/ops/backup/run")
      expect(a.status).toBe(409)
      expect(json(a).error).toBe("backup-directory-invalid")
      expect(json(a).message).toMatch(/backup\.directory is unfit: .*0750/)
    } finally {
      chmodSync(env.backupDir, 0o700)
    }
  })

  it("GET /ops/status reports this month's reranker spending in the instance zone", async () => {
    await listener.run(Effect.flatMap(OpsStore, (o) =>
      reserveRerankerSpend(o.sql, env.config.file.zone, 5, { scope: "sales", provider: "typesafe", model: "jev-1.14.0", documents: 50, tokens: 9000, costUsd: 0.125 })))
    const s = json(await call(listener.socket, "GET", "/ops/status"))
    expect(s.usage).toEqual({ reranker_month_usd: 0.125 })
  })

  it("logs one line per backup request with its status", () => {
    const lines = logs.lines.filter((l) => l.message === "ops request" && String(l.annotations.path).startsWith("/ops/backup/"))
    expect(lines.map((l) => l.annotations.status)).toEqual(expect.arrayContaining([200, 409, 400]))
  })
})
