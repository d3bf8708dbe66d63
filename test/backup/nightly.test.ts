import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { rmSync } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { pingDeadman } from "../../src/backup/deadman.js"
import { nightly, nightlyExitCode } from "../../src/backup/nightly.js"
import { probeBackup } from "../../src/backup/probe.js"
import { runBackup } from "../../src/backup/run.js"
import { type BackupEnv, backupEnv, runService, seedScope } from "./support.js"

let env: BackupEnv
let server: Server
let hits: Array<string>
let answer: number | "hang"
beforeEach(async () => {
  env = backupEnv({ scopes: ["sales"] })
  hits = []
  answer = 200
  server = createServer((req, res) => {
    hits.push(`${req.method ?? ""} ${req.url ?? ""}`)
    if (answer === "hang") return
    res.writeHead(answer).end("ok")
  })
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r))
})
afterEach(async () => {
  server.closeAllConnections()
  await new Promise((r) => server.close(r))
  env.cleanup()
})

const url = () => `http://127.0.0.1:${(server.address() as AddressInfo).port}/ping/abc`
const runNightly = () =>
  runService(env.config, nightly({ run: runBackup(), probe: probeBackup(), deadmanUrl: url(), timeoutMs: 500, retryDelayMs: 10 }))

describe("backup nightly", () => {
  it("runs, probes and pings once when both passed (exit 0)", async () => {
    await runService(env.config, seedScope("sales", 2))
    const lines: Array<string> = []
    const report = await runService(env.config, nightly({ run: runBackup(), probe: probeBackup(), deadmanUrl: url(), progress: (l) => lines.push(l) }))
    expect(report.ok).toBe(true)
    expect(report.ping).toEqual({ sent: true, ok: true, status: 200, attempts: 1 })
    expect(hits).toEqual(["GET /ping/abc"])
    expect(lines).toEqual(["backup run", "restore probe", "dead-man ping"])
    expect(nightlyExitCode(report)).toBe(0)
  })

  it("does not ping when the probe fails (exit 3), and still probes after a failed run", async () => {
    await runService(env.config, seedScope("sales", 1))
    rmSync(join(env.backupDir), { recursive: true })
    const report = await runNightly()
    expect(report.run).toMatchObject({ error: "backup-directory-invalid" })
    expect(report.probe).toMatchObject({ ok: false })
    expect(report.ping).toEqual({ sent: false, ok: false, attempts: 0 })
    expect(hits).toEqual([])
    expect(nightlyExitCode(report)).toBe(3)
  })

  it("reports a failed ping after a bounded number of attempts", async () => {
    answer = 503
    const failed = await Effect.runPromise(pingDeadman(url(), 500, 10))
    expect(failed).toEqual({ sent: true, ok: false, status: 503, attempts: 3 })
    expect(hits).toHaveLength(3)
    answer = "hang"
    const hung = await Effect.runPromise(pingDeadman(url(), 100, 10))
    expect(hung).toEqual({ sent: true, ok: false, attempts: 3, error: `127.0.0.1:${(server.address() as AddressInfo).port}: no answer within 100 ms` })
    const refused = await Effect.runPromise(pingDeadman("http://127.0.0.1:9/x", 500, 10))
    expect(refused).toMatchObject({ ok: false, attempts: 3 })
    expect(refused.error).toMatch(/^127\.0\.0\.1:9: /)
  })
})
