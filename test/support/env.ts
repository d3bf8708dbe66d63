/** Test support: a temp data dir, a decoded config, and the store layers on real SQLite files. */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Redacted, Schema } from "effect"
import type { AppConfigShape } from "../../src/config/config.js"
import { ConfigFile } from "../../src/config/schema.js"
import { type ServiceOverrides, ServicesLive } from "../../src/services.js"

export const tempDir = (prefix = "gn-test-"): { dir: string; cleanup: () => void } => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

export const baseConfigJson = (scopes: ReadonlyArray<string> = ["sales", "ops"]) => ({
  instance: "acme",
  zone: "Europe/Berlin",
  public_url: "http://127.0.0.1:8787",
  scopes: scopes.map((name) => ({ name, providers_allowed: [] })),
  search: {},
  backup: { kind: "copy", directory: "/var/backups/groundnote", deadman_url: "https://deadman.example/ping" }
})

export const testConfig = (dataDir: string, overrides: Record<string, unknown> = {}): AppConfigShape => ({
  file: Schema.decodeUnknownSync(ConfigFile)({ ...baseConfigJson(), ...overrides }, { onExcessProperty: "error" }),
  env: {
    authMode: "dev-token",
    sessionSecret: Redacted.make("s".repeat(40)),
    opsToken: Redacted.make("o".repeat(40)),
    devMcpToken: Redacted.make("m".repeat(40)),
    devApprovalToken: Redacted.make("a".repeat(40)),
    devApiToken: null,
    devEmail: "dev@example.com",
    host: "127.0.0.1",
    port: 8787,
    allowNonLoopback: false,
    dataDir,
    configPath: join(dataDir, "groundnote.json"),
    typesafeApiKey: null
  }
})

/** The services of the data dir (ServicesLive: the stores on real SQLite files and every layer), any of them replaced. */
export const storeLayer = (config: AppConfigShape, overrides: ServiceOverrides = {}) => ServicesLive(config, overrides)
