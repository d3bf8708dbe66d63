/**
 * Encrypted Litestream replicas against the real Litestream v0.3.13 (gaps.md §12 R5): the config
 * `groundnote backup litestream-config` prints for a data dir with a keyed scope is run with
 * `litestream replicate` to a file:// replica; every file of the keyed scope's replica is age
 * ciphertext without the known plaintext (the unkeyed scope's replica shows that the check sees
 * plaintext where there is some); restore and verify read the identity from GROUNDNOTE_KEY_DIR and
 * fail identity-missing without it; after a redaction the backup run reseeds: a new generation,
 * verified, and only it stays in the replica.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { pathToFileURL } from "node:url"
import { generateX25519Identity, identityToRecipient } from "age-encryption"
import { Effect, Exit } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { findLitestream } from "../../src/backup/litestream.js"
import { restoreConfigOf, restoreOps, restoreScope } from "../../src/backup/restore.js"
import { runBackup } from "../../src/backup/run.js"
import { verifyBackup } from "../../src/backup/verify.js"
import type { AppConfigShape } from "../../src/config/config.js"
import { scopeFile } from "../../src/db/scope-store.js"
import { storeSource } from "../../src/domain/sources.js"
import { cliHost } from "../../src/operations/ops-cli-host.js"
import { baseConfigJson, testConfig } from "../support/env.js"
import { mailSource } from "../support/fixtures.js"
import { type BackupEnv, backupEnv, countIn, runService, seedScope, withFile } from "./support.js"

/** Text that exists only in the seeded sources: found in a plaintext replica, never in an encrypted one. */
const MARKER = "Zebrafinkquittung-4711-Petra-Mueller"
const AGE_HEADER = "age-encryption.org/v1\n"

let env: BackupEnv
let config: AppConfigShape
let replicate: ChildProcess | null = null
let keyDir = ""
let identity = ""
let recipient = ""
let instanceRecipient = ""
let printed = ""
let litestreamYml = ""
const hostEnv: Record<string, string> = {}
const saved = { LITESTREAM_CONFIG: process.env.LITESTREAM_CONFIG, GROUNDNOTE_KEY_DIR: process.env.GROUNDNOTE_KEY_DIR }

const binary = (): string => {
  const b = findLitestream()
  if (b === null) throw new Error("no litestream binary (node_modules/@flydotio/litestream-linux-x64, an optional dependency that installs here)")
  return b
}

const replicaDir = (name: string) => (name === "ops.sqlite" ? join(env.root, "replica", "gn", "ops") : join(env.root, "replica", "gn", "scopes", name))

/** Every file below `dir`. */
const filesUnder = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)]))

const generations = (name: string): Array<string> => {
  try {
    return readdirSync(join(replicaDir(name), "generations")).sort()
  } catch {
    return []
  }
}

/** Waits until the replica of `name` has a snapshot and a WAL segment. */
const waitForReplica = async (name: string) => {
  for (let i = 0; i < 150; i++) {
    const files = generations(name).length === 0 ? [] : filesUnder(replicaDir(name))
    if (files.some((f) => f.endsWith(".snapshot.lz4")) && files.some((f) => f.endsWith(".wal.lz4"))) return
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`no snapshot and WAL segment in ${replicaDir(name)}`)
}

const markerSource = (scope: string) => mailSource({ scope, text: `Bitte die ${MARKER} beilegen, sagt ${MARKER}.` }, "mail:<marker@example.com>")

const stopReplicate = async () => {
  const child = replicate
  replicate = null
  if (child !== null && child.exitCode === null) {
    const exited = new Promise((res) => child.once("exit", res))
    child.kill("SIGTERM")
    await exited
  }
}

/** A redaction row written as the redaction does (its permit first, deleted last), in one transaction. */
const recordRedaction = (seq: number) =>
  withFile(scopeFile(env.dataDir, "sales"), (sql) =>
    Effect.gen(function*() {
      yield* sql.unsafe("BEGIN IMMEDIATE")
      yield* sql.unsafe("INSERT INTO redaction_permit (redaction_seq) VALUES (?)", [seq])
      yield* sql.unsafe(
        "INSERT INTO redaction (seq, id, term_sha256, places, requested_by, decided_by, reason, at) VALUES (?, ?, ?, 1, 'person:2', 'anna@example.com', 'erasure request 17', ?)",
        [seq, `sales-x${String(seq).padStart(4, "0")}`, "ab".repeat(32), new Date().toISOString()]
      )
      yield* sql.unsafe("DELETE FROM redaction_permit")
      yield* sql.unsafe("COMMIT")
    }))

beforeAll(async () => {
  env = backupEnv({ kind: "litestream", scopes: ["sales", "plain"] })
  const backup = { kind: "litestream", target: pathToFileURL(join(env.root, "replica")).href, prefix: "gn", deadman_url: null }
  config = testConfig(env.dataDir, { scopes: ["sales", "plain"].map((name) => ({ name, providers_allowed: [] })), backup })
  const configFile = join(env.root, "groundnote.json")
  writeFileSync(configFile, JSON.stringify({ ...baseConfigJson(["sales", "plain"]), backup }))
  Object.assign(hostEnv, { GROUNDNOTE_DATA_DIR: env.dataDir, GROUNDNOTE_CONFIG: configFile, PATH: process.env.PATH ?? "" })

  await runService(config, Effect.gen(function*() {
    yield* seedScope("sales", 3)
    yield* seedScope("plain", 1)
    yield* storeSource(markerSource("sales"), "service:1")
    yield* storeSource(markerSource("plain"), "service:1")
  }))
  identity = await generateX25519Identity()
  recipient = await identityToRecipient(identity)
  // what `groundnote key create --scope sales` stores: the recipient in ops.sqlite, the identity in the operator's file
  const instanceIdentity = await generateX25519Identity()
  instanceRecipient = await identityToRecipient(instanceIdentity)
  const retired = await identityToRecipient(await generateX25519Identity())
  await withFile(join(env.dataDir, "ops.sqlite"), (sql) =>
    Effect.gen(function*() {
      const at = new Date().toISOString()
      yield* sql.unsafe("INSERT INTO key_recipient (scope, recipient, origin, label, added_at, retired_at) VALUES ('sales', ?, 'created', NULL, ?, ?)", [retired, at, at])
      yield* sql.unsafe("INSERT INTO key_recipient (scope, recipient, origin, label, added_at) VALUES ('sales', ?, 'created', NULL, ?)", [recipient, at])
      yield* sql.unsafe("INSERT INTO key_recipient (scope, recipient, origin, label, added_at) VALUES (NULL, ?, 'created', NULL, ?)", [instanceRecipient, at])
    }))
  keyDir = join(env.root, "keys")
  mkdirSync(keyDir, { mode: 0o700 })
  writeFileSync(join(keyDir, "sales.age-identity"), `# public key: ${recipient}\n${identity}\n`, { mode: 0o600 })
  writeFileSync(join(keyDir, "_instance.age-identity"), `${instanceIdentity}\n`, { mode: 0o600 })

  const answer = await Effect.runPromise(Effect.either(cliHost.litestreamConfig(hostEnv, env.root)))
  if (answer._tag === "Left") throw new Error(`litestream-config: ${answer.left.code}: ${answer.left.message}`)
  printed = answer.right.config
  litestreamYml = join(env.root, "litestream.yml")
  writeFileSync(litestreamYml, printed)
  process.env.LITESTREAM_CONFIG = litestreamYml
  replicate = spawn(binary(), ["replicate", "-config", litestreamYml], { stdio: "ignore" })
  await waitForReplica("sales")
  await waitForReplica("plain")
  await waitForReplica("ops.sqlite")
}, 30_000)

afterAll(async () => {
  await stopReplicate()
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k]
    else process.env[k] = v
  }
  env.cleanup()
})

describe("Litestream replicas of a keyed scope are age ciphertext (real Litestream v0.3.13)", () => {
  it("backup litestream-config prints every file with its replica, the active recipients of a keyed file, never an identity", () => {
    const root = pathToFileURL(join(env.root, "replica")).href
    expect(printed).toContain([
      `  - path: "${join(env.dataDir, "ops.sqlite")}"`,
      "    replicas:",
      `      - url: "${root}/gn/ops"`,
      "        age:",
      "          recipients:",
      `            - "${instanceRecipient}"`
    ].join("\n"))
    expect(printed).toContain([
      `  - path: "${scopeFile(env.dataDir, "sales")}"`,
      "    replicas:",
      `      - url: "${root}/gn/scopes/sales"`,
      "        age:",
      "          recipients:",
      `            - "${recipient}"`,
      `  - path: "${scopeFile(env.dataDir, "plain")}"`
    ].join("\n"))
    expect(printed).toContain(`  - path: "${scopeFile(env.dataDir, "plain")}"\n    replicas:\n      - url: "${root}/gn/scopes/plain"\n`)
    expect(printed.match(/age:/g)?.length).toBe(2)
    expect(printed.match(/ {12}- "age1/g)?.length).toBe(2)
    expect(printed).not.toContain("AGE-SECRET-KEY")
    expect(printed).not.toContain("identities")
  })

  it("a data dir without ops.sqlite is refused: nothing says which files are keyed (never a plaintext guess)", async () => {
    const gone = await Effect.runPromise(Effect.either(cliHost.litestreamConfig({ ...hostEnv, GROUNDNOTE_DATA_DIR: join(env.root, "nowhere") }, env.root)))
    expect(gone._tag).toBe("Left")
    if (gone._tag === "Left") expect(gone.left).toMatchObject({ code: "not-found", exitCode: 1 })
  })

  it("every snapshot and WAL segment of the keyed scope starts with the age header and holds no plaintext", () => {
    for (const file of filesUnder(replicaDir("ops.sqlite"))) expect(readFileSync(file).subarray(0, AGE_HEADER.length).toString("latin1"), file).toBe(AGE_HEADER)
    const files = filesUnder(replicaDir("sales"))
    expect(files.some((f) => f.endsWith(".snapshot.lz4"))).toBe(true)
    expect(files.some((f) => f.endsWith(".wal.lz4"))).toBe(true)
    for (const file of files) {
      const bytes = readFileSync(file)
      expect(bytes.subarray(0, AGE_HEADER.length).toString("latin1"), file).toBe(AGE_HEADER)
      expect(bytes.includes(Buffer.from(MARKER)), file).toBe(false)
      expect(bytes.includes(Buffer.from(MARKER.toLowerCase())), file).toBe(false)
    }
    // the same check sees the text in the unkeyed scope's plaintext replica
    const plain = filesUnder(replicaDir("plain")).map((f) => readFileSync(f))
    expect(plain.some((b) => b.subarray(0, AGE_HEADER.length).toString("latin1") === AGE_HEADER)).toBe(false)
    expect(plain.some((b) => b.includes(Buffer.from(MARKER)))).toBe(true)
  })

  it("restore with GROUNDNOTE_KEY_DIR gets the rows back; the temporary config with the identity is gone", async () => {
    const out = join(env.root, "restored")
    mkdirSync(out)
    const exit = await Effect.runPromiseExit(restoreScope(
      { to: join(out, "sales.sqlite"), scope: "sales", env: { ...process.env, GROUNDNOTE_KEY_DIR: keyDir } },
      restoreConfigOf(config)
    ))
    if (Exit.isFailure(exit)) throw new Error(String(exit.cause))
    expect(exit.value).toMatchObject({ ok: true, from: "litestream" })
    expect(readdirSync(out)).toEqual(["sales.sqlite"])
    expect(await countIn(join(out, "sales.sqlite"), "rule_version")).toBe(5)
    expect(await countIn(join(out, "sales.sqlite"), "source")).toBe(await countIn(scopeFile(env.dataDir, "sales"), "source"))
    const text = await withFile(join(out, "sales.sqlite"), (sql) => sql.unsafe<{ n: number }>("SELECT count(*) AS n FROM source WHERE excerpt LIKE ?", [`%${MARKER}%`]))
    expect(text[0]?.n).toBe(1)
  })

  it("restore without GROUNDNOTE_KEY_DIR, or without the identity file in it, fails identity-missing and writes nothing", async () => {
    const out = join(env.root, "refused")
    mkdirSync(out)
    const { GROUNDNOTE_KEY_DIR: _unset, ...withoutKeys } = process.env
    const empty = join(env.root, "empty-keys")
    mkdirSync(empty, { mode: 0o700 })
    for (const e of [withoutKeys, { ...withoutKeys, GROUNDNOTE_KEY_DIR: empty }]) {
      const exit = await Effect.runPromiseExit(restoreScope({ to: join(out, "sales.sqlite"), scope: "sales", env: e }, restoreConfigOf(config)))
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit) && exit.cause._tag === "Fail") {
        expect(exit.cause.error).toMatchObject({ _tag: "IdentityMissing", code: "identity-missing" })
      } else {
        throw new Error(`expected identity-missing, got ${String(exit)}`)
      }
    }
    expect(readdirSync(out)).toEqual([])
  })

  it("restore --ops reads the instance's identity (_instance.age-identity); without it identity-missing", async () => {
    const out = join(env.root, "restored-ops")
    mkdirSync(out)
    const refused = await Effect.runPromiseExit(restoreOps({ to: join(out, "ops.sqlite"), env: { PATH: process.env.PATH ?? "" } }, restoreConfigOf(config)))
    expect(Exit.isFailure(refused) && refused.cause._tag === "Fail" ? refused.cause.error : null).toMatchObject({ code: "identity-missing" })
    expect(readdirSync(out)).toEqual([])
    const exit = await Effect.runPromiseExit(restoreOps({ to: join(out, "ops.sqlite"), env: { PATH: process.env.PATH ?? "", GROUNDNOTE_KEY_DIR: keyDir } }, restoreConfigOf(config)))
    if (Exit.isFailure(exit)) throw new Error(String(exit.cause))
    expect(await countIn(join(out, "ops.sqlite"), "key_recipient")).toBe(3)
  })

  it("verify restores the keyed replica with the identity; without it its fetch fails identity-missing", async () => {
    process.env.GROUNDNOTE_KEY_DIR = keyDir
    const good = await runService(config, verifyBackup({ scope: "sales" }))
    expect(good.scopes[0]?.checks.filter((c) => !c.ok)).toEqual([])
    expect(good.ok).toBe(true)
    delete process.env.GROUNDNOTE_KEY_DIR
    const bad = await runService(config, verifyBackup({ scope: "sales" }))
    const fetch = bad.scopes[0]?.checks.find((c) => c.check === "fetch-litestream")
    expect(fetch?.ok).toBe(false)
    expect(fetch?.detail).toMatch(/^identity-missing: the copies of scope sales are encrypted and GROUNDNOTE_KEY_DIR is not set/)
    expect(bad.ok).toBe(false)
  })

  it("after a redaction the backup run starts a new generation, verifies it and deletes the older ones", async () => {
    process.env.GROUNDNOTE_KEY_DIR = keyDir
    const before = generations("sales")
    expect(before.length).toBe(1)
    const nothing = await runService(config, runBackup({ reseedWaitMs: 15_000 }))
    expect(nothing).toMatchObject({ ok: true, kind: "litestream", ran: false, scopes: [] })

    await recordRedaction(1)
    const answer = await runService(config, runBackup({ reseedWaitMs: 15_000 }))
    expect(answer).toMatchObject({ ok: true, kind: "litestream", ran: true })
    expect(answer.scopes.map((s) => [s.scope, s.ok])).toEqual([["sales", true]])
    const after = generations("sales")
    expect(after.length).toBe(1)
    expect(after[0]).not.toBe(before[0])
    expect(answer.scopes[0]?.detail).toBe(`reseed: new generation ${after[0] ?? ""} verified; 1 older generation deleted`)
    // the new generation is encrypted too, and holds the redaction
    for (const file of filesUnder(replicaDir("sales"))) expect(readFileSync(file).subarray(0, AGE_HEADER.length).toString("latin1"), file).toBe(AGE_HEADER)
    const out = join(env.root, "after-reseed")
    mkdirSync(out)
    const exit = await Effect.runPromiseExit(restoreScope({ to: join(out, "sales.sqlite"), scope: "sales", env: { ...process.env } }, restoreConfigOf(config)))
    if (Exit.isFailure(exit)) throw new Error(String(exit.cause))
    expect(await countIn(join(out, "sales.sqlite"), "redaction")).toBe(1)
    // the unkeyed scope had no redaction: untouched
    expect(generations("plain").length).toBe(1)
    // a second run has nothing left to reseed
    const again = await runService(config, runBackup({ reseedWaitMs: 15_000 }))
    expect(again).toMatchObject({ ok: true, ran: false, scopes: [] })
  }, 30_000)

  it("with Litestream stopped the reseed fails and deletes nothing", async () => {
    process.env.GROUNDNOTE_KEY_DIR = keyDir
    await stopReplicate()
    const before = generations("sales")
    await recordRedaction(2)
    const answer = await runService(config, runBackup({ reseedWaitMs: 1_500 }))
    expect(answer.ok).toBe(false)
    expect(answer.scopes).toEqual([{
      scope: "sales", ok: false, file: `${pathToFileURL(join(env.root, "replica")).href}/gn/scopes/sales`, bytes: null,
      detail: "reseed: Litestream started no new generation within 2 s (is it running?); nothing was deleted"
    }])
    expect(generations("sales")).toEqual(before)
    expect(statSync(join(replicaDir("sales"), "generations", before[0] ?? "")).isDirectory()).toBe(true)
  }, 30_000)
})
