/**
 * Encrypted copies (gaps.md §12 R5), kind copy: once a scope (or the instance) has a recipient,
 * every file the backup run and the nightly export write of it is an age file that the library's
 * own Decrypter (what the standard age CLI reads) opens, with no plaintext of its rows; probe,
 * verify and restore read it only with the identity of GROUNDNOTE_KEY_DIR; a rotation keeps old
 * copies readable with the old identity; a redaction makes the next run and probe replace what
 * was copied and exported before it.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { gunzipSync } from "node:zlib"
import { Decrypter } from "age-encryption"
import { Cause, Effect, Exit, Option } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { probeBackup } from "../../src/backup/probe.js"
import { restoreConfigOf, restoreScope } from "../../src/backup/restore.js"
import { runBackup } from "../../src/backup/run.js"
import { verifyBackup } from "../../src/backup/verify.js"
import { OpsStore } from "../../src/db/ops-store.js"
import { ScopeStore, scopeFile } from "../../src/db/scope-store.js"
import { AGE_HEADER } from "../../src/keys/header.js"
import { identityFileName } from "../../src/keys/identity-file.js"
import { type KeyPair, makeKeyPair } from "../../src/keys/keypair.js"
import { identityFileText } from "../../src/keys/write-identity.js"
import { applyRedaction, checkpointAfterRedaction } from "../../src/redaction/apply.js"
import { recordInLedger } from "../../src/redaction/ledger.js"
import { previewRedaction } from "../../src/redaction/preview.js"
import { type BackupEnv, backupEnv, countIn, failureOf, runService, seedScope, withFile } from "./support.js"

let env: BackupEnv
let keyDir: string
const saved = process.env.GROUNDNOTE_KEY_DIR
beforeEach(() => {
  env = backupEnv({ exportDir: true })
  keyDir = join(env.root, "keys")
  mkdirSync(keyDir, { mode: 0o700 })
  process.env.GROUNDNOTE_KEY_DIR = keyDir
})
afterEach(() => {
  if (saved === undefined) delete process.env.GROUNDNOTE_KEY_DIR
  else process.env.GROUNDNOTE_KEY_DIR = saved
  env.cleanup()
})

/** Text of the seeded mail and its rule (tests/support/fixtures.ts). */
const KNOWN = ["Hakenleisten", "maria@example.com", "RAL 9005"]

const newKey = () => Effect.runPromise(makeKeyPair)
const keyScope = (scope: string | null, pair: KeyPair) =>
  runService(env.config, Effect.flatMap(OpsStore, (o) => o.addRecipient({ scope, recipient: pair.recipient, origin: "created" })))
const putIdentity = (scope: string | null, pair: KeyPair) =>
  writeFileSync(join(keyDir, identityFileName(scope)), identityFileText(pair.identity, pair.recipient, "2026-12-06T00:00:00Z"), { mode: 0o600 })

const decrypt = async (bytes: Uint8Array, identity: string): Promise<Buffer> => {
  const d = new Decrypter()
  d.addIdentity(identity)
  return Buffer.from(await d.decrypt(bytes))
}

/** Every regular file below `dir` (hidden ones too), relative names. */
const filesBelow = (dir: string): Array<string> =>
  existsSync(dir)
    ? readdirSync(dir, { recursive: true, withFileTypes: true }).filter((d) => d.isFile()).map((d) => join(d.parentPath, d.name))
    : []

const hasText = (bytes: Buffer, texts: ReadonlyArray<string>): Array<string> =>
  texts.filter((t) => bytes.includes(Buffer.from(t, "utf8")) || bytes.toString("latin1").toLowerCase().includes(t.toLowerCase()))

/** The plaintext of an export archive (gunzipped tar: file contents in the clear). */
const tarText = (gz: Buffer): Buffer => gunzipSync(gz)

describe("encrypted copies (kind copy)", { timeout: 180_000 }, () => {
  it("a keyed scope and instance: every copy and archive is an age file the Decrypter opens, no plaintext of known rows; the plaintext copy and archive go", async () => {
    await runService(env.config, Effect.gen(function*() {
      yield* seedScope("sales", 3)
      yield* seedScope("ops", 1)
    }))
    // before any key: plaintext copies and a plaintext archive
    expect((await runService(env.config, runBackup())).ok).toBe(true)
    expect((await runService(env.config, probeBackup({ scope: "sales" }))).ok).toBe(true)
    const plainArchives = readdirSync(join(env.exportDir, "sales")).filter((n) => n.endsWith(".tar.gz"))
    expect(plainArchives).toHaveLength(1)
    expect(hasText(tarText(readFileSync(join(env.exportDir, "sales", plainArchives[0] ?? ""))), ["Hakenleisten"])).toEqual(["Hakenleisten"])

    const sales = await newKey()
    const instance = await newKey()
    await keyScope("sales", sales)
    await keyScope(null, instance)
    putIdentity("sales", sales)
    putIdentity(null, instance)

    const run = await runService(env.config, runBackup())
    expect(run.ok).toBe(true)
    expect(run.ops).toMatchObject({ ok: true, file: join(env.backupDir, "ops.sqlite.age"), encrypted: true, removed: [join(env.backupDir, "ops.sqlite")] })
    expect(run.scopes.map((s) => [s.scope, s.file, s.encrypted ?? false])).toEqual([
      ["sales", join(env.backupDir, "scopes", "sales.sqlite.age"), true],
      ["ops", join(env.backupDir, "scopes", "ops.sqlite"), false]
    ])
    expect(readdirSync(join(env.backupDir, "scopes")).sort()).toEqual(["ops.sqlite", "sales.sqlite.age"])
    expect(readdirSync(env.backupDir).sort()).toEqual(["ops.sqlite.age", "scopes"])
    // no plaintext snapshot stays behind in the data dir
    expect(readdirSync(env.dataDir).filter((n) => n.startsWith(".backup-"))).toEqual([])

    const probe = await runService(env.config, probeBackup())
    expect(probe.ok).toBe(true)
    const salesExport = probe.scopes.find((s) => s.scope === "sales")?.export
    expect(salesExport?.file).toMatch(/sales-export-\d{8}T\d{6}\.\d{3}Z-[0-9a-f]{8}\.tar\.gz\.age$/)
    expect(probe.scopes.find((s) => s.scope === "ops")?.export?.file).toMatch(/\.tar\.gz$/)
    // the plaintext archive of the now keyed scope is gone; only the encrypted one and its .sha256 stay
    expect(readdirSync(join(env.exportDir, "sales")).sort()).toEqual([`${salesExport?.file.split("/").pop()}`, `${salesExport?.file.split("/").pop()}.sha256`].sort())

    // every file written of the keyed scope and of ops.sqlite: the age header, decrypts, no known plaintext
    const keyed = [
      [join(env.backupDir, "scopes", "sales.sqlite.age"), sales],
      [join(env.backupDir, "ops.sqlite.age"), instance],
      [salesExport?.file ?? "", sales]
    ] as const
    for (const [file, pair] of keyed) {
      const bytes = readFileSync(file)
      expect(bytes.subarray(0, AGE_HEADER.length + 1).toString("latin1"), file).toBe(`${AGE_HEADER}\n`)
      expect(hasText(bytes, KNOWN), file).toEqual([])
      const clear = await decrypt(new Uint8Array(bytes), pair.identity)
      if (file.endsWith(".tar.gz.age")) expect(hasText(tarText(clear), ["Hakenleisten"])).toEqual(["Hakenleisten"])
      else expect(clear.subarray(0, 15).toString("latin1")).toBe("SQLite format 3")
    }
    const salesClear = await decrypt(new Uint8Array(readFileSync(keyed[0][0])), sales.identity)
    expect(hasText(salesClear, ["Hakenleisten"])).toEqual(["Hakenleisten"])
    // nothing else of sales in plaintext in the backup or export directory
    for (const file of [...filesBelow(env.backupDir), ...filesBelow(join(env.exportDir, "sales"))]) {
      if (file.endsWith(".sha256") || file.endsWith(join("scopes", "ops.sqlite"))) continue
      expect(readFileSync(file).subarray(0, AGE_HEADER.length).toString("latin1"), file).toBe(AGE_HEADER)
    }
  })

  it("probe, verify and restore of an encrypted copy fail identity-missing without GROUNDNOTE_KEY_DIR; with the identity they pass; a foreign identity fails the fetch", async () => {
    await runService(env.config, seedScope("sales", 2))
    const sales = await newKey()
    await keyScope("sales", sales)
    expect((await runService(env.config, runBackup())).ok).toBe(true)
    const target = join(env.root, "restored")
    mkdirSync(target, { mode: 0o700 })

    delete process.env.GROUNDNOTE_KEY_DIR
    expect(await failureOf(env.config, probeBackup())).toMatchObject({ code: "identity-missing" })
    expect(await failureOf(env.config, verifyBackup({ scope: "sales" }))).toMatchObject({ code: "identity-missing" })
    const noKey = await Effect.runPromiseExit(restoreScope({ to: join(target, "a.sqlite"), scope: "sales", env: {} }, restoreConfigOf(env.config)))
    expect(Exit.isFailure(noKey) && Option.getOrThrow(Cause.failureOption(noKey.cause))).toMatchObject({ code: "identity-missing" })
    // a key dir without this scope's file is missing too (no other identity is tried)
    process.env.GROUNDNOTE_KEY_DIR = keyDir
    putIdentity("ops", sales)
    expect(await failureOf(env.config, verifyBackup({ scope: "sales" }))).toMatchObject({ code: "identity-missing" })
    expect(existsSync(join(target, "a.sqlite"))).toBe(false)

    putIdentity("sales", sales)
    expect((await runService(env.config, verifyBackup({ scope: "sales" }))).ok).toBe(true)
    expect((await runService(env.config, probeBackup({ scope: "sales" }))).ok).toBe(true)
    const restored = await Effect.runPromise(restoreScope({ to: join(target, "b.sqlite"), scope: "sales", env: { GROUNDNOTE_KEY_DIR: keyDir } }, restoreConfigOf(env.config)))
    expect(restored.checks[0]).toMatchObject({ check: "fetch-copy", ok: true })
    expect(await countIn(join(target, "b.sqlite"), "rule_version")).toBe(await countIn(scopeFile(env.dataDir, "sales"), "rule_version"))

    const foreign = await newKey()
    const other = join(env.root, "other-keys")
    mkdirSync(other, { mode: 0o700 })
    writeFileSync(join(other, "sales.age-identity"), `${foreign.identity}\n`, { mode: 0o600 })
    const wrong = await Effect.runPromiseExit(restoreScope({ to: join(target, "c.sqlite"), scope: "sales", env: { GROUNDNOTE_KEY_DIR: other } }, restoreConfigOf(env.config)))
    const refused = Exit.isFailure(wrong) ? Option.getOrThrow(Cause.failureOption(wrong.cause)) : null
    expect(refused).toMatchObject({ code: "restore-check-failed" })
    expect(JSON.stringify(refused)).toContain("cannot be decrypted with the identity")
    expect(existsSync(join(target, "c.sqlite"))).toBe(false)
  })

  it("rotate: a copy made before stays readable with the old identity; the next copy is for the new key only", async () => {
    await runService(env.config, seedScope("sales", 2))
    const first = await newKey()
    await keyScope("sales", first)
    putIdentity("sales", first)
    expect((await runService(env.config, runBackup())).ok).toBe(true)
    const before = readFileSync(join(env.backupDir, "scopes", "sales.sqlite.age"))

    const second = await newKey()
    const rotated = await runService(env.config, Effect.flatMap(OpsStore, (o) => o.rotateRecipient("sales", second.recipient)))
    expect(rotated.retired.map((r) => r.recipient)).toEqual([first.recipient])
    // the key dir still holds the old identity: the run cannot read the previous copy with the new one and still copies
    putIdentity("sales", second)
    expect((await runService(env.config, runBackup())).ok).toBe(true)
    const after = readFileSync(join(env.backupDir, "scopes", "sales.sqlite.age"))

    expect((await decrypt(new Uint8Array(before), first.identity)).subarray(0, 15).toString("latin1")).toBe("SQLite format 3")
    expect((await decrypt(new Uint8Array(after), second.identity)).subarray(0, 15).toString("latin1")).toBe("SQLite format 3")
    await expect(decrypt(new Uint8Array(after), first.identity)).rejects.toThrow()
    expect((await runService(env.config, verifyBackup({ scope: "sales" }))).ok).toBe(true)
  })

  it("after a redaction the next run replaces the copy and the probe rewrites the export: the archives taken before it are gone", async () => {
    await runService(env.config, seedScope("sales", 2))
    const sales = await newKey()
    await keyScope("sales", sales)
    putIdentity("sales", sales)
    expect((await runService(env.config, runBackup())).ok).toBe(true)
    expect((await runService(env.config, probeBackup({ scope: "sales" }))).ok).toBe(true)
    const beforeArchives = readdirSync(join(env.exportDir, "sales")).filter((n) => n.endsWith(".age"))
    expect(beforeArchives).toHaveLength(1)
    const oldArchive = join(env.exportDir, "sales", beforeArchives[0] ?? "")
    expect(hasText(tarText(await decrypt(new Uint8Array(readFileSync(oldArchive)), sales.identity)), ["RAL 9005"])).toEqual(["RAL 9005"])

    // a redaction as the service makes it: the core's transaction, the ledger, the checkpoint
    await runService(env.config, Effect.gen(function*() {
      const { sql } = yield* (yield* ScopeStore).use("sales")
      const p = yield* previewRedaction(sql, "sales", "RAL 9005")
      const applied = yield* applyRedaction(sql, {
        scope: "sales", term: "RAL 9005", reason: "erasure request 7", preview: p.body.preview,
        requestedBy: "person:2", decidedBy: "anna@example.com", at: new Date().toISOString()
      })
      yield* recordInLedger(yield* OpsStore, "sales", applied)
      expect(yield* checkpointAfterRedaction(sql)).toBe(true)
    }))

    expect((await runService(env.config, runBackup())).ok).toBe(true)
    const copy = await decrypt(new Uint8Array(readFileSync(join(env.backupDir, "scopes", "sales.sqlite.age"))), sales.identity)
    const copyPath = join(env.root, "copy.sqlite")
    writeFileSync(copyPath, copy)
    expect(await withFile(copyPath, (sql) => Effect.map(sql<{ n: number }>`SELECT count(*) AS n FROM rule_version WHERE quote LIKE '%RAL 9005%'`, (r) => r[0]?.n))).toBe(0)
    expect(await countIn(copyPath, "redaction")).toBe(1)

    const probe = await runService(env.config, probeBackup({ scope: "sales" }))
    expect(probe.ok).toBe(true)
    const now = readdirSync(join(env.exportDir, "sales"))
    expect(existsSync(oldArchive)).toBe(false)
    expect(existsSync(`${oldArchive}.sha256`)).toBe(false)
    expect(now.filter((n) => n.endsWith(".age"))).toHaveLength(1)
    const fresh = join(env.exportDir, "sales", now.find((n) => n.endsWith(".age")) ?? "")
    expect(hasText(tarText(await decrypt(new Uint8Array(readFileSync(fresh)), sales.identity)), ["RAL 9005"])).toEqual([])
  })
})
