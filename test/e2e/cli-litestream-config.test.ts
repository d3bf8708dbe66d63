/**
 * `groundnote backup litestream-config` of the built CLI (gaps.md §12 R5): without the service it
 * prints the Litestream config of the data dir on stdout (a keyed scope with its recipient from
 * ops.sqlite, never an identity), --json the same with every file; kind copy and a data dir
 * without ops.sqlite are refused (exit 1, nothing on stdout).
 */
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { generateX25519Identity, identityToRecipient } from "age-encryption"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type BackupEnv, backupEnv, runService, seedScope, withFile } from "../backup/support.js"
import { baseConfigJson, testConfig } from "../support/env.js"
import { cleanEnv, cli, json } from "./support.js"

describe("groundnote backup litestream-config", { timeout: 60_000 }, () => {
  let env: BackupEnv
  let recipient = ""
  let litestreamConfig = ""
  let copyConfig = ""
  const backup = { kind: "litestream", target: "s3://acme-backups", prefix: "groundnote", deadman_url: null }
  const cliEnv = (config: string, dataDir = env.dataDir) => ({ ...cleanEnv(), GROUNDNOTE_DATA_DIR: dataDir, GROUNDNOTE_CONFIG: config })

  beforeAll(async () => {
    env = backupEnv()
    await runService(testConfig(env.dataDir, { backup }), seedScope("sales", 1))
    recipient = await identityToRecipient(await generateX25519Identity())
    await withFile(join(env.dataDir, "ops.sqlite"), (sql) =>
      sql.unsafe("INSERT INTO key_recipient (scope, recipient, origin, label, added_at) VALUES ('sales', ?, 'added', 'dpo laptop', ?)", [recipient, new Date().toISOString()]))
    litestreamConfig = join(env.root, "groundnote.json")
    writeFileSync(litestreamConfig, JSON.stringify({ ...baseConfigJson(), backup }))
    copyConfig = join(env.root, "copy.json")
    writeFileSync(copyConfig, JSON.stringify(baseConfigJson()))
  })
  afterAll(() => env.cleanup())

  it("prints the config on stdout, the keyed scope with its recipient; --json gives every file", async () => {
    const r = await cli(["backup", "litestream-config"], cliEnv(litestreamConfig))
    expect(r.code, r.stderr).toBe(0)
    expect(r.stderr).toBe("")
    expect(r.stdout).toContain(`  - path: "${join(env.dataDir, "ops.sqlite")}"\n    replicas:\n      - url: "s3://acme-backups/groundnote/ops"\n`)
    expect(r.stdout).toContain(`      - url: "s3://acme-backups/groundnote/scopes/sales"\n        age:\n          recipients:\n            - "${recipient}"\n`)
    expect(r.stdout).toContain(`      - url: "s3://acme-backups/groundnote/scopes/ops"\n`)
    const j = await cli(["backup", "litestream-config", "--json"], cliEnv(litestreamConfig))
    expect(j.code, j.stderr).toBe(0)
    expect(json(j)).toEqual({
      config: r.stdout,
      files: [
        { file: "ops.sqlite", path: join(env.dataDir, "ops.sqlite"), url: "s3://acme-backups/groundnote/ops", recipients: [] },
        { file: "sales", path: join(env.dataDir, "scopes", "sales.sqlite"), url: "s3://acme-backups/groundnote/scopes/sales", recipients: [recipient] },
        { file: "ops", path: join(env.dataDir, "scopes", "ops.sqlite"), url: "s3://acme-backups/groundnote/scopes/ops", recipients: [] }
      ]
    })
  })

  it("refuses backup kind copy and a data dir without ops.sqlite: exit 1, nothing on stdout", async () => {
    const copy = await cli(["backup", "litestream-config"], cliEnv(copyConfig))
    expect(copy.code).toBe(1)
    expect(copy.stdout).toBe("")
    expect(copy.stderr).toMatch(/^groundnote: validation-failed: backup\.kind is copy in .*copy\.json: the Litestream config needs backup kind litestream/)
    const none = await cli(["backup", "litestream-config", "--json"], cliEnv(litestreamConfig, join(env.root, "nowhere")))
    expect(none.code).toBe(1)
    expect(json(none)).toMatchObject({ error: "not-found" })
  })
})
