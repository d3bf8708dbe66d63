/**
 * Files and directories of backups and nightly exports (architecture.md §3, §11.1, §11.2):
 * directory checks by real path, private temporary directories, durable rename, and hard links
 * that never overwrite. Synchronous node:fs calls on metadata only (the long work is in the
 * worker); copying a whole file uses the libuv thread pool (copyFile).
 */
import { randomBytes } from "node:crypto"
import {
  chmodSync,
  closeSync,
  constants,
  fsyncSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  realpathSync,
  rmSync,
  type Stats,
  statSync,
  unlinkSync
} from "node:fs"
import { chmod, copyFile, open, rename, rm } from "node:fs/promises"
import { dirname, isAbsolute, join, relative, resolve, sep } from "node:path"
import { Effect } from "effect"

export const errnoCode = (e: unknown): string =>
  typeof e === "object" && e !== null && "code" in e ? String((e as { code: unknown }).code) : ""

export const octal = (mode: number): string => `0${(mode & 0o7777).toString(8).padStart(3, "0")}`

/** The uid of this process (the service user); null where the platform has none. */
export const serviceUid = (): number | null => (typeof process.getuid === "function" ? process.getuid() : null)

/** Real path of `path`, or null when it (or a parent) does not exist. */
export const realOrNull = (path: string): string | null => {
  try {
    return realpathSync(path)
  } catch (e) {
    const code = errnoCode(e)
    if (code === "ENOENT" || code === "ENOTDIR") return null
    throw e
  }
}

export const lstatOrNull = (path: string): Stats | null => {
  try {
    return lstatSync(path)
  } catch (e) {
    const code = errnoCode(e)
    if (code === "ENOENT" || code === "ENOTDIR") return null
    throw e
  }
}

/** `child` is `parent` or lies below it (both real, absolute paths). */
export const isWithin = (parent: string, child: string): boolean => {
  const rel = relative(parent, child)
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel))
}

/** The data dir's real path, or its absolute path when it does not exist. */
export const realDataDir = (dataDir: string): string => realOrNull(dataDir) ?? resolve(dataDir)

/** Why a configured directory (backup.directory, backup.export_directory) is unfit, or null. */
export interface DirectoryRules {
  /** exactly 0700 (backup.directory) or "not writable by group or others unless sticky" (export_directory) */
  readonly mode: "exactly-0700" | "not-shared-writable"
}

/**
 * A configured directory must exist (a missing mount must not become a local directory), be a
 * directory owned by the service user, have the mode the rules ask, and not lie inside the data
 * dir (real paths). Returns its real path, or the reason it is unfit.
 */
export const checkConfiguredDirectory = (
  given: string,
  dataDir: string,
  rules: DirectoryRules
): { readonly ok: true; readonly real: string } | { readonly ok: false; readonly reason: string } => {
  const abs = resolve(given)
  let real: string | null
  try {
    real = realOrNull(abs)
  } catch (e) {
    return { ok: false, reason: `${abs} cannot be resolved (${errnoCode(e) || "unknown error"})` }
  }
  if (real === null) return { ok: false, reason: `${abs} does not exist (create it, or mount the backup volume; it is never created here)` }
  const st = statSync(real)
  if (!st.isDirectory()) return { ok: false, reason: `${real} is not a directory` }
  const uid = serviceUid()
  if (uid !== null && st.uid !== uid) {
    return { ok: false, reason: `${real} is owned by uid ${st.uid}, not by the service user (uid ${uid}): chown it to the service user` }
  }
  if (rules.mode === "exactly-0700" && (st.mode & 0o7777) !== 0o700) {
    return { ok: false, reason: `${real} has mode ${octal(st.mode)}, it must be 0700: run chmod 700 ${real}` }
  }
  if (rules.mode === "not-shared-writable" && (st.mode & 0o022) !== 0 && (st.mode & 0o1000) === 0) {
    return { ok: false, reason: `${real} is writable by group or others (mode ${octal(st.mode)}): run chmod go-w ${real}` }
  }
  const data = realDataDir(dataDir)
  if (isWithin(data, real)) return { ok: false, reason: `${real} lies inside the data dir ${data}: choose a directory outside it` }
  return { ok: true, real }
}

/**
 * `<parent>/<name>` as a real directory of the service user with mode exactly 0700 and no
 * symlink; created 0700 when missing. Returns its path, or the reason it is unfit.
 */
export const ensurePrivateSubdir = (
  parent: string,
  name: string
): { readonly ok: true; readonly path: string } | { readonly ok: false; readonly reason: string } => {
  const path = join(parent, name)
  let st = lstatOrNull(path)
  if (st === null) {
    try {
      mkdirSync(path, { mode: 0o700 })
      chmodSync(path, 0o700)
    } catch (e) {
      if (errnoCode(e) !== "EEXIST") return { ok: false, reason: `${path} cannot be created (${errnoCode(e) || "unknown error"})` }
    }
    st = lstatOrNull(path)
    if (st === null) return { ok: false, reason: `${path} vanished after it was created` }
  }
  if (st.isSymbolicLink()) return { ok: false, reason: `${path} is a symlink: it must be a real directory (remove the link)` }
  if (!st.isDirectory()) return { ok: false, reason: `${path} is not a directory` }
  const uid = serviceUid()
  if (uid !== null && st.uid !== uid) return { ok: false, reason: `${path} is owned by uid ${st.uid}, not by the service user (uid ${uid})` }
  if ((st.mode & 0o7777) !== 0o700) return { ok: false, reason: `${path} has mode ${octal(st.mode)}, it must be 0700: run chmod 700 ${path}` }
  return { ok: true, path }
}

/**
 * Removes a file or directory tree on the thread pool: unlinking copies of a large scope takes
 * long enough to stall the event loop when done synchronously.
 */
export const removeInBackground = (path: string): Effect.Effect<void> =>
  Effect.promise(() => rm(path, { recursive: true, force: true, maxRetries: 3 }).catch(() => undefined))

/** A fresh directory `<parent>/<prefix><16 hex>` with mode 0700, removed with everything in it when the Scope closes. */
export const privateTempDir = (parent: string, prefix: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const path = join(parent, `${prefix}${randomBytes(8).toString("hex")}`)
      mkdirSync(path, { mode: 0o700 })
      chmodSync(path, 0o700)
      return path
    }),
    (path) => removeInBackground(path)
  )

/** fsync of a directory, so a rename or link in it is durable. */
export const fsyncDir = (dir: string): void => {
  const fd = openSync(dir, "r")
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/** Removes `path` if it exists. */
export const removeFile = (path: string): void => {
  try {
    unlinkSync(path)
  } catch (e) {
    if (errnoCode(e) !== "ENOENT") throw e
  }
}

const fsyncAsync = async (path: string): Promise<void> => {
  const handle = await open(path, "r")
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/**
 * Mode 0600, fsync, rename over `target`, fsync of the directory, mode 0600. Asynchronous (the
 * thread pool): the fsync of a large copy must not stall the service's event loop.
 */
export const durableReplace = (tmp: string, target: string): Effect.Effect<void, string> =>
  Effect.tryPromise({
    try: async () => {
      await chmod(tmp, 0o600)
      await fsyncAsync(tmp)
      await rename(tmp, target)
      await fsyncAsync(dirname(target))
      await chmod(target, 0o600)
    },
    catch: (e) => errnoCode(e) || "EIO"
  })

/**
 * Hard-links `tmp` to `target` (never overwriting: link fails with EEXIST, also in a race), then
 * removes `tmp` and syncs the directory. Returns false when `target` existed.
 */
export const linkNoOverwrite = (tmp: string, target: string): boolean => {
  try {
    linkSync(tmp, target)
  } catch (e) {
    if (errnoCode(e) === "EEXIST") return false
    throw e
  }
  removeFile(tmp)
  fsyncDir(dirname(target))
  return true
}

/** Copies `source` into the new file `target` (never over an existing one), mode 0600. */
export const copyNew = (source: string, target: string): Effect.Effect<void, { readonly code: string; readonly message: string }> =>
  Effect.tryPromise({
    try: async () => {
      await copyFile(source, target, constants.COPYFILE_EXCL)
      chmodSync(target, 0o600)
    },
    catch: (e) => ({ code: errnoCode(e) || "EIO", message: e instanceof Error ? e.message : String(e) })
  })

/**
 * Temporary copies a backup run left behind (a crash between VACUUM INTO and rename), with the
 * rollback journal (or WAL files) SQLite keeps beside a copy while VACUUM INTO writes it.
 */
export const TEMP_COPY_RE = /^\.(.+\.sqlite(?:\.age)?)\.tmp-[0-9a-f-]{36}(?:-journal|-wal|-shm)?$/

/** Removes the temporary copies of earlier runs in `dir` (names of TEMP_COPY_RE only). */
export const removeStaleTempCopies = (dir: string): ReadonlyArray<string> => {
  const removed: Array<string> = []
  for (const name of readdirSync(dir)) {
    if (!TEMP_COPY_RE.test(name)) continue
    const path = join(dir, name)
    const st = lstatOrNull(path)
    if (st !== null && st.isFile()) {
      removeFile(path)
      removed.push(path)
    }
  }
  return removed
}

/**
 * Throw-away directories of a probe, verify or backup run (the plaintext snapshot of a keyed
 * file before it is encrypted) that a crash left in the data dir.
 */
export const TEMP_DIR_RE = /^\.(?:probe|verify|backup)-[0-9a-f]{16}$/

/** Removes the throw-away directories of earlier probes and verifies in `dataDir` (they share the lock). */
export const removeStaleTempDirs = (dataDir: string): ReadonlyArray<string> => {
  const removed: Array<string> = []
  let names: Array<string>
  try {
    names = readdirSync(dataDir)
  } catch {
    return removed
  }
  for (const name of names) {
    if (!TEMP_DIR_RE.test(name)) continue
    const path = join(dataDir, name)
    const st = lstatOrNull(path)
    if (st !== null && st.isDirectory()) {
      rmSync(path, { recursive: true, force: true })
      removed.push(path)
    }
  }
  return removed
}
