/**
 * Every start refusal of architecture.md §3: `groundnote serve` is started as a process and
 * must exit 1 with `groundnote: <code>: <message>` on stderr naming the variable, key or path (a
 * message of several problems on real lines) and one JSON log line "start
 * refused" on stdout; a taken port names the address, the port and GROUNDNOTE_PORT.
 */
import { spawn } from "node:child_process"
import { chmodSync, mkdirSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:net"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { baseConfigJson, tempDir } from "../support/env.js"

const root = join(import.meta.dirname, "..", "..")
const cli = join(root, "dist", "src", "ops", "cli.js")
const { dir, cleanup } = tempDir("gn-ref-")
const sockets: Array<Server> = []
afterAll(async () => {
  await Promise.all(sockets.map((s) => new Promise((r) => s.close(r))))
  cleanup()
})

const S = (c: string) => c.repeat(40)
const devEnv = {
  GROUNDNOTE_AUTH_MODE: "dev-token", GROUNDNOTE_SESSION_SECRET: S("s"), GROUNDNOTE_OPS_TOKEN: S("o"),
  GROUNDNOTE_DEV_MCP_TOKEN: S("m"), GROUNDNOTE_DEV_APPROVAL_TOKEN: S("a"), GROUNDNOTE_DEV_EMAIL: "dev@example.com"
}
const access = { team_domain: "https://acme.cloudflareaccess.com", aud_mcp: "m", aud_approval: "a", aud_api: "p" }

let n = 0
/** A data dir (0700) with its groundnote.json; returns the env that points at both. */
const setup = (config: Record<string, unknown>, env: Record<string, string>, prepare?: (dataDir: string) => void) => {
  n += 1
  const caseDir = join(dir, String(n))
  const dataDir = join(caseDir, "data")
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  const configPath = join(caseDir, "groundnote.json")
  writeFileSync(configPath, JSON.stringify(config))
  prepare?.(dataDir)
  const base: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("GROUNDNOTE_") && v !== undefined) base[k] = v
  return { ...base, GROUNDNOTE_DATA_DIR: dataDir, GROUNDNOTE_CONFIG: configPath, ...env }
}

const serve = (env: Record<string, string>) => new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
  const child = spawn(process.execPath, [cli, "serve"], { env, stdio: ["ignore", "pipe", "pipe"] })
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (d: Buffer) => { stdout += d.toString() })
  child.stderr.on("data", (d: Buffer) => { stderr += d.toString() })
  const timer = setTimeout(() => child.kill("SIGKILL"), 20_000)
  child.on("close", (code) => {
    clearTimeout(timer)
    resolve({ code, stdout, stderr })
  })
})

const { GROUNDNOTE_DEV_MCP_TOKEN: _m, GROUNDNOTE_DEV_APPROVAL_TOKEN: _a, GROUNDNOTE_DEV_EMAIL: _e, ...accessEnv } = devEnv

const CASES: ReadonlyArray<[string, string, RegExp, () => Record<string, string>]> = [
  ["mode missing", "auth-mode-invalid", /GROUNDNOTE_AUTH_MODE/, () => setup(baseConfigJson(), { ...devEnv, GROUNDNOTE_AUTH_MODE: "" })],
  ["mode unknown", "auth-mode-invalid", /GROUNDNOTE_AUTH_MODE/, () => setup(baseConfigJson(), { ...devEnv, GROUNDNOTE_AUTH_MODE: "open" })],
  ["a secret missing", "secret-missing", /GROUNDNOTE_OPS_TOKEN/, () => setup(baseConfigJson(), { ...devEnv, GROUNDNOTE_OPS_TOKEN: "" })],
  ["a secret short", "secret-too-short", /GROUNDNOTE_SESSION_SECRET/, () => setup(baseConfigJson(), { ...devEnv, GROUNDNOTE_SESSION_SECRET: "short" })],
  ["two secrets equal", "secrets-equal", /GROUNDNOTE_DEV_MCP_TOKEN.*GROUNDNOTE_DEV_APPROVAL_TOKEN|GROUNDNOTE_DEV_APPROVAL_TOKEN.*GROUNDNOTE_DEV_MCP_TOKEN/, () => setup(baseConfigJson(), { ...devEnv, GROUNDNOTE_DEV_APPROVAL_TOKEN: S("m") })],
  ["access mode without access", "access-missing", /access/, () => setup({ ...baseConfigJson(), public_url: "https://g.example" }, { ...accessEnv, GROUNDNOTE_AUTH_MODE: "cloudflare-access" })],
  ["access mode with an http public_url", "public-url-not-https", /public_url/, () => setup({ ...baseConfigJson(), access }, { ...accessEnv, GROUNDNOTE_AUTH_MODE: "cloudflare-access" })],
  ["access mode with an http team domain", "team-domain-not-https", /team_domain/, () => setup({ ...baseConfigJson(), public_url: "https://g.example", access: { ...access, team_domain: "http://acme.example" } }, { ...accessEnv, GROUNDNOTE_AUTH_MODE: "cloudflare-access" })],
  ["access mode with dev variables", "dev-variables-in-access-mode", /GROUNDNOTE_DEV_EMAIL/, () => setup({ ...baseConfigJson(), public_url: "https://g.example", access }, { ...accessEnv, GROUNDNOTE_AUTH_MODE: "cloudflare-access", GROUNDNOTE_DEV_EMAIL: "dev@example.com" })],
  ["dev mode on a non-loopback host", "non-loopback-host", /GROUNDNOTE_HOST/, () => setup(baseConfigJson(), { ...devEnv, GROUNDNOTE_HOST: "0.0.0.0" })],
  ["GROUNDNOTE_OPS_PORT set", "ops-port-set", /GROUNDNOTE_OPS_PORT/, () => setup(baseConfigJson(), { ...devEnv, GROUNDNOTE_OPS_PORT: "9999" })],
  ["a group-readable data dir", "data-dir-permissions", /chmod 700/, () => setup(baseConfigJson(), devEnv, (d) => chmodSync(d, 0o750))],
  ["a world-readable scope file", "data-dir-permissions", /chmod 600 .*sales\.sqlite/, () => setup(baseConfigJson(), devEnv, (d) => {
    mkdirSync(join(d, "scopes"), { mode: 0o700 })
    writeFileSync(join(d, "scopes", "sales.sqlite"), "", { mode: 0o644 })
    chmodSync(join(d, "scopes", "sales.sqlite"), 0o644)
  })],
  ["an ops socket path longer than sun_path", "ops-socket-path-too-long", /choose a shorter GROUNDNOTE_DATA_DIR/, () => {
    const env = setup(baseConfigJson(), devEnv)
    const long = join(env.GROUNDNOTE_DATA_DIR ?? "", "x".repeat(110))
    mkdirSync(long, { mode: 0o700 })
    return { ...env, GROUNDNOTE_DATA_DIR: long }
  }],
  // the port is taken too: the ops socket is checked first, so its refusal is the one printed
  ["a regular file at ops.sock", "ops-socket-unavailable", /ops\.sock/, () => ({
    ...setup(baseConfigJson(), devEnv, (d) => writeFileSync(join(d, "ops.sock"), "", { mode: 0o600 })),
    GROUNDNOTE_PORT: String(takenPort)
  })],
  ["an ops.sock served by another process", "ops-socket-unavailable", /ops\.sock/, () => ({
    ...setup(baseConfigJson(), devEnv, (d) => {
      const server = createServer((c) => c.end())
      server.listen(join(d, "ops.sock"))
      sockets.push(server)
    }),
    GROUNDNOTE_PORT: String(takenPort)
  })],
  ["an invalid groundnote.json", "config-invalid", /search\.nope: unknown key/, () => setup({ ...baseConfigJson(), search: { nope: 1 } }, devEnv)],
  ["a misspelt key", "config-invalid", /\n {2}serach: unknown key — did you mean search\?/, () => setup({ ...baseConfigJson(), serach: {} }, devEnv)],
  ["a port another process listens on", "port-in-use", /^groundnote: port-in-use: 127\.0\.0\.1:\d+ is already in use by another process: .*GROUNDNOTE_PORT/, () => {
    const env = setup(baseConfigJson(), devEnv)
    return { ...env, GROUNDNOTE_PORT: String(takenPort) }
  }],
  ["a missing groundnote.json", "config-unreadable", /GROUNDNOTE_CONFIG/, () => ({ ...setup(baseConfigJson(), devEnv), GROUNDNOTE_CONFIG: join(dir, "missing.json") })]
]

let takenPort = 0
beforeAll(async () => {
  const server = createServer((c) => c.end())
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()))
  sockets.push(server)
  const address = server.address()
  takenPort = typeof address === "object" && address !== null ? address.port : 0
})

// twenty CLI starts, several at once on two cores: a refusal is said before the server's modules load
describe.concurrent("start refusals", () => {
  it.each(CASES)("%s → exit 1 and groundnote: %s: … naming it", async (_name, code, detail, env) => {
    const r = await serve(env())
    expect(r.code).toBe(1)
    const from = r.stderr.indexOf("groundnote: ")
    const message = r.stderr.slice(from)
    expect(message.startsWith(`groundnote: ${code}: `), r.stderr).toBe(true)
    expect(message).toMatch(detail)
    // real line breaks, never an escaped one
    expect(r.stderr).not.toContain("\\u000a")
    expect(r.stderr).not.toContain(S("s"))
    expect(r.stderr).not.toContain(S("o"))
    // the JSON log keeps the refusal on one line
    const logged = r.stdout.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.message === "start refused")
    expect(logged).toMatchObject({ level: "error", code })
    expect(String(logged?.refusal)).toBe(message.slice(`groundnote: ${code}: `.length).replace(/\n$/, ""))
  })
})
