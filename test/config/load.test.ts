import { mkdtempSync, rmSync, writeFileSync, copyFileSync, mkdirSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { Effect, Either, Redacted } from "effect"
import { AppConfig } from "../../src/config/config.js"
import { checkConfigAgainstEnv } from "../../src/config/cross-checks.js"
import { readEnv } from "../../src/config/env.js"
import { parseConfigFile } from "../../src/config/file.js"
import { AppConfigLive, loadConfig } from "../../src/config/load.js"
import { type StartRefusal } from "../../src/config/refusal.js"

const SESSION = "session-secret-0123456789abcdefghijklmnop"
const OPS = "ops-token-0123456789abcdefghijklmnopqrstuv"
const MCP = "dev-mcp-token-0123456789abcdefghijklmnopqr"
const APPROVAL = "dev-approval-token-0123456789abcdefghijklm"
const API = "dev-api-token-0123456789abcdefghijklmnopqr"
const TYPESAFE = "typesafe-key-0123456789abcdefghijklmnopqrs"
const ALL_SECRETS = [SESSION, OPS, MCP, APPROVAL, API, TYPESAFE]

const devEnv = (extra: Record<string, string | undefined> = {}): Record<string, string | undefined> => ({
  GROUNDNOTE_AUTH_MODE: "dev-token",
  GROUNDNOTE_SESSION_SECRET: SESSION,
  GROUNDNOTE_OPS_TOKEN: OPS,
  GROUNDNOTE_DEV_MCP_TOKEN: MCP,
  GROUNDNOTE_DEV_APPROVAL_TOKEN: APPROVAL,
  GROUNDNOTE_DEV_EMAIL: "Dev@Acme.Example",
  ...extra
})

const accessEnv = (extra: Record<string, string | undefined> = {}): Record<string, string | undefined> => ({
  GROUNDNOTE_AUTH_MODE: "cloudflare-access",
  GROUNDNOTE_SESSION_SECRET: SESSION,
  GROUNDNOTE_OPS_TOKEN: OPS,
  ...extra
})

const refusalOf = <A>(effect: Effect.Effect<A, StartRefusal>): StartRefusal => {
  const result = Effect.runSync(Effect.either(effect))
  if (Either.isRight(result)) throw new Error("expected a start refusal")
  return result.left
}

const refusalOfAsync = async <A>(effect: Effect.Effect<A, StartRefusal>): Promise<StartRefusal> => {
  const result = await Effect.runPromise(Effect.either(effect))
  if (Either.isRight(result)) throw new Error("expected a start refusal")
  return result.left
}

const expectNoSecret = (text: string) => {
  for (const s of ALL_SECRETS) expect(text).not.toContain(s)
}

const CWD = "/srv/groundnote"

describe("readEnv", () => {
  it("applies the defaults and lowercases the dev e-mail", () => {
    const env = Effect.runSync(readEnv(devEnv(), CWD))
    expect(env.authMode).toBe("dev-token")
    expect(env.host).toBe("127.0.0.1")
    expect(env.port).toBe(8787)
    expect(env.allowNonLoopback).toBe(false)
    expect(env.dataDir).toBe("/srv/groundnote/data")
    expect(env.configPath).toBe("/srv/groundnote/groundnote.json")
    expect(env.devEmail).toBe("dev@acme.example")
    expect(env.devApiToken).toBeNull()
    expect(env.typesafeApiKey).toBeNull()
    expect(Redacted.value(env.sessionSecret)).toBe(SESSION)
    expect(Redacted.value(env.opsToken)).toBe(OPS)
    expect(env.devMcpToken === null ? null : Redacted.value(env.devMcpToken)).toBe(MCP)
    expect(env.devApprovalToken === null ? null : Redacted.value(env.devApprovalToken)).toBe(APPROVAL)
  })

  it("reads every variable that is set", () => {
    const env = Effect.runSync(readEnv(devEnv({
      GROUNDNOTE_DEV_API_TOKEN: API,
      GROUNDNOTE_HOST: "0.0.0.0",
      GROUNDNOTE_PORT: "9000",
      GROUNDNOTE_DEV_ALLOW_NON_LOOPBACK: "true",
      GROUNDNOTE_DATA_DIR: "../state",
      GROUNDNOTE_CONFIG: "/etc/groundnote/groundnote.json",
      TYPESAFE_API_KEY: TYPESAFE
    }), CWD))
    expect(env.host).toBe("0.0.0.0")
    expect(env.port).toBe(9000)
    expect(env.allowNonLoopback).toBe(true)
    expect(env.dataDir).toBe("/srv/state")
    expect(env.configPath).toBe("/etc/groundnote/groundnote.json")
    expect(env.devApiToken === null ? null : Redacted.value(env.devApiToken)).toBe(API)
    expect(env.typesafeApiKey === null ? null : Redacted.value(env.typesafeApiKey)).toBe(TYPESAFE)
  })

  it("accepts cloudflare-access mode without dev variables", () => {
    const env = Effect.runSync(readEnv(accessEnv({ GROUNDNOTE_HOST: "0.0.0.0" }), CWD))
    expect(env.authMode).toBe("cloudflare-access")
    expect(env.devMcpToken).toBeNull()
    expect(env.devEmail).toBeNull()
    expect(env.host).toBe("0.0.0.0")
  })

  it("accepts ::1 and localhost as loopback hosts in dev-token mode", () => {
    for (const host of ["::1", "localhost", "127.0.0.1"]) {
      expect(Effect.runSync(readEnv(devEnv({ GROUNDNOTE_HOST: host }), CWD)).host).toBe(host)
    }
  })

  it("never shows a secret in String(), JSON or inspection of the Env", () => {
    const env = Effect.runSync(readEnv(devEnv({ GROUNDNOTE_DEV_API_TOKEN: API, TYPESAFE_API_KEY: TYPESAFE }), CWD))
    expectNoSecret(String(env))
    expectNoSecret(JSON.stringify(env))
    expectNoSecret(String(env.sessionSecret))
    expectNoSecret(`${env.opsToken}`)
  })

  it("refuses a missing GROUNDNOTE_AUTH_MODE (auth-mode-invalid)", () => {
    const e = refusalOf(readEnv(devEnv({ GROUNDNOTE_AUTH_MODE: undefined }), CWD))
    expect(e.code).toBe("auth-mode-invalid")
    expect(e.message).toContain("GROUNDNOTE_AUTH_MODE")
    expect(e.message).toContain("dev-token")
  })

  it("refuses an unknown GROUNDNOTE_AUTH_MODE (auth-mode-invalid)", () => {
    const e = refusalOf(readEnv(devEnv({ GROUNDNOTE_AUTH_MODE: "dev_token" }), CWD))
    expect(e.code).toBe("auth-mode-invalid")
    expect(e.message).toContain("GROUNDNOTE_AUTH_MODE")
    expect(e.message).toContain("cloudflare-access")
  })

  it("refuses a missing secret (secret-missing)", () => {
    const e = refusalOf(readEnv(devEnv({ GROUNDNOTE_DEV_APPROVAL_TOKEN: "" }), CWD))
    expect(e.code).toBe("secret-missing")
    expect(e.message).toContain("GROUNDNOTE_DEV_APPROVAL_TOKEN")
    expectNoSecret(e.message)
  })

  it("requires GROUNDNOTE_SESSION_SECRET in cloudflare-access mode too", () => {
    const e = refusalOf(readEnv(accessEnv({ GROUNDNOTE_SESSION_SECRET: undefined }), CWD))
    expect(e.code).toBe("secret-missing")
    expect(e.message).toContain("GROUNDNOTE_SESSION_SECRET")
  })

  it("refuses a secret shorter than 32 characters (secret-too-short) without showing it", () => {
    const short = "0123456789abcdefghijklmnopqrstu" // 31
    const e = refusalOf(readEnv(devEnv({ GROUNDNOTE_OPS_TOKEN: short }), CWD))
    expect(e.code).toBe("secret-too-short")
    expect(e.message).toContain("GROUNDNOTE_OPS_TOKEN")
    expect(e.message).toContain("32")
    expect(e.message).not.toContain(short)
  })

  it("checks the optional GROUNDNOTE_DEV_API_TOKEN when it is set (secret-too-short)", () => {
    const e = refusalOf(readEnv(devEnv({ GROUNDNOTE_DEV_API_TOKEN: "short" }), CWD))
    expect(e.code).toBe("secret-too-short")
    expect(e.message).toContain("GROUNDNOTE_DEV_API_TOKEN")
    expect(e.message).not.toContain("short\"")
  })

  it("refuses two equal secrets (secrets-equal) naming both variables but not the value", () => {
    const e = refusalOf(readEnv(devEnv({ GROUNDNOTE_DEV_API_TOKEN: MCP }), CWD))
    expect(e.code).toBe("secrets-equal")
    expect(e.message).toContain("GROUNDNOTE_DEV_MCP_TOKEN")
    expect(e.message).toContain("GROUNDNOTE_DEV_API_TOKEN")
    expectNoSecret(e.message)
  })

  it("refuses a missing GROUNDNOTE_DEV_EMAIL in dev-token mode (dev-email-missing)", () => {
    const e = refusalOf(readEnv(devEnv({ GROUNDNOTE_DEV_EMAIL: undefined }), CWD))
    expect(e.code).toBe("dev-email-missing")
    expect(e.message).toContain("GROUNDNOTE_DEV_EMAIL")
  })

  it("refuses a GROUNDNOTE_DEV_EMAIL that is not a printable-ASCII address (dev-email-invalid)", () => {
    for (const bad of ["no-at-sign", "dev @acme.example", "dév@acme.example", "a@b@c", "@acme.example", "dev@"]) {
      const e = refusalOf(readEnv(devEnv({ GROUNDNOTE_DEV_EMAIL: bad }), CWD))
      expect(e.code).toBe("dev-email-invalid")
      expect(e.message).toContain("GROUNDNOTE_DEV_EMAIL")
    }
  })

  it("refuses a GROUNDNOTE_PORT outside 1..65535 or not an integer (port-invalid)", () => {
    for (const bad of ["0", "65536", "80.5", "http", "-1", " 80"]) {
      const e = refusalOf(readEnv(devEnv({ GROUNDNOTE_PORT: bad }), CWD))
      expect(e.code).toBe("port-invalid")
      expect(e.message).toContain("GROUNDNOTE_PORT")
    }
  })

  it("refuses GROUNDNOTE_OPS_PORT (ops-port-set)", () => {
    const e = refusalOf(readEnv(accessEnv({ GROUNDNOTE_OPS_PORT: "8788" }), CWD))
    expect(e.code).toBe("ops-port-set")
    // set but empty is set too (§3: "GROUNDNOTE_OPS_PORT set")
    expect(refusalOf(readEnv(accessEnv({ GROUNDNOTE_OPS_PORT: "" }), CWD)).code).toBe("ops-port-set")
    expect(e.message).toContain("GROUNDNOTE_OPS_PORT")
    expect(e.message).toContain("ops.sock")
  })

  it("refuses GROUNDNOTE_DEV_* in cloudflare-access mode (dev-variables-in-access-mode) naming them", () => {
    const e = refusalOf(readEnv(accessEnv({
      GROUNDNOTE_DEV_MCP_TOKEN: MCP,
      GROUNDNOTE_DEV_ALLOW_NON_LOOPBACK: "true",
      GROUNDNOTE_DEV_EMAIL: "dev@acme.example"
    }), CWD))
    expect(e.code).toBe("dev-variables-in-access-mode")
    expect(e.message).toContain("GROUNDNOTE_DEV_MCP_TOKEN")
    expect(e.message).toContain("GROUNDNOTE_DEV_ALLOW_NON_LOOPBACK")
    expect(e.message).toContain("GROUNDNOTE_DEV_EMAIL")
    expectNoSecret(e.message)
  })

  it("refuses a non-loopback host in dev-token mode (non-loopback-host) unless the allow flag is true", () => {
    const e = refusalOf(readEnv(devEnv({ GROUNDNOTE_HOST: "0.0.0.0", GROUNDNOTE_DEV_ALLOW_NON_LOOPBACK: "yes" }), CWD))
    expect(e.code).toBe("non-loopback-host")
    expect(e.message).toContain("GROUNDNOTE_HOST")
    expect(e.message).toContain("GROUNDNOTE_DEV_ALLOW_NON_LOOPBACK=true")
    const allowed = Effect.runSync(readEnv(devEnv({ GROUNDNOTE_HOST: "0.0.0.0", GROUNDNOTE_DEV_ALLOW_NON_LOOPBACK: "true" }), CWD))
    expect(allowed.host).toBe("0.0.0.0")
  })

  it("never puts a secret value into any refusal message", () => {
    const cases: Array<Record<string, string | undefined>> = [
      devEnv({ GROUNDNOTE_AUTH_MODE: "nope" }),
      devEnv({ GROUNDNOTE_SESSION_SECRET: OPS }),
      devEnv({ GROUNDNOTE_DEV_APPROVAL_TOKEN: SESSION }),
      devEnv({ GROUNDNOTE_DEV_API_TOKEN: APPROVAL }),
      devEnv({ GROUNDNOTE_DEV_EMAIL: "bad" }),
      devEnv({ GROUNDNOTE_HOST: "10.0.0.1" }),
      devEnv({ GROUNDNOTE_PORT: "x" }),
      devEnv({ GROUNDNOTE_OPS_PORT: "1" }),
      accessEnv({ GROUNDNOTE_DEV_MCP_TOKEN: MCP, GROUNDNOTE_DEV_API_TOKEN: API })
    ]
    for (const env of cases) {
      const e = refusalOf(readEnv(env, CWD))
      expectNoSecret(e.message)
      expectNoSecret(JSON.stringify(e))
      expectNoSecret(String(e))
    }
  })
})

// ---------------------------------------------------------------------------------------------

const baseConfig = {
  instance: "acme",
  zone: "Europe/Berlin",
  public_url: "https://groundnote.acme.example",
  scopes: [{ name: "sales", providers_allowed: [] }],
  search: {},
  backup: { kind: "copy", directory: "/var/backups/groundnote", deadman_url: "https://hc-ping.com/x" }
}
const access = {
  team_domain: "https://acme.cloudflareaccess.com",
  aud_mcp: "aud-mcp",
  aud_approval: "aud-approval",
  aud_api: "aud-api"
}

describe("checkConfigAgainstEnv", () => {
  const accessMode = Effect.runSync(readEnv(accessEnv(), CWD))
  const devMode = Effect.runSync(readEnv(devEnv(), CWD))
  const file = (extra: Record<string, unknown>) => Effect.runSync(parseConfigFile(JSON.stringify({ ...baseConfig, ...extra })))

  it("accepts a complete cloudflare-access setup", () => {
    Effect.runSync(checkConfigAgainstEnv(file({ access }), accessMode))
  })

  it("accepts dev-token mode without access and with an http public_url", () => {
    Effect.runSync(checkConfigAgainstEnv(file({ public_url: "http://127.0.0.1:8787" }), devMode))
  })

  it("refuses cloudflare-access mode without access (access-missing)", () => {
    const e = refusalOf(checkConfigAgainstEnv(file({}), accessMode))
    expect(e.code).toBe("access-missing")
    expect(e.message).toContain("access")
    expect(e.message).toContain("team_domain")
  })

  it("refuses cloudflare-access mode with an http public_url (public-url-not-https)", () => {
    const e = refusalOf(checkConfigAgainstEnv(file({ access, public_url: "http://groundnote.acme.example" }), accessMode))
    expect(e.code).toBe("public-url-not-https")
    expect(e.message).toContain("public_url")
    expect(e.message).toContain("https")
  })

  it("refuses cloudflare-access mode with an http team_domain (team-domain-not-https)", () => {
    const e = refusalOf(checkConfigAgainstEnv(file({ access: { ...access, team_domain: "http://acme.cloudflareaccess.com" } }), accessMode))
    expect(e.code).toBe("team-domain-not-https")
    expect(e.message).toContain("access.team_domain")
  })
})

describe("parseConfigFile (syntax)", () => {
  it("refuses invalid JSON (config-invalid) naming line, column and position", async () => {
    const text = "{\n  \"instance\": \"acme\",\n  \"zone\": }\n"
    const e = await refusalOfAsync(parseConfigFile(text, "/etc/groundnote.json"))
    expect(e.code).toBe("config-invalid")
    expect(e.message).toContain("/etc/groundnote.json")
    expect(e.message).toContain("line 3, column 11")
    expect(e.message).toContain(`position ${text.indexOf("}")}`)
  })

  it("names the position of a trailing comma and of an unexpected end", () => {
    const trailing = "{\"instance\": \"acme\",}"
    expect(refusalOf(parseConfigFile(trailing)).message).toContain(`position ${trailing.length - 1}`)
    const cut = "{\"instance\": \"acme\""
    const e = refusalOf(parseConfigFile(cut))
    expect(e.code).toBe("config-invalid")
    expect(e.message).toContain(`position ${cut.length}`)
  })
})

// ---------------------------------------------------------------------------------------------

describe("loadConfig", () => {
  let dir = ""
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "gn-load-"))
  })
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true })
  })

  it("loads the example config in dev-token mode", async () => {
    copyFileSync(join(import.meta.dirname, "../../config/groundnote.example.json"), join(dir, "groundnote.json"))
    const config = await Effect.runPromise(loadConfig(devEnv(), dir))
    expect(config.file.instance).toBe("acme")
    expect(config.file.scopes.map((s) => s.name)).toEqual(["sales", "ops"])
    expect(config.env.configPath).toBe(join(dir, "groundnote.json"))
    expect(config.env.dataDir).toBe(join(dir, "data"))
  })

  it("refuses a missing config file (config-unreadable) naming the path and the fix", async () => {
    const e = await refusalOfAsync(loadConfig(devEnv({ GROUNDNOTE_CONFIG: "conf/missing.json" }), dir))
    expect(e.code).toBe("config-unreadable")
    expect(e.message).toContain(join(dir, "conf/missing.json"))
    expect(e.message).toContain("GROUNDNOTE_CONFIG")
    expect(e.message).toContain("config/groundnote.example.json")
  })

  it("refuses a config path that is a directory (config-unreadable)", async () => {
    mkdirSync(join(dir, "groundnote.json"))
    const e = await refusalOfAsync(loadConfig(devEnv(), dir))
    expect(e.code).toBe("config-unreadable")
    expect(e.message).toContain(join(dir, "groundnote.json"))
  })

  it("refuses an invalid file naming the file and the key (config-invalid)", async () => {
    writeFileSync(join(dir, "groundnote.json"), JSON.stringify({ ...baseConfig, recheck_after_days: 5 }))
    const e = await refusalOfAsync(loadConfig(devEnv(), dir))
    expect(e.code).toBe("config-invalid")
    expect(e.message).toContain(join(dir, "groundnote.json"))
    expect(e.message).toContain("recheck_after_days:")
  })

  it("cross-checks file and environment (access-missing)", async () => {
    writeFileSync(join(dir, "groundnote.json"), JSON.stringify(baseConfig))
    const e = await refusalOfAsync(loadConfig(accessEnv(), dir))
    expect(e.code).toBe("access-missing")
    expect(e.message).toContain(join(dir, "groundnote.json"))
  })

  it("refuses the environment before reading the file", async () => {
    const e = await refusalOfAsync(loadConfig({}, dir))
    expect(e.code).toBe("auth-mode-invalid")
  })

  it("AppConfigLive reads process.env", async () => {
    writeFileSync(join(dir, "groundnote.json"), JSON.stringify({ ...baseConfig, access }))
    const vars = accessEnv({ GROUNDNOTE_CONFIG: join(dir, "groundnote.json"), GROUNDNOTE_DATA_DIR: join(dir, "data") })
    const keys = new Set([...Object.keys(vars), ...Object.keys(process.env).filter((k) => k.startsWith("GROUNDNOTE_"))])
    const saved = new Map([...keys].map((k) => [k, process.env[k]]))
    try {
      for (const k of keys) delete process.env[k]
      for (const [k, v] of Object.entries(vars)) if (v !== undefined) process.env[k] = v
      const config = await Effect.runPromise(Effect.provide(AppConfig, AppConfigLive))
      expect(config.env.authMode).toBe("cloudflare-access")
      expect(config.env.dataDir).toBe(join(dir, "data"))
      expect(config.file.access?.aud_mcp).toBe("aud-mcp")
    } finally {
      for (const [k, v] of saved) {
        if (v === undefined) delete process.env[k]
        else process.env[k] = v
      }
    }
  })
})
