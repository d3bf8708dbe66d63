/** Doctor's facts from a real host: data dir permissions, the mount table, litestream, and the ops socket up and down. */
import { chmodSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { gunzipSync, gzipSync } from "node:zlib"
import { Effect } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { runBackup } from "../../../src/backup/run.js"
import { BackupLock } from "../../../src/backup/lock.js"
import { accessClock, dataDirFacts, gatherDoctorInput, lexiconFacts, litestreamFacts, offsetFromDate, parseMountinfo, type SysBlock, volumeFacts } from "../../../src/ops/doctor/facts.js"
import { runDoctor } from "../../../src/ops/doctor/index.js"
import { lexiconFilePath } from "../../../src/search/lexical/lexicon.js"
import { VERSION } from "../../../src/version.js"
import { ScopeStore, scopeFile } from "../../../src/db/scope-store.js"
import * as F from "../../../src/ops/doctor/findings.js"
import type { DoctorInput, ScopeFileHygiene } from "../../../src/ops/doctor/types.js"
import { ServicesLive } from "../../../src/services.js"
import { otherConnection } from "../../support/other-connection.js"
import { OPS_TOKEN, startListener } from "../support.js"
import { tempDir, testConfig } from "../../support/env.js"

let dir: string
let cleanup: () => void
beforeEach(() => {
  ;({ dir, cleanup } = tempDir("gn-doctor-"))
})
afterEach(() => cleanup())

describe("data dir facts", () => {
  it("finds nothing on a private data dir, and names every group- or world-accessible path with its chmod", () => {
    const data = join(dir, "data")
    expect(dataDirFacts(data)).toEqual({ path: data, exists: false, problems: [] })
    mkdirSync(join(data, "scopes"), { recursive: true, mode: 0o700 })
    chmodSync(data, 0o700)
    writeFileSync(join(data, "ops.sqlite"), "", { mode: 0o600 })
    writeFileSync(join(data, "scopes", "sales.sqlite"), "", { mode: 0o600 })
    writeFileSync(join(data, "notes.txt"), "", { mode: 0o644 })
    expect(dataDirFacts(data)).toEqual({ path: data, exists: true, problems: [] })
    chmodSync(join(data, "scopes", "sales.sqlite"), 0o644)
    writeFileSync(join(data, "scopes", "sales.sqlite-wal"), "", { mode: 0o640 })
    chmodSync(join(data, "scopes", "sales.sqlite-wal"), 0o640)
    chmodSync(data, 0o750)
    expect(dataDirFacts(data).problems).toEqual([
      `${data} is group- or world-accessible (mode 0750): run chmod 700 ${data}`,
      `${join(data, "scopes", "sales.sqlite")} is group- or world-accessible (mode 0644): run chmod 600 ${join(data, "scopes", "sales.sqlite")}`,
      `${join(data, "scopes", "sales.sqlite-wal")} is group- or world-accessible (mode 0640): run chmod 600 ${join(data, "scopes", "sales.sqlite-wal")}`
    ])
    expect(dataDirFacts(data, 12345).problems[0]).toBe(`${data} is owned by uid ${process.getuid?.()}, not by you (uid 12345): chown it to the service user`)
  })
})

describe("encrypted volume facts", () => {
  const line = (id: number, device: string, mountPoint: string, fsType: string, source: string) =>
    `${id} 1 ${device} / ${mountPoint} rw,relatime shared:1 - ${fsType} ${source} rw`
  const sys = (files: Record<string, string>, dirs: Record<string, ReadonlyArray<string>> = {}): SysBlock => ({
    read: (p) => files[p] ?? null,
    list: (p) => dirs[p] ?? []
  })

  it("parses mountinfo, escapes included", () => {
    expect(parseMountinfo(`${line(30, "8:1", "/mnt/with\\040space", "ext4", "/dev/sda1")}\n`)).toEqual([
      { device: "8:1", mountPoint: "/mnt/with space", fsType: "ext4", source: "/dev/sda1" }
    ])
  })

  it("detects dm-crypt under the data dir's mount (also LVM on LUKS), an encrypting file system, and says when it cannot tell", () => {
    const real = realpathSync(dir)
    const mountinfo = (inner: string) => [line(20, "8:1", "/", "ext4", "/dev/sda1"), inner].join("\n")
    const crypt = volumeFacts(dir, {
      platform: "linux",
      mountinfo: mountinfo(line(31, "253:0", real, "ext4", "/dev/mapper/data")),
      sys: sys({ "/sys/dev/block/253:0/dm/uuid": "CRYPT-LUKS2-0123abcd-data" })
    })
    expect(crypt).toEqual({ encrypted: true, how: `dm-crypt (CRYPT-LUKS2) under ext4 /dev/mapper/data mounted at ${real}` })
    const lvm = volumeFacts(dir, {
      platform: "linux",
      mountinfo: mountinfo(line(31, "253:1", real, "xfs", "/dev/mapper/vg-data")),
      sys: sys({ "/sys/dev/block/253:1/dm/uuid": "LVM-abc", "/sys/class/block/dm-0/dm/uuid": "CRYPT-LUKS1-xyz-c" }, { "/sys/dev/block/253:1/slaves": ["dm-0"] })
    })
    expect(lvm.encrypted).toBe(true)
    expect(volumeFacts(dir, { platform: "linux", mountinfo: mountinfo(""), sys: sys({}) })).toEqual({
      encrypted: false, how: "ext4 /dev/sda1 mounted at /, no dm-crypt below it"
    })
    expect(volumeFacts(dir, { platform: "linux", mountinfo: mountinfo(line(31, "0:50", real, "fuse.gocryptfs", "/srv/cipher")), sys: sys({}) }).encrypted).toBe(true)
    expect(volumeFacts(dir, { platform: "linux", mountinfo: line(20, "0:30", "/", "overlay", "overlay"), sys: sys({}) })).toEqual({
      encrypted: null, how: "cannot tell for overlay overlay mounted at /"
    })
    expect(volumeFacts(dir, { platform: "darwin" })).toEqual({ encrypted: null, how: "cannot tell on darwin" })
    expect(typeof volumeFacts(dir).how).toBe("string")
  })
})

describe("litestream facts", () => {
  it("finds the binary and runs it; says when its config is missing", async () => {
    const facts = await Effect.runPromise(litestreamFacts({ PATH: process.env.PATH, LITESTREAM_CONFIG: join(dir, "missing.yml") }))
    expect(facts.binary).not.toBeNull()
    expect(facts.version).toBe("v0.3.13")
    expect(facts).toMatchObject({ configPath: join(dir, "missing.yml"), configExists: false })
  })
})

describe("gathering with the service down and up", () => {
  it("down: ops-socket fails and the findings that need the service skip; up: GET /ops/status feeds them", async () => {
    const data = join(dir, "data")
    mkdirSync(data, { mode: 0o700 })
    const backupDir = join(dir, "backup")
    mkdirSync(backupDir, { mode: 0o700 })
    const config = testConfig(data, { backup: { kind: "copy", directory: backupDir, deadman_url: "http://127.0.0.1:9/x" } })
    const env = {
      GROUNDNOTE_AUTH_MODE: "dev-token", GROUNDNOTE_SESSION_SECRET: "s".repeat(40), GROUNDNOTE_OPS_TOKEN: OPS_TOKEN,
      GROUNDNOTE_DEV_MCP_TOKEN: "m".repeat(40), GROUNDNOTE_DEV_APPROVAL_TOKEN: "a".repeat(40), GROUNDNOTE_DATA_DIR: data
    }
    const gather = () => Effect.runPromise(gatherDoctorInput({
      env, cwd: dir, cliVersion: VERSION, config: { ok: true, path: config.env.configPath, config: config.file }
    }))
    const down = runDoctor(await gather())
    const byId = (fs: ReturnType<typeof runDoctor>) => Object.fromEntries(fs.map((f) => [f.id, f]))
    expect(byId(down)["ops-socket"]).toMatchObject({ status: "fail" })
    expect(byId(down)["probe-age"]).toMatchObject({ status: "skip", message: "the service is not reachable (ops-socket: ops-unreachable)" })

    const service = await startListener(config)
    try {
      await service.run(Effect.flatMap(ScopeStore, (s) => s.create("sales")))
      await service.run(runBackup().pipe(Effect.provide(BackupLock.Default)))
      const up = byId(runDoctor(await gather()))
      expect(up["ops-socket"]?.status).toBe("ok")
      expect(up["service-version"]).toMatchObject({ status: "ok", message: `the service runs ${VERSION}, as this CLI` })
      expect(up["scopes-unlocked"]).toMatchObject({ status: "warn", message: "configured without a file: ops" })
      expect(up["backup-age"]).toMatchObject({ status: "ok", message: "every copy is younger than 26 h" })
      expect(up["probe-age"]).toMatchObject({ status: "fail", message: "sales never probed" })
      expect(up["data-dir-permissions"]?.status).toBe("ok")
      expect(up["secrets-present"]?.status).toBe("ok")
      expect(up["lexicon"]).toMatchObject({ status: "ok", message: expect.stringMatching(/lexicon\.txt\.gz loaded: \d+ groups of synonyms and translations, \d+ terms/) })
    } finally {
      await service.stop()
    }
  })
})

describe("lexicon facts", () => {
  it("reads the installation's lexicon with its counts; an absent, foreign or cut file says why", () => {
    const shipped = lexiconFacts()
    expect(shipped).toMatchObject({ loaded: true, path: lexiconFilePath() })
    expect(shipped.loaded && shipped.groups > 100_000 && shipped.terms > shipped.groups).toBe(true)
    const absent = join(dir, "lexicon.txt.gz")
    expect(lexiconFacts(absent)).toEqual({ loaded: false, path: absent, why: `${absent} cannot be read (ENOENT)` })
    writeFileSync(absent, gzipSync("groups\n"))
    expect(lexiconFacts(absent)).toMatchObject({ loaded: false, why: expect.stringContaining("not a lexicon file") })
    const whole = gunzipSync(readFileSync(lexiconFilePath()))
    writeFileSync(absent, gzipSync(whole.subarray(0, whole.lastIndexOf(0x0a, whole.length - 2) + 1)))
    expect(lexiconFacts(absent)).toMatchObject({ loaded: false, why: expect.stringContaining("truncated or edited?") })
    writeFileSync(absent, whole)
    expect(lexiconFacts(absent)).toMatchObject({ loaded: false, why: expect.stringContaining("cannot be read") })
    expect(runDoctor({ ...inputOf([]), lexicon: lexiconFacts(absent) }).find((f) => f.id === "lexicon")?.status).toBe("warn")
  })
})

describe("the clock against Access", () => {
  const config = (teamDomain: string | null) => ({
    ok: true as const,
    path: "g.json",
    config: {
      instance: "acme", zone: "Europe/Berlin", scopes: [{ name: "sales" }], backup: { kind: "litestream" as const, deadman_url: "https://d.example/p" },
      doctor: { max_backup_age_hours: 26, max_probe_age_hours: 26 },
      search: { semantic: { enabled: false }, reranker: { enabled: false as const } },
      ...(teamDomain === null ? {} : { access: { team_domain: teamDomain } })
    }
  })
  const ACCESS_ENV = { GROUNDNOTE_AUTH_MODE: "cloudflare-access" }

  it("computes the offset from a Date header (whole seconds) and the middle of the round trip", () => {
    expect(offsetFromDate("Sat, 07 Nov 2026 08:00:10 GMT", Date.parse("2026-11-07T08:00:00.000Z"), Date.parse("2026-11-07T08:00:01.000Z"))).toBe(10_000)
    expect(offsetFromDate(null, 0, 0)).toBeNull()
    expect(offsetFromDate("yesterday", 0, 0)).toBeNull()
  })

  it("asks the team domain's key set for its Date; says why not in dev-token mode, without access, or when it does not answer", async () => {
    const server = createServer((req, res) => {
      expect(req.url).toBe("/cdn-cgi/access/certs")
      res.writeHead(200, { date: new Date(Date.now() + 40_000).toUTCString(), "content-type": "application/json" })
      res.end("{\"keys\":[]}")
    })
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()))
    const port = (server.address() as AddressInfo).port
    try {
      const c = await Effect.runPromise(accessClock(ACCESS_ENV, config(`http://127.0.0.1:${port}/`)))
      expect(c).toMatchObject({ source: `http://127.0.0.1:${port}` })
      expect("offsetMs" in c && c.offsetMs > 38_000 && c.offsetMs < 42_000).toBe(true)
      expect(runDoctor({ ...(await Effect.runPromise(gatherDoctorInput({ env: {}, cwd: dir, cliVersion: VERSION, config: config(null) }))), clock: c })
        .find((f) => f.id === "clock-skew")?.status).toBe("fail")
    } finally {
      await new Promise<void>((r) => server.close(() => r()))
    }
    expect(await Effect.runPromise(accessClock({ GROUNDNOTE_AUTH_MODE: "dev-token" }, config(null)))).toEqual({ unavailable: "not in cloudflare-access mode: no Access token's time is checked" })
    expect(await Effect.runPromise(accessClock(ACCESS_ENV, config(null)))).toEqual({ unavailable: "no access.team_domain in groundnote.json" })
    const down = await Effect.runPromise(accessClock(ACCESS_ENV, config(`http://127.0.0.1:${port}`), 2_000))
    expect("unavailable" in down && down.unavailable.startsWith(`http://127.0.0.1:${port} did not answer`)).toBe(true)
  })
})

describe("storage facts (the CLI host, for secure-delete)", () => {
  const env = () => ({ GROUNDNOTE_DATA_DIR: dir })

  it("reads every scope file on a connection opened as the service opens its own: ok on fresh files, fail naming a table without secure-delete", async () => {
    const { cliHost } = await import("../../../src/operations/ops-cli-host.js")
    expect(await Effect.runPromise(cliHost.storageFacts(env(), dir))).toEqual([])
    await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const store = yield* ScopeStore
      yield* store.create("sales")
      yield* store.create("ops")
    })).pipe(Effect.provide(ServicesLive(testConfig(dir)))))
    const fresh = await Effect.runPromise(cliHost.storageFacts(env(), dir))
    expect(fresh).toEqual(["ops", "sales"].map((scope) => ({
      scope, file: scopeFile(dir, scope), secureDelete: 1, tempStore: 2, ftsWithout: []
    })))
    expect(F.secureDelete({ ...inputOf(fresh) }).status).toBe("ok")

    // a table of the sales file without its option (as a migration that forgot it would leave it)
    const db = otherConnection(scopeFile(dir, "sales"))
    db.exec("INSERT INTO rule_fts(rule_fts, rank) VALUES ('secure-delete', 0)")
    db.close()
    writeFileSync(join(dir, "scopes", "broken.sqlite"), "not a database at all, just text of a file", { mode: 0o600 })
    const after = await Effect.runPromise(cliHost.storageFacts(env(), dir))
    expect(after.find((f) => f.scope === "sales")).toMatchObject({ ftsWithout: ["rule_fts"], secureDelete: 1, tempStore: 2 })
    expect(after.find((f) => f.scope === "broken")).toMatchObject({ error: expect.stringContaining("not a database") })
    const finding = F.secureDelete(inputOf(after))
    expect(finding.status).toBe("fail")
    expect(finding.message).toContain("sales: FTS5 1 table without secure-delete: rule_fts")
    expect(finding.message).toContain(`${join(dir, "scopes", "broken.sqlite")} cannot be read`)
  })
})

/** Doctor's input with these storage facts and nothing else gathered. */
const inputOf = (storage: ReadonlyArray<ScopeFileHygiene>): DoctorInput => ({
  now: Date.now(), env: {}, cliVersion: VERSION,
  config: { ok: false, path: "/x", code: "config-missing", message: "not read" },
  dataDir: { path: dir, exists: true, problems: [] },
  service: { reachable: false, code: "ops-unreachable", message: "not asked" },
  volume: { encrypted: null, how: "not asked" }, litestream: null, stages: null, clock: null, ledger: null, storage
})
describe("key facts", () => {
  it("names plaintext copies and archives of keyed scopes and checks the identity files against the active recipients", async () => {
    const { Effect } = await import("effect")
    const { keyFacts } = await import("../../../src/ops/doctor/facts.js")
    const { makeKeyPair } = await import("../../../src/keys/keypair.js")
    const { mkdtempSync, mkdirSync, writeFileSync, rmSync, chmodSync } = await import("node:fs")
    const { tmpdir } = await import("node:os")
    const { join } = await import("node:path")
    const root = mkdtempSync(join(tmpdir(), "gn-keyfacts-"))
    try {
      const backup = join(root, "backup")
      const exports = join(root, "exports")
      const keys = join(root, "keys")
      for (const d of [join(backup, "scopes"), join(exports, "sales"), keys]) mkdirSync(d, { recursive: true })
      writeFileSync(join(backup, "scopes", "sales.sqlite"), "x")
      writeFileSync(join(backup, "scopes", "ops.sqlite"), "x")
      writeFileSync(join(exports, "sales", "sales-export-20261206T010000.000Z-0a0b0c0d.tar.gz"), "x")
      writeFileSync(join(exports, "sales", "sales-export-20261206T020000.000Z-0a0b0c0e.tar.gz.age"), "x")
      const sales = await Effect.runPromise(makeKeyPair)
      const old = await Effect.runPromise(makeKeyPair)
      const inst = await Effect.runPromise(makeKeyPair)
      writeFileSync(join(keys, "sales.age-identity"), `# public key: ${sales.recipient}\n${sales.identity}\n`, { mode: 0o600 })
      writeFileSync(join(keys, "_instance.age-identity"), `${old.identity}\n`, { mode: 0o600 })
      const config = { backup: { kind: "copy", directory: backup, deadman_url: null, export_directory: exports } } as unknown as Parameters<typeof keyFacts>[1]
      const rows = [
        { scope: "sales", recipient: sales.recipient, retired_at: null },
        { scope: null, recipient: old.recipient, retired_at: "2026-12-01T00:00:00Z" },
        { scope: null, recipient: inst.recipient, retired_at: null }
      ]
      const facts = await Effect.runPromise(keyFacts(rows, config, { GROUNDNOTE_KEY_DIR: keys }))
      expect(facts.keyed).toEqual([{ scope: "sales", recipients: [sales.recipient] }, { scope: null, recipients: [inst.recipient] }])
      expect(facts.plaintext).toEqual([join(backup, "scopes", "sales.sqlite"), join(exports, "sales", "sales-export-20261206T010000.000Z-0a0b0c0d.tar.gz")])
      expect(facts.identities.map((i) => [i.scope, i.state])).toEqual([["sales", "ok"], [null, "no-match"]])
      chmodSync(join(keys, "sales.age-identity"), 0o644)
      const open = await Effect.runPromise(keyFacts(rows, config, { GROUNDNOTE_KEY_DIR: keys }))
      expect(open.identities[0]?.state).toBe("too-open")
      const none = await Effect.runPromise(keyFacts(rows, config, {}))
      expect(none.identities.map((i) => i.state)).toEqual(["missing", "missing"])
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  })
})
