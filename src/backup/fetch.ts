/**
 * Fetches the newest backup of one file into a new temporary file (architecture.md §3, §11):
 *   copy        <directory>/ops.sqlite or <directory>/scopes/<scope>.sqlite, copied (never over
 *               an existing file), mode 0600
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
import { copyNew, realOrNull } from "./fsutil.js"
import { execProgram, findLitestream, lastLine } from "./litestream.js"
import type { LitestreamTarget } from "./litestream-config.js"
import { keyingFor, temporaryRestoreConfig } from "./litestream-keying.js"
import type { BackupKind, Check } from "./schemas.js"

/** ops.sqlite, or the file of a scope. */
export type BackupFile = { readonly kind: "ops" } | { readonly kind: "scope"; readonly scope: string }

export const OPS_FILE_NAME = "ops.sqlite"

/** Path of `file` below a data dir or a copy backup directory (the same layout). */
export const filePathIn = (root: string, file: BackupFile): string =>
  file.kind === "ops" ? join(root, OPS_FILE_NAME) : join(root, "scopes", `${file.scope}.sqlite`)

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
  /** backup.target and backup.prefix of kind litestream: where a keyed file's replica is */
  readonly replica?: LitestreamTarget | null
  /** restore this Litestream generation instead of the newest */
  readonly generation?: string
}

const LITESTREAM_TIMEOUT_MS = 60 * 60 * 1000

/** The newest backup of `file` into `target`: the check fetch-copy or fetch-litestream. */
export const fetchBackup = (opts: FetchOptions): Effect.Effect<Check> =>
  Effect.gen(function*() {
    if (opts.kind === "copy") {
      const check = "fetch-copy"
      if (opts.directory === null) return { check, ok: false, detail: "backup.directory is not set" }
      const dir = realOrNull(resolve(opts.directory)) ?? resolve(opts.directory)
      const source = filePathIn(dir, opts.file)
      if (!existsSync(source)) return { check, ok: false, detail: `no backup copy at ${source}` }
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
