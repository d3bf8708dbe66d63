/**
 * Fetches the newest backup of one file into a new temporary file (architecture.md §3, §11):
 *   copy        <directory>/ops.sqlite or <directory>/scopes/<scope>.sqlite, copied (never over
 *               an existing file), mode 0600; when the encrypted copy <file>.age exists (a keyed
 *               file, gaps.md §12 R5) it is the copy: decrypted as a stream in the backup worker
 *               with the identity of $GROUNDNOTE_KEY_DIR/<scope>.age-identity (the instance's for
 *               ops.sqlite); without one IdentityMissing, never the plaintext or another key
 *   litestream  litestream restore -o <target> <live path>, the replica found in Litestream's
 *               own config, or for a keyed file in a temporary config with its identities
 *               (litestream-keying.ts; no identity: the check fails identity-missing); a
 *               non-zero exit, or exit 0 without a file, fails
 * The answer is the check fetch-copy / fetch-litestream. The target lies in a private temporary
 * directory of the caller (Litestream leaves <target>.tmp-wal/-shm beside it).
 */
import { chmodSync, existsSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { Effect, Either } from "effect"
import type { IdentityMissing } from "../contracts/errors.js"
import { readIdentity } from "../keys/identity-file.js"
import { copyNew, realOrNull } from "./fsutil.js"
import { execProgram, findLitestream, lastLine } from "./litestream.js"
import type { LitestreamTarget } from "./litestream-config.js"
import { keyingFor, temporaryRestoreConfig } from "./litestream-keying.js"
import type { BackupKind, Check } from "./schemas.js"
import type { BackupWorker } from "./worker-client.js"

/** ops.sqlite, or the file of a scope. */
export type BackupFile = { readonly kind: "ops" } | { readonly kind: "scope"; readonly scope: string }

export const OPS_FILE_NAME = "ops.sqlite"

/** Path of `file` below a data dir or a copy backup directory (the same layout). */
export const filePathIn = (root: string, file: BackupFile): string =>
  file.kind === "ops" ? join(root, OPS_FILE_NAME) : join(root, "scopes", `${file.scope}.sqlite`)

/** The suffix of an age-encrypted copy: <scope>.sqlite.age, ops.sqlite.age (gaps.md §12 R5). */
export const AGE_SUFFIX = ".age"

/** Path of the encrypted copy of `file` below a copy backup directory. */
export const encryptedPathIn = (root: string, file: BackupFile): string => `${filePathIn(root, file)}${AGE_SUFFIX}`

/** The key scope of a file: its scope, or null (the instance) for ops.sqlite. */
export const keyScopeOf = (file: BackupFile): string | null => (file.kind === "ops" ? null : file.scope)

export const fileLabel = (file: BackupFile): string => (file.kind === "ops" ? OPS_FILE_NAME : `scope ${file.scope}`)

export interface FetchOptions {
  readonly kind: BackupKind
  readonly file: BackupFile
  /** the data dir as configured (absolute): Litestream knows the live files by this path */
  readonly dataDir: string
  /** backup.directory (kind copy) */
  readonly directory: string | null
  /** a path that does not exist yet */
  readonly target: string
  /** environment of the litestream process (LITESTREAM_CONFIG, PATH) */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** how long litestream restore may take (default one hour) */
  readonly timeoutMs?: number
  /** decrypts an encrypted copy off the main thread */
  readonly worker: BackupWorker
  /** backup.target and backup.prefix of kind litestream: where a keyed file's replica is */
  readonly replica?: LitestreamTarget | null
  /** restore this Litestream generation instead of the newest */
  readonly generation?: string
}

/**
 * The copy of `file` in a copy backup directory that fetch reads: the encrypted one when it
 * exists, else the plaintext one, else null.
 */
export const newestCopyIn = (directory: string, file: BackupFile): { readonly path: string; readonly encrypted: boolean } | null => {
  const dir = realOrNull(resolve(directory)) ?? resolve(directory)
  const sealed = encryptedPathIn(dir, file)
  if (existsSync(sealed)) return { path: sealed, encrypted: true }
  const plain = filePathIn(dir, file)
  return existsSync(plain) ? { path: plain, encrypted: false } : null
}

const LITESTREAM_TIMEOUT_MS = 60 * 60 * 1000

/**
 * Every file of `files` whose copy is encrypted has a readable identity in GROUNDNOTE_KEY_DIR, or
 * IdentityMissing naming the first that has none: probe and verify ask before anything runs, so
 * no file is half probed.
 */
export const requireIdentities = (
  directory: string | null,
  files: ReadonlyArray<BackupFile>,
  env: Readonly<Record<string, string | undefined>>
): Effect.Effect<void, IdentityMissing> =>
  Effect.forEach(files, (file): Effect.Effect<unknown, IdentityMissing> => {
    const copy = directory === null ? null : newestCopyIn(directory, file)
    return copy?.encrypted === true ? readIdentity(env, keyScopeOf(file)) : Effect.void
  }, { discard: true })

/** The newest backup of `file` into `target`: the check fetch-copy or fetch-litestream. */
export const fetchBackup = (opts: FetchOptions): Effect.Effect<Check, IdentityMissing> =>
  Effect.gen(function*() {
    if (opts.kind === "copy") {
      const check = "fetch-copy"
      if (opts.directory === null) return { check, ok: false, detail: "backup.directory is not set" }
      const copy = newestCopyIn(opts.directory, opts.file)
      if (copy === null) {
        const dir = realOrNull(resolve(opts.directory)) ?? resolve(opts.directory)
        return { check, ok: false, detail: `no backup copy at ${filePathIn(dir, opts.file)}` }
      }
      const source = copy.path
      if (copy.encrypted) {
        const identities = yield* readIdentity(opts.env ?? process.env, keyScopeOf(opts.file))
        const opened = yield* Effect.either(opts.worker.run({ op: "decrypt", source, target: opts.target, identities }))
        if (Either.isLeft(opened)) {
          return { check, ok: false, detail: `${source} cannot be decrypted with the identity of GROUNDNOTE_KEY_DIR (${opened.left.message}): is it the identity of a recipient the copy was made for?` }
        }
        return { check, ok: true, detail: `${source} (decrypted)` }
      }
      const copied = yield* Effect.either(copyNew(source, opts.target))
      if (copied._tag === "Left") return { check, ok: false, detail: `copying ${source} failed: ${copied.left.code}` }
      return { check, ok: true, detail: source }
    }
    const check = "fetch-litestream"
    const env = opts.env ?? process.env
    const binary = findLitestream(env)
    if (binary === null) {
      return { check, ok: false, detail: "the litestream binary was found neither on PATH nor in node_modules/@flydotio" }
    }
    const live = filePathIn(resolve(opts.dataDir), opts.file)
    // a keyed file: a temporary config with its identities (never a restore without them)
    const keying = yield* Effect.either(keyingFor({ dataDir: opts.dataDir, file: opts.file, env, replica: opts.replica ?? null }))
    if (Either.isLeft(keying)) return { check, ok: false, detail: `${keying.left.code}: ${keying.left.message}` }
    const generation = opts.generation === undefined ? [] : ["-generation", opts.generation]
    const result = yield* Effect.scoped(Effect.gen(function*() {
      const config = keying.right.keyed
        ? ["-config", yield* temporaryRestoreConfig(dirname(opts.target), keying.right.db, keying.right.identities)]
        : []
      return yield* execProgram(binary, ["restore", ...config, ...generation, "-o", opts.target, live], {
        env,
        timeoutMs: opts.timeoutMs ?? LITESTREAM_TIMEOUT_MS
      })
    }))
    if (result.code !== 0) {
      return {
        check,
        ok: false,
        detail: `litestream restore of ${live} failed (exit ${result.code ?? "signal"}): ${lastLine(result.stderr) || lastLine(result.stdout) || "no output"}`
      }
    }
    if (!existsSync(opts.target)) {
      const output = lastLine(result.stderr) || lastLine(result.stdout)
      return {
        check,
        ok: false,
        detail: `litestream restore of ${live} exited 0 without a file: is it in the Litestream config (LITESTREAM_CONFIG or /etc/litestream.yml) and replicated?${output === "" ? "" : ` ${output}`}`
      }
    }
    chmodSync(opts.target, 0o600)
    return { check, ok: true, detail: `${binary} restore ${live}` }
  })
