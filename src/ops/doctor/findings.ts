/**
 * The findings of groundnote doctor (gaps.md §9), each a pure function of DoctorInput:
 * {id, status ok|warn|fail|skip, message, remedy}. Messages name paths, scopes and variables,
 * never a secret's value.
 */
import { plural } from "../../contracts/words.js"
import type { DoctorConfig, DoctorInput, DoctorStatus, Finding, FindingId } from "./types.js"

const ok = (id: FindingId, message: string): Finding => ({ id, status: "ok", message, remedy: null })
const warn = (id: FindingId, message: string, remedy: string): Finding => ({ id, status: "warn", message, remedy })
const fail = (id: FindingId, message: string, remedy: string): Finding => ({ id, status: "fail", message, remedy })
const skip = (id: FindingId, why: string): Finding => ({ id, status: "skip", message: why, remedy: null })

const configOf = (input: DoctorInput): DoctorConfig | null => (input.config.ok ? input.config.config : null)
const statusOf = (input: DoctorInput): DoctorStatus | null => (input.service.reachable ? input.service.status : null)
const serviceDown = (input: DoctorInput): string =>
  input.service.reachable ? "" : `the service is not reachable (ops-socket: ${input.service.code})`

const HOUR = 3_600_000
const DAY = 24 * HOUR

/** "3 h" / "2 d 4 h" */
export const age = (ms: number): string => {
  const hours = Math.floor(Math.max(0, ms) / HOUR)
  return hours < 48 ? `${hours} h` : `${Math.floor(hours / 24)} d ${hours % 24} h`
}

const list = (items: ReadonlyArray<string>): string => items.join("; ")

// ---------------------------------------------------------------------------------------------
// Configuration and environment

export const configValid = (input: DoctorInput): Finding =>
  input.config.ok && input.config.config.backup.deadman_url === null
    ? warn("config-valid", `${input.config.path} is valid; backup.deadman_url is null: no dead-man ping, nothing alerts you when a night fails`,
      "set backup.deadman_url to the ping URL of a dead-man service (healthchecks.io, Uptime Kuma push, Cronitor …; docs/backup.md)")
    : input.config.ok
    ? ok("config-valid", `${input.config.path} is valid`)
    : fail("config-valid", `${input.config.code}: ${input.config.message}`,
      `fix ${input.config.path} as the message says (every key named with its path), then restart the service`)

export const SECRET_MIN_LENGTH = 32
const ALWAYS = ["GROUNDNOTE_SESSION_SECRET", "GROUNDNOTE_OPS_TOKEN"] as const
const DEV_REQUIRED = ["GROUNDNOTE_DEV_MCP_TOKEN", "GROUNDNOTE_DEV_APPROVAL_TOKEN"] as const
const DEV_OPTIONAL = ["GROUNDNOTE_DEV_API_TOKEN"] as const

const value = (env: DoctorInput["env"], name: string): string | undefined => {
  const v = env[name]
  return v === undefined || v === "" ? undefined : v
}

/** The secrets the service needs in this environment's mode: [name, required]. */
export const secretNames = (env: DoctorInput["env"]): ReadonlyArray<readonly [string, boolean]> | null => {
  const mode = value(env, "GROUNDNOTE_AUTH_MODE")
  if (mode === "cloudflare-access") return ALWAYS.map((n) => [n, true] as const)
  if (mode === "dev-token") {
    return [...ALWAYS.map((n) => [n, true] as const), ...DEV_REQUIRED.map((n) => [n, true] as const), ...DEV_OPTIONAL.map((n) => [n, false] as const)]
  }
  return null
}

const ENV_REMEDY = "run doctor with the service's environment (e.g. set -a; . /etc/groundnote/env; set +a)"

export const secretsPresent = (input: DoctorInput): Finding => {
  const names = secretNames(input.env)
  if (names === null) {
    const mode = value(input.env, "GROUNDNOTE_AUTH_MODE")
    return fail("secrets-present",
      mode === undefined ? "GROUNDNOTE_AUTH_MODE is not set" : `GROUNDNOTE_AUTH_MODE has the unknown value ${JSON.stringify(mode.slice(0, 40))}`,
      `set GROUNDNOTE_AUTH_MODE to cloudflare-access or dev-token; ${ENV_REMEDY}`)
  }
  const missing = names.filter(([n, required]) => required && value(input.env, n) === undefined).map(([n]) => n)
  const short = names.filter(([n]) => {
    const v = value(input.env, n)
    return v !== undefined && [...v].length < SECRET_MIN_LENGTH
  }).map(([n]) => n)
  if (missing.length === 0 && short.length === 0) {
    return ok("secrets-present", `${plural(names.filter(([n]) => value(input.env, n) !== undefined).length, "secret")} set, each at least ${SECRET_MIN_LENGTH} characters`)
  }
  const parts = [
    ...(missing.length > 0 ? [`not set: ${missing.join(", ")}`] : []),
    ...(short.length > 0 ? [`shorter than ${SECRET_MIN_LENGTH} characters: ${short.join(", ")}`] : [])
  ]
  return fail("secrets-present", list(parts), `give each a random value (openssl rand -hex 32); ${ENV_REMEDY}`)
}

export const secretsDistinct = (input: DoctorInput): Finding => {
  const names = secretNames(input.env)
  if (names === null) return skip("secrets-distinct", "GROUNDNOTE_AUTH_MODE is not set or unknown (see secrets-present)")
  const present = names.map(([n]) => n).filter((n) => value(input.env, n) !== undefined)
  const equal: Array<string> = []
  for (const [i, a] of present.entries()) {
    for (const b of present.slice(i + 1)) if (value(input.env, a) === value(input.env, b)) equal.push(`${a} = ${b}`)
  }
  return equal.length === 0
    ? ok("secrets-distinct", `${plural(present.length, "secret")}, pairwise different`)
    : fail("secrets-distinct", `the same value: ${equal.join(", ")}`, "give each secret its own random value (openssl rand -hex 32)")
}

// ---------------------------------------------------------------------------------------------
// Files

export const dataDirPermissions = (input: DoctorInput): Finding => {
  const d = input.dataDir
  if (!d.exists) return fail("data-dir-permissions", `there is no data dir at ${d.path}`, "set GROUNDNOTE_DATA_DIR to the service's data dir")
  return d.problems.length === 0
    ? ok("data-dir-permissions", `${d.path}, scopes/ and every SQLite file are the service user's only`)
    : fail("data-dir-permissions", list(d.problems), "run the chmod/chown named for each path (the service refuses to start otherwise)")
}

/** at_rest.attested_at older than this is a fail (architecture.md §3). */
export const ATTESTATION_DAYS = 365

export const atRest = (input: DoctorInput): Finding => {
  if (input.volume.encrypted === true) return ok("at-rest", `encrypted volume detected: ${input.volume.how}`)
  const config = configOf(input)
  if (config === null) return skip("at-rest", `no encrypted volume detected (${input.volume.how}) and groundnote.json did not load (see config-valid)`)
  const attested = config.at_rest
  if (attested === undefined) {
    // cloudflare-access is a production instance: its data must be on an encrypted volume (gaps.md §12)
    const production = value(input.env, "GROUNDNOTE_AUTH_MODE") === "cloudflare-access"
    return (production ? fail : warn)("at-rest", `no encrypted volume detected (${input.volume.how}) and at_rest is not attested in groundnote.json${production ? " (required in cloudflare-access mode)" : ""}`,
      "put the data dir on an encrypted volume (LUKS, encrypted cloud disk); where doctor cannot see it, set at_rest: {kind: \"volume\", attested_at: \"<today>\"}")
  }
  if (attested.attested_at === undefined) {
    return warn("at-rest", "at_rest is attested without attested_at", "add at_rest.attested_at: the day you last checked the volume (YYYY-MM-DD)")
  }
  const days = Math.floor((input.now - Date.parse(`${attested.attested_at}T00:00:00Z`)) / DAY)
  return days > ATTESTATION_DAYS
    ? fail("at-rest", `at_rest was attested on ${attested.attested_at}, ${plural(days, "day")} ago (more than ${ATTESTATION_DAYS})`,
      "check that the data dir is still on an encrypted volume and set at_rest.attested_at to today")
    : ok("at-rest", `at_rest attested on ${attested.attested_at} (${plural(Math.max(0, days), "day")} ago)`)
}

/**
 * secure-delete (gaps.md §12, R1): every scope file's FTS5 tables carry secure-delete, and a
 * connection opened as the service opens its own runs secure_delete = ON and temp_store = MEMORY,
 * so text a redaction replaced is zeroed in the file rather than left in freed pages or index
 * segments.
 */
export const secureDelete = (input: DoctorInput): Finding => {
  const files = input.storage
  if (files === null) return skip("secure-delete", "the scope files were not read")
  if (files.length === 0) return skip("secure-delete", "there is no scope file yet")
  const problems = files.flatMap((f) => {
    if ("error" in f) return [`${f.file} cannot be read (${f.error})`]
    return [
      ...(f.secureDelete !== 1 || f.tempStore !== 2
        ? [`a connection to ${f.file} runs secure_delete = ${f.secureDelete}, temp_store = ${f.tempStore} (not ON and MEMORY)`]
        : []),
      ...(f.ftsWithout.length > 0 ? [`${f.scope}: FTS5 ${plural(f.ftsWithout.length, "table")} without secure-delete: ${f.ftsWithout.join(", ")}`] : [])
    ]
  })
  if (problems.length === 0) {
    return ok("secure-delete", `${plural(files.length, "scope file")}: every FTS5 table with secure-delete; connections run secure_delete = ON and temp_store = MEMORY`)
  }
  return fail("secure-delete", list(problems),
    "run the service's own build (an older or patched one opens files without the hygiene); a table without secure-delete gets it from the next scope migration, or by hand with the service stopped: INSERT INTO <table>(<table>, rank) VALUES ('secure-delete', 1)")
}

// ---------------------------------------------------------------------------------------------
// The service (GET /ops/status)

export const opsSocket = (input: DoctorInput): Finding => {
  const s = input.service
  if (s.reachable) return ok("ops-socket", "the service answers on its ops socket")
  switch (s.code) {
    case "ops-unreachable":
      return fail("ops-socket", `${s.message}`, "start the service (groundnote serve, e.g. systemctl start groundnote) with this GROUNDNOTE_DATA_DIR")
    case "ops-socket-untrusted":
      return fail("ops-socket", s.message, "fix the ownership and modes named in the message; the CLI sends the ops token only to a trusted socket")
    case "ops-token-missing":
      return fail("ops-socket", s.message, ENV_REMEDY)
    case "unauthorized":
      return fail("ops-socket", "the service refused GROUNDNOTE_OPS_TOKEN", `use the service's GROUNDNOTE_OPS_TOKEN; ${ENV_REMEDY}`)
    default:
      return fail("ops-socket", `${s.code}: ${s.message}`, "look at the service's log (journalctl -u groundnote)")
  }
}

export const serviceVersion = (input: DoctorInput): Finding => {
  const status = statusOf(input)
  if (status === null) return skip("service-version", serviceDown(input))
  return status.version === input.cliVersion
    ? ok("service-version", `the service runs ${status.version}, as this CLI`)
    : warn("service-version", `the service runs ${status.version}, this CLI is ${input.cliVersion}`,
      "restart the service after an upgrade (systemctl restart groundnote), or use the CLI of the same installation")
}

export const scopesUnlocked = (input: DoctorInput): Finding => {
  const status = statusOf(input)
  if (status === null) return skip("scopes-unlocked", serviceDown(input))
  const locked = status.scopes.filter((s) => s.locked).map((s) => `${s.scope}: ${s.lock_reason ?? "locked"}`)
  const missing = status.scopes.filter((s) => !s.created).map((s) => s.scope)
  if (locked.length > 0) {
    return fail("scopes-unlocked", `locked: ${list(locked)}`,
      "restore the scope (groundnote restore, docs/backup.md) or repair its file, then restart the service")
  }
  if (missing.length > 0) {
    return warn("scopes-unlocked", `configured without a file: ${missing.join(", ")}`, `create it: groundnote scope create ${missing[0]}`)
  }
  return ok("scopes-unlocked", `${plural(status.scopes.length, "scope")} open`)
}

const maxHours = (input: DoctorInput, key: "max_backup_age_hours" | "max_probe_age_hours"): number =>
  configOf(input)?.doctor[key] ?? 26

const NIGHTLY = "check the timer (systemctl list-timers groundnote-backup*, journalctl -u groundnote-backup) and run groundnote backup nightly"

/**
 * Nothing was ever copied or probed (a fresh install, the demo): not yet due, so a warning with
 * the command that makes the first backup; once one exists, what is missing or old fails.
 */
const neverBackedUp = (status: DoctorStatus): boolean =>
  status.backup.ops_backup_at === null && status.scopes.every((s) => s.last_backup_at === null && s.probed_at === null)

export const backupAge = (input: DoctorInput): Finding => {
  const status = statusOf(input)
  if (status === null) return skip("backup-age", serviceDown(input))
  if (status.backup.kind === "litestream") return skip("backup-age", "backup.kind is litestream: it replicates continuously (probe-age tells whether its replica restores)")
  if (neverBackedUp(status)) return warn("backup-age", "no backup has run on this instance yet", "groundnote backup run (then set up the nightly timer: docs/backup.md)")
  const limit = maxHours(input, "max_backup_age_hours")
  const stale: Array<string> = []
  const check = (name: string, at: string | null) => {
    if (at === null) stale.push(`${name} never copied`)
    else if (input.now - Date.parse(at) > limit * HOUR) stale.push(`${name} copied ${age(input.now - Date.parse(at))} ago`)
  }
  check("ops.sqlite", status.backup.ops_backup_at)
  for (const s of status.scopes.filter((x) => x.created)) check(s.scope, s.last_backup_at)
  return stale.length === 0
    ? ok("backup-age", `every copy is younger than ${limit} h`)
    : fail("backup-age", `older than ${limit} h: ${list(stale)}`, stale.some((x) => x.endsWith(" never copied")) ? `run groundnote backup run; ${NIGHTLY}` : NIGHTLY)
}

export const probeAge = (input: DoctorInput): Finding => {
  const status = statusOf(input)
  if (status === null) return skip("probe-age", serviceDown(input))
  if (neverBackedUp(status)) {
    return warn("probe-age", "no restore probe has run on this instance yet", status.backup.kind === "litestream"
      ? "groundnote backup probe (then set up the nightly timer: docs/backup.md)"
      : "groundnote backup run, then groundnote backup probe (the nightly timer runs both: docs/backup.md)")
  }
  const limit = maxHours(input, "max_probe_age_hours")
  const bad: Array<string> = []
  for (const s of status.scopes.filter((x) => x.created)) {
    if (s.probed_at === null) bad.push(`${s.scope} never probed`)
    else if (s.probe_ok === false) bad.push(`${s.scope}: the last probe failed (${s.probed_at})`)
    else if (input.now - Date.parse(s.probed_at) > limit * HOUR) bad.push(`${s.scope} probed ${age(input.now - Date.parse(s.probed_at))} ago`)
  }
  return bad.length === 0
    ? ok("probe-age", `every scope passed a restore probe within ${limit} h`)
    : fail("probe-age", list(bad), `${NIGHTLY}; a failed probe names its check: groundnote backup probe --json`)
}

export const verifyResult = (input: DoctorInput): Finding => {
  const status = statusOf(input)
  if (status === null) return skip("verify-result", serviceDown(input))
  const created = status.scopes.filter((s) => s.created)
  const failed = created.filter((s) => s.verify_ok === false).map((s) => `${s.scope} (${s.verified_at ?? "?"})`)
  if (failed.length > 0) {
    return fail("verify-result", `the last backup verify failed: ${failed.join(", ")}`,
      "run groundnote backup verify --json and fix the failed check it names")
  }
  const verified = created.filter((s) => s.verify_ok === true)
  if (verified.length === 0) return skip("verify-result", "no backup verify has run (groundnote backup verify; the nightly probe runs the same checks)")
  return ok("verify-result", `the last verify passed: ${verified.map((s) => `${s.scope} (${s.verified_at ?? "?"})`).join(", ")}`)
}

/**
 * redaction-ledger (gaps.md §12 R6): fail when a scope file lacks a redaction the ledger in
 * ops.sqlite holds (a restored older copy the service has not brought level, or could not: then
 * the scope is locked); warn when a file holds one the ledger lacks (the service adds it as the
 * scope opens).
 */
export const redactionLedger = (input: DoctorInput): Finding => {
  const l = input.ledger
  if (l === null) return skip("redaction-ledger", "the scope files were not read")
  if (!l.read) return skip("redaction-ledger", l.why)
  const behind = l.scopes.filter((s) => s.behind.length > 0)
  if (behind.length > 0) {
    return fail("redaction-ledger",
      `behind the redaction ledger: ${list(behind.map((s) => `${s.scope} lacks ${s.behind.join(", ")}`))}`,
      "start the service or run groundnote status: a scope brings its file level as it opens (the erased text is replaced again); " +
        "when it cannot, the scope is locked: restore a newer copy (docs/redaction.md)")
  }
  const unrecorded = l.scopes.filter((s) => s.unrecorded.length > 0)
  if (unrecorded.length > 0) {
    return warn("redaction-ledger",
      `not in the redaction ledger yet: ${list(unrecorded.map((s) => `${s.scope}: ${s.unrecorded.join(", ")}`))}`,
      "start the service or run groundnote status: the scope adds them to the ledger as it opens")
  }
  const held = l.scopes.reduce((n, s) => n + s.held, 0)
  return ok("redaction-ledger", `${plural(l.scopes.length, "scope file")} level with the redaction ledger (${plural(held, "redaction")})`)
}

export const litestreamBinary = (input: DoctorInput): Finding => {
  const config = configOf(input)
  if (config === null) return skip("litestream-binary", "groundnote.json did not load (see config-valid)")
  if (config.backup.kind !== "litestream") return skip("litestream-binary", "backup.kind is copy")
  const l = input.litestream
  if (l === null) return skip("litestream-binary", "not checked")
  if (l.binary === null) {
    return fail("litestream-binary", "litestream is found neither on PATH nor in node_modules/@flydotio",
      "install Litestream (https://litestream.io/install) so that probe, verify and restore can fetch from the replica")
  }
  if (l.version === null) return fail("litestream-binary", `${l.binary} does not run (litestream version failed)`, "reinstall Litestream")
  if (!l.configExists) {
    return fail("litestream-binary", `${l.binary} ${l.version}, but its config ${l.configPath} does not exist`,
      "write the Litestream config (docs/backup.md) or set LITESTREAM_CONFIG to it")
  }
  return ok("litestream-binary", `${l.binary} ${l.version}, config ${l.configPath}`)
}

// ---------------------------------------------------------------------------------------------
// Keys of encrypted copies (gaps.md §12 R5)

const keyName = (scope: string | null): string => (scope === null ? "the instance (ops.sqlite)" : scope)
const keyArg = (scope: string | null): string => (scope === null ? "--instance" : `--scope ${scope}`)

/** warn: a scope with backups (copied or probed) but no recipient: its copies are plaintext. */
export const scopeKeys = (input: DoctorInput): Finding => {
  const status = statusOf(input)
  if (status === null) return skip("scope-keys", serviceDown(input))
  const keys = input.keys ?? null
  if (keys === null) return skip("scope-keys", "the service did not list its keys (GET /ops/keys)")
  const keyed = new Set(keys.keyed.map((k) => k.scope))
  const plain = status.scopes.filter((s) => s.created && (s.last_backup_at !== null || s.probed_at !== null) && !keyed.has(s.scope)).map((s) => s.scope)
  return plain.length === 0
    ? ok("scope-keys", keys.keyed.length === 0 ? "no scope has backups yet" : `every scope with backups has a key: ${keys.keyed.map((k) => keyName(k.scope)).join(", ")}`)
    : warn("scope-keys", `backed up without a key (plaintext copies): ${plain.join(", ")}`,
      `groundnote key create --scope ${plain[0]} --out <a file you keep off this host> (docs/backup.md); the next backup run encrypts`)
}

/** fail: a plaintext copy or archive of a keyed scope in the backup or export directory. */
export const copiesEncrypted = (input: DoctorInput): Finding => {
  const keys = input.keys ?? null
  if (keys === null) return skip("copies-encrypted", input.service.reachable ? "the service did not list its keys (GET /ops/keys)" : serviceDown(input))
  if (keys.keyed.length === 0) return skip("copies-encrypted", "no scope has a key: every copy is plaintext (see scope-keys)")
  return keys.plaintext.length === 0
    ? ok("copies-encrypted", `no plaintext copy of ${keys.keyed.map((k) => keyName(k.scope)).join(", ")} in the backup or export directory`)
    : fail("copies-encrypted", `plaintext copies of keyed scopes: ${list(keys.plaintext)}`,
      "run groundnote backup nightly (the run replaces a copy by its encrypted one, the probe removes plaintext archives); remove any other plaintext copy by hand")
}

/** fail: probe cannot read an identity of a keyed scope under GROUNDNOTE_KEY_DIR; warn: one readable by others. */
export const keyIdentity = (input: DoctorInput): Finding => {
  const keys = input.keys ?? null
  if (keys === null) return skip("key-identity", input.service.reachable ? "the service did not list its keys (GET /ops/keys)" : serviceDown(input))
  if (keys.keyed.length === 0) return skip("key-identity", "no scope has a key")
  const bad = keys.identities.filter((i) => i.state === "missing" || i.state === "no-match")
  if (bad.length > 0) {
    return fail("key-identity", list(bad.map((i) => `${keyName(i.scope)}: ${i.detail}`)),
      `put the identity file of groundnote key create (or rotate) for ${keyArg(bad[0]?.scope ?? null)} into GROUNDNOTE_KEY_DIR where probe, verify and restore run; without it they answer identity-missing`)
  }
  const open = keys.identities.filter((i) => i.state === "too-open")
  if (open.length > 0) {
    return warn("key-identity", list(open.map((i) => `${keyName(i.scope)}: ${i.detail}`)), "chmod 600 the identity file and 700 GROUNDNOTE_KEY_DIR")
  }
  return ok("key-identity", `GROUNDNOTE_KEY_DIR holds an identity for ${keys.identities.map((i) => keyName(i.scope)).join(", ")}`)
}

// ---------------------------------------------------------------------------------------------
// Search stages b and c (the stage modules' findings), and the clock

/**
 * A finding of the stage modules (semantic-model, reranker-key, reranker-budget): they own what
 * their stage needs (search.semantic / search.reranker, the model, the key, the month's spend);
 * doctor shows what they found, or skip with why.
 */
const stageFinding = (id: "semantic-model" | "reranker-key" | "reranker-budget") => (input: DoctorInput): Finding => {
  if (configOf(input) === null) return skip(id, "groundnote.json did not load (see config-valid)")
  const found = input.stages?.find((f) => f.id === id)
  return found ?? skip(id, "the stage checks did not run")
}

/**
 * Stage a's lexicon (share/lexicon/lexicon.txt.gz) loads: how many groups (senses) and terms it
 * has. Without it stage a still answers, with its query's own words and the curated vocabulary
 * only, so an absent or damaged file is a warning.
 */
export const lexicon = (input: DoctorInput): Finding => {
  const l = input.lexicon
  if (l === undefined || l === null) return skip("lexicon", "the lexicon was not read")
  return l.loaded
    ? ok("lexicon", `${l.path} loaded: ${plural(l.groups, "group")} of synonyms and translations, ${plural(l.terms, "term")} (German and English)`)
    : warn("lexicon", `stage a's lexicon did not load: ${l.why}; search runs without its synonyms and translations`,
      "restore share/lexicon/lexicon.txt.gz from this version's release or checkout (git checkout -- share/lexicon), then restart the service")
}

export const semanticModel = stageFinding("semantic-model")
export const rerankerKey = stageFinding("reranker-key")
export const rerankerBudget = stageFinding("reranker-budget")

/** Access JWTs allow 30 s of clock tolerance (architecture.md §5.1). */
export const CLOCK_WARN_MS = 5_000
export const CLOCK_FAIL_MS = 30_000

export const clockSkew = (input: DoctorInput): Finding => {
  const c = input.clock
  if (c === null) return skip("clock-skew", "no reference clock was asked")
  if ("unavailable" in c) return skip("clock-skew", c.unavailable)
  const off = Math.abs(c.offsetMs)
  const text = `this host is ${(off / 1000).toFixed(1)} s ${c.offsetMs > 0 ? "behind" : "ahead of"} ${c.source}`
  if (off > CLOCK_FAIL_MS) return fail("clock-skew", `${text} (Access tokens allow 30 s)`, "run NTP (timedatectl set-ntp true; chronyc tracking)")
  if (off > CLOCK_WARN_MS) return warn("clock-skew", text, "check NTP (timedatectl status)")
  return ok("clock-skew", text)
}
