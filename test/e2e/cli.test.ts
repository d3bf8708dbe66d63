/**
 * The built CLI as an operator runs it: `groundnote version`, usage errors, and `serve --demo`
 * on a temp data dir and a free loopback port (the README's first command does the same).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { createServer } from "node:net"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { tempDir } from "../support/env.js"

const root = join(import.meta.dirname, "..", "..")
const cli = join(root, "dist", "src", "ops", "cli.js")

const freePort = (): Promise<number> => new Promise((resolve, reject) => {
  const srv = createServer()
  srv.listen(0, "127.0.0.1", () => {
    const addr = srv.address()
    srv.close(() => (typeof addr === "object" && addr !== null ? resolve(addr.port) : reject(new Error("no port"))))
  })
})

const cleanEnv = (): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("GROUNDNOTE_") && v !== undefined) env[k] = v
  return env
}

interface Running { child: ChildProcess; stdout: () => string; stderr: () => string }

const start = (args: ReadonlyArray<string>, env: Record<string, string>): Running => {
  const child = spawn(process.execPath, [cli, ...args], { env, stdio: ["ignore", "pipe", "pipe"] })
  let out = ""
  let err = ""
  child.stdout?.on("data", (d: Buffer) => { out += d.toString() })
  child.stderr?.on("data", (d: Buffer) => { err += d.toString() })
  return { child, stdout: () => out, stderr: () => err }
}

const waitFor = async (check: () => Promise<boolean>, ms = 15_000) => {
  const end = Date.now() + ms
  while (Date.now() < end) {
    if (await check().catch(() => false)) return
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error("timed out")
}

const stop = (r: Running) => new Promise<void>((resolve) => {
  if (r.child.exitCode !== null) return resolve()
  r.child.once("exit", () => resolve())
  r.child.kill("SIGTERM")
})

describe("groundnote CLI", () => {
  it("version prints the bare version on stdout and exits 0", () => {
    const r = spawnSync(process.execPath, [cli, "version"], { env: cleanEnv() })
    expect(r.status).toBe(0)
    expect(r.stdout.toString()).toBe(`${JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version}\n`)
    // --json everywhere (gaps.md §9)
    const j = spawnSync(process.execPath, [cli, "version", "--json"], { env: cleanEnv() })
    expect(j.status, j.stderr.toString()).toBe(0)
    expect(JSON.parse(j.stdout.toString())).toEqual({ version: JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version })
  })

  it("serve takes --json too (gaps.md §9): a start refusal is exit 1 with its JSON log line on stdout, not a usage error", () => {
    const r = spawnSync(process.execPath, [cli, "serve", "--json"], { env: cleanEnv(), timeout: 30_000 })
    expect(r.status, r.stderr.toString()).toBe(1)
    expect(r.stderr.toString()).toMatch(/^groundnote: auth-mode-invalid: /m)
    const lines = r.stdout.toString().trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(lines.find((l) => l.message === "start refused")).toMatchObject({ code: "auth-mode-invalid" })
  })

  it("an unknown command is a usage error: exit 2", () => {
    const r = spawnSync(process.execPath, [cli, "no-such-command"], { env: cleanEnv() })
    expect(r.status).toBe(2)
    // a group's unknown command is named as such, with the nearest one and the group's list
    const sub = spawnSync(process.execPath, [cli, "grants", "lst"], { env: cleanEnv() })
    expect(sub.status).toBe(2)
    expect(sub.stdout.toString()).toBe("")
    expect(sub.stderr.toString()).toMatch(/^groundnote: usage: unknown command: grants lst \(did you mean grants list\?\)\n/)
    expect(sub.stderr.toString()).toContain("grants disable")
  })

  it("an unknown option or a stray word is one usage line naming it (and the nearest option): exit 2", () => {
    const option = spawnSync(process.execPath, [cli, "search", "--scop", "demo", "--text", "x"], { env: cleanEnv() })
    expect(option.status).toBe(2)
    expect(option.stdout.toString()).toBe("")
    expect(option.stderr.toString()).toBe("groundnote: usage: unknown option --scop (did you mean --scope?): groundnote search --help lists its options\n")
    const word = spawnSync(process.execPath, [cli, "status", "extra"], { env: cleanEnv() })
    expect(word.status).toBe(2)
    expect(word.stderr.toString()).toBe("groundnote: usage: unknown argument: extra (groundnote status --help shows its usage)\n")
  })

  it("the parser's other refusals are usage lines in the CLI's words, naming the option and the help page: exit 2", () => {
    const run = (...args: Array<string>) => spawnSync(process.execPath, [cli, ...args], { env: cleanEnv() })
    const integer = run("search", "--scope", "demo", "--limit", "abc", "--text", "x")
    expect(integer.status).toBe(2)
    expect(integer.stdout.toString()).toBe("")
    expect(integer.stderr.toString()).toBe("groundnote: usage: --limit: abc is not an integer (groundnote search --help shows its usage)\n")
    const several = run("grants", "create", "--right", "rea", "--auth", "bearer")
    expect(several.status).toBe(2)
    expect(several.stderr.toString()).toBe([
      "groundnote: usage: missing option --kind",
      "groundnote: usage: missing option --scope",
      "groundnote: usage: --right: rea is not one of read, propose, decide, redact (did you mean read?) (groundnote grants create --help shows its usage)",
      ""
    ].join("\n"))
    const twice = run("search", "--scope", "demo", "--text", "x", "--limit", "5", "--limit", "6")
    expect(twice.status).toBe(2)
    expect(twice.stderr.toString()).toBe("groundnote: usage: --limit is given more than once (groundnote search --help shows its usage)\n")
    const value = run("restore", "--to")
    expect(value.status).toBe(2)
    expect(value.stderr.toString()).toBe("groundnote: usage: --to needs a value (groundnote restore --help shows its usage)\n")
  })

  it("serve refuses to start with GROUNDNOTE_OPS_PORT set: exit 1 and one line naming the code", () => {
    const { dir, cleanup } = tempDir()
    try {
      const r = spawnSync(process.execPath, [cli, "serve", "--demo"], {
        env: { ...cleanEnv(), GROUNDNOTE_DATA_DIR: join(dir, "demo"), GROUNDNOTE_OPS_PORT: "9999" }, timeout: 20_000
      })
      expect(r.status).toBe(1)
      expect(r.stderr.toString()).toMatch(/^groundnote: ops-port-set: .*GROUNDNOTE_OPS_PORT/m)
    } finally { cleanup() }
  })
})

describe("help, as a user reads it through a pipe", () => {
  const run = (args: ReadonlyArray<string>) => spawnSync(process.execPath, [cli, ...args], { env: cleanEnv(), timeout: 30_000 })
  const readable = (text: string) => {
    expect(text.includes("\u001b")).toBe(false)
    expect(text).not.toContain("--wizard")
    expect(text).not.toMatch(/^\$ groundnote\s*$/m)
    const lines = text.split("\n")
    const example = lines.indexOf("Example:")
    expect(lines.filter((l, i) => i !== example + 1 && l.length > 80)).toEqual([])
  }

  it("groundnote --help and a command's --help: plain text on stdout, at most 80 columns, one example, exit 0", () => {
    const root = run(["--help"])
    expect(root.status).toBe(0)
    expect(root.stderr.toString()).toBe("")
    readable(root.stdout.toString())
    expect(root.stdout.toString()).toMatch(/^ {2}backup nightly +backup run, then probe, then the dead-man ping$/m)
    const probe = run(["backup", "probe", "-h"])
    expect(probe.status).toBe(0)
    readable(probe.stdout.toString())
    expect(probe.stdout.toString()).toMatch(/^groundnote backup probe: [\s\S]*?\n\nUsage: groundnote backup probe \[--scope <s>\] \[--json\]\n/)
    expect(probe.stdout.toString().match(/^Example:\n {2}groundnote backup probe --scope sales$/gm)).toHaveLength(1)
  })

  it("no command, a bare group and --wizard are usage errors: help on stderr, exit 2, stdout empty", () => {
    for (const args of [[], ["grants"]]) {
      const r = run(args)
      expect(r.status, args.join(" ")).toBe(2)
      expect(r.stdout.toString()).toBe("")
      readable(r.stderr.toString())
    }
    const wizard = run(["status", "--wizard"])
    expect(wizard.status).toBe(2)
    expect(wizard.stdout.toString()).toBe("")
    expect(wizard.stderr.toString()).toBe("groundnote: usage: --wizard is not an option of groundnote\n")
  })
})

describe("serve --demo", () => {
  const { dir, cleanup } = tempDir()
  const dataDir = join(dir, "demo")
  let port = 0
  let first: Running | undefined
  afterAll(async () => {
    if (first !== undefined) await stop(first)
    cleanup()
  })

  it("seeds a demo data dir, answers /healthz on loopback, logs JSON lines, and a second start reuses it", async () => {
    port = await freePort()
    const env = { ...cleanEnv(), GROUNDNOTE_DATA_DIR: dataDir, GROUNDNOTE_PORT: String(port) }
    first = start(["serve", "--demo"], env)
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok)
    expect(await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()).toEqual({ ok: true })
    // the banner follows the demo person's confirmation, which goes through the listening service
    const running = first
    await waitFor(() => Promise.resolve(running.stderr().includes("approval login")))
    expect(first.stderr()).toMatch(/feeder bearer +gn_[A-Za-z0-9_-]{43}/)
    expect(first.stderr()).toContain("approval login    http://127.0.0.1:")
    const token = /gn_[A-Za-z0-9_-]{43}/.exec(first.stderr())?.[0] ?? ""
    const apiBearer = /API bearer \(person\) +(\S+)/.exec(first.stderr())?.[1] ?? ""
    const proposals = await fetch(`http://127.0.0.1:${port}/v1/proposals?scope=demo`, { headers: { authorization: `Bearer ${apiBearer}` } })
    expect(proposals.status).toBe(200)
    expect(((await proposals.json()) as { proposals: Array<unknown> }).proposals.length).toBe(3)
    const feeder = await fetch(`http://127.0.0.1:${port}/v1/status`, { headers: { authorization: `Bearer ${token}` } })
    expect(await feeder.json()).toMatchObject({ grant: { kind: "service" }, scopes: [{ scope: "demo", rules: { proposed: 3 } }] })
    await stop(first)
    const lines = first.stdout().trim().split("\n")
    expect(lines.length).toBeGreaterThan(0)
    for (const line of lines) {
      const obj = JSON.parse(line) as { at: string; level: string; message: string }
      expect(obj.at).toMatch(/Z$/)
      expect(typeof obj.message).toBe("string")
    }
    expect(first.stdout()).not.toContain(token)
    const secrets = readFileSync(join(dataDir, "demo.env"), "utf8")
    for (const s of secrets.split("\n").map((l) => l.split("=")[1] ?? "").filter((v) => v.length >= 32)) {
      expect(first.stdout()).not.toContain(s)
    }

    const second = start(["serve", "--demo"], env)
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok)
    await stop(second)
    expect(second.stderr()).not.toContain("shown once")
    expect(second.stderr()).not.toMatch(/gn_[A-Za-z0-9_-]{43}/)
    expect(readFileSync(join(dataDir, "demo.env"), "utf8")).toBe(secrets)
  }, 60_000)
})
