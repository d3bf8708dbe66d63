/**
 * Nothing comes back (gaps.md §12): a copy taken before a redaction — restored with `restore`, or
 * put in place by hand — never shows the erased text again. restore brings the copy level with
 * the redaction ledger before it links it; a scope file that opens behind its ledger is brought
 * level before the scope answers. Real files, a real copy backup, answers through real HTTP.
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { gunzipSync } from "node:zlib"
import { join } from "node:path"
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { probeBackup } from "../../src/backup/probe.js"
import { restoreConfigOf, restoreScope } from "../../src/backup/restore.js"
import { runBackup } from "../../src/backup/run.js"
import { OpsStore } from "../../src/db/ops-store.js"
import { scopeFile } from "../../src/db/scope-store.js"
import { startServer } from "../support/server.js"
import { filesHolding, MAIL_ID, redactTerm, seedNamed, TERM, withWal } from "../redaction/ledger-support.js"
import { type BackupEnv, backupEnv, runService, withFile } from "./support.js"

let env: BackupEnv
beforeEach(() => {
  env = backupEnv({ scopes: ["sales"], exportDir: true })
})
afterEach(() => env.cleanup())

/** The scope seeded and copied by a backup run, then the name redacted; answers the feeder's token. */
const copiedThenRedacted = async (): Promise<string> => {
  const token = await runService(env.config, Effect.gen(function*() {
    yield* seedNamed()
    const g = yield* (yield* OpsStore).createGrant({ kind: "service", auth: "bearer", scopes: ["sales"], rights: ["read", "propose"], label: "feeder" })
    return "token" in g ? g.token : ""
  }))
  expect((await runService(env.config, runBackup())).ok).toBe(true)
  const applied = await runService(env.config, redactTerm(TERM))
  expect(applied.redaction.id).toBe("sales-x0001")
  const live = scopeFile(env.dataDir, "sales")
  expect(filesHolding(withWal(live), TERM)).toEqual([])
  // the copy of the backup run still holds the name: it was taken before
  expect(filesHolding([join(env.backupDir, "scopes", "sales.sqlite")], TERM)).toHaveLength(1)
  return token
}

/** What the feeder reads back of the scope over HTTP: the rule, the source with its text, a search. */
const answers = async (token: string): Promise<Array<{ status: number; text: string }>> => {
  const server = await startServer(env.config)
  try {
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      return { status: res.status, text: await res.text() }
    }
    return [
      await call("GET", "/v1/rules/sales-0001"),
      await call("GET", `/v1/sources/${encodeURIComponent(MAIL_ID)}?scope=sales&include=text`),
      await call("POST", "/v1/search", { scopes: ["sales"], text: "who approves a discount above ten percent", include_proposals: true })
    ]
  } finally {
    await server.close()
  }
}

describe("a copy taken before a redaction", () => {
  it("restore brings it level with the ledger before it links it: the restored file holds the name in no byte", async () => {
    await copiedThenRedacted()
    mkdirSync(join(env.root, "restored"), { mode: 0o700 })
    const target = join(env.root, "restored", "sales.sqlite")
    const answer = await Effect.runPromise(restoreScope({ to: target, scope: "sales" }, restoreConfigOf(env.config)))
    expect(answer.checks.find((c) => c.check === "redaction-ledger")).toEqual({
      check: "redaction-ledger", ok: true, detail: "applied again from the redaction ledger: sales-x0001"
    })
    expect(filesHolding(withWal(target), TERM)).toEqual([])
    const held = await withFile(target, (sql) => sql<{ id: string }>`SELECT id FROM redaction`)
    expect(held).toEqual([{ id: "sales-x0001" }])
  })

  it("put in place by hand while the service is stopped, it is brought level before the scope answers: the name is in no answer and no byte of the live files", async () => {
    const token = await copiedThenRedacted()
    const live = scopeFile(env.dataDir, "sales")
    for (const f of [`${live}-wal`, `${live}-shm`]) rmSync(f, { force: true })
    copyFileSync(join(env.backupDir, "scopes", "sales.sqlite"), live)
    expect(filesHolding([live], TERM)).toEqual([live])

    const got = await answers(token)
    expect(got.map((a) => a.status)).toEqual([200, 200, 200])
    for (const a of got) expect(a.text.toLowerCase()).not.toContain(TERM.toLowerCase())
    expect(got[0]?.text).toContain("[redacted]")
    expect(got[1]?.text).toContain("[redacted]")
    expect(got[2]?.text).toContain("sales-0001")
    // after the replay (and its checkpoint) and the service's stop: no byte of the file or its WAL
    expect(filesHolding(withWal(live), TERM)).toEqual([])
    const ledger = await runService(env.config, Effect.flatMap(OpsStore, (o) => o.listLedger("sales")))
    expect(ledger.map((r) => r.id)).toEqual(["sales-x0001"])
  })
})

describe("the restore probe of a copy taken before a redaction", () => {
  it("reports the replay, and the erased name is nowhere in its answer, its records or the export it writes", async () => {
    await copiedThenRedacted()
    const answer = await runService(env.config, probeBackup())
    const item = answer.scopes.find((s) => s.scope === "sales")
    expect(item?.checks.find((c) => c.check === "redaction-ledger")).toEqual({
      check: "redaction-ledger", ok: true, detail: "applied again from the redaction ledger: sales-x0001"
    })
    expect(item?.ok).toBe(true)
    expect(JSON.stringify(answer).toLowerCase()).not.toContain(TERM.toLowerCase())
    // the archive the probe exported from the levelled copy
    const archives = readdirSync(join(env.exportDir, "sales")).filter((n) => n.endsWith(".tar.gz"))
    expect(archives.length).toBeGreaterThan(0)
    for (const a of archives) {
      const tar = gunzipSync(readFileSync(join(env.exportDir, "sales", a))).toString("utf8")
      expect(tar).toContain("rules/sales-0001.md")
      expect(tar.toLowerCase()).not.toContain(TERM.toLowerCase())
    }
    // what the probe recorded (backup_state, backup_run) and what it left in the data dir
    expect(filesHolding(withWal(join(env.dataDir, "ops.sqlite")), TERM)).toEqual([])
    expect(readdirSync(env.dataDir).filter((n) => n.startsWith(".probe-"))).toEqual([])
  })
})
