/**
 * The credentials of the api commands and of export (architecture.md §11 "CLI groundnote").
 *
 *   environment  GROUNDNOTE_URL and exactly one of GROUNDNOTE_API_TOKEN (a service bearer, or the
 *                dev API token) / GROUNDNOTE_API_ACCESS_JWT (a person's Access token for the API)
 *                for the api commands; GROUNDNOTE_ACCESS_JWT (a person's Access token for the
 *                approval application) for export
 *   file         $XDG_CONFIG_HOME/groundnote/cli.json (default ~/.config/groundnote/cli.json),
 *                {url, token?, api_access_jwt?, access_jwt?}; read only when no GROUNDNOTE_URL or
 *                credential variable is set; refused unless it is a regular file of the user with
 *                mode 0600 (credentials-file-permissions); written only by `config init`, from
 *                stdin, mode 0600, never overwritten
 *
 * The URL must be https; http only for a loopback host. A JWT travels as cf-access-token (for
 * Cloudflare Access in front) and cf-access-jwt-assertion (what the service reads); a token as
 * Authorization: Bearer. Secrets are never printed and never taken from argv.
 */
import { closeSync, fchmodSync, fsyncSync, lstatSync, mkdirSync, openSync, readFileSync, writeSync } from "node:fs"
import { dirname } from "node:path"
import { Effect, Either, Schema } from "effect"
import { credentialsPath } from "./cli-credentials-path.js"
import { cliError, CliError } from "./cli-output.js"

export const URL_VAR = "GROUNDNOTE_URL"
export const TOKEN_VAR = "GROUNDNOTE_API_TOKEN"
export const API_JWT_VAR = "GROUNDNOTE_API_ACCESS_JWT"
export const EXPORT_JWT_VAR = "GROUNDNOTE_ACCESS_JWT"
const CREDENTIAL_VARS = [URL_VAR, TOKEN_VAR, API_JWT_VAR, EXPORT_JWT_VAR] as const

export type CredentialKind = "token" | "api_access_jwt" | "access_jwt"
export const CREDENTIAL_KINDS: ReadonlyArray<CredentialKind> = ["token", "api_access_jwt", "access_jwt"]

const Secret = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(16_384))

/** ~/.config/groundnote/cli.json */
export const CredentialsFile = Schema.Struct({
  url: Schema.String,
  token: Schema.optional(Secret),
  api_access_jwt: Schema.optional(Secret),
  access_jwt: Schema.optional(Secret)
})
export type CredentialsFile = typeof CredentialsFile.Type

type Env = Readonly<Record<string, string | undefined>>

const get = (env: Env, name: string): string | undefined => {
  const v = env[name]
  return v === undefined || v === "" ? undefined : v
}


const LOOPBACK_V4 = /^127(?:\.\d{1,3}){3}$/

export const isLoopbackHost = (hostname: string): boolean => {
  const h = hostname.toLowerCase().replace(/^\[|\]$/g, "")
  return h === "localhost" || h === "::1" || LOOPBACK_V4.test(h)
}

/** The service's base URL: https, or http for a loopback host; no credentials, query or fragment in it. */
export const checkBaseUrl = (text: string, where: string): Either.Either<string, CliError> => {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return Either.left(cliError("url-invalid", `${where} is not a URL: set it to the service's address, e.g. https://groundnote.example.com`))
  }
  if (url.username !== "" || url.password !== "" || url.search !== "" || url.hash !== "") {
    return Either.left(cliError("url-invalid", `${where} must be the service's address alone (no user, password, query or fragment)`))
  }
  if (url.protocol === "http:" && !isLoopbackHost(url.hostname)) {
    return Either.left(cliError("url-not-https", `${where} is http to ${url.hostname}: use https (http only for a loopback host, so no credential crosses a network in clear text)`))
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    return Either.left(cliError("url-invalid", `${where} must be an https URL`))
  }
  return Either.right(`${url.origin}${url.pathname.replace(/\/+$/, "")}`)
}

const errnoCode = (e: unknown): string =>
  typeof e === "object" && e !== null && "code" in e ? String((e as { code: unknown }).code) : ""

const octal = (mode: number): string => `0${(mode & 0o7777).toString(8).padStart(3, "0")}`

/** The credentials file, or null when there is none; refused unless a regular file of `uid` with mode 0600. */
export const readCredentialsFile = (path: string, uid: number | undefined): Effect.Effect<CredentialsFile | null, CliError> =>
  Effect.suspend(() => {
    const refuse = (why: string) => Effect.fail(cliError("credentials-file-permissions", `${path} ${why}`))
    let st
    try {
      st = lstatSync(path)
    } catch (e) {
      if (errnoCode(e) === "ENOENT" || errnoCode(e) === "ENOTDIR") return Effect.succeed(null)
      return refuse(`cannot be inspected (${errnoCode(e) || "error"})`)
    }
    if (st.isSymbolicLink()) return refuse("is a symlink: the credentials file must be a regular file (replace the link by the file)")
    if (!st.isFile()) return refuse("is not a regular file")
    if (uid !== undefined && st.uid !== uid) return refuse(`is owned by uid ${st.uid}, not by you (uid ${uid}): it must be your own file`)
    if ((st.mode & 0o777) !== 0o600) return refuse(`has mode ${octal(st.mode)}, not 0600: run chmod 600 ${path}`)
    let json: unknown
    try {
      json = JSON.parse(readFileSync(path, "utf8"))
    } catch {
      return Effect.fail(cliError("credentials-file-invalid", `${path} is not valid JSON: remove it and write it again with groundnote config init`))
    }
    const decoded = Schema.decodeUnknownEither(CredentialsFile)(json, { onExcessProperty: "error" })
    if (Either.isLeft(decoded)) {
      return Effect.fail(cliError("credentials-file-invalid", `${path} holds other keys than url, token, api_access_jwt, access_jwt (or a value that is not text): remove it and write it again with groundnote config init`))
    }
    return Effect.succeed(decoded.right)
  })

/** Where the credentials come from and what they are (never the secrets themselves). */
export interface Credentials {
  /** "environment" or the file's path */
  readonly source: string
  readonly url: string | undefined
  readonly token: string | undefined
  readonly api_access_jwt: string | undefined
  readonly access_jwt: string | undefined
}

/** The environment when it names any GROUNDNOTE_URL or credential variable, else the file (or nothing). */
export const resolveCredentials = (env: Env, home: string, uid: number | undefined): Effect.Effect<Credentials | null, CliError> =>
  Effect.gen(function*() {
    if (CREDENTIAL_VARS.some((n) => get(env, n) !== undefined)) {
      return {
        source: "environment",
        url: get(env, URL_VAR),
        token: get(env, TOKEN_VAR),
        api_access_jwt: get(env, API_JWT_VAR),
        access_jwt: get(env, EXPORT_JWT_VAR)
      }
    }
    const path = credentialsPath(env, home)
    const file = yield* readCredentialsFile(path, uid)
    if (file === null) return null
    return { source: path, url: file.url, token: file.token, api_access_jwt: file.api_access_jwt, access_jwt: file.access_jwt }
  })

/** Where a request goes and how it is authenticated. */
export interface Endpoint {
  /** the service's base URL, no trailing slash */
  readonly base: string
  readonly headers: Readonly<Record<string, string>>
  readonly kind: CredentialKind
  readonly source: string
}

const jwtHeaders = (jwt: string) => ({ "cf-access-token": jwt, "cf-access-jwt-assertion": jwt })

const HOW_API = `set ${URL_VAR} and ${TOKEN_VAR} (a service bearer gn_…) or ${API_JWT_VAR} (a person's Access token for the API), or write the credentials file once with groundnote config init`
const HOW_EXPORT = `set ${URL_VAR} and ${EXPORT_JWT_VAR} (a person's Access token for the approval application; the person needs decide on the scope), or write it into the credentials file with groundnote config init`

const where = (c: Credentials, name: string, key: string) => (c.source === "environment" ? name : `${key} in ${c.source}`)

const baseOf = (c: Credentials, how: string): Effect.Effect<string, CliError> =>
  c.url === undefined
    ? Effect.fail(cliError("credentials-missing", c.source === "environment" ? `${URL_VAR} is not set: ${how}` : `${c.source} has no url`))
    : checkBaseUrl(c.url, where(c, URL_VAR, "url"))

/** The api commands' endpoint: exactly one of the token and the person's API JWT (credentials-ambiguous, credentials-missing). */
export const apiEndpoint = (env: Env, home: string, uid: number | undefined): Effect.Effect<Endpoint, CliError> =>
  Effect.gen(function*() {
    const c = yield* resolveCredentials(env, home, uid)
    if (c === null) return yield* cliError("credentials-missing", `no credentials: ${HOW_API}`)
    if (c.token !== undefined && c.api_access_jwt !== undefined) {
      return yield* cliError("credentials-ambiguous", c.source === "environment"
        ? `both ${TOKEN_VAR} and ${API_JWT_VAR} are set: unset one (the CLI never guesses which identity you mean)`
        : `${c.source} holds both token and api_access_jwt: keep one (remove the file and write it again with groundnote config init)`)
    }
    if (c.token === undefined && c.api_access_jwt === undefined) {
      return yield* cliError("credentials-missing", c.source === "environment"
        ? `neither ${TOKEN_VAR} nor ${API_JWT_VAR} is set: ${HOW_API}`
        : `${c.source} holds neither token nor api_access_jwt: ${HOW_API}`)
    }
    const base = yield* baseOf(c, HOW_API)
    return c.token !== undefined
      ? { base, headers: { authorization: `Bearer ${c.token}` }, kind: "token" as const, source: c.source }
      : { base, headers: jwtHeaders(c.api_access_jwt ?? ""), kind: "api_access_jwt" as const, source: c.source }
  })

/** export's endpoint: a person's Access token for the approval application. */
export const exportEndpoint = (env: Env, home: string, uid: number | undefined): Effect.Effect<Endpoint, CliError> =>
  Effect.gen(function*() {
    const c = yield* resolveCredentials(env, home, uid)
    if (c === null) return yield* cliError("credentials-missing", `no credentials: ${HOW_EXPORT}`)
    if (c.access_jwt === undefined) {
      return yield* cliError("credentials-missing", c.source === "environment"
        ? `${EXPORT_JWT_VAR} is not set: ${HOW_EXPORT}`
        : `${c.source} holds no access_jwt: ${HOW_EXPORT}`)
    }
    const base = yield* baseOf(c, HOW_EXPORT)
    return { base, headers: jwtHeaders(c.access_jwt), kind: "access_jwt" as const, source: c.source }
  })

const JWT_RE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/

/** A secret read for `kind`: one line, no spaces; a JWT has its three parts. */
export const checkSecret = (kind: CredentialKind, secret: string): string | null => {
  if (secret.length === 0) return `the ${kind} is empty`
  if (/\s/.test(secret)) return `the ${kind} contains white space`
  if (secret.length > 16_384) return `the ${kind} is longer than 16384 characters`
  if (kind !== "token" && !JWT_RE.test(secret)) return `the ${kind} is not a JWT (three base64url parts joined by dots)`
  return null
}

/**
 * Writes the credentials file once: the directory is created 0700 when missing; the file is created
 * exclusively with mode 0600 (credentials-file-exists when it is there: never overwritten), written
 * and fsynced.
 */
export const writeCredentialsFile = (path: string, content: CredentialsFile): Effect.Effect<void, CliError> =>
  Effect.try({
    try: () => {
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
      const fd = openSync(path, "wx", 0o600)
      try {
        fchmodSync(fd, 0o600)
        const data = Buffer.from(`${JSON.stringify(content, null, 2)}\n`, "utf8")
        let offset = 0
        while (offset < data.length) offset += writeSync(fd, data, offset, data.length - offset)
        fsyncSync(fd)
      } finally {
        closeSync(fd)
      }
    },
    catch: (e) =>
      errnoCode(e) === "EEXIST"
        ? cliError("credentials-file-exists", `${path} exists: groundnote never overwrites it; remove it first to write new credentials`)
        : cliError("credentials-file-unwritable", `cannot write ${path} (${errnoCode(e) || "error"})`)
  })

export { CliError }
