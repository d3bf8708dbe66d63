/**
 * Filesystem start refusals of architecture.md §3: permissions of the data dir and its SQLite
 * files, the length of the ops socket path, and an ops.sock left behind or held by another
 * process.
 */
import { realpath, readdir, stat, lstat, unlink } from "node:fs/promises"
import type { Stats } from "node:fs"
import { connect } from "node:net"
import { join } from "node:path"
import { Effect } from "effect"
import { StartRefusal } from "./refusal.js"

export const OPS_SOCKET_NAME = "ops.sock"
export const SQLITE_SUFFIXES: ReadonlyArray<string> = [".sqlite", ".sqlite-wal", ".sqlite-shm", ".sqlite-journal"]

const errnoCode = (e: unknown): string =>
  typeof e === "object" && e !== null && "code" in e ? String((e as { code: unknown }).code) : ""

/** Quotes a path for a shell command line when it needs it. */
const shellPath = (p: string): string => (/^[A-Za-z0-9_./@%+=:,-]+$/.test(p) ? p : `'${p.replace(/'/g, `'\\''`)}'`)

const octal = (mode: number): string => `0${(mode & 0o777).toString(8).padStart(3, "0")}`

/** stat, or null when the path does not exist. */
const statOrNull = (path: string): Effect.Effect<Stats | null, StartRefusal> =>
  Effect.tryPromise({
    try: () => stat(path),
    catch: (e) => e
  }).pipe(
    Effect.catchAll((e) =>
      errnoCode(e) === "ENOENT" || errnoCode(e) === "ENOTDIR"
        ? Effect.succeed(null)
        : Effect.fail(new StartRefusal({
            code: "data-dir-unreadable",
            message: `cannot inspect ${path} (${errnoCode(e) || "unknown error"}): the service user must own GROUNDNOTE_DATA_DIR and everything in it (chown), then chmod 700 the directories`
          }))
    )
  )

const listDir = (dir: string): Effect.Effect<ReadonlyArray<string>, StartRefusal> =>
  Effect.tryPromise({
    try: () => readdir(dir),
    catch: (e) =>
      new StartRefusal({
        code: "data-dir-unreadable",
        message: `cannot list ${dir} (${errnoCode(e) || "unknown error"}): the service user must own GROUNDNOTE_DATA_DIR and everything in it (chown), then chmod 700 ${shellPath(dir)}`
      })
  })

/**
 * The data dir, scopes/ in it and every SQLite file (with its -wal, -shm, -journal) in either
 * must be accessible by the owner only. A missing data dir or scopes/ is fine here.
 */
export const checkDataDirPermissions = (dataDir: string): Effect.Effect<void, StartRefusal> =>
  Effect.gen(function* () {
    const problems: Array<string> = []
    const check = (path: string, st: Stats) => {
      if ((st.mode & 0o077) === 0) return
      const fix = st.isDirectory() ? `chmod 700 ${shellPath(path)}` : `chmod 600 ${shellPath(path)}`
      problems.push(`${path} is group- or world-accessible (mode ${octal(st.mode)}): run ${fix}`)
    }
    const visitDir = (dir: string): Effect.Effect<boolean, StartRefusal> =>
      Effect.gen(function* () {
        const st = yield* statOrNull(dir)
        if (st === null) return false
        if (!st.isDirectory()) {
          return yield* Effect.fail(new StartRefusal({
            code: "data-dir-invalid",
            message: `${dir} exists but is not a directory: move it away or choose another GROUNDNOTE_DATA_DIR`
          }))
        }
        check(dir, st)
        const names = [...(yield* listDir(dir))].sort()
        for (const name of names) {
          if (!SQLITE_SUFFIXES.some((s) => name.endsWith(s))) continue
          const path = join(dir, name)
          const fst = yield* statOrNull(path)
          if (fst !== null) check(path, fst)
        }
        return true
      })
    if (yield* visitDir(dataDir)) yield* visitDir(join(dataDir, "scopes"))
    if (problems.length > 0) {
      return yield* Effect.fail(new StartRefusal({
        code: "data-dir-permissions",
        message: `the data dir must be accessible by the service user only:\n${problems.map((p) => `  ${p}`).join("\n")}`
      }))
    }
  })

/** sun_path size of the platform, null byte included: 108 on Linux, 104 on macOS and the BSDs. */
export const sunPathLimit = (platform: NodeJS.Platform = process.platform): number =>
  platform === "linux" ? 108 : 104

/** Bytes a path needs in sun_path: its UTF-8 bytes plus the null byte. */
export const socketPathBytes = (path: string): number => Buffer.byteLength(path, "utf8") + 1

/** `<dataDir>/ops.sock`, as given and with the data dir resolved, must fit sun_path. */
export const checkOpsSocketPath = (
  dataDir: string,
  platform: NodeJS.Platform = process.platform
): Effect.Effect<void, StartRefusal> =>
  Effect.gen(function* () {
    const limit = sunPathLimit(platform)
    const candidates = [join(dataDir, OPS_SOCKET_NAME)]
    const real = yield* Effect.tryPromise(() => realpath(dataDir)).pipe(Effect.orElseSucceed(() => null))
    if (real !== null) candidates.push(join(real, OPS_SOCKET_NAME))
    for (const [i, path] of candidates.entries()) {
      const bytes = socketPathBytes(path)
      if (bytes > limit) {
        const which = i === 0 ? "" : " (resolved through symlinks)"
        return yield* Effect.fail(new StartRefusal({
          code: "ops-socket-path-too-long",
          message: `the ops socket path ${path}${which} needs ${bytes} bytes (null byte included), the limit on ${platform} is ${limit}: choose a shorter GROUNDNOTE_DATA_DIR`
        }))
      }
    }
  })

type Probe = "served" | "refused" | "gone" | { readonly error: string }

/** Tries to connect to a Unix socket: is another process serving it? */
const probeSocket = (path: string, timeoutMs: number): Effect.Effect<Probe> =>
  Effect.async<Probe>((resume) => {
    const socket = connect({ path })
    let done = false
    const finish = (result: Probe) => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.destroy()
      resume(Effect.succeed(result))
    }
    // No answer to connect() at all: somebody holds the socket (a full backlog), treat as served.
    const timer = setTimeout(() => finish("served"), timeoutMs)
    socket.once("connect", () => finish("served"))
    socket.once("error", (e) => {
      const code = errnoCode(e)
      finish(code === "ECONNREFUSED" ? "refused" : code === "ENOENT" ? "gone" : { error: code || e.message })
    })
    return Effect.sync(() => {
      done = true
      clearTimeout(timer)
      socket.destroy()
    })
  })

/**
 * Makes `<dataDir>/ops.sock` free for the ops listener: a stale socket (connect refused, the
 * server crashed) is removed; a non-socket or a socket another process serves refuses start.
 */
export const prepareOpsSocket = (dataDir: string, timeoutMs = 2000): Effect.Effect<void, StartRefusal> =>
  Effect.gen(function* () {
    const path = join(dataDir, OPS_SOCKET_NAME)
    const st = yield* Effect.tryPromise({ try: () => lstat(path), catch: (e) => e }).pipe(
      Effect.catchAll((e) =>
        errnoCode(e) === "ENOENT"
          ? Effect.succeed(null)
          : Effect.fail(new StartRefusal({
              code: "ops-socket-unavailable",
              message: `cannot inspect ${path} (${errnoCode(e) || "unknown error"}): make GROUNDNOTE_DATA_DIR readable by the service user`
            }))
      )
    )
    if (st === null) return
    if (!st.isSocket()) {
      return yield* Effect.fail(new StartRefusal({
        code: "ops-socket-unavailable",
        message: `${path} exists and is not a socket: move it away (the service creates its ops socket there)`
      }))
    }
    const probe = yield* probeSocket(path, timeoutMs)
    if (probe === "gone") return
    if (probe === "served") {
      return yield* Effect.fail(new StartRefusal({
        code: "ops-socket-unavailable",
        message: `${path} is served by another process (is groundnote already running with this GROUNDNOTE_DATA_DIR?): stop that process or choose another GROUNDNOTE_DATA_DIR`
      }))
    }
    if (probe !== "refused") {
      return yield* Effect.fail(new StartRefusal({
        code: "ops-socket-unavailable",
        message: `cannot connect to ${path} (${probe.error}): check who owns it, stop the process behind it or remove it`
      }))
    }
    yield* Effect.tryPromise({ try: () => unlink(path), catch: (e) => e }).pipe(
      Effect.catchAll((e) =>
        errnoCode(e) === "ENOENT"
          ? Effect.void
          : Effect.fail(new StartRefusal({
              code: "ops-socket-unavailable",
              message: `${path} is a stale socket but cannot be removed (${errnoCode(e) || "unknown error"}): remove it by hand`
            }))
      )
    )
  })
