/**
 * The CLI's client of the ops socket (architecture.md §11 "CLI groundnote"), without Effect (the
 * quick commands of cli-quick.ts use it as is; ops-client.ts wraps it for the parsed commands).
 * It reads GROUNDNOTE_DATA_DIR (default ./data) and GROUNDNOTE_OPS_TOKEN and sends the token only
 * after the data dir proved trustworthy: the given dir is no symlink; its real path is owned by
 * the calling user with mode 0700; every parent of the real path is owned by root or the user and
 * not writable by others unless sticky; ops.sock in it is a socket of the user. Else
 * ops-socket-untrusted; a missing dir or socket is ops-unreachable. The connect uses the resolved
 * path. A thin client: it imports no store and no server module (AT6).
 */
import type { Stats } from "node:fs"
import { lstatSync, realpathSync } from "node:fs"
import { request } from "node:http"
import { dirname, join, resolve } from "node:path"
import { buildPath, CLI_ROUTES, type CliRouteName } from "./cli-routes.js"

/** Same name as config/data-dir.ts OPS_SOCKET_NAME (a test keeps them equal; the CLI stays thin). */
export const OPS_SOCKET_FILE = "ops.sock"
export const DEFAULT_DATA_DIR = "./data"
/** How long the CLI waits for an ops answer. */
export const OPS_TIMEOUT_MS = 120_000
/**
 * How long it waits for backup run, probe and verify: a probe of 100k rules took 71 to 207 s on a
 * loaded 2-core machine (docs/backup.md); an hour leaves room for far larger scopes and slow disks.
 */
export const BACKUP_TIMEOUT_MS = 60 * 60_000

/**
 * A failure of the ops socket's client: its code and a one-line message; `body` is the server's
 * ErrorBody when the service answered with an error (ops-client.ts turns it into a CliError).
 */
export class OpsFailure extends Error {
  constructor(
    readonly code: string,
    override readonly message: string,
    readonly status?: number,
    readonly body?: unknown
  ) {
    super(message)
  }
}

const untrusted = (message: string) => new OpsFailure("ops-socket-untrusted", message)
const unreachable = (message: string) => new OpsFailure("ops-unreachable", message)

const errnoCode = (e: unknown): string =>
  typeof e === "object" && e !== null && "code" in e ? String((e as { code: unknown }).code) : ""

const octal = (mode: number): string => `0${(mode & 0o7777).toString(8).padStart(3, "0")}`

export interface OpsTarget {
  /** real path of the data dir */
  readonly dataDir: string
  /** <real data dir>/ops.sock: the path the client connects to */
  readonly socket: string
}

/** lstat, or null when the path (or a parent) does not exist. */
const lstatOrNull = (path: string): Stats | null => {
  try {
    return lstatSync(path)
  } catch (e) {
    const code = errnoCode(e)
    if (code === "ENOENT" || code === "ENOTDIR") return null
    throw untrusted(`cannot inspect ${path} (${code || "unknown error"}): the CLI must be able to check the data dir before it sends the ops token`)
  }
}

/**
 * The checks of §11 on `givenDir` for the user `uid`; the real data dir and socket path, or a
 * thrown OpsFailure (ops-socket-untrusted / ops-unreachable).
 */
export const checkOpsTarget = (givenDir: string, uid: number): OpsTarget => {
  const given = lstatOrNull(givenDir)
  if (given === null) {
    throw unreachable(`there is no data dir at ${givenDir}: set GROUNDNOTE_DATA_DIR to the service's data dir`)
  }
  if (given.isSymbolicLink()) {
    throw untrusted(`${givenDir} is a symlink: set GROUNDNOTE_DATA_DIR to the real directory, not a link to it`)
  }
  if (!given.isDirectory()) {
    throw unreachable(`${givenDir} is not a directory: set GROUNDNOTE_DATA_DIR to the service's data dir`)
  }
  const real = safeRealpath(givenDir)
  const st = lstatOrNull(real)
  if (st === null || !st.isDirectory()) throw unreachable(`there is no data dir at ${real}`)
  if (st.uid !== uid) {
    throw untrusted(`${real} is owned by uid ${st.uid}, not by you (uid ${uid}): run the CLI as the user that owns the data dir`)
  }
  if ((st.mode & 0o777) !== 0o700) {
    throw untrusted(`${real} has mode ${octal(st.mode)}, not 0700: run chmod 700 ${real}`)
  }
  for (let dir = dirname(real); ; dir = dirname(dir)) {
    const parent = lstatOrNull(dir)
    if (parent === null || !parent.isDirectory()) throw untrusted(`cannot check the parent directory ${dir}`)
    if (parent.uid !== 0 && parent.uid !== uid) {
      throw untrusted(`the parent directory ${dir} is owned by uid ${parent.uid}, neither root nor you: move the data dir`)
    }
    // §11: "not writable by others unless sticky" (a group-writable parent such as a setgid /srv
    // at 2775 is the operator's group, as the contract allows)
    if ((parent.mode & 0o002) !== 0 && (parent.mode & 0o1000) === 0) {
      throw untrusted(`the parent directory ${dir} is writable by others and not sticky (mode ${octal(parent.mode)}): run chmod o-w ${dir} or move the data dir`)
    }
    if (dirname(dir) === dir) break
  }
  const socket = join(real, OPS_SOCKET_FILE)
  const sock = lstatOrNull(socket)
  if (sock === null) throw unreachable(`there is no ops socket at ${socket}: is groundnote serve running with this GROUNDNOTE_DATA_DIR?`)
  if (!sock.isSocket()) throw untrusted(`${socket} is not a socket: move it away and restart the service`)
  if (sock.uid !== uid) throw untrusted(`${socket} is owned by uid ${sock.uid}, not by you (uid ${uid})`)
  return { dataDir: real, socket }
}

const safeRealpath = (path: string): string => {
  try {
    return realpathSync(path)
  } catch (e) {
    throw unreachable(`cannot resolve ${path} (${errnoCode(e) || "unknown error"})`)
  }
}

export interface OpsEnv {
  readonly token: string
  readonly target: OpsTarget
}

/** Reads the environment and checks the data dir; nothing is sent yet. Throws an OpsFailure. */
export const resolveOpsTarget = (
  env: Record<string, string | undefined>,
  cwd: string,
  uid: number | undefined = process.getuid?.()
): OpsEnv => {
  const token = env.GROUNDNOTE_OPS_TOKEN
  if (token === undefined || token === "") {
    throw new OpsFailure("ops-token-missing", "GROUNDNOTE_OPS_TOKEN is not set: set it to the service's ops token (the CLI never takes it as an argument)")
  }
  if (uid === undefined) throw untrusted("this platform has no user ids: the ops socket cannot be checked")
  const dataDir = env.GROUNDNOTE_DATA_DIR === undefined || env.GROUNDNOTE_DATA_DIR === "" ? DEFAULT_DATA_DIR : env.GROUNDNOTE_DATA_DIR
  try {
    return { token, target: checkOpsTarget(resolve(cwd, dataDir), uid) }
  } catch (e) {
    throw e instanceof OpsFailure ? e : unreachable(`cannot check ${dataDir}: ${String(e)}`)
  }
}

/** An ErrorBody-like answer of the service. */
const errorOf = (status: number, text: string): OpsFailure => {
  try {
    const body = JSON.parse(text) as unknown
    if (typeof body === "object" && body !== null && typeof (body as { error?: unknown }).error === "string") {
      const e = body as { error: string; message?: unknown }
      return new OpsFailure(e.error, typeof e.message === "string" ? e.message : `the service answered ${status}`, status, body)
    }
  } catch {
    // not JSON
  }
  return new OpsFailure("ops-bad-answer", `the service answered ${status} without an error body`, status)
}

export interface OpsCallOptions {
  readonly params?: Readonly<Record<string, string>>
  /** query parameters the route takes (CliRoute.query) */
  readonly query?: Readonly<Record<string, string | undefined>>
  readonly body?: unknown
  readonly timeoutMs?: number
}

/**
 * One request over the checked socket: the JSON answer on 2xx, else an OpsFailure with the
 * server's code. `cancel` (when given) receives the function that abandons the request.
 */
export const opsCall = (
  ops: OpsEnv,
  route: CliRouteName,
  options: OpsCallOptions = {},
  cancel?: (abandon: () => void) => void
): Promise<unknown> =>
  new Promise<unknown>((resolvePromise, rejectPromise) => {
    const r = CLI_ROUTES[route]
    if (r.channel !== "ops") throw new Error(`${route} is not an ops route`)
    const path = buildPath(r, options.params ?? {}, options.query ?? {})
    const payload = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body), "utf8")
    const headers: Record<string, string> = { authorization: `Bearer ${ops.token}`, accept: "application/json" }
    if (payload !== undefined) {
      headers["content-type"] = "application/json"
      headers["content-length"] = String(payload.length)
    }
    let done = false
    const finish = (result: { readonly ok: unknown } | OpsFailure) => {
      if (done) return
      done = true
      if (result instanceof OpsFailure) rejectPromise(result)
      else resolvePromise(result.ok)
    }
    const req = request({ socketPath: ops.target.socket, method: r.method, path, headers }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("error", (e) => finish(unreachable(`the answer from ${ops.target.socket} broke off (${errnoCode(e) || e.message})`)))
      res.on("end", () => {
        const status = res.statusCode ?? 0
        const text = Buffer.concat(chunks).toString("utf8")
        if (status >= 200 && status < 300) {
          try {
            finish({ ok: JSON.parse(text) as unknown })
          } catch {
            finish(new OpsFailure("ops-bad-answer", `the service answered ${status} with a body that is not JSON`, status))
          }
        } else {
          finish(errorOf(status, text))
        }
      })
    })
    req.setTimeout(options.timeoutMs ?? OPS_TIMEOUT_MS, () => {
      finish(unreachable(`no answer from ${ops.target.socket} within ${Math.round((options.timeoutMs ?? OPS_TIMEOUT_MS) / 1000)} s`))
      req.destroy()
    })
    req.on("error", (e) => {
      const code = errnoCode(e)
      finish(unreachable(
        code === "ECONNREFUSED" || code === "ENOENT"
          ? `nobody serves ${ops.target.socket} (${code}): is groundnote serve running?`
          : `cannot reach ${ops.target.socket} (${code || e.message})`
      ))
    })
    req.end(payload)
    cancel?.(() => {
      done = true
      req.destroy()
    })
  })
