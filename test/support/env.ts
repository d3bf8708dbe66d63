/** Test support: a temp data dir, a decoded config, and the store layers on real SQLite files. */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Layer, Redacted, Schema } from "effect"
import { AppConfig, type AppConfigShape } from "../../src/config/config.js"
import { ConfigFile } from "../../src/config/schema.js"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore } from "../../src/db/scope-store.js"
import { LexicalIndexLive } from "../../src/search/lexical/index.js"

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

/** ScopeStore + OpsStore + LexicalIndex + AppConfig on the given data dir. */
export const storeLayer = (config: AppConfigShape) =>
  Layer.merge(ScopeStore.Default, LexicalIndexLive).pipe(
    Layer.provideMerge(OpsStore.Default),
    Layer.provideMerge(Layer.succeed(AppConfig, config))
  )
