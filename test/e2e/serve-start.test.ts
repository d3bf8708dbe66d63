/**
 * The first start, as an operator meets it: `groundnote serve` on a fresh data dir without any
 * scope file or grant logs one warning naming the commands that fix it; after running them the
 * next start is quiet. backup.directory (kind copy) is checked at start as config/README.md says:
 * inside the data dir refuses start (backup-directory-invalid), missing or mode other than 0700
 * is a warning with the fix (backup run refuses it until then). A probe from the first moment is
 * refused until the port listens and answered after: no connection is left waiting.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { chmodSync, mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { notReadyWarning } from "../../src/start-warnings.js"
import { baseConfigJson, tempDir } from "../support/env.js"
import { cleanEnv, cli, CLI, freePort } from "./support.js"

const { dir, cleanup } = tempDir("gn-start-")
const running: Array<ChildProcess> = []
afterAll(async () => {
  await Promise.all(running.map((c) => stop(c)))
  cleanup()
})

const S = (c: string) => c.repeat(40)
const devEnv = {
  GROUNDNOTE_AUTH_MODE: "dev-token", GROUNDNOTE_SESSION_SECRET: S("s"), GROUNDNOTE_OPS_TOKEN: S("o"),
  GROUNDNOTE_DEV_MCP_TOKEN: S("m"), GROUNDNOTE_DEV_APPROVAL_TOKEN: S("a"), GROUNDNOTE_DEV_EMAIL: "dev@example.com"
}

let n = 0
/** A case dir with a data dir (0700), a backup dir and groundnote.json; answers the env. */
const setup = async (backup: (caseDir: string, dataDir: string) => string) => {
  n += 1
  const caseDir = join(dir, String(n))
  const dataDir = join(caseDir, "data")
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  const port = await freePort()
  const config = { ...baseConfigJson(), public_url: `http://127.0.0.1:${port}`, backup: { kind: "copy", directory: backup(caseDir, dataDir), deadman_url: "http://127.0.0.1:9/ping" } }
  writeFileSync(join(caseDir, "groundnote.json"), JSON.stringify(config))
  return { ...cleanEnv(), ...devEnv, GROUNDNOTE_DATA_DIR: dataDir, GROUNDNOTE_CONFIG: join(caseDir, "groundnote.json"), GROUNDNOTE_PORT: String(port) }
}

const privateDir = (caseDir: string) => {
  const d = join(caseDir, "backup")
  mkdirSync(d, { mode: 0o700 })
  return d
}

interface Log { readonly level: string; readonly message: string; readonly code?: string; readonly port?: number }

/** Starts serve and waits for "listening" (or the exit); answers the log lines so far and the process. */
const serve = (env: Record<string, string>) => new Promise<{ child: ChildProcess; logs: () => Array<Log>; stderr: () => string; code: number | null }>((resolve) => {
  const child = spawn(process.execPath, [CLI, "serve"], { env, stdio: ["ignore", "pipe", "pipe"] })
  running.push(child)
  let out = ""
  let err = ""
  const logs = () => out.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Log)
  const timer = setTimeout(() => child.kill("SIGKILL"), 40_000)
  child.stderr.on("data", (d: Buffer) => { err += d.toString() })
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString()
    // the warnings follow "listening" at once; give them a moment
    if (logs().some((l) => l.message === "listening")) setTimeout(() => resolve({ child, logs, stderr: () => err, code: null }), 300)
  })
  child.on("close", (code) => {
    clearTimeout(timer)
    resolve({ child, logs, stderr: () => err, code })
  })
})

const stop = (child: ChildProcess) => new Promise<void>((resolve) => {
  if (child.exitCode !== null || child.signalCode !== null) return resolve()
  child.once("exit", () => resolve())
  child.kill("SIGTERM")
})

const warnings = (logs: Array<Log>) => logs.filter((l) => l.level === "warn" || l.level === "warning").map((l) => l.message)

describe("serve without a scope file or a grant", () => {
  it("logs one warning with the commands that fix it; after running them the next start is quiet", async () => {
    const env = await setup(privateDir)
    const first = await serve(env)
    expect(first.code).toBeNull()
    const ws = warnings(first.logs())
    expect(ws).toHaveLength(1)
    expect(ws[0]).toContain("not ready for use: no scope file exists")
    expect(ws[0]).toContain("no active grant exists")
    expect(ws[0]).toContain("npx groundnote scope create sales && npx groundnote scope create ops && npx groundnote grants create --kind person --auth email --identity <your e-mail> --scope sales --right read --right decide")
    expect(ws[0]).not.toContain(S("o"))

    // the operator runs what the warning says
    for (const args of [["scope", "create", "sales"], ["scope", "create", "ops"],
      ["grants", "create", "--kind", "person", "--auth", "email", "--identity", "dev@example.com", "--scope", "sales", "--right", "read", "--right", "decide"]]) {
      const r = await cli(args, env)
      expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(0)
    }
    await stop(first.child)
    const second = await serve(env)
    expect(warnings(second.logs())).toEqual([])
    await stop(second.child)
  }, 90_000)

  it("names only what is missing", () => {
    expect(notReadyWarning({ dataDir: "/d", configured: ["sales"], created: ["sales"], activeGrants: 1 })).toBeNull()
    const noGrant = notReadyWarning({ dataDir: "/d", configured: ["sales", "ops"], created: ["ops"], activeGrants: 0 }) ?? ""
    expect(noGrant).toContain("no active grant exists")
    expect(noGrant).not.toContain("scope create")
    expect(noGrant).toContain("--scope ops")
    const noScope = notReadyWarning({ dataDir: "/d", configured: ["sales"], created: [], activeGrants: 2 }) ?? ""
    expect(noScope).toContain("npx groundnote scope create sales")
    expect(noScope).not.toContain("grants create")
    // a lost file is locked (its error line says restore): never "scope create", which refuses it
    expect(notReadyWarning({ dataDir: "/d", configured: ["sales"], created: [], locked: ["sales"], activeGrants: 2 })).toBeNull()
    const lostAndNew = notReadyWarning({ dataDir: "/d", configured: ["sales", "ops"], created: [], locked: ["sales"], activeGrants: 2 }) ?? ""
    expect(lostAndNew).toContain("npx groundnote scope create ops")
    expect(lostAndNew).not.toContain("scope create sales")
  })
})

describe("backup.directory at start (kind copy)", () => {
  it("inside the data dir: start refused with backup-directory-invalid", async () => {
    const env = await setup((_c, dataDir) => {
      const d = join(dataDir, "backups")
      mkdirSync(d, { mode: 0o700 })
      return d
    })
    const r = await serve(env)
    expect(r.code).toBe(1)
    expect(r.stderr()).toMatch(/^groundnote: backup-directory-invalid: backup\.directory in .* is .*backups, inside the data dir/m)
    expect(r.logs().find((l) => l.message === "start refused")).toMatchObject({ code: "backup-directory-invalid" })
  }, 60_000)

  it("missing: the service starts and warns with the command that creates it", async () => {
    const env = await setup((caseDir) => join(caseDir, "not-mounted"))
    const r = await serve(env)
    expect(r.code).toBeNull()
    const w = warnings(r.logs()).find((m) => m.startsWith("backup.directory"))
    expect(w).toMatch(/^backup\.directory .*not-mounted does not exist: create it \(mkdir -m 700 .*not-mounted\) or mount the backup volume; groundnote backup run refuses until then$/)
    await stop(r.child)
  }, 60_000)

  it("mode 0755: a warning with the chmod; a 0700 directory of the service user: no warning", async () => {
    const env = await setup((caseDir) => {
      const d = privateDir(caseDir)
      chmodSync(d, 0o755)
      return d
    })
    const r = await serve(env)
    expect(warnings(r.logs()).find((m) => m.startsWith("backup.directory"))).toMatch(/mode 0755, it must be 0700: chmod 700 .*backup/)
    await stop(r.child)
  }, 60_000)
})

describe("the first moments of serve", () => {
  it("SIGTERM and SIGINT: one JSON log line \"stopped\" (after the listeners closed) is the last line before the exit 0", async () => {
    for (const signal of ["SIGTERM", "SIGINT"] as const) {
      const env = await setup(privateDir)
      const r = await serve(env)
      expect(r.code).toBeNull()
      const exited = new Promise<number | null>((resolve) => r.child.once("close", (code) => resolve(code)))
      r.child.kill(signal)
      // a stop by signal is serve's normal end (systemctl stop): exit 0
      expect(await exited, signal).toBe(0)
      const stopped = r.logs().filter((l) => l.message === "stopped")
      expect(stopped, signal).toEqual([expect.objectContaining({ level: "info", message: "stopped", port: Number(env.GROUNDNOTE_PORT) })])
      expect(r.logs().at(-1)?.message).toBe("stopped")
    }
  }, 90_000)

  it("a /healthz probe from the spawn on is refused until the port listens, then answered: none waits", async () => {
    const env = await setup(privateDir)
    const port = env.GROUNDNOTE_PORT ?? ""
    const child = spawn(process.execPath, [CLI, "serve"], { env, stdio: "ignore" })
    running.push(child)
    const outcomes: Array<string> = []
    const until = Date.now() + 40_000
    // a new connection every few milliseconds, so one lands between the listen and the router
    while (Date.now() < until && !outcomes.includes("200")) {
      outcomes.push(await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(10_000), headers: { connection: "close" } })
        .then((r) => String(r.status), (e: unknown) => (e instanceof Error && e.name === "TimeoutError" ? "waited" : "refused")))
      await new Promise((r) => setTimeout(r, 5))
    }
    await stop(child)
    expect(outcomes.at(-1)).toBe("200")
    expect(outcomes.filter((o) => o !== "refused" && o !== "200")).toEqual([])
  }, 60_000)
})
