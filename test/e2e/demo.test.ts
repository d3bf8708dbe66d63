/**
 * The demo, as a new user meets it: `serve --demo` (what `npm start` runs) on a
 * temp data dir; the feeder token is kept in demo.env beside the dev tokens; one rule is
 * confirmed by the demo person through the approval channel (a decision row of the person's
 * grant, origin grant — not written around the decision path), so a first plain search over the
 * API and through `npx groundnote search` with demo.env finds it; and every command the README's
 * CLI line names is a command of `groundnote --help`.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { readFileSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { tempDir } from "../support/env.js"
import { cleanEnv, cli, CLI, freePort, json, ROOT } from "./support.js"

interface Running { child: ChildProcess; stderr: () => string }

const start = (env: Record<string, string>): Running => {
  const child = spawn(process.execPath, [CLI, "serve", "--demo"], { env, stdio: ["ignore", "ignore", "pipe"] })
  let err = ""
  child.stderr?.on("data", (d: Buffer) => { err += d.toString() })
  return { child, stderr: () => err }
}

const stop = (r: Running) => new Promise<void>((resolve) => {
  if (r.child.exitCode !== null) return resolve()
  r.child.once("exit", () => resolve())
  r.child.kill("SIGTERM")
})

const waitFor = async (check: () => boolean | Promise<boolean>, ms = 30_000) => {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (await Promise.resolve(check()).catch(() => false)) return
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error("timed out")
}

const envFile = (text: string): Record<string, string> =>
  Object.fromEntries(text.split("\n").filter((l) => !l.startsWith("#") && l.includes("=")).map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]))

interface SearchAnswer {
  readonly bundles: ReadonlyArray<{ readonly head: { readonly ref: string; readonly title: string; readonly status: string; readonly adoption: { readonly kind: string } } }>
}

describe("npm start's demo", () => {
  const { dir, cleanup } = tempDir()
  const dataDir = join(dir, "demo")
  let running: Running | undefined
  afterAll(async () => {
    if (running !== undefined) await stop(running)
    cleanup()
  })

  it("keeps the feeder token in demo.env, confirms one rule through the approval channel, and a first plain search finds it", async () => {
    const port = await freePort()
    running = start({ ...cleanEnv(), GROUNDNOTE_DATA_DIR: dataDir, GROUNDNOTE_PORT: String(port) })
    const r = running
    await waitFor(() => r.stderr().includes("confirmed rule"))
    const url = `http://127.0.0.1:${port}`

    // the feeder token printed once is the one kept in demo.env (mode 0600) with the URL
    const printed = /feeder bearer +(gn_[A-Za-z0-9_-]{43})/.exec(r.stderr())?.[1]
    expect(printed).toBeDefined()
    const kept = envFile(readFileSync(join(dataDir, "demo.env"), "utf8"))
    expect(kept.GROUNDNOTE_API_TOKEN).toBe(printed)
    expect(kept.GROUNDNOTE_URL).toBe(url)
    expect(statSync(join(dataDir, "demo.env")).mode & 0o777).toBe(0o600)
    const feeder = kept.GROUNDNOTE_API_TOKEN ?? ""

    // a first plain search with the kept feeder token finds the confirmed rule
    const search = await fetch(`${url}/v1/search`, {
      method: "POST", headers: { authorization: `Bearer ${feeder}`, "content-type": "application/json" },
      body: JSON.stringify({ scopes: ["demo"], text: "offer" })
    })
    expect(search.status).toBe(200)
    const found = (await search.json()) as SearchAnswer
    const head = found.bundles[0]?.head
    expect(head?.title).toBe("Offers to new customers are valid for 14 days; every offer says so")
    expect(head?.status).toBe("confirmed")
    expect(head?.adoption.kind).toBe("person")
    const id = (head?.ref ?? "").replace(/^rule\//, "").replace(/@\d+$/, "")

    // it was confirmed by the demo person's grant on the approval channel, like a form post
    const versions = await fetch(`${url}/v1/rules/${id}/versions`, { headers: { authorization: `Bearer ${feeder}` } })
    const history = (await versions.json()) as { decisions: ReadonlyArray<{ kind: string; origin: string; decided_by: string; reason: string | null }> }
    expect(history.decisions).toEqual([expect.objectContaining({ kind: "confirm", origin: "grant", decided_by: "person:1" })])
    expect(r.stderr()).toContain(`confirmed rule    ${url}/approval/rules/${id}`)

    // the other proposals still wait for a person
    const status = await fetch(`${url}/v1/status`, { headers: { authorization: `Bearer ${feeder}` } })
    expect(await status.json()).toMatchObject({ scopes: [{ scope: "demo", rules: { proposed: 3, confirmed: 1 } }] })

    // the CLI with demo.env's URL and feeder token, as the start output says
    const viaCli = await cli(["search", "--scope", "demo", "--text", "offer", "--json"], { ...cleanEnv(), GROUNDNOTE_URL: url, GROUNDNOTE_API_TOKEN: feeder })
    expect(viaCli.code).toBe(0)
    expect((json(viaCli) as unknown as SearchAnswer).bundles[0]?.head.ref).toBe(head?.ref)

    // the ops CLI with nothing but demo.env (as the start output says): the data dir, the config and the ops token are in it
    expect(kept.GROUNDNOTE_DATA_DIR).toBe(dataDir)
    const opsStatus = await cli(["status", "--json"], { ...cleanEnv(), ...kept })
    expect(opsStatus.code, opsStatus.stderr).toBe(0)
    expect(JSON.stringify(json(opsStatus))).toContain('"demo"')
    // doctor reads the demo's groundnote.json through demo.env's GROUNDNOTE_CONFIG
    expect(kept.GROUNDNOTE_CONFIG).toBe(join(dataDir, "groundnote.json"))
    const doctor = await cli(["doctor", "--json"], { ...cleanEnv(), ...kept })
    const checks = JSON.parse(doctor.stdout) as ReadonlyArray<{ id: string; status: string }>
    // a fresh demo: nothing fails; never backed up yet is a warning naming groundnote backup run
    expect(doctor.code, doctor.stdout).toBe(0)
    expect(checks.filter((c) => c.status === "fail")).toEqual([])
    expect(checks.find((c) => c.id === "backup-age")).toMatchObject({ status: "warn", remedy: expect.stringMatching(/^groundnote backup run/) })
    expect(checks.find((c) => c.id === "probe-age")).toMatchObject({ status: "warn", remedy: expect.stringMatching(/^groundnote backup run/) })
    // the demo has no dead-man service: config-valid says so (warn), backup nightly skips the ping and passes
    expect(checks.find((c) => c.id === "config-valid")).toMatchObject({ status: "warn", message: expect.stringContaining("backup.deadman_url is null") })
    expect((JSON.parse(readFileSync(join(dataDir, "groundnote.json"), "utf8")) as { backup: { deadman_url: unknown } }).backup.deadman_url).toBeNull()
    const nightly = await cli(["backup", "nightly"], { ...cleanEnv(), ...kept })
    expect(nightly.code, nightly.stderr).toBe(0)
    expect(nightly.stderr).toContain("backup nightly: ok")
    expect(nightly.stderr).toContain("dead-man ping: skipped (backup.deadman_url is null")
    const after = JSON.parse((await cli(["doctor", "--json"], { ...cleanEnv(), ...kept })).stdout) as ReadonlyArray<{ id: string; status: string }>
    expect(after.filter((c) => ["backup-age", "probe-age"].includes(c.id)).map((c) => c.status)).toEqual(["ok", "ok"])
    expect(r.stderr()).toContain(`ops (CLI)         set -a; . ${dataDir}/demo.env; set +a; npx groundnote status`)

    // a second start seeds nothing and confirms nothing again; demo.env stays as it was
    await stop(r)
    const before = readFileSync(join(dataDir, "demo.env"), "utf8")
    running = start({ ...cleanEnv(), GROUNDNOTE_DATA_DIR: dataDir, GROUNDNOTE_PORT: String(port) })
    const second = running
    await waitFor(async () => (await fetch(`${url}/healthz`)).ok)
    const again = await fetch(`${url}/v1/status`, { headers: { authorization: `Bearer ${feeder}` } })
    expect(await again.json()).toMatchObject({ scopes: [{ scope: "demo", rules: { proposed: 3, confirmed: 1 } }] })
    expect(second.stderr()).not.toContain("confirmed rule")
    expect(readFileSync(join(dataDir, "demo.env"), "utf8")).toBe(before)
  }, 120_000)

  it("a later start on another port (what port-in-use advises): groundnote.json's public_url, the banner and demo.env's GROUNDNOTE_URL follow it; sign-in and the CLI work", async () => {
    const moved = join(dir, "moved")
    const first = await freePort()
    const once = start({ ...cleanEnv(), GROUNDNOTE_DATA_DIR: moved, GROUNDNOTE_PORT: String(first) })
    try {
      await waitFor(() => once.stderr().includes("confirmed rule"))
    } finally {
      await stop(once)
    }
    // a demo dir of an earlier version: its dead-man URL nobody serves becomes null
    const configPath = join(moved, "groundnote.json")
    const written = JSON.parse(readFileSync(configPath, "utf8")) as { backup: Record<string, unknown> }
    writeFileSync(configPath, JSON.stringify({ ...written, backup: { ...written.backup, deadman_url: "http://127.0.0.1:9/deadman" } }), { mode: 0o600 })
    const port = await freePort()
    const url = `http://127.0.0.1:${port}`
    const later = start({ ...cleanEnv(), GROUNDNOTE_DATA_DIR: moved, GROUNDNOTE_PORT: String(port) })
    try {
      await waitFor(async () => (await fetch(`${url}/healthz`)).ok)
      await waitFor(() => later.stderr().includes("demo on"))
      expect(later.stderr()).toContain(`demo on ${url} (data dir ${moved})`)
      expect(later.stderr()).toContain(`approval login    ${url}/approval/login`)
      expect(JSON.parse(readFileSync(configPath, "utf8"))).toMatchObject({ public_url: url, backup: { deadman_url: null } })
      expect(statSync(join(moved, "groundnote.json")).mode & 0o777).toBe(0o600)
      const kept = envFile(readFileSync(join(moved, "demo.env"), "utf8"))
      expect(kept.GROUNDNOTE_URL).toBe(url)
      expect(statSync(join(moved, "demo.env")).mode & 0o777).toBe(0o600)

      // sign-in from the page's own origin is a session, not csrf-failed
      const login = await fetch(`${url}/approval/login`, {
        method: "POST", redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded", origin: url },
        body: new URLSearchParams({ token: kept.GROUNDNOTE_DEV_APPROVAL_TOKEN ?? "" }).toString()
      })
      expect(login.status, await login.clone().text()).toBe(303)
      expect(login.headers.getSetCookie().some((c) => c.startsWith("gn_session="))).toBe(true)

      // the CLI with nothing but demo.env reaches the service on the new port
      const viaCli = await cli(["search", "--scope", "demo", "--text", "offer", "--json"], { ...cleanEnv(), ...kept })
      expect(viaCli.code, viaCli.stderr).toBe(0)
      expect((json(viaCli) as unknown as SearchAnswer).bundles.length).toBeGreaterThan(0)
    } finally {
      await stop(later)
    }
  }, 120_000)

  it("the README's CLI line names only commands of groundnote --help and says npx groundnote", async () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8")
    const line = readme.split("\n").find((l) => l.startsWith("npx groundnote"))
    expect(line).toBeDefined()
    const help = await cli(["--help"], cleanEnv())
    expect(help.code).toBe(0)
    const commands = new Set([...help.stdout.matchAll(/^ {2}([a-z]+(?: [a-z]+)?)\b/gm)].map((m) => m[1]?.split(" ")[0] ?? ""))
    const named = /#[^:]*:(.*)$/.exec(line ?? "")?.[1] ?? ""
    const words = named.split(",").map((w) => w.trim().split(" ")[0] ?? "").filter((w) => /^[a-z]+$/.test(w))
    expect(words.length).toBeGreaterThan(3)
    for (const w of words) expect(commands, w).toContain(w)
    expect(commands).not.toContain("scopes")
  }, 60_000)
})
