/**
 * The digest from the built CLI against a real service (gaps.md §13 "Digest", "Due for recheck"):
 * the ops socket's GET /ops/digest?since= (400 naming since without a good day), `groundnote
 * approvals digest --since <day> [--json]` (stdout, for a timer that mails it), the recheck count
 * of `approvals open`, and backup nightly's one POST of the digest to approval.digest_url on
 * 127.0.0.1 — a failing endpoint reported after the dead-man ping's bounded attempts, the backup's
 * exit code unchanged, the process ends. Fixtures are written with the real writers on a
 * TestClock (40 days ago, an hour ago), so what is due and what was adopted since yesterday is known.
 */
import { writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { Effect, Redacted, TestClock, TestContext } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { dayBefore, dayIn } from "../../src/contracts/time.js"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { decide } from "../../src/decision/decide.js"
import { intake } from "../../src/domain/intake.js"
import { storeSource } from "../../src/domain/sources.js"
import { type BackupEnv, backupEnv } from "../backup/support.js"
import { approvalOf, EXCEPTION_LINES, internalMail, PLAIN, quoting } from "../support/approval.js"
import { baseConfigJson, testConfig } from "../support/env.js"
import { captureLogs } from "../support/logs.js"
import { call, OPS_TOKEN } from "../ops/support.js"
import type { Stores } from "../support/run.js"
import { cleanEnv, cli, json, type Service, startService } from "./support.js"

const S = (c: string) => c.repeat(40)
const DEV_API = S("p")
const SECRETS = {
  GROUNDNOTE_AUTH_MODE: "dev-token", GROUNDNOTE_SESSION_SECRET: S("s"), GROUNDNOTE_OPS_TOKEN: OPS_TOKEN,
  GROUNDNOTE_DEV_MCP_TOKEN: S("m"), GROUNDNOTE_DEV_APPROVAL_TOKEN: S("a"), GROUNDNOTE_DEV_EMAIL: "dev@example.com"
}
const DAY_MS = 86_400_000
const ZONE = "Europe/Berlin"

describe("the digest from the CLI and backup nightly", { timeout: 300_000 }, () => {
  let env: BackupEnv
  let service: Service
  let receiver: Server
  let received: Array<{ method: string; url: string; type: string; body: string }> = []
  let receiverUrl = ""
  const logs = captureLogs()
  const now = Date.now()
  const yesterday = dayBefore(dayIn(ZONE, now))
  const ids: Record<string, string> = {}

  const configFile = (name: string, digestUrl: string | null) => {
    const path = join(env.root, name)
    const approval = { ...approvalOf("classified").approval, ...(digestUrl === null ? {} : { digest_url: digestUrl }) }
    writeFileSync(path, JSON.stringify({ ...baseConfigJson(), recheck_after_days: 30, approval, backup: { kind: "copy", directory: env.backupDir, deadman_url: null } }))
    return path
  }
  const cliEnv = (config: string): Record<string, string> => ({ ...cleanEnv(), ...SECRETS, GROUNDNOTE_DATA_DIR: env.dataDir, GROUNDNOTE_CONFIG: config })
  const at = <A, E>(ms: number, effect: Effect.Effect<A, E, Stores>) =>
    service.run(Effect.gen(function*() {
      yield* TestClock.setTime(ms)
      return yield* effect
    }).pipe(Effect.provide(TestContext.TestContext)) as Effect.Effect<A, E, Stores>)
  const propose = async (ms: number, line: string) =>
    (await at(ms, Effect.map(intake(quoting(line), { grantId: "service:1", channel: "api", requestId: null }), (r) => r.created))).ref.replace(/^rule\/|@\d+$/g, "")

  beforeAll(async () => {
    env = backupEnv({ exportDir: true })
    receiver = createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        received.push({ method: req.method ?? "", url: req.url ?? "", type: req.headers["content-type"] ?? "", body: Buffer.concat(chunks).toString("utf8") })
        res.writeHead(req.url === "/digest/k3y" ? 204 : 500).end()
      })
    })
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", () => r()))
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/digest/k3y`
    const base = testConfig(env.dataDir, { ...approvalOf("classified"), recheck_after_days: 30, backup: { kind: "copy", directory: env.backupDir, deadman_url: null } })
    service = await startService({ ...base, env: { ...base.env, devApiToken: Redacted.make(DEV_API) } }, { logs })
    await service.run(Effect.gen(function*() {
      const ops = yield* OpsStore
      yield* ops.createGrant({ kind: "person", auth: "email", identity: "dev@example.com", scopes: ["sales", "ops"], rights: ["read", "propose", "decide"] })
    }))
    await service.run(Effect.flatMap(ScopeStore, (s) => s.create("sales")))
    const old = now - 40 * DAY_MS
    await at(old, storeSource(internalMail(), "service:1"))
    ids.oldAuto = await propose(old, PLAIN[0])
    ids.confirmed = await propose(old, EXCEPTION_LINES.doubt)
    await at(old + 60_000, decide(ids.confirmed, { decision: "confirm", version: 1 }, { grantId: "person:1", identity: "anna@example.com" }))
    ids.recentAuto = await propose(now - 60_000, PLAIN[1])
    ids.waiting = await propose(now - 60_000, EXCEPTION_LINES.payment)
  }, 120_000)
  afterAll(async () => {
    await service.stop()
    await new Promise<void>((r) => receiver.close(() => r()))
    env.cleanup()
  })

  const expected = () => ({
    instance: "acme", since: yesterday, today: dayIn(ZONE, Date.now()),
    scopes: [
      { scope: "sales", available: true, message: null, adopted: [`rule/${ids.recentAuto}@2`], waiting: { rules: 1, structure: 0 }, due_for_recheck: [`rule/${ids.oldAuto}@2`, `rule/${ids.confirmed}@2`] },
      { scope: "ops", available: false, message: "this scope has no file yet; create it with groundnote scope create", adopted: [], waiting: { rules: 0, structure: 0 }, due_for_recheck: [] }
    ]
  })

  it("GET /ops/digest?since= answers the digest of every configured scope; without a good day 400 validation-failed naming since", async () => {
    const ok = await call(service.socket, "GET", `/ops/digest?since=${yesterday}`)
    expect(ok.status).toBe(200)
    expect(ok.json).toEqual(expected())
    for (const path of ["/ops/digest", "/ops/digest?since=2026-02-30", "/ops/digest?since=yesterday"]) {
      const bad = await call(service.socket, "GET", path)
      expect(bad.status, path).toBe(400)
      expect(bad.json).toMatchObject({ error: "validation-failed", issues: [{ path: "since" }] })
    }
    expect((await call(service.socket, "GET", `/ops/digest?since=${yesterday}`, { token: null })).status).toBe(401)
  })

  it("approvals digest --since prints the digest on stdout (plain or --json); a bad day is refused before anything is sent", async () => {
    const config = configFile("groundnote.json", null)
    const [text, asJson, bad, missing] = await Promise.all([
      cli(["approvals", "digest", "--since", yesterday], cliEnv(config)),
      cli(["approvals", "digest", "--since", yesterday, "--json"], cliEnv(config)),
      cli(["approvals", "digest", "--since", "2026-02-30", "--json"], cliEnv(config)),
      cli(["approvals", "digest"], cliEnv(config))
    ])
    expect(text.code, text.stderr).toBe(0)
    expect(text.stdout).toBe([
      `digest of acme since ${yesterday} (to ${dayIn(ZONE, Date.now())})`,
      "sales:",
      `  adopted by the approval policy: 1: rule/${ids.recentAuto}@2`,
      "  waiting for a person: 1 rule proposal, 0 structure changes",
      `  due for recheck (still valid?): 2: rule/${ids.oldAuto}@2, rule/${ids.confirmed}@2`,
      "ops: not available (this scope has no file yet; create it with groundnote scope create)",
      ""
    ].join("\n"))
    expect(asJson.code, asJson.stderr).toBe(0)
    expect(json(asJson)).toEqual(expected())
    expect(bad.code).toBe(1)
    expect(json(bad)).toMatchObject({ error: "validation-failed", issues: [{ path: "since" }] })
    expect(bad.stderr).toMatch(/^groundnote: validation-failed: query is invalid: since: /)
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain("--since")
  })

  it("approvals open keeps the bare number of waiting items and counts the rules due for recheck beside it", async () => {
    const asPerson = { ...cleanEnv(), GROUNDNOTE_URL: service.url, GROUNDNOTE_API_TOKEN: DEV_API }
    const [open, openJson] = await Promise.all([cli(["approvals", "open"], asPerson), cli(["approvals", "open", "--json"], asPerson)])
    expect(open.code, open.stderr).toBe(0)
    expect(open.stdout).toBe("1\n")
    expect(open.stderr).toContain("sales: 1 proposal(s), 0 structure change(s), 2 due for recheck")
    expect(json(openJson)).toEqual({
      open: 1, due_for_recheck: 2,
      scopes: [
        { scope: "ops", available: false, proposals: null, structure: null, due_for_recheck: null },
        { scope: "sales", available: true, proposals: 1, structure: 0, due_for_recheck: 2 }
      ]
    })
  })

  it("backup nightly POSTs the digest since yesterday once to approval.digest_url; the URL is never printed", async () => {
    received = []
    const r = await cli(["backup", "nightly"], cliEnv(configFile("posting.json", receiverUrl)))
    expect(r.code, r.stderr).toBe(0)
    expect(received.map((x) => [x.method, x.url, x.type])).toEqual([["POST", "/digest/k3y", "application/json"]])
    expect(JSON.parse(received[0]?.body ?? "null")).toEqual(expected())
    expect(r.stderr).toContain(`digest since ${yesterday}: posted (204, attempt 1)`)
    expect(`${r.stdout}${r.stderr}`).not.toContain("k3y")
    received = []
    const quiet = await cli(["backup", "nightly", "--json"], cliEnv(configFile("quiet.json", null)))
    expect(quiet.code, quiet.stderr).toBe(0)
    expect(received).toEqual([])
    expect(json(quiet)).toMatchObject({ ok: true, digest: null })
  })

  it("a failing digest endpoint: three bounded attempts, reported; the backup's result and exit code stand; the process ends", async () => {
    received = []
    const started = Date.now()
    const r = await cli(["backup", "nightly", "--json"], cliEnv(configFile("failing.json", receiverUrl.replace("k3y", "wrong"))), { timeoutMs: 90_000 })
    expect(r.code, r.stderr).toBe(0)
    expect(Date.now() - started).toBeLessThan(60_000)
    expect(json(r)).toMatchObject({ ok: true, run: { ok: true }, probe: { ok: true }, digest: { sent: true, ok: false, status: 500, attempts: 3, since: yesterday } })
    expect(received.map((x) => `${x.method} ${x.url}`)).toEqual(["POST /digest/wrong", "POST /digest/wrong", "POST /digest/wrong"])
    expect(r.stdout).not.toContain("wrong")
    const human = await cli(["backup", "nightly"], cliEnv(configFile("failing.json", "http://127.0.0.1:9/digest/k3y")), { timeoutMs: 90_000 })
    expect(human.code, human.stderr).toBe(0)
    expect(human.stderr).toMatch(new RegExp(`digest since ${yesterday}: FAILED after 3 attempts \\(127\\.0\\.0\\.1:9: .+\\); the backup's result stands`))
    expect(human.stderr).not.toContain("k3y")
  })
})
