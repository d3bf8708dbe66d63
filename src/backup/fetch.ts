/**
 * Fetches the newest backup of one file into a new temporary file (architecture.md §3, §11):
 *   copy        <directory>/ops.sqlite or <directory>/scopes/<scope>.sqlite, copied (never over
 *               an existing file), mode 0600
 *   litestream  litestream restore -o <target> <live path>, the replica found in Litestream's
 *               own config; a non-zero exit, or exit 0 without a file, fails
 * The answer is the check fetch-copy / fetch-litestream. The target lies in a private temporary
 * directory of the caller (Litestream leaves <target>.tmp-wal/-shm beside it).
 */
import { chmodSync, existsSync } from "node:fs"
import { join, resolve } from "node:path"
import { Effect } from "effect"
import { copyNew, realOrNull } from "./fsutil.js"
import { execProgram, findLitestream, lastLine } from "./litestream.js"
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
    const result = yield* execProgram(binary, ["restore", "-o", opts.target, live], {
      env,
      timeoutMs: opts.timeoutMs ?? LITESTREAM_TIMEOUT_MS
    })
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
