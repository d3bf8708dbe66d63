/**
 * Gathers DoctorInput on the operator's host, with the service up or down: the data dir's
 * permissions, whether it lies on an encrypted volume, the litestream binary, and GET /ops/status
 * through the CLI's checked ops socket, and the clock against Access (cloudflare-access mode). The
 * config load result and the stage b/c findings come from the caller (the CLI host loads
 * groundnote.json and runs the stage modules' checks).
 */
import { existsSync, lstatSync, readdirSync, readFileSync, realpathSync, type Stats } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { Effect } from "effect"
import { findLitestream, litestreamVersion } from "../../backup/litestream.js"
import { identitiesIn, identityFileName, keyDirOf } from "../../keys/identity-file.js"
import { recipientOf } from "../../keys/keypair.js"
import { opsRequest, resolveOps } from "../ops-client.js"
import { lexiconFilePath, readLexiconFile } from "../../search/lexical/lexicon.js"
import type {
  ClockFacts,
  ConfigResult,
  DataDirFacts,
  DoctorInput,
  DoctorConfig,
  DoctorStatus,
  Finding,
  LedgerFacts,
  KeyFacts,
  LexiconFacts,
  LitestreamFacts,
  ScopeFileHygiene,
  ServiceFacts,
  VolumeFacts
} from "./types.js"

const errnoCode = (e: unknown): string =>
  typeof e === "object" && e !== null && "code" in e ? String((e as { code: unknown }).code) : ""

const octal = (mode: number): string => `0${(mode & 0o7777).toString(8).padStart(3, "0")}`

const shellPath = (p: string): string => (/^[A-Za-z0-9_./@%+=:,-]+$/.test(p) ? p : `'${p.replace(/'/g, `'\\''`)}'`)

const lstatOrNull = (path: string): Stats | null => {
  try {
    return lstatSync(path)
  } catch (e) {
    if (errnoCode(e) === "ENOENT" || errnoCode(e) === "ENOTDIR") return null
    throw e
  }
}

const SQLITE_SUFFIXES = [".sqlite", ".sqlite-wal", ".sqlite-shm", ".sqlite-journal"]

/** The data dir, scopes/ and every SQLite file in them: the service user's, not group- or world-accessible. */
export const dataDirFacts = (dataDir: string, uid: number | null = process.getuid?.() ?? null): DataDirFacts => {
  const path = resolve(dataDir)
  const st = lstatOrNull(path)
  if (st === null) return { path, exists: false, problems: [] }
  const problems: Array<string> = []
  const check = (p: string, s: Stats) => {
    if (uid !== null && s.uid !== uid) problems.push(`${p} is owned by uid ${s.uid}, not by you (uid ${uid}): chown it to the service user`)
    if ((s.mode & 0o077) !== 0) {
      problems.push(`${p} is group- or world-accessible (mode ${octal(s.mode)}): run chmod ${s.isDirectory() ? 700 : 600} ${shellPath(p)}`)
    }
  }
  const visit = (dir: string): boolean => {
    let real: string
    try {
      real = realpathSync(dir)
    } catch {
      return false
    }
    const s = lstatOrNull(real)
    if (s === null) return false
    if (!s.isDirectory()) {
      problems.push(`${dir} is not a directory`)
      return false
    }
    check(dir, s)
    let names: Array<string> = []
    try {
      names = readdirSync(real).sort()
    } catch (e) {
      problems.push(`${dir} cannot be listed (${errnoCode(e) || "error"})`)
    }
    for (const name of names) {
      if (!SQLITE_SUFFIXES.some((suffix) => name.endsWith(suffix))) continue
      const f = lstatOrNull(join(real, name))
      if (f !== null) check(join(dir, name), f)
    }
    return true
  }
  if (visit(path)) visit(join(path, "scopes"))
  return { path, exists: true, problems }
}

// ---------------------------------------------------------------------------------------------
// Encrypted volume (Linux: /proc/self/mountinfo and /sys/dev/block)

/** File systems that encrypt what they store. */
const ENCRYPTING_FS = new Set(["ecryptfs", "fuse.gocryptfs", "fuse.encfs", "fuse.cryfs", "fuse.securefs"])
/** File systems on which the host cannot tell (a container's overlay, memory, network). */
const OPAQUE_FS = new Set(["overlay", "tmpfs", "nfs", "nfs4", "cifs", "smb3", "fuse.sshfs", "9p", "virtiofs", "zfs", "btrfs"])

export interface MountEntry {
  readonly device: string
  readonly mountPoint: string
  readonly fsType: string
  readonly source: string
}

const unescapeMount = (s: string): string => s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)))

/** Lines of /proc/self/mountinfo. */
export const parseMountinfo = (text: string): ReadonlyArray<MountEntry> =>
  text.split("\n").flatMap((line) => {
    const dash = line.indexOf(" - ")
    if (dash < 0) return []
    const left = line.slice(0, dash).split(" ")
    const right = line.slice(dash + 3).split(" ")
    const device = left[2]
    const mountPoint = left[4]
    const fsType = right[0]
    if (device === undefined || mountPoint === undefined || fsType === undefined) return []
    return [{ device, mountPoint: unescapeMount(mountPoint), fsType, source: unescapeMount(right[1] ?? "") }]
  })

const within = (parent: string, child: string): boolean =>
  parent === "/" || child === parent || child.startsWith(`${parent}/`)

export interface SysBlock {
  /** contents of a file under /sys, or null */
  readonly read: (path: string) => string | null
  /** entries of a directory under /sys */
  readonly list: (path: string) => ReadonlyArray<string>
}

const realSys: SysBlock = {
  read: (path) => {
    try {
      return readFileSync(path, "utf8").trim()
    } catch {
      return null
    }
  },
  list: (path) => {
    try {
      return readdirSync(path)
    } catch {
      return []
    }
  }
}

/** The dm-crypt uuid (CRYPT-…) of a block device or of a device below it (LVM on LUKS), or null. */
const cryptBelow = (sysDir: string, sys: SysBlock, depth = 0): string | null => {
  const uuid = sys.read(join(sysDir, "dm", "uuid"))
  if (uuid !== null && uuid.startsWith("CRYPT-")) return uuid.split("-").slice(0, 2).join("-")
  if (depth >= 4) return null
  for (const slave of sys.list(join(sysDir, "slaves"))) {
    const found = cryptBelow(join("/sys/class/block", slave), sys, depth + 1)
    if (found !== null) return found
  }
  return null
}

/** Whether `dataDir` lies on an encrypted volume, from the mount table and the block devices. */
export const volumeFacts = (
  dataDir: string,
  host: { readonly platform?: NodeJS.Platform; readonly mountinfo?: string | null; readonly sys?: SysBlock } = {}
): VolumeFacts => {
  const platform = host.platform ?? process.platform
  if (platform !== "linux") return { encrypted: null, how: `cannot tell on ${platform}` }
  let text = host.mountinfo
  if (text === undefined) {
    try {
      text = readFileSync("/proc/self/mountinfo", "utf8")
    } catch {
      text = null
    }
  }
  if (text === null) return { encrypted: null, how: "cannot read /proc/self/mountinfo" }
  let path = resolve(dataDir)
  for (;;) {
    try {
      path = realpathSync(path)
      break
    } catch {
      const up = dirname(path)
      if (up === path) break
      path = up
    }
  }
  const mounts = parseMountinfo(text).filter((m) => within(m.mountPoint, path))
  const mount = mounts.reduce<MountEntry | null>((best, m) => (best === null || m.mountPoint.length >= best.mountPoint.length ? m : best), null)
  if (mount === null) return { encrypted: null, how: `no mount found for ${path}` }
  const where = `${mount.fsType} ${mount.source} mounted at ${mount.mountPoint}`
  if (ENCRYPTING_FS.has(mount.fsType)) return { encrypted: true, how: where }
  const crypt = cryptBelow(join("/sys/dev/block", mount.device), host.sys ?? realSys)
  if (crypt !== null) return { encrypted: true, how: `dm-crypt (${crypt}) under ${where}` }
  if (OPAQUE_FS.has(mount.fsType)) return { encrypted: null, how: `cannot tell for ${where}` }
  return { encrypted: false, how: `${where}, no dm-crypt below it` }
}

// ---------------------------------------------------------------------------------------------
// Litestream and the service

export const litestreamFacts = (env: Readonly<Record<string, string | undefined>>): Effect.Effect<LitestreamFacts> =>
  Effect.gen(function*() {
    const binary = findLitestream(env)
    const version = binary === null ? null : yield* litestreamVersion(binary)
    const configPath = env.LITESTREAM_CONFIG !== undefined && env.LITESTREAM_CONFIG !== "" ? env.LITESTREAM_CONFIG : "/etc/litestream.yml"
    return { binary, version, configPath, configExists: existsSync(configPath) }
  })

/** GET /ops/status through the CLI's checked socket, or the CLI's error code and message. */
export const serviceFacts = (env: Record<string, string | undefined>, cwd: string): Effect.Effect<ServiceFacts> =>
  Effect.gen(function*() {
    const ops = yield* resolveOps(env, cwd)
    const status = yield* opsRequest(ops, "opsStatus", { timeoutMs: 10_000 })
    return { reachable: true as const, status: status as DoctorStatus }
  }).pipe(Effect.catchAll((e) => Effect.succeed({ reachable: false as const, code: e.code, message: e.message })))

const listOrEmpty = (dir: string): ReadonlyArray<string> => {
  try {
    return readdirSync(dir)
  } catch {
    return []
  }
}

/**
 * The keys of encrypted copies: the active recipients (GET /ops/keys), plaintext copies of keyed
 * scopes in the backup and export directories, and whether GROUNDNOTE_KEY_DIR holds an identity
 * of an active recipient of each keyed scope (read here, never printed).
 */
export const keyFacts = (
  rows: ReadonlyArray<{ readonly scope: string | null; readonly recipient: string; readonly retired_at: string | null }>,
  config: DoctorConfig | null,
  env: Readonly<Record<string, string | undefined>>
): Effect.Effect<KeyFacts> =>
  Effect.gen(function*() {
    const byScope = new Map<string | null, Array<string>>()
    for (const r of rows.filter((x) => x.retired_at === null)) byScope.set(r.scope, [...(byScope.get(r.scope) ?? []), r.recipient])
    const keyed = [...byScope.entries()].map(([scope, recipients]) => ({ scope, recipients }))
    const plaintext: Array<string> = []
    const backup = config?.backup
    for (const { scope } of keyed) {
      if (backup?.kind === "copy") {
        const plain = scope === null ? join(backup.directory, "ops.sqlite") : join(backup.directory, "scopes", `${scope}.sqlite`)
        if (existsSync(plain)) plaintext.push(plain)
      }
      if (scope !== null && backup?.export_directory !== undefined) {
        const dir = join(backup.export_directory, scope)
        for (const name of listOrEmpty(dir)) if (name.startsWith(`${scope}-export-`) && name.endsWith(".tar.gz")) plaintext.push(join(dir, name))
      }
    }
    const keyDir = keyDirOf(env)
    const identities: Array<KeyFacts["identities"][number]> = []
    for (const { recipients, scope } of keyed) {
      if (keyDir === null) {
        identities.push({ scope, state: "missing", detail: "GROUNDNOTE_KEY_DIR is not set" })
        continue
      }
      const file = join(keyDir, identityFileName(scope))
      const st = lstatOrNull(file)
      let text: string
      try {
        text = readFileSync(file, "utf8")
      } catch (e) {
        identities.push({ scope, state: "missing", detail: `${file} cannot be read (${errnoCode(e) || "error"})` })
        continue
      }
      const mine: Array<string> = []
      for (const id of identitiesIn(text)) {
        const r = yield* recipientOf(id)
        if (r !== null) mine.push(r)
      }
      if (mine.length === 0) identities.push({ scope, state: "missing", detail: `${file} holds no age identity` })
      else if (!mine.some((r) => recipients.includes(r))) identities.push({ scope, state: "no-match", detail: `${file} holds no identity of an active recipient (rotated? groundnote key list)` })
      else if (st !== null && (st.mode & 0o077) !== 0) identities.push({ scope, state: "too-open", detail: `${file} has mode ${octal(st.mode)}` })
      else identities.push({ scope, state: "ok", detail: file })
    }
    return { keyed, plaintext, identities }
  })

/** GET /ops/keys and keyFacts, or null when the service does not answer. */
export const serviceKeyFacts = (env: Record<string, string | undefined>, cwd: string, config: ConfigResult): Effect.Effect<KeyFacts | null> =>
  Effect.gen(function*() {
    const ops = yield* resolveOps(env, cwd)
    const rows = yield* opsRequest(ops, "keysList", { timeoutMs: 10_000 })
    return yield* keyFacts(rows as ReadonlyArray<{ scope: string | null; recipient: string; retired_at: string | null }>, config.ok ? config.config : null, env)
  }).pipe(Effect.catchAll(() => Effect.succeed(null)))

/** The Date header of an HTTPS answer has whole seconds: the offset is known to about ±0.5 s. */
export const offsetFromDate = (dateHeader: string | null, sentMs: number, receivedMs: number): number | null => {
  if (dateHeader === null) return null
  const ref = Date.parse(dateHeader)
  if (Number.isNaN(ref)) return null
  // the server stamped between sent and received; its second began up to 1 s before
  return ref + 500 - (sentMs + receivedMs) / 2
}

/**
 * The clock against Cloudflare Access, the clock whose tokens the service checks: a GET of the
 * team domain's key set (public, no credential), its Date header against this host's clock. In
 * dev-token mode no Access token is checked, so there is nothing to compare with.
 */
export const accessClock = (
  env: Readonly<Record<string, string | undefined>>,
  config: ConfigResult,
  timeoutMs = 5_000
): Effect.Effect<ClockFacts | { readonly unavailable: string }> =>
  Effect.gen(function*() {
    if (env.GROUNDNOTE_AUTH_MODE !== "cloudflare-access") {
      return { unavailable: "not in cloudflare-access mode: no Access token's time is checked" }
    }
    if (!config.ok || config.config.access === undefined) return { unavailable: "no access.team_domain in groundnote.json" }
    const source = config.config.access.team_domain.replace(/\/+$/, "")
    const url = `${source}/cdn-cgi/access/certs`
    const sent = Date.now()
    // Effect's own timer (AbortSignal.timeout inside AbortSignal.any can be lost after a garbage
    // collection on Node 20, and doctor would wait for ever); the interruption aborts the fetch
    const answer = yield* Effect.either(Effect.tryPromise({
      try: async (signal) => {
        const r = await fetch(url, { method: "GET", redirect: "manual", signal })
        await r.body?.cancel()
        return r.headers.get("date")
      },
      catch: (e) => (e instanceof Error ? (e.cause instanceof Error ? e.cause.message : e.message) : String(e))
    }).pipe(Effect.timeoutFail({ duration: timeoutMs, onTimeout: () => `no answer within ${timeoutMs} ms` })))
    const received = Date.now()
    if (answer._tag === "Left") return { unavailable: `${source} did not answer (${answer.left})` }
    const offsetMs = offsetFromDate(answer.right, sent, received)
    return offsetMs === null ? { unavailable: `${source} answered without a Date header` } : { offsetMs, source }
  })

/** Stage a's lexicon as this installation reads it (the service reads the same file). */
export const lexiconFacts = (path: string = lexiconFilePath()): LexiconFacts => {
  const read = readLexiconFile(path)
  return read.ok
    ? { loaded: true, path, groups: read.lexicon.groups, terms: read.lexicon.terms }
    : { loaded: false, path, why: read.why }
}

export interface GatherOptions {
  readonly env: Record<string, string | undefined>
  readonly cwd: string
  readonly cliVersion: string
  /** groundnote.json as the CLI loaded it */
  readonly config: ConfigResult
  /** the stage modules' findings, when they ran */
  readonly stages?: ReadonlyArray<Finding> | null
  readonly clock?: ClockFacts | { readonly unavailable: string } | null
  /** the scope files against the redaction ledger, when the CLI host read them */
  readonly ledger?: LedgerFacts | null
  /** the scope files' storage hygiene, when the CLI host read it */
  readonly storage?: ReadonlyArray<ScopeFileHygiene> | null
  /** the CLI's clock (default Date.now) */
  readonly now?: number
}

/** Everything doctor looks at, gathered with the service up or down. */
export const gatherDoctorInput = (options: GatherOptions): Effect.Effect<DoctorInput> =>
  Effect.gen(function*() {
    const env = options.env
    const dataDir = resolve(options.cwd, env.GROUNDNOTE_DATA_DIR !== undefined && env.GROUNDNOTE_DATA_DIR !== "" ? env.GROUNDNOTE_DATA_DIR : "./data")
    const litestream = options.config.ok && options.config.config.backup.kind === "litestream" ? yield* litestreamFacts(env) : null
    return {
      now: options.now ?? Date.now(),
      env,
      cliVersion: options.cliVersion,
      config: options.config,
      dataDir: dataDirFacts(dataDir),
      service: yield* serviceFacts(env, options.cwd),
      volume: volumeFacts(dataDir),
      litestream,
      stages: options.stages ?? null,
      clock: options.clock ?? null,
      ledger: options.ledger ?? null,
      storage: options.storage ?? null,
      keys: yield* serviceKeyFacts(env, options.cwd, options.config),
      lexicon: lexiconFacts()
    }
  })
