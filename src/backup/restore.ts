/**
 * Restore (architecture.md §11 "Restore", src/backup/restore.ts): `groundnote restore --to <path>
 * --scope <s> [--from litestream|copy]` runs in the CLI and needs no running service.
 *
 * Refusals, before anything is fetched: the target's directory is resolved to its real path and
 * must exist (target-directory-missing); the target must not be a live file of the data dir
 * (target-is-live: ops.sqlite or a scope file), nor lie in <data dir>/scopes/ (target-in-scopes-dir,
 * also through symlinks: a symlinked directory, or a target that is a symlink into it), nor exist,
 * nor have a -wal, -shm or -journal next to it (target-exists).
 *
 * Then the newest backup is fetched into a temporary file next to the target (in a private 0700
 * directory beside it, removed afterwards), checked (fetch, integrity, meta-scope, schema-version,
 * sample-query, and the count floor: not-older-than-last-verified against backup_state.verified_counts
 * of the live ops.sqlite), brought level with the redaction ledger of the live ops.sqlite (check
 * redaction-ledger, level-copy.ts: a redaction made after the copy is applied again, so the
 * restored file never holds erased text), and only then hard-linked to the target: never over an existing file,
 * also not in a race. A failed check writes nothing (RestoreCheckFailed, exit 3). Warnings: no
 * backup_state row for the scope (restore ops.sqlite first), or fewer rule versions than ops.sqlite
 * remembers (the service would lock the file, invariant 7).
 *
 * fetchAndCheckScope and fetchAndCheckOps are the same path for the restore probe (probe.ts) and
 * for backup verify (verify.ts).
 */
import { readlinkSync, statSync } from "node:fs"
import { basename, dirname, join, resolve } from "node:path"
import { Effect, Either } from "effect"
import type { AppConfigShape } from "../config/config.js"
import type { ConfigFile } from "../config/schema.js"
import { latestVersion } from "../db/migrate.js"
import { OPS_MIGRATIONS } from "../db/migrations/ops/index.js"
import { SCOPE_MIGRATIONS } from "../db/migrations/scope/index.js"
import { type IdentityMissing, ValidationFailed } from "../contracts/errors.js"
import * as C from "./checks.js"
import { levelCopy, readLiveLedger } from "./level-copy.js"
import { RestoreCheckFailed, TargetDirectoryMissing, TargetExists, TargetInScopesDir, TargetIsLive } from "./errors.js"
import { type BackupFile, fetchBackup, fileLabel, OPS_FILE_NAME } from "./fetch.js"
import { litestreamTargetOf } from "./litestream-config.js"
import type { LitestreamTarget } from "./litestream-config.js"
import { keyingFor } from "./litestream-keying.js"
import { errnoCode, isWithin, linkNoOverwrite, lstatOrNull, privateTempDir, realDataDir, realOrNull } from "./fsutil.js"
import type { FileFacts } from "./jobs.js"
import type { BackupKind, Check, Counts, RestoreAnswer } from "./schemas.js"
import { type BackupWorker, makeBackupWorker } from "./worker-client.js"

export interface FetchCheckInput {
  readonly worker: BackupWorker
  readonly kind: BackupKind
  readonly dataDir: string
  readonly directory: string | null
  /** a path that does not exist yet, in a private temporary directory */
  readonly target: string
  readonly env?: Readonly<Record<string, string | undefined>>
  /** backup.target and backup.prefix of kind litestream (where a keyed file's replica is) */
  readonly replica?: LitestreamTarget | null
}

export interface Fetched {
  readonly checks: ReadonlyArray<Check>
  /** the facts of the fetched file; null when it could not be fetched or read */
  readonly facts: FileFacts | null
}

/** Fetches the newest ops.sqlite backup and checks it: fetch, integrity, schema-version. */
export const fetchAndCheckOps = (input: FetchCheckInput): Effect.Effect<Fetched, IdentityMissing> =>
  Effect.gen(function*() {
    const fetched = yield* fetchBackup({ ...input, file: { kind: "ops" } })
    if (!fetched.ok) return { checks: [fetched], facts: null }
    const inspected = yield* Effect.either(input.worker.run({ op: "inspect", file: input.target, kind: "ops", integrity: true, sample: false }))
    if (Either.isLeft(inspected)) return { checks: [fetched, C.unreadable("integrity", "the backup", inspected.left.code)], facts: null }
    const facts = inspected.right
    return { checks: [fetched, C.integrity(facts), C.schemaVersion(facts, latestVersion(OPS_MIGRATIONS))], facts }
  })

/**
 * Fetches the newest backup of a scope and runs the checks that need no live file: fetch,
 * integrity, meta-scope, schema-version, sample-query and not-older-than-last-verified (`floor`:
 * backup_state.verified_counts).
 */
export const fetchAndCheckScope = (input: FetchCheckInput & { readonly scope: string; readonly floor: Counts | null }): Effect.Effect<Fetched, IdentityMissing> =>
  Effect.gen(function*() {
    const fetched = yield* fetchBackup({ ...input, file: { kind: "scope", scope: input.scope } })
    if (!fetched.ok) return { checks: [fetched], facts: null }
    const inspected = yield* Effect.either(input.worker.run({
      op: "inspect", file: input.target, kind: "scope", integrity: true, sample: true, tables: Object.keys(input.floor ?? {})
    }))
    if (Either.isLeft(inspected)) return { checks: [fetched, C.unreadable("integrity", "the backup", inspected.left.code)], facts: null }
    const facts = inspected.right
    return {
      checks: [
        fetched,
        C.integrity(facts),
        C.metaScope(facts, input.scope),
        C.schemaVersion(facts, latestVersion(SCOPE_MIGRATIONS)),
        C.sampleQuery(facts),
        C.notOlderThanLastVerified(facts, input.floor)
      ],
      facts
    }
  })

export interface RestoreRequest {
  /** where the restored file goes (its directory must exist) */
  readonly to: string
  /** the scope to restore */
  readonly scope: string
  /** where the backup comes from (default backup.kind) */
  readonly from?: BackupKind
  /** environment of litestream (LITESTREAM_CONFIG, PATH); default process.env */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** one line per step, for a progress display */
  readonly progress?: (line: string) => void
}

/**
 * The refusals of §11 "Restore" for `to`. Returns the target's path in its real directory.
 * Exported for tests and for a CLI that wants to refuse before it loads anything else.
 */
export const checkRestoreTarget = (
  to: string,
  dataDir: string,
  scopes: ReadonlyArray<string>
): Effect.Effect<string, TargetIsLive | TargetInScopesDir | TargetExists | TargetDirectoryMissing> =>
  Effect.gen(function*() {
    const abs = resolve(to)
    const dir = realOrNull(dirname(abs))
    if (dir === null) {
      return yield* new TargetDirectoryMissing({ target: abs, message: `the directory of ${abs} does not exist: create it first (restore never creates it)` })
    }
    const target = join(dir, basename(abs))
    const data = realDataDir(dataDir)
    const scopesDir = realOrNull(join(dataDir, "scopes")) ?? join(data, "scopes")
    const live = new Set<string>()
    for (const file of [join(data, OPS_FILE_NAME), ...scopes.map((s) => join(scopesDir, `${s}.sqlite`))]) {
      live.add(file)
      const real = realOrNull(file)
      if (real !== null) live.add(real)
    }
    const resolvedTarget = realOrNull(target)
    if (live.has(target) || (resolvedTarget !== null && live.has(resolvedTarget))) {
      return yield* new TargetIsLive({ target, message: `${target} is a live file of the data dir: restore to another path, then move it in while the service is stopped` })
    }
    const inScopes = (path: string) => isWithin(scopesDir, path) || isWithin(join(data, "scopes"), path)
    if (inScopes(dir)) {
      return yield* new TargetInScopesDir({ target, message: `${target} lies in the scopes directory ${scopesDir}: restore to another path, then move it in while the service is stopped` })
    }
    const st = lstatOrNull(target)
    if (st !== null && st.isSymbolicLink()) {
      // a dangling link into scopes/ would place the file there
      const pointed = resolve(dir, (yield* Effect.sync(() => readLink(target))) ?? "")
      const pointedDir = realOrNull(dirname(pointed)) ?? dirname(pointed)
      if (inScopes(pointedDir)) {
        return yield* new TargetInScopesDir({ target, message: `${target} is a symlink into the scopes directory ${scopesDir}: remove the link and restore to another path` })
      }
    }
    for (const path of [target, `${target}-wal`, `${target}-shm`, `${target}-journal`]) {
      if (lstatOrNull(path) !== null) {
        return yield* new TargetExists({ target, message: `${path} exists: restore never overwrites a file; choose a new path or move it away` })
      }
    }
    return target
  })

const readLink = (path: string): string | null => {
  try {
    return readlinkSync(path)
  } catch (e) {
    if (errnoCode(e) === "EINVAL" || errnoCode(e) === "ENOENT") return null
    throw e
  }
}

interface LiveOpsFacts {
  readonly found: boolean
  readonly remembered: number | null
  readonly floor: Counts | null
  readonly problem: string | null
}

/** backup_state of the scope in the live ops.sqlite (read only; the service may run or not). */
const liveOpsFacts = (worker: BackupWorker, dataDir: string, scope: string): Effect.Effect<LiveOpsFacts> =>
  Effect.gen(function*() {
    const file = join(dataDir, OPS_FILE_NAME)
    if (lstatOrNull(file) === null) return { found: false, remembered: null, floor: null, problem: `${file} does not exist` }
    const facts = yield* Effect.either(worker.run({ op: "inspect", file, kind: "ops", integrity: false, sample: false }))
    if (Either.isLeft(facts)) return { found: false, remembered: null, floor: null, problem: `${file} is unreadable: ${facts.left.code}` }
    const remembered = facts.right.remembered?.[scope]
    if (remembered === undefined) return { found: false, remembered: null, floor: null, problem: `${file} has no backup_state row for this scope` }
    return { found: true, remembered, floor: C.parseCounts(facts.right.verified?.[scope]), problem: null }
  })

/**
 * What restore reads of the configuration: the data dir and groundnote.json's scopes and backup.
 * The CLI needs no secrets for it (restoreConfigOf builds it from a loaded config).
 */
export interface RestoreConfig {
  /** GROUNDNOTE_DATA_DIR, absolute */
  readonly dataDir: string
  /** configured scope names */
  readonly scopes: ReadonlyArray<string>
  readonly backup: ConfigFile["backup"]
  /** groundnote.json's search: the redaction ledger's replay keeps the lexical rows as the service builds them */
  readonly search: ConfigFile["search"]
}

export const restoreConfigOf = (config: AppConfigShape): RestoreConfig => ({
  dataDir: config.env.dataDir,
  scopes: config.file.scopes.map((s) => s.name),
  backup: config.file.backup,
  search: config.file.search
})

const restoreFile = (file: BackupFile, req: Omit<RestoreRequest, "scope">, config: RestoreConfig) =>
  Effect.scoped(Effect.gen(function*() {
    const dataDir = config.dataDir
    const scopes = config.scopes
    const progress = req.progress ?? (() => undefined)
    const from = req.from ?? config.backup.kind
    const directory = config.backup.kind === "copy" ? config.backup.directory : null
    const target = yield* checkRestoreTarget(req.to, dataDir, scopes)
    const replica = litestreamTargetOf(config.backup)
    if (from === "litestream") {
      // a keyed replica without its identity is refused before anything is fetched (identity-missing)
      yield* keyingFor({ dataDir, file, env: req.env ?? process.env, replica }).pipe(Effect.catchTag("KeyingFailed", () => Effect.void))
    }
    const worker = yield* makeBackupWorker
    const tmpDir = yield* privateTempDir(dirname(target), ".gn-restore-")
    const tmp = join(tmpDir, file.kind === "ops" ? OPS_FILE_NAME : `${file.scope}.sqlite`)
    const fetchInput = { worker, kind: from, dataDir, directory, target: tmp, replica, ...(req.env === undefined ? {} : { env: req.env }) }

    let checks: ReadonlyArray<Check>
    const warnings: Array<string> = []
    if (file.kind === "ops") {
      progress(`fetching the newest ${fileLabel(file)} backup (${from})`)
      checks = (yield* fetchAndCheckOps(fetchInput)).checks
    } else {
      const live = yield* liveOpsFacts(worker, dataDir, file.scope)
      progress(`fetching the newest ${fileLabel(file)} backup (${from})`)
      const fetched = yield* fetchAndCheckScope({ ...fetchInput, scope: file.scope, floor: live.floor })
      checks = fetched.checks
      if (!live.found) warnings.push(`no backup_state row for ${file.scope} (${live.problem ?? ""}): restore ops.sqlite first`)
      const have = fetched.facts?.counts.rule_version
      if (live.remembered !== null && have !== undefined && have < live.remembered) {
        warnings.push(`the restored file has ${have} rule versions, ops.sqlite remembers ${live.remembered}: the service would lock it (invariant 7)`)
      }
    }
    if (file.kind === "scope" && C.allOk(checks)) {
      // the redaction ledger of the live ops.sqlite: the copy never reaches the target with erased text
      const opsFile = join(dataDir, OPS_FILE_NAME)
      if (lstatOrNull(opsFile) !== null) {
        const ledger = yield* Effect.either(readLiveLedger(opsFile, file.scope))
        if (Either.isLeft(ledger)) {
          warnings.push(`the redaction ledger of ${opsFile} could not be read (${ledger.left}): the service applies it when the scope opens`)
        } else {
          if (ledger.right.length > 0) progress("bringing the copy level with the redaction ledger")
          checks = [...checks, yield* levelCopy({ file: tmp, scope: file.scope, ledger: ledger.right, search: config.search })]
        }
      }
    }
    if (!C.allOk(checks)) {
      const failedChecks = checks.filter((c) => !c.ok).map((c) => c.check)
      return yield* new RestoreCheckFailed({ checks, message: `the backup failed ${failedChecks.join(", ")}: nothing was written` })
    }
    progress(`linking ${target}`)
    if (!linkNoOverwrite(tmp, target)) {
      return yield* new TargetExists({ target, message: `${target} appeared during the restore: nothing was overwritten` })
    }
    const answer: RestoreAnswer = {
      ok: true,
      scope: file.kind === "ops" ? OPS_FILE_NAME : file.scope,
      from,
      target,
      bytes: statSync(target).size,
      checks,
      warnings
    }
    return answer
  }))

/** groundnote restore --to <path> --scope <s> [--from copy|litestream] (§11 "Restore"); no service needed. */
export const restoreScope = (req: RestoreRequest, config: RestoreConfig) =>
  Effect.gen(function*() {
    if (!config.scopes.includes(req.scope)) {
      return yield* new ValidationFailed({
        message: `"${req.scope}" is not a configured scope`,
        issues: [{ path: "scope", message: "not a configured scope" }]
      })
    }
    return yield* restoreFile({ kind: "scope", scope: req.scope }, req, config)
  })

/**
 * The newest ops.sqlite backup to `to` (checks: fetch, integrity, schema-version), with the same
 * refusals. Not a contract command: the warning "restore ops.sqlite first" needs a way to do it
 * (docs/decisions.md, §11 Ops, CLI, backup); a CLI may offer it as restore --ops.
 */
export const restoreOps = (req: Omit<RestoreRequest, "scope">, config: RestoreConfig) => restoreFile({ kind: "ops" }, req, config)
