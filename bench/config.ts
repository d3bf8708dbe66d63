/** The config every bench runs with: one scope `bench` on a temp data dir, dev-token mode. */
import { join } from "node:path"
import { Redacted, Schema } from "effect"
import type { AppConfigShape } from "../src/config/config.js"
import { ConfigFile } from "../src/config/schema.js"

export const benchConfig = (dataDir: string, file: Record<string, unknown> = {}, port = 8787): AppConfigShape => ({
  file: Schema.decodeUnknownSync(ConfigFile)({
    instance: "bench", zone: "Europe/Berlin", public_url: "http://127.0.0.1:8787",
    scopes: [{ name: "bench", providers_allowed: [] }], search: {},
    backup: { kind: "copy", directory: "/var/backups/groundnote-bench", deadman_url: "http://127.0.0.1:9/x" },
    ...file
  }),
  env: {
    authMode: "dev-token", sessionSecret: Redacted.make("s".repeat(40)), opsToken: Redacted.make("o".repeat(40)),
    devMcpToken: null, devApprovalToken: null, devApiToken: null, devEmail: "bench@example.com", host: "127.0.0.1",
    port, allowNonLoopback: false, dataDir, configPath: join(dataDir, "groundnote.json"), typesafeApiKey: null
  }
})
