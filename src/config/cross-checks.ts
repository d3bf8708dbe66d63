/** The start checks that need both groundnote.json and the environment (architecture.md §3). */
import { realpathSync, type Stats, statSync } from "node:fs"
import { isAbsolute, relative, resolve, sep } from "node:path"
import { Effect } from "effect"
import type { Env } from "./config.js"
import { refuse, type StartRefusal } from "./refusal.js"
import type { ConfigFile } from "./schema.js"

const isHttps = (url: string): boolean => {
  try {
    return new URL(url).protocol === "https:"
  } catch {
    return false
  }
}

/** The checks that need both the file and the environment (architecture.md §3). */
export const checkConfigAgainstEnv = (file: ConfigFile, env: Env): Effect.Effect<void, StartRefusal> =>
  Effect.gen(function* () {
    if (env.authMode !== "cloudflare-access") return
    if (file.access === undefined) {
      return yield* refuse(
        "access-missing",
        `GROUNDNOTE_AUTH_MODE is cloudflare-access, but ${env.configPath} has no "access" key: add access with team_domain, aud_mcp, aud_approval and aud_api (see config/README.md)`
      )
    }
    if (!isHttps(file.public_url)) {
      return yield* refuse(
        "public-url-not-https",
        `public_url in ${env.configPath} is ${JSON.stringify(file.public_url)}, but cloudflare-access mode needs an https:// URL: set public_url to the https address behind Cloudflare Access`
      )
    }
    if (!isHttps(file.access.team_domain)) {
      return yield* refuse(
        "team-domain-not-https",
        `access.team_domain in ${env.configPath} is ${JSON.stringify(file.access.team_domain)}: set it to https://<team>.cloudflareaccess.com`
      )
    }
  })

const realOrResolved = (path: string): string => {
  try {
    return realpathSync(path)
  } catch {
    return resolve(path)
  }
}

const isWithin = (parent: string, child: string): boolean => {
  const rel = relative(parent, child)
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel))
}

/**
 * backup.directory of kind copy at `serve` (config/README.md): a directory inside the data dir
 * (real paths) refuses start (backup-directory-invalid) — a backup there dies with the data. A
 * directory that is missing, not a directory, not the service user's or not mode 0700 is a
 * warning at start (a backup volume may be mounted later; nothing is ever created there): the
 * service serves, and `groundnote backup run` refuses with 409 backup-directory-invalid until
 * it is fixed. Answers the warnings.
 */
export const checkBackupDirectory = (file: ConfigFile, env: Env): Effect.Effect<ReadonlyArray<string>, StartRefusal> =>
  Effect.gen(function* () {
    const data = realOrResolved(env.dataDir)
    // §3: export_directory, like directory, must not lie inside the data dir (any kind)
    const exports = file.backup.export_directory === undefined ? null : realOrResolved(resolve(file.backup.export_directory))
    if (exports !== null && isWithin(data, exports)) {
      return yield* refuse(
        "export-directory-invalid",
        `backup.export_directory in ${env.configPath} is ${exports}, inside the data dir ${data}: the nightly exports would be lost with the data; choose a directory outside it (config/README.md)`
      )
    }
    if (file.backup.kind !== "copy") return []
    const given = resolve(file.backup.directory)
    const real = realOrResolved(given)
    if (isWithin(data, real)) {
      return yield* refuse(
        "backup-directory-invalid",
        `backup.directory in ${env.configPath} is ${real}, inside the data dir ${data}: a backup there is lost with the data; choose a directory outside it (config/README.md)`
      )
    }
    let st: Stats
    try {
      st = statSync(real)
    } catch {
      return [`backup.directory ${given} does not exist: create it (mkdir -m 700 ${given}) or mount the backup volume; groundnote backup run refuses until then`]
    }
    if (!st.isDirectory()) return [`backup.directory ${real} is not a directory: point backup.directory at a directory; groundnote backup run refuses until then`]
    const problems: Array<string> = []
    const uid = typeof process.getuid === "function" ? process.getuid() : null
    if (uid !== null && st.uid !== uid) problems.push(`it is owned by uid ${st.uid}, not by the service user (uid ${uid}): chown it`)
    if ((st.mode & 0o7777) !== 0o700) problems.push(`it has mode ${(st.mode & 0o7777).toString(8).padStart(4, "0")}, it must be 0700: chmod 700 ${real}`)
    return problems.length === 0 ? [] : [`backup.directory ${real}: ${problems.join("; ")}; groundnote backup run refuses until then`]
  })
