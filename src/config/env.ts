/**
 * The environment (gaps.md §2, architecture.md §3 "Refuse start when"): mode, secrets, listener,
 * data dir and config path, each checked; a failure is a StartRefusal naming the variable and the
 * fix, never a secret's value.
 */
import { resolve } from "node:path"
import { Effect, Redacted } from "effect"
import type { AuthMode, Env } from "./config.js"
import { refuse, type StartRefusal } from "./refusal.js"

export const AUTH_MODES: ReadonlyArray<AuthMode> = ["cloudflare-access", "dev-token"]
export const SECRET_MIN_LENGTH = 32
export const DEFAULT_HOST = "127.0.0.1"
export const DEFAULT_PORT = 8787
export const LOOPBACK_HOSTS: ReadonlyArray<string> = ["127.0.0.1", "::1", "localhost"]
export const DEFAULT_DATA_DIR = "./data"
export const DEFAULT_CONFIG_PATH = "./groundnote.json"
export const ALLOW_NON_LOOPBACK_VAR = "GROUNDNOTE_DEV_ALLOW_NON_LOOPBACK"

/** An empty variable counts as unset (an `X=` line in an env file). */
const get = (env: Record<string, string | undefined>, name: string): string | undefined => {
  const value = env[name]
  return value === undefined || value === "" ? undefined : value
}

/** Length in characters (code points), not UTF-16 units. */
const charLength = (s: string): number => [...s].length

interface SecretSpec {
  readonly name: string
  readonly required: boolean
}

const ALWAYS_SECRETS: ReadonlyArray<SecretSpec> = [
  { name: "GROUNDNOTE_SESSION_SECRET", required: true },
  { name: "GROUNDNOTE_OPS_TOKEN", required: true }
]
const DEV_SECRETS: ReadonlyArray<SecretSpec> = [
  { name: "GROUNDNOTE_DEV_MCP_TOKEN", required: true },
  { name: "GROUNDNOTE_DEV_APPROVAL_TOKEN", required: true },
  { name: "GROUNDNOTE_DEV_API_TOKEN", required: false }
]

/** Printable ASCII without spaces, one `@`, a domain of dot-separated labels. */
const EMAIL_RE = /^[\x21-\x3f\x41-\x7e]+@[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*$/

/** GROUNDNOTE_DATA_DIR (default ./data), absolute against `cwd`. */
export const dataDirOf = (env: Record<string, string | undefined>, cwd: string): string =>
  resolve(cwd, get(env, "GROUNDNOTE_DATA_DIR") ?? DEFAULT_DATA_DIR)

/** GROUNDNOTE_CONFIG (default ./groundnote.json), absolute against `cwd`. */
export const configPathOf = (env: Record<string, string | undefined>, cwd: string): string =>
  resolve(cwd, get(env, "GROUNDNOTE_CONFIG") ?? DEFAULT_CONFIG_PATH)

/** Reads and checks the environment (gaps.md §2, architecture.md §3 "Refuse start when"). */
export const readEnv = (
  env: Record<string, string | undefined>,
  cwd: string
): Effect.Effect<Env, StartRefusal> =>
  Effect.gen(function* () {
    const modeText = get(env, "GROUNDNOTE_AUTH_MODE")
    if (modeText === undefined) {
      return yield* refuse(
        "auth-mode-invalid",
        "GROUNDNOTE_AUTH_MODE is not set: set it to cloudflare-access (production) or dev-token (local development)"
      )
    }
    const authMode = AUTH_MODES.find((m) => m === modeText)
    if (authMode === undefined) {
      return yield* refuse(
        "auth-mode-invalid",
        `GROUNDNOTE_AUTH_MODE has the unknown value ${JSON.stringify(modeText.slice(0, 40))}: set it to cloudflare-access or dev-token`
      )
    }
    const dev = authMode === "dev-token"

    // set at all (also empty) is refused: the variable belongs to a layout that no longer exists
    if (env.GROUNDNOTE_OPS_PORT !== undefined) {
      return yield* refuse(
        "ops-port-set",
        "GROUNDNOTE_OPS_PORT is set, but the ops listener is now the Unix socket <GROUNDNOTE_DATA_DIR>/ops.sock: unset GROUNDNOTE_OPS_PORT"
      )
    }

    if (!dev) {
      const devVars = Object.keys(env)
        .filter((k) => k.startsWith("GROUNDNOTE_DEV_") && get(env, k) !== undefined)
        .sort()
      if (devVars.length > 0) {
        return yield* refuse(
          "dev-variables-in-access-mode",
          `GROUNDNOTE_AUTH_MODE is cloudflare-access, but ${devVars.join(", ")} ${devVars.length === 1 ? "is" : "are"} set: unset ${devVars.length === 1 ? "it" : "them"} (dev variables are for dev-token mode only)`
        )
      }
    }

    const specs = dev ? [...ALWAYS_SECRETS, ...DEV_SECRETS] : ALWAYS_SECRETS
    const secrets = new Map<string, string>()
    for (const spec of specs) {
      const value = get(env, spec.name)
      if (value === undefined) {
        if (!spec.required) continue
        return yield* refuse(
          "secret-missing",
          `${spec.name} is not set: set it to a random value of at least ${SECRET_MIN_LENGTH} characters (e.g. openssl rand -hex 32)`
        )
      }
      const length = charLength(value)
      if (length < SECRET_MIN_LENGTH) {
        return yield* refuse(
          "secret-too-short",
          `${spec.name} has ${length} characters, at least ${SECRET_MIN_LENGTH} are required: set it to a longer random value (e.g. openssl rand -hex 32)`
        )
      }
      secrets.set(spec.name, value)
    }
    const entries = [...secrets.entries()]
    for (const [i, [a, va]] of entries.entries()) {
      for (const [b, vb] of entries.slice(i + 1)) {
        if (va === vb) {
          return yield* refuse(
            "secrets-equal",
            `${a} and ${b} have the same value: give each secret its own random value (e.g. openssl rand -hex 32)`
          )
        }
      }
    }

    let devEmail: string | null = null
    if (dev) {
      const raw = get(env, "GROUNDNOTE_DEV_EMAIL")
      if (raw === undefined) {
        return yield* refuse(
          "dev-email-missing",
          "GROUNDNOTE_DEV_EMAIL is not set: in dev-token mode set it to the e-mail address of the dev person (it needs an active person grant)"
        )
      }
      const email = raw.toLowerCase()
      if (!EMAIL_RE.test(email)) {
        return yield* refuse(
          "dev-email-invalid",
          "GROUNDNOTE_DEV_EMAIL is not an e-mail address of printable ASCII (local@domain, no spaces): set it to the dev person's e-mail address"
        )
      }
      devEmail = email
    }

    const host = get(env, "GROUNDNOTE_HOST") ?? DEFAULT_HOST
    const portText = get(env, "GROUNDNOTE_PORT")
    let port = DEFAULT_PORT
    if (portText !== undefined) {
      const n = /^\d{1,5}$/.test(portText) ? Number(portText) : Number.NaN
      if (!Number.isInteger(n) || n < 1 || n > 65535) {
        return yield* refuse(
          "port-invalid",
          `GROUNDNOTE_PORT is ${JSON.stringify(portText.slice(0, 20))}: set it to an integer from 1 to 65535 or unset it (default ${DEFAULT_PORT})`
        )
      }
      port = n
    }
    const allowNonLoopback = get(env, ALLOW_NON_LOOPBACK_VAR) === "true"
    if (dev && !allowNonLoopback && !LOOPBACK_HOSTS.includes(host.toLowerCase())) {
      return yield* refuse(
        "non-loopback-host",
        `GROUNDNOTE_HOST is ${JSON.stringify(host)}, which is not a loopback address, and GROUNDNOTE_AUTH_MODE is dev-token: set GROUNDNOTE_HOST to 127.0.0.1, ::1 or localhost, or set ${ALLOW_NON_LOOPBACK_VAR}=true if you really mean to expose dev tokens`
      )
    }

    const secret = (name: string): Redacted.Redacted<string> | null => {
      const value = secrets.get(name)
      return value === undefined ? null : Redacted.make(value)
    }
    const required = (name: string): Redacted.Redacted<string> => {
      const value = secrets.get(name)
      if (value === undefined) throw new Error(`unreachable: ${name} checked above`)
      return Redacted.make(value)
    }
    const typesafe = get(env, "TYPESAFE_API_KEY")
    const typesafeBaseUrl = get(env, "TYPESAFE_BASE_URL")

    const result: Env = {
      authMode,
      sessionSecret: required("GROUNDNOTE_SESSION_SECRET"),
      opsToken: required("GROUNDNOTE_OPS_TOKEN"),
      devMcpToken: secret("GROUNDNOTE_DEV_MCP_TOKEN"),
      devApprovalToken: secret("GROUNDNOTE_DEV_APPROVAL_TOKEN"),
      devApiToken: secret("GROUNDNOTE_DEV_API_TOKEN"),
      devEmail,
      host,
      port,
      allowNonLoopback,
      dataDir: dataDirOf(env, cwd),
      configPath: configPathOf(env, cwd),
      typesafeApiKey: typesafe === undefined ? null : Redacted.make(typesafe),
      ...(typesafeBaseUrl === undefined ? {} : { typesafeBaseUrl })
    }
    return result
  })
