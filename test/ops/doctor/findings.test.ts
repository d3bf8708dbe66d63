/** Every doctor finding (gaps.md §9) in its ok and fail states, and skip where it depends on something absent. */
import { Effect, Either, Schema } from "effect"
import { describe, expect, it } from "vitest"
import { readEnv } from "../../../src/config/env.js"
import { ConfigFile } from "../../../src/config/schema.js"
import { rerankerBudgetFinding } from "../../../src/search/reranker/findings.js"
import { doctorExitCode, runDoctor } from "../../../src/ops/doctor/index.js"
import * as F from "../../../src/ops/doctor/findings.js"
import { renderFindings } from "../../../src/ops/doctor/render.js"
import { type DoctorConfig, type DoctorInput, type DoctorStatus, FINDING_IDS, type KeyFacts } from "../../../src/ops/doctor/types.js"
import { baseConfigJson } from "../../support/env.js"

const NOW = Date.parse("2026-11-07T08:00:00Z")
const HOURS_AGO = (h: number) => new Date(NOW - h * 3_600_000).toISOString()

/** A decoded groundnote.json is a DoctorConfig as it is. */
const decoded = (over: Record<string, unknown> = {}): DoctorConfig => {
  const file: ConfigFile = Schema.decodeUnknownSync(ConfigFile)({ ...baseConfigJson(), ...over }, { onExcessProperty: "error" })
  return file
}

const ENV = {
  GROUNDNOTE_AUTH_MODE: "dev-token",
  GROUNDNOTE_SESSION_SECRET: "s".repeat(40),
  GROUNDNOTE_OPS_TOKEN: "o".repeat(40),
  GROUNDNOTE_DEV_MCP_TOKEN: "m".repeat(40),
  GROUNDNOTE_DEV_APPROVAL_TOKEN: "a".repeat(40),
  GROUNDNOTE_DEV_EMAIL: "dev@example.com"
}

const scopeStatus = (scope: string, over: Partial<DoctorStatus["scopes"][number]> = {}): DoctorStatus["scopes"][number] => ({
  scope, created: true, locked: false, lock_reason: null, last_backup_at: HOURS_AGO(2), verified_at: null, verify_ok: null,
  probed_at: HOURS_AGO(2), probe_ok: true, ...over
})

const STATUS: DoctorStatus = {
  version: "0.1.0",
  now: new Date(NOW).toISOString(),
  backup: { kind: "copy", ops_backup_at: HOURS_AGO(2) },
  scopes: [scopeStatus("sales"), scopeStatus("ops")]
}

/** A scope file whose connection and FTS5 tables carry the storage hygiene. */
const SOUND = (scope: string) => ({ scope, file: `/srv/gn/data/scopes/${scope}.sqlite`, secureDelete: 1, tempStore: 2, ftsWithout: [] })

const input = (over: Partial<DoctorInput> = {}): DoctorInput => ({
  now: NOW,
  env: ENV,
  cliVersion: "0.1.0",
  config: { ok: true, path: "/etc/groundnote/groundnote.json", config: decoded() },
  dataDir: { path: "/srv/gn/data", exists: true, problems: [] },
  service: { reachable: true, status: STATUS },
  volume: { encrypted: true, how: "dm-crypt (CRYPT-LUKS2) under ext4 /dev/mapper/data mounted at /srv" },
  litestream: null,
  stages: null,
  clock: null,
  ledger: null,
  storage: [SOUND("sales"), SOUND("ops")],
  ...over
})
const withStatus = (status: Partial<DoctorStatus>) => input({ service: { reachable: true, status: { ...STATUS, ...status } } })
const DOWN = { reachable: false as const, code: "ops-unreachable", message: "there is no ops socket at /srv/gn/data/ops.sock: is groundnote serve running with this GROUNDNOTE_DATA_DIR?" }

describe("doctor findings", () => {
  it("runs every finding in order; exit 3 on any fail", () => {
    const all = runDoctor(input())
    expect(all.map((f) => f.id)).toEqual([...FINDING_IDS])
    expect(all.filter((f) => f.status === "fail")).toEqual([])
    expect(doctorExitCode(all)).toBe(0)
    expect(doctorExitCode(runDoctor(input({ dataDir: { path: "/x", exists: false, problems: [] } })))).toBe(3)
  })

  it("with the service down, every finding that needs it says skip and why", () => {
    const all = runDoctor(input({ service: DOWN }))
    const byId = Object.fromEntries(all.map((f) => [f.id, f]))
    expect(byId["ops-socket"]?.status).toBe("fail")
    for (const id of ["service-version", "scopes-unlocked", "backup-age", "probe-age", "verify-result"] as const) {
      expect(byId[id]).toEqual({ id, status: "skip", message: "the service is not reachable (ops-socket: ops-unreachable)", remedy: null })
    }
  })

  it("secure-delete: ok when every scope file's FTS5 tables and connections carry it; fail naming the file or table; skip without files", () => {
    expect(F.secureDelete(input())).toMatchObject({ status: "ok", message: "2 scope files: every FTS5 table with secure-delete; connections run secure_delete = ON and temp_store = MEMORY" })
    const table = F.secureDelete(input({ storage: [SOUND("sales"), { ...SOUND("ops"), ftsWithout: ["rule_fts", "lex_word"] }] }))
    expect(table).toMatchObject({ status: "fail", message: "ops: FTS5 2 tables without secure-delete: rule_fts, lex_word" })
    expect(table.remedy).toContain("INSERT INTO <table>(<table>, rank) VALUES ('secure-delete', 1)")
    const pragma = F.secureDelete(input({ storage: [{ ...SOUND("sales"), secureDelete: 0, tempStore: 0 }] }))
    expect(pragma).toMatchObject({
      status: "fail", message: "a connection to /srv/gn/data/scopes/sales.sqlite runs secure_delete = 0, temp_store = 0 (not ON and MEMORY)"
    })
    expect(F.secureDelete(input({ storage: [{ ...SOUND("sales"), tempStore: 1 }] })).status).toBe("fail")
    const unreadable = F.secureDelete(input({ storage: [{ scope: "sales", file: "/srv/gn/data/scopes/sales.sqlite", error: "cannot open: file is not a database" }] }))
    expect(unreadable).toMatchObject({ status: "fail", message: "/srv/gn/data/scopes/sales.sqlite cannot be read (cannot open: file is not a database)" })
    expect(F.secureDelete(input({ storage: [] }))).toMatchObject({ status: "skip", message: "there is no scope file yet" })
    expect(F.secureDelete(input({ storage: null })).status).toBe("skip")
    expect(doctorExitCode(runDoctor(input({ storage: [{ ...SOUND("sales"), ftsWithout: ["entity_fts"] }] })))).toBe(3)
  })

  it("config-valid", () => {
    expect(F.configValid(input()).status).toBe("ok")
    const f = F.configValid(input({ config: { ok: false, path: "/etc/g.json", code: "config-invalid", message: "/etc/g.json is invalid (1 problem …):\n  backup: is missing (add it)" } }))
    expect(f).toMatchObject({ status: "fail", message: expect.stringContaining("backup: is missing") })
    expect(f.remedy).toContain("/etc/g.json")
  })

  it("secrets-present, and it asks for what the service asks for", () => {
    expect(F.secretsPresent(input())).toMatchObject({ status: "ok", message: "4 secrets set, each at least 32 characters" })
    expect(F.secretsPresent(input({ env: { ...ENV, GROUNDNOTE_OPS_TOKEN: "" } }))).toMatchObject({ status: "fail", message: "not set: GROUNDNOTE_OPS_TOKEN" })
    const short = F.secretsPresent(input({ env: { ...ENV, GROUNDNOTE_DEV_MCP_TOKEN: "short-secret-value" } }))
    expect(short).toMatchObject({ status: "fail", message: "shorter than 32 characters: GROUNDNOTE_DEV_MCP_TOKEN" })
    expect(short.message).not.toContain("short-secret-value")
    expect(F.secretsPresent(input({ env: {} }))).toMatchObject({ status: "fail", message: "GROUNDNOTE_AUTH_MODE is not set" })
    // the same names the service refuses to start without
    const names = F.secretNames(ENV) ?? []
    for (const [name, required] of names) {
      const refused = Effect.runSync(Effect.either(readEnv({ ...ENV, [name]: undefined }, "/")))
      expect(Either.isLeft(refused), name).toBe(required)
      const shortRefused = Effect.runSync(Effect.either(readEnv({ ...ENV, [name]: "x".repeat(31) }, "/")))
      expect(Either.isLeft(shortRefused), name).toBe(true)
    }
    const access = F.secretNames({ GROUNDNOTE_AUTH_MODE: "cloudflare-access" })
    expect(access?.map(([n]) => n)).toEqual(["GROUNDNOTE_SESSION_SECRET", "GROUNDNOTE_OPS_TOKEN"])
  })

  it("secrets-distinct", () => {
    expect(F.secretsDistinct(input()).status).toBe("ok")
    const f = F.secretsDistinct(input({ env: { ...ENV, GROUNDNOTE_DEV_MCP_TOKEN: ENV.GROUNDNOTE_OPS_TOKEN } }))
    expect(f).toMatchObject({ status: "fail", message: "the same value: GROUNDNOTE_OPS_TOKEN = GROUNDNOTE_DEV_MCP_TOKEN" })
    expect(f.message).not.toContain("o".repeat(40))
    expect(F.secretsDistinct(input({ env: {} })).status).toBe("skip")
  })

  it("data-dir-permissions", () => {
    expect(F.dataDirPermissions(input()).status).toBe("ok")
    const problem = "/srv/gn/data/ops.sqlite is group- or world-accessible (mode 0644): run chmod 600 /srv/gn/data/ops.sqlite"
    expect(F.dataDirPermissions(input({ dataDir: { path: "/srv/gn/data", exists: true, problems: [problem] } }))).toMatchObject({ status: "fail", message: problem })
    expect(F.dataDirPermissions(input({ dataDir: { path: "/srv/gn/data", exists: false, problems: [] } }))).toMatchObject({ status: "fail", message: "there is no data dir at /srv/gn/data" })
  })

  it("at-rest: neither detected nor attested fails in cloudflare-access mode, warns in dev-token mode", () => {
    const undetected = { encrypted: null, how: "cannot tell for overlay overlay mounted at /" }
    const access = { GROUNDNOTE_AUTH_MODE: "cloudflare-access", GROUNDNOTE_SESSION_SECRET: "s".repeat(40), GROUNDNOTE_OPS_TOKEN: "o".repeat(40) }
    expect(F.atRest(input({ volume: undetected, env: access }))).toMatchObject({ status: "fail", message: expect.stringContaining("required in cloudflare-access mode") })
    expect(F.atRest(input({ volume: undetected })).status).toBe("warn")
    expect(F.atRest(input({ env: access })).status).toBe("ok")
  })

  it("scope-keys, copies-encrypted, key-identity", () => {
    const R = `age1${"q".repeat(58)}`
    const keys = (over: Partial<KeyFacts> = {}): KeyFacts => ({
      keyed: [{ scope: "sales", recipients: [R] }], plaintext: [], identities: [{ scope: "sales", state: "ok", detail: "/keys/sales.age-identity" }], ...over
    })
    // the service down or no key list: skip
    expect(F.scopeKeys(input({ service: DOWN })).status).toBe("skip")
    expect(F.copiesEncrypted(input()).status).toBe("skip")
    expect(F.keyIdentity(input()).status).toBe("skip")
    // sales is keyed, ops has backups without a key: warn naming it and the command
    expect(F.scopeKeys(input({ keys: keys() }))).toMatchObject({ status: "warn", message: "backed up without a key (plaintext copies): ops", remedy: expect.stringContaining("groundnote key create --scope ops") })
    expect(F.scopeKeys(input({ keys: keys({ keyed: [{ scope: "sales", recipients: [R] }, { scope: "ops", recipients: [R] }] }) })).status).toBe("ok")
    // no key at all: the copies are plaintext by choice, copies-encrypted and key-identity skip
    expect(F.copiesEncrypted(input({ keys: keys({ keyed: [], identities: [] }) })).status).toBe("skip")
    expect(F.copiesEncrypted(input({ keys: keys() })).status).toBe("ok")
    expect(F.copiesEncrypted(input({ keys: keys({ plaintext: ["/backup/scopes/sales.sqlite"] }) }))).toMatchObject({ status: "fail", message: "plaintext copies of keyed scopes: /backup/scopes/sales.sqlite" })
    expect(F.keyIdentity(input({ keys: keys() })).status).toBe("ok")
    expect(F.keyIdentity(input({ keys: keys({ identities: [{ scope: "sales", state: "missing", detail: "GROUNDNOTE_KEY_DIR is not set" }] }) }))).toMatchObject({ status: "fail", message: "sales: GROUNDNOTE_KEY_DIR is not set" })
    expect(F.keyIdentity(input({ keys: keys({ identities: [{ scope: null, state: "no-match", detail: "x" }] }) }))).toMatchObject({ status: "fail", remedy: expect.stringContaining("--instance") })
    expect(F.keyIdentity(input({ keys: keys({ identities: [{ scope: "sales", state: "too-open", detail: "mode 0644" }] }) })).status).toBe("warn")
  })

  it("at-rest: detected, attested within 365 days, attested too long ago, not attested", () => {
    expect(F.atRest(input()).status).toBe("ok")
    const undetected = { encrypted: null, how: "cannot tell for overlay overlay mounted at /" }
    const attested = (day: string | undefined) => input({
      volume: undetected,
      config: { ok: true, path: "g.json", config: decoded({ at_rest: day === undefined ? { kind: "volume" } : { kind: "volume", attested_at: day } }) }
    })
    expect(F.atRest(attested("2026-06-01"))).toMatchObject({ status: "ok", message: "at_rest attested on 2026-06-01 (159 days ago)" })
    expect(F.atRest(attested("2025-10-01"))).toMatchObject({ status: "fail", message: "at_rest was attested on 2025-10-01, 402 days ago (more than 365)" })
    expect(F.atRest(attested(undefined)).status).toBe("warn")
    expect(F.atRest(input({ volume: { encrypted: false, how: "ext4 /dev/sda1 mounted at /, no dm-crypt below it" } })).status).toBe("warn")
  })

  it("ops-socket", () => {
    expect(F.opsSocket(input()).status).toBe("ok")
    expect(F.opsSocket(input({ service: DOWN }))).toMatchObject({ status: "fail", remedy: expect.stringContaining("start the service") })
    expect(F.opsSocket(input({ service: { reachable: false, code: "unauthorized", message: "x" } }))).toMatchObject({ status: "fail", message: "the service refused GROUNDNOTE_OPS_TOKEN" })
    expect(F.opsSocket(input({ service: { reachable: false, code: "ops-socket-untrusted", message: "/srv/gn/data has mode 0755, not 0700: run chmod 700 /srv/gn/data" } })).message).toContain("0755")
  })

  it("service-version", () => {
    expect(F.serviceVersion(input()).status).toBe("ok")
    expect(F.serviceVersion(withStatus({ version: "0.0.9" }))).toMatchObject({ status: "warn", message: "the service runs 0.0.9, this CLI is 0.1.0" })
  })

  it("scopes-unlocked", () => {
    expect(F.scopesUnlocked(input())).toMatchObject({ status: "ok", message: "2 scopes open" })
    const locked = withStatus({ scopes: [scopeStatus("sales", { locked: true, lock_reason: "fewer rule versions (3) than ops.sqlite remembers (9)" }), scopeStatus("ops")] })
    expect(F.scopesUnlocked(locked)).toMatchObject({ status: "fail", message: "locked: sales: fewer rule versions (3) than ops.sqlite remembers (9)" })
    expect(F.scopesUnlocked(withStatus({ scopes: [scopeStatus("sales"), scopeStatus("ops", { created: false })] }))).toMatchObject({
      status: "warn", remedy: "create it: groundnote scope create ops"
    })
  })

  it("backup-age: copy within max_backup_age_hours, older, never; litestream skips", () => {
    expect(F.backupAge(input())).toMatchObject({ status: "ok", message: "every copy is younger than 26 h" })
    const old = withStatus({ backup: { kind: "copy", ops_backup_at: HOURS_AGO(30) }, scopes: [scopeStatus("sales", { last_backup_at: null }), scopeStatus("ops")] })
    expect(F.backupAge(old)).toMatchObject({ status: "fail", message: "older than 26 h: ops.sqlite copied 30 h ago; sales never copied" })
    const strict = input({ config: { ok: true, path: "g", config: decoded({ doctor: { max_backup_age_hours: 1 } }) } })
    expect(F.backupAge(strict).status).toBe("fail")
    expect(F.backupAge(withStatus({ backup: { kind: "litestream", ops_backup_at: null } })).status).toBe("skip")
  })

  it("probe-age: passed within the limit, failed, never, too old", () => {
    expect(F.probeAge(input()).status).toBe("ok")
    const bad = withStatus({
      scopes: [scopeStatus("sales", { probe_ok: false }), scopeStatus("ops", { probed_at: null, probe_ok: null })]
    })
    expect(F.probeAge(bad)).toMatchObject({ status: "fail", message: `sales: the last probe failed (${HOURS_AGO(2)}); ops never probed` })
    expect(F.probeAge(withStatus({ scopes: [scopeStatus("sales", { probed_at: HOURS_AGO(50) })] }))).toMatchObject({ status: "fail", message: "sales probed 2 d 2 h ago" })
  })

  it("an instance that was never backed up (a fresh install, the demo): backup-age and probe-age warn with groundnote backup run, not fail", () => {
    const fresh = withStatus({
      backup: { kind: "copy", ops_backup_at: null },
      scopes: [scopeStatus("sales", { last_backup_at: null, probed_at: null, probe_ok: null }), scopeStatus("ops", { created: false, last_backup_at: null, probed_at: null, probe_ok: null })]
    })
    expect(F.backupAge(fresh)).toEqual({
      id: "backup-age", status: "warn", message: "no backup has run on this instance yet",
      remedy: "groundnote backup run (then set up the nightly timer: docs/backup.md)"
    })
    expect(F.probeAge(fresh)).toEqual({
      id: "probe-age", status: "warn", message: "no restore probe has run on this instance yet",
      remedy: "groundnote backup run, then groundnote backup probe (the nightly timer runs both: docs/backup.md)"
    })
    expect(runDoctor(fresh).filter((f) => f.status === "fail")).toEqual([])
    // once one copy exists, a scope that was never copied fails, naming the command first
    const partly = withStatus({ scopes: [scopeStatus("sales", { last_backup_at: null, probed_at: null, probe_ok: null }), scopeStatus("ops")] })
    expect(F.backupAge(partly)).toMatchObject({ status: "fail", message: "older than 26 h: sales never copied", remedy: expect.stringMatching(/^run groundnote backup run; /) })
    expect(F.probeAge(partly)).toMatchObject({ status: "fail", message: "sales never probed" })
  })

  it("config-valid warns when backup.deadman_url is null: nothing alerts the operator when a night fails", () => {
    const none = input({ config: { ok: true, path: "/etc/groundnote/groundnote.json", config: decoded({ backup: { kind: "copy", directory: "/srv/backup", deadman_url: null } }) } })
    expect(F.configValid(none)).toEqual({
      id: "config-valid", status: "warn",
      message: "/etc/groundnote/groundnote.json is valid; backup.deadman_url is null: no dead-man ping, nothing alerts you when a night fails",
      remedy: "set backup.deadman_url to the ping URL of a dead-man service (healthchecks.io, Uptime Kuma push, Cronitor …; docs/backup.md)"
    })
  })

  it("one of a thing is singular: 1 scope open, 1 day ago", () => {
    expect(F.scopesUnlocked(withStatus({ scopes: [scopeStatus("sales")] }))).toMatchObject({ status: "ok", message: "1 scope open" })
    const oneDay = input({ volume: { encrypted: null, how: "overlay" }, config: { ok: true, path: "g", config: decoded({ at_rest: { kind: "volume", attested_at: "2026-11-06" } }) } })
    expect(F.atRest(oneDay)).toMatchObject({ status: "ok", message: "at_rest attested on 2026-11-06 (1 day ago)" })
  })

  it("verify-result: passed, failed, never run", () => {
    expect(F.verifyResult(input()).status).toBe("skip")
    expect(F.verifyResult(withStatus({ scopes: [scopeStatus("sales", { verify_ok: true, verified_at: HOURS_AGO(5) })] })).status).toBe("ok")
    expect(F.verifyResult(withStatus({ scopes: [scopeStatus("sales", { verify_ok: false, verified_at: HOURS_AGO(5) })] }))).toMatchObject({
      status: "fail", message: `the last backup verify failed: sales (${HOURS_AGO(5)})`
    })
  })

  it("redaction-ledger: level, a file behind its ledger (fail), a file ahead of it (warn), not read (skip)", () => {
    const facts = (scopes: Array<{ scope: string; behind: Array<string>; unrecorded: Array<string>; held: number }>) =>
      input({ ledger: { read: true, scopes } })
    expect(F.redactionLedger(facts([{ scope: "sales", behind: [], unrecorded: [], held: 2 }, { scope: "ops", behind: [], unrecorded: [], held: 0 }])))
      .toEqual({ id: "redaction-ledger", status: "ok", message: "2 scope files level with the redaction ledger (2 redactions)", remedy: null })
    const behind = F.redactionLedger(facts([{ scope: "sales", behind: ["sales-x0002", "sales-x0003"], unrecorded: [], held: 1 }]))
    expect(behind.status).toBe("fail")
    expect(behind.message).toBe("behind the redaction ledger: sales lacks sales-x0002, sales-x0003")
    expect(behind.remedy).toContain("restore a newer copy")
    expect(doctorExitCode(runDoctor(facts([{ scope: "sales", behind: ["sales-x0001"], unrecorded: [], held: 0 }])))).toBe(3)
    const ahead = F.redactionLedger(facts([{ scope: "sales", behind: [], unrecorded: ["sales-x0004"], held: 4 }]))
    expect(ahead).toMatchObject({ status: "warn", message: "not in the redaction ledger yet: sales: sales-x0004" })
    expect(F.redactionLedger(input({ ledger: { read: false, why: "there is no /srv/gn/data/ops.sqlite" } })))
      .toEqual({ id: "redaction-ledger", status: "skip", message: "there is no /srv/gn/data/ops.sqlite", remedy: null })
    expect(F.redactionLedger(input()).status).toBe("skip")
  })

  it("litestream-binary (kind litestream only)", () => {
    const ls = (litestream: DoctorInput["litestream"]) => input({
      config: { ok: true, path: "g", config: decoded({ backup: { kind: "litestream", target: "s3://b/gn", prefix: "gn", deadman_url: "https://d.example/p" } }) },
      litestream
    })
    expect(F.litestreamBinary(input()).status).toBe("skip")
    expect(F.litestreamBinary(ls({ binary: "/usr/bin/litestream", version: "v0.3.13", configPath: "/etc/litestream.yml", configExists: true }))).toMatchObject({
      status: "ok", message: "/usr/bin/litestream v0.3.13, config /etc/litestream.yml"
    })
    expect(F.litestreamBinary(ls({ binary: null, version: null, configPath: "/etc/litestream.yml", configExists: true })).status).toBe("fail")
    expect(F.litestreamBinary(ls({ binary: "/usr/bin/litestream", version: null, configPath: "/etc/litestream.yml", configExists: true })).status).toBe("fail")
    expect(F.litestreamBinary(ls({ binary: "/usr/bin/litestream", version: "v0.3.13", configPath: "/etc/litestream.yml", configExists: false })).status).toBe("fail")
  })

  it("semantic-model, reranker-key and reranker-budget are the stage modules' findings", () => {
    // the findings as src/search/semantic/check.ts and src/search/reranker/findings.ts produce them
    const model = { id: "semantic-model" as const, status: "fail" as const, message: "bge-m3: files-missing: model.onnx", remedy: "put model.onnx … into /srv/gn/data/models/bge-m3" }
    const key = { id: "reranker-key" as const, status: "ok" as const, message: "TYPESAFE_API_KEY is set", remedy: null }
    const stages = [model, key, rerankerBudgetFinding({ search: decoded({ search: { reranker: { enabled: true, monthly_cap_usd: 5 } } }).search as ConfigFile["search"] }, 4.2)]
    const all = runDoctor(input({ stages }))
    expect(all.find((f) => f.id === "semantic-model")).toEqual(model)
    expect(all.find((f) => f.id === "reranker-key")).toEqual(key)
    expect(all.find((f) => f.id === "reranker-budget")).toMatchObject({ status: "warn", message: "$4.20 of $5.00 estimated this month (≥ 80 %)" })
    expect(doctorExitCode(all)).toBe(3)
    // not gathered, or the config did not load: skip with why
    expect(F.semanticModel(input())).toEqual({ id: "semantic-model", status: "skip", message: "the stage checks did not run", remedy: null })
    expect(F.rerankerBudget(input({ stages, config: { ok: false, path: "g", code: "config-invalid", message: "x" } }))).toMatchObject({ status: "skip", message: "groundnote.json did not load (see config-valid)" })
  })

  it("lexicon: ok with its groups and terms, a warning (no fail) when it did not load, skip when not read", () => {
    const path = "/opt/groundnote/share/lexicon/lexicon.txt.gz"
    expect(F.lexicon(input({ lexicon: { loaded: true, path, groups: 413_874, terms: 846_108 } }))).toEqual({
      id: "lexicon", status: "ok", message: `${path} loaded: 413874 groups of synonyms and translations, 846108 terms (German and English)`, remedy: null
    })
    const absent = F.lexicon(input({ lexicon: { loaded: false, path, why: `${path} cannot be read (ENOENT)` } }))
    expect(absent).toMatchObject({ status: "warn", message: `stage a's lexicon did not load: ${path} cannot be read (ENOENT); search runs without its synonyms and translations` })
    expect(absent.remedy).toContain("share/lexicon/lexicon.txt.gz")
    expect(doctorExitCode(runDoctor(input({ lexicon: { loaded: false, path, why: "x" } })))).toBe(0)
    expect(F.lexicon(input())).toEqual({ id: "lexicon", status: "skip", message: "the lexicon was not read", remedy: null })
    expect(F.lexicon(input({ lexicon: null })).status).toBe("skip")
  })

  it("clock-skew", () => {
    expect(F.clockSkew(input()).status).toBe("skip")
    expect(F.clockSkew(input({ clock: { unavailable: "not in cloudflare-access mode: no Access token's time is checked" } }))).toMatchObject({
      status: "skip", message: "not in cloudflare-access mode: no Access token's time is checked"
    })
    expect(F.clockSkew(input({ clock: { offsetMs: 1200, source: "https://team.cloudflareaccess.com" } }))).toMatchObject({
      status: "ok", message: "this host is 1.2 s behind https://team.cloudflareaccess.com"
    })
    expect(F.clockSkew(input({ clock: { offsetMs: -12_000, source: "ntp" } })).status).toBe("warn")
    expect(F.clockSkew(input({ clock: { offsetMs: 45_000, source: "ntp" } })).status).toBe("fail")
  })

  it("renders grouped, coloured only when asked, control characters escaped", () => {
    const findings = runDoctor(input({ service: { reachable: false, code: "x", message: "bad \u001b[2J answer" } }))
    const plain = renderFindings(findings, { color: false })
    expect(plain.split("\n")[0]).toBe("FAIL  ops-socket: x: bad \\u001b[2J answer")
    expect(plain).not.toContain("\u001b")
    expect(plain.split("\n").at(-1)).toMatch(/^\d+ ok, 0 warn, 1 fail, \d+ skip$/)
    expect(renderFindings(findings, { color: true })).toContain("\u001b[31mFAIL")
  })
})
